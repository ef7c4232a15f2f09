#include "analysis/diff/host_time.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/diff/dispatch.h"
#include "analysis/diff/root_cause.h"

namespace magneton::analysis {
namespace {

// Fewer regions of unchanged code than this cannot tell the machine from the code.
constexpr int64_t kMinControls = 5;
// Ratios within this (log) of 1 are left alone.
constexpr double kNegligible = 0.02;
// The share of unchanged regions that must be slower on the same side.
constexpr double kAgreement = 0.75;

std::set<std::string> Frameworks(const Run& run) {
  std::set<std::string> out;
  for (const auto& op : run.ops) out.insert(op.framework);
  return out;
}

// The median of the per-region log ratios b/a of these regions (0 with none).
double MedianLogRatio(const std::vector<size_t>& regions, const std::vector<SideCost>& a,
                      const std::vector<SideCost>& b, int64_t* slower) {
  std::vector<double> logs;
  for (size_t r : regions)
    if (a[r].cost() > 0 && b[r].cost() > 0) logs.push_back(std::log(b[r].cost() / a[r].cost()));
  if (logs.empty()) return 0;
  std::nth_element(logs.begin(), logs.begin() + static_cast<std::ptrdiff_t>(logs.size() / 2), logs.end());
  const double median = logs[logs.size() / 2];
  *slower = std::count_if(logs.begin(), logs.end(), [&](double x) { return (x > 0) == (median > 0) && x != 0; });
  return median;
}

// Matched regions whose code cannot differ: the same operators on the same
// layouts, dispatched the same way on both sides, with measured times (shares
// of one compiled call differ as the call does, so they witness the code).
std::vector<size_t> Controls(const Run& a, const Run& b, const CostModel& ca, const CostModel& cb,
                             const MatchResult& match) {
  std::vector<size_t> out;
  for (size_t r = 0; r < match.regions.size(); ++r) {
    const RegionSide sa{&a, &ca, &match.regions[r].ops_a}, sb{&b, &cb, &match.regions[r].ops_b};
    if (DispatchUnits(sa) == DispatchUnits(sb) && SameOperatorsAndLayouts(sa, sb) && EstimatedScope(sa).empty() &&
        EstimatedScope(sb).empty())
      out.push_back(r);
  }
  return out;
}

}  // namespace

LaunchDelayJudgement JudgeLaunchDelays(const Run& a, const Run& b, const CostModel& ca, const CostModel& cb,
                                       const MatchResult& match, const std::vector<SideCost>& costs_a,
                                       const std::vector<SideCost>& costs_b) {
  LaunchDelayJudgement j;
  if (!ca.has_kernels() || !cb.has_kernels() || !ca.alignment() || !cb.alignment()) return j;
  // A wait differs when it is a visible part of the region's time (2%).
  int64_t longer_a = 0, longer_b = 0;
  for (size_t r : Controls(a, b, ca, cb, match)) {
    const SideCost &x = costs_a[r], &y = costs_b[r];
    const double d = x.wait_seconds - y.wait_seconds, span = std::max(x.seconds, y.seconds);
    if (span <= 0) continue;
    ++j.controls;
    if (std::fabs(d) > kNegligible * span) (d > 0 ? longer_a : longer_b)++;
  }
  j.agreeing = std::max(longer_a, longer_b);
  if (j.controls < kMinControls || static_cast<double>(j.agreeing) < kAgreement * static_cast<double>(j.controls))
    return j;
  j.slower = longer_a > longer_b ? 'a' : 'b';
  j.note = fmt::format(
      "launch waits: in {} of the {} matched regions that run the same code the same way on both sides, the device "
      "waited longer for {}'s launches: its host issued the same code more slowly throughout (machine load or "
      "clocks), so a longer wait on {} is a cause only with a synchronization of its own",
      j.agreeing, j.controls, j.slower, j.slower);
  return j;
}

HostTimeJudgement JudgeHostTime(const Run& a, const Run& b, const CostModel& ca, const CostModel& cb,
                                const MatchResult& match, const std::vector<SideCost>& costs_a,
                                const std::vector<SideCost>& costs_b) {
  HostTimeJudgement j;
  if (Frameworks(a) != Frameworks(b)) {
    j.note = "host times: the runs come from different frameworks, so their host times are compared as measured";
    return j;
  }
  std::vector<size_t> all;
  std::set<std::string> compiled_a, compiled_b;  // compiled scopes of regions run eagerly on the other side
  for (size_t r = 0; r < match.regions.size(); ++r) {
    all.push_back(r);
    const RegionSide sa{&a, &ca, &match.regions[r].ops_a}, sb{&b, &cb, &match.regions[r].ops_b};
    const std::string scope_a = CompiledScope(sa), scope_b = CompiledScope(sb);
    if (scope_a.empty() != scope_b.empty()) (scope_a.empty() ? compiled_b : compiled_a).insert(scope_a + scope_b);
  }
  const std::vector<size_t> controls = Controls(a, b, ca, cb, match);
  int64_t ignored = 0;
  const double overall = MedianLogRatio(all, costs_a, costs_b, &ignored);
  j.controls = static_cast<int64_t>(controls.size());
  const double median = MedianLogRatio(controls, costs_a, costs_b, &j.slower);
  const double r = std::exp(j.controls >= kMinControls ? median : overall);
  if (std::fabs(j.controls >= kMinControls ? median : overall) <= kNegligible) return j;
  if (j.controls < kMinControls) {
    std::string dispatch;
    if (!compiled_a.empty() || !compiled_b.empty())
      dispatch = fmt::format(
          "; {} runs matched regions inside compiled calls ({}) that {} runs eagerly: a uniform difference there "
          "is dispatch overhead, which the code explains",
          compiled_a.empty() ? 'b' : 'a', fmt::join(compiled_a.empty() ? compiled_b : compiled_a, ", "),
          compiled_a.empty() ? 'a' : 'b');
    j.note = fmt::format(
        "host times are compared as measured (b ran {:.2f}x as long as a in the typical matched region): only {} of "
        "{} matched regions run the same operators on the same layouts, called the same way, on both sides, and "
        "at least {} are needed to tell the machine from the code{}",
        r, j.controls, match.regions.size(), kMinControls, dispatch);
    return j;
  }
  if (static_cast<double>(j.slower) < kAgreement * static_cast<double>(j.controls)) {
    j.note = fmt::format(
        "host times are compared as measured: the {} matched regions that run the same code the same way on both "
        "sides disagree on the machine's speed (only {} of them {} on b; median ratio {:.2f})",
        j.controls, j.slower, r > 1 ? "slower" : "faster", r);
    return j;
  }
  j.ratio = r;
  j.note = fmt::format(
      "host times: in the {} matched regions that run the same operators on the same layouts, called the same way, "
      "on both sides, run b ran {:.2f}x as long as run a ({} of them {}): their code cannot differ, so the machine "
      "(load or clocks) does; b's times are divided by {:.2f} before comparing, so only regions that differ from "
      "the rest are found (--absolute-time to compare as measured)",
      j.controls, r, j.slower, r > 1 ? "slower" : "faster", r);
  return j;
}

}  // namespace magneton::analysis
