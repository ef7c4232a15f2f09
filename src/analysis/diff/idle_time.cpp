#include "analysis/diff/idle_time.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "analysis/diff/rules.h"
#include "analysis/diff/sync_sites.h"
#include "analysis/diff/verdict.h"

namespace magneton::analysis {
namespace {

constexpr double kSameBusy = 0.05;       // busy time per iteration this close: the same device work
constexpr double kMinMatchedShare = 0.8;  // of each iteration, in matched regions
constexpr double kMinIdleShare = 0.01;    // the extra idle, of the costlier iteration

// One side: its idle per iteration (cost and seconds) and per repetition.
SideCost Idle(const StepTimeline& tl, bool energy) {
  SideCost s;
  s.seconds = s.wait_seconds = tl.idle_seconds();
  s.source = energy ? CostSource::kAttributed : CostSource::kTime;
  if (energy) s.joules = tl.idle_joules();
  for (size_t i = 0; i < tl.steps.size(); ++i) {
    if (!tl.full_period(i)) continue;
    const StepWindow& w = tl.steps[i];
    const double idle_s = static_cast<double>(w.length_ns() - w.busy_ns) * 1e-9;
    s.waits.push_back(idle_s);
    s.instances.push_back(energy ? w.idle_j : idle_s);
  }
  return s;
}

std::map<std::string, double> Syncs(const CostModel& c) {
  std::vector<int64_t> ops(static_cast<size_t>(c.index().ops()));
  for (size_t i = 0; i < ops.size(); ++i) ops[i] = static_cast<int64_t>(i);
  return c.syncs().Before(ops);
}

}  // namespace

std::optional<Finding> IdleFinding(const CostModel& ca, const CostModel& cb, const DiffReport& report,
                                   const DiffOptions& options) {
  const StepTimeline &ta = ca.timeline(), &tb = cb.timeline();
  const IterationAccount &aa = report.a.account, &ab = report.b.account;
  if (!ta.on_device || !tb.on_device || !aa.available || !ab.available) return std::nullopt;
  const double busy_a = ta.busy_seconds(), busy_b = tb.busy_seconds();
  if (std::fabs(busy_a - busy_b) > kSameBusy * std::max(busy_a, busy_b)) return std::nullopt;
  if (aa.matched_share() < kMinMatchedShare || ab.matched_share() < kMinMatchedShare) return std::nullopt;
  const bool energy = report.energy_measured;
  Finding f;
  f.a = Idle(ta, energy);
  f.b = Idle(tb, energy);
  f.costly = f.a.seconds > f.b.seconds ? 'a' : 'b';
  const SideCost& hi = f.costly == 'a' ? f.a : f.b;
  const SideCost& lo = f.costly == 'a' ? f.b : f.a;
  const IterationAccount& acc = f.costly == 'a' ? aa : ab;
  const auto sa = Syncs(ca), sb = Syncs(cb);
  const double more_syncs = f.costly == 'a' ? Total(sa) - Total(sb) : Total(sb) - Total(sa);
  if (more_syncs < 0.5 || hi.seconds - lo.seconds < kMinIdleShare * acc.seconds) return std::nullopt;
  if (!Separated(hi.waits, lo.waits)) return std::nullopt;
  if (std::isnan(hi.cost()) || std::isnan(lo.cost())) return std::nullopt;
  f.saved_per_iteration = hi.cost() - lo.cost();
  f.saved_pct_of_run = acc.total > 0 ? f.saved_per_iteration / acc.total * 100 : 0;
  f.outputs_compared = !report.matched_by_range && !report.matched_by_kernels;
  Judge(f, acc.total, options, energy);
  if (f.verdict != Verdict::kWaste) return std::nullopt;  // the regions' findings speak for the rest
  // Named by the call the costlier side makes most often more.
  const auto& hi_syncs = f.costly == 'a' ? sa : sb;
  const auto& lo_syncs = f.costly == 'a' ? sb : sa;
  std::string call;
  double most = 0;
  for (const auto& [name, n] : hi_syncs) {
    const auto it = lo_syncs.find(name);
    if (const double more = n - (it == lo_syncs.end() ? 0 : it->second); more > most) most = more, call = name;
  }
  f.label = fmt::format("the device idling per iteration after {} (x{:.3g} per iteration on {})", call, most,
                        f.costly);
  Evidence e;
  for (auto [syncs, into] : {std::pair{&sa, &e.all_a}, std::pair{&sb, &e.all_b}})
    for (const auto& [name, n] : *syncs) into->push_back({name, std::llround(n), 0, {}});
  e.kind = EvidenceClass::kTimeline;
  e.summary = fmt::format(
      "the same device work (busy {} on a, {} on b per iteration), but the device idles {} more per iteration "
      "on {} ({} against {}); synchronizing calls per iteration: a {}, b {}: each stops {}'s host until the "
      "device drains, so the host's next work (preparing a batch, launching the next step) no longer overlaps "
      "the device's, which idles through it",
      Duration(busy_a), Duration(busy_b), Duration(hi.seconds - lo.seconds), f.costly, Duration(hi.seconds),
      Duration(lo.seconds), SyncPhrase(sa), SyncPhrase(sb), f.costly);
  e.params = TimelineParams(sa, sb, f.costly, kCauseSyncs);
  f.evidence.push_back(std::move(e));
  MatchTimelineRules(f, options.rules);
  return f;
}

}  // namespace magneton::analysis
