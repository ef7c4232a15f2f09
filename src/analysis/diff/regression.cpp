#include "analysis/diff/regression.h"

#include <algorithm>

namespace magneton::analysis {

RegressionReport FindRegressions(const DiffReport& diff, double max_regression) {
  RegressionReport out;
  out.max_regression = max_regression;
  // With CPU-only runs, b's host times were normalized by the machine-wide
  // ratio (diff.h); the whole run is compared on the same footing.
  double base = diff.a.cost(), now = diff.b.cost() / diff.host_time_ratio;
  out.whole_pct = base > 0 ? (now / base - 1) * 100 : 0;
  if (base > 0 && out.whole_pct > max_regression * 100)
    out.regressions.push_back({"whole run", base, now, out.whole_pct, nullptr});
  std::vector<Regression> regions;
  for (const auto& f : diff.findings) {
    if (f.verdict == Verdict::kNoise || f.costly != 'b' || f.cost_delta_pct <= max_regression * 100) continue;
    regions.push_back({f.label, f.a.cost(), f.b.cost(), f.cost_delta_pct, &f});
  }
  std::stable_sort(regions.begin(), regions.end(), [](const Regression& x, const Regression& y) {
    return x.now - x.base > y.now - y.base;
  });
  out.regressions.insert(out.regressions.end(), regions.begin(), regions.end());
  return out;
}

}  // namespace magneton::analysis
