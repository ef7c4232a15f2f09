#include "analysis/diff/regression.h"

#include <algorithm>

namespace magneton::analysis {

RegressionReport FindRegressions(const DiffReport& diff, double max_regression) {
  RegressionReport out;
  out.max_regression = max_regression;
  // Host times: the recording window is mostly the interpreter and moves with
  // the machine's load, so the whole run is all operators together, on the
  // same footing as the regions (normalized by the machine-wide ratio).
  double base = diff.host_time_only ? diff.a.ops_cost : diff.a.cost();
  double now = diff.host_time_only ? diff.b.ops_cost : diff.b.cost();  // ops_cost is normalized already
  out.whole_label = diff.host_time_only ? "all operators" : "whole run";
  out.whole_base = base;
  out.whole_now = now;
  out.whole_pct = base > 0 ? (now / base - 1) * 100 : 0;
  if (base > 0 && out.whole_pct > max_regression * 100)
    out.regressions.push_back({out.whole_label, base, now, out.whole_pct, nullptr});
  std::vector<Regression> regions;
  for (const auto& f : diff.findings) {
    if (f.verdict == Verdict::kNoise || f.costly != 'b' || f.cost_delta_pct <= max_regression * 100) continue;
    regions.push_back({f.label, f.a.cost(), f.b.cost(), f.cost_delta_pct, &f});
  }
  std::stable_sort(regions.begin(), regions.end(),
                   [](const Regression& x, const Regression& y) { return x.now - x.base > y.now - y.base; });
  out.regressions.insert(out.regressions.end(), regions.begin(), regions.end());
  return out;
}

}  // namespace magneton::analysis
