// The statistics two fingerprints are compared by, each with the scale its
// difference is measured against (docs/matching.md, "Tensor equivalence").
// One list for every comparison: the matcher's tolerance (analysis/
// fingerprint) and the replay's check of its outputs (capture/torch) differ
// in their tolerance and in what they do with a difference, not in what they
// compare.
#pragma once

#include <cmath>
#include <string>

#include "core/run.h"

namespace magneton {

// Root mean square of the values: the scale absolute differences are
// measured against. 0 for an empty fingerprint.
double RootMeanSquare(const Fingerprint& fp);

struct ComparedStatistic {
  const char* name;   // "rms", "mean", "stddev", "l1", "min", "max", "quantile"
  int quantile = -1;  // which one, for "quantile"
  double a = 0, b = 0;
  // rms, mean and stddev: the larger rms; l1: the larger l1; min, max and the
  // quantiles: max(rms, |a|, |b|), so a cast's per-element relative error maps
  // to the same relative difference. From finite values only (0 when none is):
  // one NaN in a tensor makes its l2 NaN, and a NaN scale would make even
  // equal values differ.
  double scale = 0;
  std::string label() const;  // "mean", "quantile 12"
};

// Calls visit(stat) for each statistic of `a` and `b` in the order above
// (the quantiles only where both have as many) while it returns true;
// false when visit stopped it. Fingerprints of the same numel only.
template <class Visit>
bool ForEachStatistic(const Fingerprint& a, const Fingerprint& b, Visit&& visit);

// --- implementation

// The larger of the finite ones among x and y (0 when neither is): a scale.
double FiniteMax(double x, double y);

template <class Visit>
bool ForEachStatistic(const Fingerprint& a, const Fingerprint& b, Visit&& visit) {
  const double rms_a = RootMeanSquare(a), rms_b = RootMeanSquare(b);
  const double s = FiniteMax(rms_a, rms_b);
  auto point = [&](const char* name, int q, double x, double y) {
    return visit(ComparedStatistic{name, q, x, y, FiniteMax(s, FiniteMax(std::fabs(x), std::fabs(y)))});
  };
  if (!visit(ComparedStatistic{"rms", -1, rms_a, rms_b, s}) || !visit(ComparedStatistic{"mean", -1, a.mean, b.mean, s}) ||
      !visit(ComparedStatistic{"stddev", -1, a.stddev, b.stddev, s}) ||
      !visit(ComparedStatistic{"l1", -1, a.l1, b.l1, FiniteMax(a.l1, b.l1)}) || !point("min", -1, a.min, b.min) ||
      !point("max", -1, a.max, b.max))
    return false;
  if (a.quantiles.size() == b.quantiles.size())
    for (size_t i = 0; i < a.quantiles.size(); ++i)
      if (!point("quantile", static_cast<int>(i), a.quantiles[i], b.quantiles[i])) return false;
  return true;
}

}  // namespace magneton
