#include "core/fingerprint_stats.h"

#include <algorithm>
#include <cmath>

namespace magneton {

double RootMeanSquare(const Fingerprint& fp) {
  return fp.numel > 0 ? fp.l2 / std::sqrt(static_cast<double>(fp.numel)) : 0.0;
}

double FiniteMax(double x, double y) {
  double m = 0;
  for (double v : {x, y})
    if (std::isfinite(v)) m = std::max(m, v);
  return m;
}

std::string ComparedStatistic::label() const {
  return quantile < 0 ? std::string(name) : std::string(name) + " " + std::to_string(quantile);
}

}  // namespace magneton
