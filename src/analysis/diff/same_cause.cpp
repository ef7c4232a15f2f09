#include "analysis/diff/same_cause.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/diff/sync_sites.h"
#include "analysis/diff/verdict.h"

namespace magneton::analysis {
namespace {

// An operators or kernels finding that names configuration keys: the runs'
// configuration is the cause, whichever operators or kernels it chose at each
// place (TF32 off gives each GEMM shape and each convolution its own FP32
// kernel).
constexpr const char* kConfigured = "the configuration";

// A launch finding whose only differences are its inputs' dtypes, named by
// them ("inputs in float64 on a, float32 on b"): one cast or data source
// upstream of every place that computes in them. "" when anything else differs.
std::string Dtypes(const Evidence& e) {
  std::set<std::pair<std::string, std::string>> pairs;
  for (const auto& p : e.params) {
    if (p.parameter != "dtype") return "";
    pairs.emplace(p.value_a, p.value_b);
  }
  std::vector<std::string> parts;
  for (const auto& [a, b] : pairs) parts.push_back(fmt::format("{} on a, {} on b", a, b));
  return parts.empty() ? "" : fmt::format("inputs in {}", fmt::join(parts, "; "));
}

// The cause a finding names: for a timeline finding, the cause of its costlier
// side's wait; for an operators or kernels finding, the configuration where it
// names keys, else the names each side has alone. "": none to fold by.
std::string Cause(const Finding& f) {
  const Evidence& e = f.evidence.front();
  if (e.kind == EvidenceClass::kTimeline) {
    for (const auto& p : e.params)
      if (p.subject == "timeline" && p.parameter == "cause") return f.costly == 'a' ? p.value_a : p.value_b;
    return "";
  }
  if (e.kind == EvidenceClass::kLaunch) return e.config.empty() ? Dtypes(e) : kConfigured;
  if (e.kind != EvidenceClass::kOperators && e.kind != EvidenceClass::kKernels) return "";
  if (!e.config.empty()) return kConfigured;
  if (e.only_a.empty() && e.only_b.empty()) return "";
  auto names = [](const std::vector<NamedCount>& v) {
    std::set<std::string> s;
    for (const auto& n : v) s.insert(n.name);
    return fmt::format("{}", fmt::join(s, ";"));
  };
  return names(e.only_a) + " || " + names(e.only_b);
}

std::string Keys(const Evidence& e) {
  std::vector<std::string> keys;
  for (const auto& c : e.config) keys.push_back(c.key);
  return fmt::format("{}", fmt::join(keys, " + "));
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

// The synchronizing calls per iteration named by the folded findings, added
// up; a call whose wait several places still follow is one call.
std::vector<ParamDelta> AddSyncCounts(const std::vector<const Finding*>& group) {
  std::map<std::string, std::pair<double, double>> calls;
  for (const Finding* f : group)
    for (const auto& p : f->evidence.front().params)
      if (p.subject == "synchronizing calls") {
        auto& [a, b] = calls[p.parameter];
        const double pa = std::strtod(p.value_a.c_str(), nullptr), pb = std::strtod(p.value_b.c_str(), nullptr);
        if (IsStillWaitingAfter(p.parameter))
          a = std::max(a, pa), b = std::max(b, pb);
        else
          a += pa, b += pb;
      }
  std::vector<ParamDelta> out;
  for (const auto& [name, n] : calls)
    out.push_back({"synchronizing calls", name, fmt::format("{:.3g}", n.first), fmt::format("{:.3g}", n.second)});
  return out;
}

// Each side's own operators or kernels over the group, counts and times added.
void AddNamedCounts(const std::vector<const Finding*>& group, std::vector<NamedCount> Evidence::*side,
                    std::vector<NamedCount>& into) {
  into.clear();
  for (const Finding* f : group)
    for (const NamedCount& m : f->evidence.front().*side) {
      auto it = std::find_if(into.begin(), into.end(), [&](const NamedCount& n) { return n.name == m.name; });
      if (it == into.end()) into.push_back(m);
      else it->count += m.count, it->seconds += m.seconds;
    }
}

// The configured group's keys, each once, and what the places of each key set save.
std::string AddConfig(const std::vector<const Finding*>& group, std::vector<ConfigDelta>& into) {
  std::map<std::string, std::pair<int, double>> by_keys;  // key set -> places, % of the run saved
  std::vector<std::string> order;
  for (const Finding* f : group) {
    for (const ConfigDelta& c : f->evidence.front().config) {
      auto it = std::find_if(into.begin(), into.end(), [&](const ConfigDelta& d) { return d.key == c.key; });
      if (it == into.end()) into.push_back(c);
      else it->by_rule |= c.by_rule;
    }
    const std::string keys = Keys(f->evidence.front());
    if (by_keys.find(keys) == by_keys.end()) order.push_back(keys);
    ++by_keys[keys].first;
    by_keys[keys].second += f->saved_pct_of_run;
  }
  std::vector<std::string> parts;
  for (const auto& keys : order)
    parts.push_back(fmt::format("{} at {} place{} ({:.1f}% of the run)", keys, by_keys[keys].first,
                                by_keys[keys].first == 1 ? "" : "s", by_keys[keys].second));
  return fmt::format("{}", fmt::join(parts, "; "));
}

// The group's costs added up into its largest finding, whose label, rules
// and evidence speak for the rest.
Finding AddUp(const std::vector<const Finding*>& group) {
  Finding f = *group.front();
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
  return f;
}

Finding Fold(const std::vector<const Finding*>& group, bool energy) {
  Finding f = AddUp(group);
  const size_t n = group.size();
  Evidence& e = f.evidence.front();
  if (e.kind != EvidenceClass::kTimeline) {
    AddNamedCounts(group, &Evidence::only_a, e.only_a);
    AddNamedCounts(group, &Evidence::only_b, e.only_b);
    const char* what = e.kind == EvidenceClass::kKernels  ? "kernels"
                       : e.kind == EvidenceClass::kLaunch ? "launch parameters or input dtypes"
                                                           : "operators";
    const bool configured = !e.config.empty();
    const std::string same = configured                        ? fmt::format("{} the configuration chose", what)
                             : e.kind == EvidenceClass::kLaunch ? Dtypes(e)
                                                                : fmt::format("the same {}", what);
    f.label = fmt::format("{} and {} more places with {}", f.label, n - 1, same);
    f.why = fmt::format("{:.1f}% more {} at {} places with {}{}; the largest: {}", f.cost_delta_pct,
                        energy ? "energy" : "time", n, e.kind == EvidenceClass::kLaunch ? same : same + " on each side",
                        energy ? fmt::format(", time {:+.1f}%", f.time_delta_pct) : "", f.why);
    e.summary = configured ? fmt::format("{} chosen by the configuration at {} places: {}; at the largest: {}", what,
                                         n, AddConfig(group, e.config), e.summary)
                           : fmt::format("at {} places; at the largest: {}", n, e.summary);
    return f;
  }
  const SideCost& hi = f.costly == 'a' ? f.a : f.b;
  const SideCost& lo = f.costly == 'a' ? f.b : f.a;
  std::vector<ParamDelta> params = AddSyncCounts(group);
  // Where the waits are a synchronizing call's, the label names the call the costlier side makes most.
  const ParamDelta* call = nullptr;
  auto count = [&](const ParamDelta& p) {
    return std::strtod((f.costly == 'a' ? p.value_a : p.value_b).c_str(), nullptr);
  };
  if (Cause(f) == kCauseSyncs)
    for (const auto& p : params)
      if (!call || count(p) > count(*call)) call = &p;
  f.label = call ? fmt::format("the device waiting after {} at {} places in the step, the largest: {}",
                               CallLabel(call->parameter), n, f.label)
                 : fmt::format("the device waiting at {} places in the step, the largest: {}", n, f.label);
  f.why = fmt::format("{:.1f}% more {} at {} places in the step, each holding over the repetitions, time {:+.1f}%",
                      f.cost_delta_pct, energy ? "energy" : "time", n, f.time_delta_pct);
  // A place where the lean side also runs work of its own joins by its wait (root_cause.cpp).
  const bool same_work = std::none_of(group.begin(), group.end(), [](const Finding* g) {
    return std::any_of(g->evidence.begin(), g->evidence.end(), [](const Evidence& x) {
      return x.kind == EvidenceClass::kOperators || x.kind == EvidenceClass::kKernels;
    });
  });
  e.summary = fmt::format("{}the device waits for {} {} more per iteration on {} ({} against {}), "
                          "at {} places in the step; at the largest: {}",
                          same_work ? "the same device work; " : "", same_work ? "it" : "its work",
                          Duration(hi.wait_seconds - lo.wait_seconds), f.costly, Duration(hi.wait_seconds),
                          Duration(lo.wait_seconds), n, e.summary);
  for (const auto& p : e.params)
    if (p.subject != "synchronizing calls") params.push_back(p);
  e.params = std::move(params);
  return f;
}

}  // namespace

void FoldSameCause(DiffReport& report) {
  // Groups of waste findings by costlier side, evidence class and cause.
  std::map<std::tuple<char, EvidenceClass, std::string>, std::vector<size_t>> groups;
  for (size_t i = 0; i < report.findings.size(); ++i) {
    const Finding& f = report.findings[i];
    if (f.verdict != Verdict::kWaste || f.evidence.empty()) continue;
    std::string cause = Cause(f);
    if (f.evidence_class() != EvidenceClass::kTimeline && cause.empty()) continue;
    groups[{f.costly, f.evidence_class(), std::move(cause)}].push_back(i);
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
  for (auto* t : {&report.timelines.a, &report.timelines.b})
    for (auto& it : t->items)
      if (it.finding >= 0) it.finding = new_index[static_cast<size_t>(it.finding)];
}

}  // namespace magneton::analysis
