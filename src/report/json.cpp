#include "report/json.h"

#include <cmath>

namespace magneton::report {
namespace {

using analysis::CallSite;
using analysis::DiffReport;
using analysis::Evidence;
using analysis::Finding;
using analysis::NamedCount;
using analysis::RunSummary;
using analysis::SideCost;
using nlohmann::json;

// JSON has no NaN or infinity: an unmeasured or unbounded number is null.
json Num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json Site(const CallSite& s) {
  if (s.empty()) return nullptr;
  return {{"kind", s.kind}, {"function", s.function}, {"file", s.file}, {"line", s.line}};
}

json Cost(const SideCost& c) {
  return {{"joules", Num(c.joules)},
          {"seconds", Num(c.seconds)},
          {"source", analysis::ToString(c.source)},
          {"instances", c.instances.size()}};
}

json Counts(const std::vector<NamedCount>& v) {
  json out = json::array();
  for (const auto& n : v)
    out.push_back({{"name", n.name},
                   {"count", n.count},
                   {"seconds", Num(n.seconds)},
                   {"call_site", Site(n.call_site)}});
  return out;
}

json EvidenceJson(const Evidence& e) {
  json config = json::array(), params = json::array();
  for (const auto& c : e.config)
    config.push_back({{"key", c.key}, {"a", c.value_a}, {"b", c.value_b}, {"by_rule", c.by_rule}});
  for (const auto& p : e.params)
    params.push_back(
        {{"subject", p.subject}, {"parameter", p.parameter}, {"a", p.value_a}, {"b", p.value_b}});
  json div = nullptr;
  if (e.divergence.depth >= 0)
    div = {{"depth", e.divergence.depth},
           {"common", Site(e.divergence.common)},
           {"a", Site(e.divergence.frame_a)},
           {"b", Site(e.divergence.frame_b)}};
  return {{"kind", analysis::ToString(e.kind)},
          {"summary", e.summary},
          {"only_a", Counts(e.only_a)},
          {"only_b", Counts(e.only_b)},
          {"all_a", Counts(e.all_a)},
          {"all_b", Counts(e.all_b)},
          {"divergence", div},
          {"config", config},
          {"params", params}};
}

json FindingJson(const Finding& f) {
  json evidence = json::array(), rules = json::array();
  for (const auto& e : f.evidence) evidence.push_back(EvidenceJson(e));
  for (const auto& h : f.rules)
    rules.push_back({{"id", h.id}, {"title", h.title}, {"recommendation", h.recommendation}});
  return {{"rank", f.rank},
          {"verdict", analysis::ToString(f.verdict)},
          {"label", f.label},
          {"costly", std::string(1, f.costly)},
          {"regions", f.regions},
          {"a", Cost(f.a)},
          {"b", Cost(f.b)},
          {"cost_delta_pct", Num(f.cost_delta_pct)},
          {"time_delta_pct", Num(f.time_delta_pct)},
          {"saved_per_iteration", Num(f.saved_per_iteration)},
          {"saved_pct_of_run", Num(f.saved_pct_of_run)},
          {"output_rel_diff", f.outputs_compared ? Num(f.output_rel_diff) : json(nullptr)},
          {"outputs_compared", f.outputs_compared},
          {"noise_pct", Num(f.noise_pct)},
          {"why", f.why},
          {"evidence_class", analysis::ToString(f.evidence_class())},
          {"evidence", evidence},
          {"rules", rules}};
}

json AccountJson(const analysis::IterationAccount& a) {
  if (!a.available) return nullptr;
  return {{"timeline", a.on_device ? "device" : "host"},
          {"unit", a.energy ? "J" : "s"},
          {"repetitions", a.periods},
          {"total", Num(a.total)},
          {"regions", Num(a.regions)},
          {"unmatched_ops", Num(a.unmatched)},
          {"idle", Num(a.idle)},
          {"unattributed", Num(a.unattributed)},
          {"waiting", Num(a.waiting)},
          {"matched_share", Num(a.matched_share())},
          {"seconds", Num(a.seconds)},
          {"host_seconds", Num(a.host_seconds)},
          {"busy_seconds", Num(a.busy_seconds)},
          {"idle_seconds", Num(a.idle_seconds)},
          {"run", Num(a.run)},
          {"outside_repetitions", Num(a.outside)}};
}

json RunJson(const RunSummary& r, const std::string& path) {
  return {{"path", path},
          {"command", r.command},
          {"host", r.host},
          {"label", r.label},
          {"energy_measured", r.energy_measured},
          {"replays", r.has_replays},
          {"kernels_recorded", r.has_kernels},
          {"joules", Num(r.joules)},
          {"seconds", Num(r.seconds)},
          {"iterations", r.iterations},
          {"ops_cost", Num(r.ops_cost)},
          {"measured_repeats", r.measured_repeats},
          {"ops", r.ops},
          {"kernels", r.kernels},
          {"devices", r.devices},
          {"energy_methods", r.energy_methods},
          {"per_iteration", AccountJson(r.account)},
          {"untraced", r.untraced ? json{{"steps", r.untraced->steps},
                                         {"seconds", Num(r.untraced->seconds)},
                                         {"joules", Num(r.untraced->joules)}}
                                  : json(nullptr)}};
}

}  // namespace

json DiffToJson(const DiffReport& r, const RunPaths& paths) {
  int counts[3] = {0, 0, 0};
  double saved_pct = 0;
  json findings = json::array(), regions = json::array(), config = json::array();
  for (const auto& f : r.findings) {
    counts[static_cast<int>(f.verdict)]++;
    if (f.verdict == analysis::Verdict::kWaste) saved_pct += f.saved_pct_of_run;
    findings.push_back(FindingJson(f));
  }
  for (const auto& p : r.regions)
    regions.push_back({{"id", p.region},
                       {"finding", p.finding},
                       {"ops_a", p.ops_a},
                       {"ops_b", p.ops_b},
                       {"a", Cost(p.a)},
                       {"b", Cost(p.b)},
                       {"output_rel_diff",
                        r.matched_by_range || r.matched_by_kernels ? json(nullptr) : Num(p.output_rel_diff)}});
  for (const auto& c : r.config) config.push_back({{"key", c.key}, {"a", c.value_a}, {"b", c.value_b}});
  const auto& o = r.options;
  return {{"schema_version", DiffReport::kSchemaVersion},
          {"tool", "magneton diff"},
          {"magneton_version", MAGNETON_VERSION},
          {"unit", r.cost_unit},
          {"energy_measured", r.energy_measured},
          {"options",
           {{"threshold", o.threshold},
            {"max_speedup", o.max_speedup},
            {"output_tolerance", o.output_tolerance},
            {"match_tolerance", o.match_tolerance},
            {"min_share", o.min_share},
            {"significance", o.significance},
            {"normalize_host_time", o.normalize_host_time},
            {"rules", o.rules.size()}}},
          {"runs", {{"a", RunJson(r.a, paths.a)}, {"b", RunJson(r.b, paths.b)}}},
          {"summary",
           {{"waste", counts[0]},
            {"trade_off", counts[1]},
            {"noise", counts[2]},
            {"saved_per_iteration", Num(r.total_saved_per_iteration())},
            {"saved_pct_of_run", Num(saved_pct)},
            {"regions", r.regions.size()},
            {"matched_by", r.matched_by_range ? "nvtx_range" : r.matched_by_kernels ? "kernels" : "values"},
            {"host_time_ratio", Num(r.host_time_ratio)},
            {"matched_share", {{"a", Num(r.matched_share_a)}, {"b", Num(r.matched_share_b)}}},
            {"unmatched_ops", {{"a", r.unmatched_ops_a}, {"b", r.unmatched_ops_b}}}}},
          {"notes", r.notes},
          {"config_diff", config},
          {"findings", findings},
          {"regions", regions}};
}

json CheckToJson(const DiffReport& r, const analysis::RegressionReport& c, const RunPaths& paths) {
  json regressions = json::array();
  for (const auto& g : c.regressions)
    regressions.push_back({{"label", g.label},
                           {"baseline", Num(g.base)},
                           {"new", Num(g.now)},
                           {"pct", Num(g.pct)},
                           {"finding_rank", g.finding ? json(g.finding->rank) : json(nullptr)}});
  return {{"schema_version", DiffReport::kSchemaVersion},
          {"tool", "magneton check"},
          {"magneton_version", MAGNETON_VERSION},
          {"unit", r.cost_unit},
          {"max_regression", c.max_regression},
          {"regressed", c.regressed()},
          {"whole_run", c.whole_label},
          {"whole_run_pct", Num(c.whole_pct)},
          {"regressions", regressions},
          {"diff", DiffToJson(r, paths)}};
}

}  // namespace magneton::report
