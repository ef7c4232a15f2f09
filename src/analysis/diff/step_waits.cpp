#include "analysis/diff/step_waits.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/diff/verdict.h"

namespace magneton::analysis {
namespace {

// The cause a timeline finding names for its costlier side ("" when none).
std::string Cause(const Finding& f) {
  for (const auto& p : f.evidence.front().params)
    if (p.subject == "timeline" && p.parameter == "cause") return f.costly == 'a' ? p.value_a : p.value_b;
  return "";
}

// Element-wise sums where both sides have one value per repetition.
void AddPerRepetition(std::vector<double>& into, const std::vector<double>& more) {
  if (into.size() != more.size()) {
    into.clear();
    return;
  }
  for (size_t i = 0; i < into.size(); ++i) into[i] += more[i];
}

void AddSide(SideCost& into, const SideCost& more) {
  into.joules = std::isnan(into.joules) || std::isnan(more.joules) ? kUnmeasured : into.joules + more.joules;
  into.seconds += more.seconds;
  into.wait_seconds += more.wait_seconds;
  AddPerRepetition(into.waits, more.waits);
  AddPerRepetition(into.instances, more.instances);
  if (into.source != more.source) into.source = CostSource::kMixed;
}

// The synchronizing calls per iteration named by the folded findings, added up.
std::vector<ParamDelta> AddSyncCounts(const std::vector<const Finding*>& group) {
  std::map<std::string, std::pair<double, double>> calls;
  for (const Finding* f : group)
    for (const auto& p : f->evidence.front().params)
      if (p.subject == "synchronizing calls") {
        calls[p.parameter].first += std::strtod(p.value_a.c_str(), nullptr);
        calls[p.parameter].second += std::strtod(p.value_b.c_str(), nullptr);
      }
  std::vector<ParamDelta> out;
  for (const auto& [name, n] : calls)
    out.push_back({"synchronizing calls", name, fmt::format("{:.3g}", n.first), fmt::format("{:.3g}", n.second)});
  return out;
}

Finding Fold(const std::vector<const Finding*>& group, bool energy) {
  Finding f = *group.front();  // the largest: its label, rules and evidence speak for the rest
  for (size_t i = 1; i < group.size(); ++i) {
    const Finding& g = *group[i];
    f.regions.insert(f.regions.end(), g.regions.begin(), g.regions.end());
    AddSide(f.a, g.a);
    AddSide(f.b, g.b);
    f.saved_per_iteration += g.saved_per_iteration;
    f.saved_pct_of_run += g.saved_pct_of_run;
    f.output_rel_diff = std::max(f.output_rel_diff, g.output_rel_diff);
  }
  const SideCost& hi = f.costly == 'a' ? f.a : f.b;
  const SideCost& lo = f.costly == 'a' ? f.b : f.a;
  f.cost_delta_pct = lo.cost() > 0 ? (hi.cost() / lo.cost() - 1) * 100 : INFINITY;
  f.time_delta_pct = lo.seconds > 0 ? (hi.seconds / lo.seconds - 1) * 100 : INFINITY;
  const size_t n = group.size();
  f.label = fmt::format("the device waiting at {} places in the step, the largest: {}", n, f.label);
  f.why = fmt::format("{:.1f}% more {} at {} places in the step, each holding over the repetitions, time {:+.1f}%",
                      f.cost_delta_pct, energy ? "energy" : "time", n, f.time_delta_pct);
  Evidence& e = f.evidence.front();
  e.summary = fmt::format("the same device work; the device waits for it {} more per iteration on {} ({} against {}), "
                          "at {} places in the step; at the largest: {}",
                          Duration(hi.wait_seconds - lo.wait_seconds), f.costly, Duration(hi.wait_seconds),
                          Duration(lo.wait_seconds), n, e.summary);
  std::vector<ParamDelta> params = AddSyncCounts(group);
  for (const auto& p : e.params)
    if (p.subject != "synchronizing calls") params.push_back(p);
  e.params = std::move(params);
  return f;
}

}  // namespace

void FoldStepWaits(DiffReport& report) {
  // Groups of waste findings with timeline evidence, by costlier side and cause.
  std::map<std::pair<char, std::string>, std::vector<size_t>> groups;
  for (size_t i = 0; i < report.findings.size(); ++i) {
    const Finding& f = report.findings[i];
    if (f.verdict == Verdict::kWaste && f.evidence_class() == EvidenceClass::kTimeline)
      groups[{f.costly, Cause(f)}].push_back(i);
  }
  std::vector<int> into(report.findings.size());  // old index -> the finding it joins (old index)
  for (size_t i = 0; i < into.size(); ++i) into[i] = static_cast<int>(i);
  std::vector<Finding> folded(report.findings.begin(), report.findings.end());
  bool any = false;
  for (const auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    std::vector<const Finding*> group;
    for (size_t i : members) group.push_back(&report.findings[i]), into[i] = static_cast<int>(members.front());
    folded[members.front()] = Fold(group, report.energy_measured);
    any = true;
  }
  if (!any) return;
  // The folded-in ones go; the rest are ranked again.
  std::vector<Finding> kept;
  std::vector<int> kept_index(folded.size(), -1);
  for (size_t i = 0; i < folded.size(); ++i)
    if (into[i] == static_cast<int>(i)) kept_index[i] = static_cast<int>(kept.size()), kept.push_back(std::move(folded[i]));
  const std::vector<int> ranked = RankFindings(kept);
  report.findings = std::move(kept);
  std::vector<int> new_index(folded.size());
  for (size_t i = 0; i < folded.size(); ++i) new_index[i] = ranked[static_cast<size_t>(kept_index[into[i]])];
  for (auto& r : report.regions)
    if (r.finding >= 0) r.finding = new_index[static_cast<size_t>(r.finding)];
}

}  // namespace magneton::analysis
