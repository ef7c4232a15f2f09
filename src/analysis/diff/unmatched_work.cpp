#include "analysis/diff/unmatched_work.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/diff/call_site.h"
#include "analysis/diff/root_cause.h"
#include "analysis/diff/rules.h"
#include "analysis/diff/verdict.h"

namespace magneton::analysis {
namespace {

// How many operator names the summary names.
constexpr size_t kNamed = 2;

SideCost Unmatched(const IterationAccount& acc) {
  SideCost s;
  s.source = acc.energy ? CostSource::kAttributed : CostSource::kTime;
  if (acc.energy) s.joules = acc.unmatched;
  s.seconds = acc.energy ? acc.unmatched_seconds : acc.unmatched;  // the latter with overlapping streams folded
  s.instances = acc.unmatched_reps;
  return s;
}

// A side's unmatched operators by name, costliest first: count per iteration,
// seconds, and the call site of the costliest; `costs` gets each name's cost
// per iteration in the account's unit. Ops of no work of their own (views,
// allocations) are left out.
std::vector<NamedCount> ByName(const CostModel& cost, const IterationAccount& acc,
                               std::map<std::string, double>& costs) {
  const Run& run = cost.source_run();
  std::map<std::string, NamedCount> by;
  std::map<std::string, double> top;
  for (const auto& [op, share] : acc.unmatched_by_op) {
    if (op < 0 || op >= static_cast<int64_t>(run.ops.size()) || IsMetadataOp(run.ops[op].name)) continue;
    const std::string& name = run.ops[op].name;
    NamedCount& nc = by[name];
    nc.name = name;
    ++nc.count;
    nc.seconds += share.seconds;
    costs[name] += share.cost;
    if (!top.count(name) || share.cost > top[name]) {
      top[name] = share.cost;
      nc.call_site = UserCallSite(run, run.ops[op].stack);
    }
  }
  std::vector<NamedCount> out;
  for (auto& [name, nc] : by) out.push_back(std::move(nc));
  std::stable_sort(out.begin(), out.end(),
                   [&](const NamedCount& x, const NamedCount& y) { return costs[x.name] > costs[y.name]; });
  return out;
}

std::string Amount(double cost, bool energy) { return energy ? fmt::format("{:.3g} J", cost) : Duration(cost); }

}  // namespace

std::optional<Finding> UnmatchedWorkFinding(const CostModel& ca, const CostModel& cb, const DiffReport& report,
                                            const DiffOptions& options) {
  const IterationAccount &aa = report.a.account, &ab = report.b.account;
  if (!aa.available || !ab.available || aa.total <= 0 || ab.total <= 0 || aa.energy != ab.energy) return std::nullopt;
  // Without a value in common nothing says the two iterations are the same
  // step (a loop over batches against a loop over each batch's rows).
  if (report.regions.empty()) return std::nullopt;
  const bool energy = aa.energy;
  Finding f;
  f.a = Unmatched(aa);
  f.b = Unmatched(ab);
  f.costly = f.a.cost() >= f.b.cost() ? 'a' : 'b';
  const char lean = f.costly == 'a' ? 'b' : 'a';
  const SideCost& hi = f.costly == 'a' ? f.a : f.b;
  const SideCost& lo = f.costly == 'a' ? f.b : f.a;
  const IterationAccount& acc = f.costly == 'a' ? aa : ab;
  const double saved = hi.cost() - lo.cost();
  if (std::isnan(saved) || saved < options.threshold * acc.total) return std::nullopt;
  if (!Separated(hi.instances, lo.instances)) return std::nullopt;
  f.outputs_compared = false;
  Judge(f, acc.total, options, energy);
  if (f.verdict != Verdict::kWaste) return std::nullopt;
  f.saved_per_iteration = saved;
  f.saved_pct_of_run = saved / acc.total * 100;

  std::map<std::string, double> costs_a, costs_b;
  Evidence e;
  e.kind = EvidenceClass::kOperators;
  e.only_a = e.all_a = ByName(ca, aa, costs_a);
  e.only_b = e.all_b = ByName(cb, ab, costs_b);
  const auto& hi_ops = f.costly == 'a' ? e.only_a : e.only_b;
  const auto& lo_ops = f.costly == 'a' ? e.only_b : e.only_a;
  const auto& hi_costs = f.costly == 'a' ? costs_a : costs_b;
  const auto& lo_costs = f.costly == 'a' ? costs_b : costs_a;
  // What the costlier side spends more on, by operator name.
  std::vector<std::pair<double, const NamedCount*>> more;
  for (const auto& nc : hi_ops) {
    const auto lo_cost = lo_costs.find(nc.name);
    const double d = hi_costs.at(nc.name) - (lo_cost == lo_costs.end() ? 0 : lo_cost->second);
    if (d > 0) more.emplace_back(d, &nc);
  }
  if (more.empty()) return std::nullopt;
  std::stable_sort(more.begin(), more.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  const NamedCount& top = *more.front().second;
  const std::string site = Describe(top.call_site);
  f.label = fmt::format("{} in no matched region on {}{}", top.name, f.costly, site.empty() ? "" : " at " + site);
  f.why = fmt::format("{} per iteration in operators of no matched region ({:.1f}% of {}'s iteration) against {} on {}",
                      Amount(hi.cost(), energy), hi.cost() / acc.total * 100, f.costly, Amount(lo.cost(), energy),
                      lean);
  std::vector<std::string> named;
  for (size_t i = 0; i < more.size() && i < kNamed; ++i) {
    const NamedCount& nc = *more[i].second;
    const std::string at = Describe(nc.call_site);
    named.push_back(fmt::format("{}{} ({} more per iteration{})", nc.name,
                                nc.count > 1 ? fmt::format(" x{}", nc.count) : "", Amount(more[i].first, energy),
                                at.empty() ? "" : ", at " + at));
  }
  e.summary = fmt::format(
      "{} spends {} more per iteration than {} in operators that no matched region holds, mostly {}: their values "
      "were paired with none of {}'s (computed after the last value both sides compute, or with no equivalent on "
      "{}); {} computes them outside its step (once, before or after the loop) or not at all",
      f.costly, Amount(saved, energy), lean, fmt::join(named, "; "), lean, lean, lean);
  e.params.push_back({"work", "in no matched region", Amount(f.a.cost(), energy), Amount(f.b.cost(), energy)});
  f.evidence.push_back(std::move(e));
  // The operator rules see what each side runs outside the regions.
  RuleSubject subject;
  subject.evidence = EvidenceClass::kOperators;
  subject.costly = f.costly;
  for (const auto& m : more) subject.costly_ops.push_back(m.second->name);
  for (const auto& nc : lo_ops)
    if (!hi_costs.count(nc.name)) subject.lean_ops.push_back(nc.name);
  for (const auto* ops : {&hi_ops, &lo_ops})
    for (const auto& nc : *ops) subject.ops.push_back(nc.name);
  subject.config = report.config;
  subject.SetParams(f.evidence[0].params);
  for (auto& m : MatchRules(options.rules, subject)) f.rules.push_back(std::move(m.hit));
  return f;
}

}  // namespace magneton::analysis
