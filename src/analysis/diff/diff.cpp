#include "analysis/diff/diff.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "analysis/diff/call_site.h"
#include "analysis/diff/fused_regions.h"
#include "analysis/diff/dispatch.h"
#include "analysis/diff/host_cpu.h"
#include "analysis/diff/idle_time.h"
#include "analysis/diff/host_time.h"
#include "analysis/diff/kernel_regions.h"
#include "analysis/diff/region_cost.h"
#include "analysis/diff/root_cause.h"
#include "analysis/diff/same_work.h"
#include "analysis/diff/unmatched_work.h"
#include "analysis/diff/verdict.h"

namespace magneton::analysis {

int DiffReport::waste_count() const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(),
                                        [](const Finding& f) { return f.verdict == Verdict::kWaste; }));
}

double DiffReport::total_saved_per_iteration() const {
  double s = 0;
  for (const auto& f : findings)
    if (f.verdict == Verdict::kWaste) s += f.saved_per_iteration;
  return s;
}

namespace {

// Under this share of an iteration in matched regions, the report warns.
constexpr double kLowMatchedShare = 0.8;

int64_t Iterations(const Run& run, const DiffOptions& o) {
  if (o.iterations > 0) return o.iterations;
  auto it = run.info.extra.find("iterations");
  if (it != run.info.extra.end()) {
    char* end = nullptr;
    long long n = std::strtoll(it->second.c_str(), &end, 10);
    if (end && *end == '\0' && n > 0) return n;
  }
  return 1;
}

RunSummary Summarize(const Run& run, const CostModel& cost, const energy::Attribution& energy,
                     const DiffOptions& o) {
  // `energy` is the measured pass's when there is one: that is where costs come from.
  RunSummary s;
  s.command = run.info.command;
  s.host = run.info.host;
  if (auto it = run.info.extra.find("label"); it != run.info.extra.end()) s.label = it->second;
  s.energy_measured = cost.energy_measured();
  s.measured_repeats = cost.measured_repeats();
  s.has_replays = cost.used_replays();
  s.has_kernels = cost.has_kernels();
  auto whole = cost.WholeRun();
  s.joules = whole.joules;
  s.seconds = whole.seconds;
  s.iterations = Iterations(run, o);
  s.ops = std::count_if(run.ops.begin(), run.ops.end(),
                        [](const Op& op) { return op.framework != "nvtx" && op.framework != kSegmentFramework; });
  s.kernels = static_cast<int64_t>(run.kernels.size());
  for (const auto& d : run.devices) s.devices.push_back(fmt::format("{} {}", d.kind, d.name));
  for (const auto& d : energy.devices) {
    std::string name = d.device >= 0 && d.device < static_cast<int32_t>(run.devices.size())
                           ? run.devices[d.device].name
                           : fmt::format("device {}", d.device);
    s.energy_methods.push_back(fmt::format("{}: {}", name, d.method));
  }
  return s;
}

std::vector<ConfigDelta> ConfigDiff(const Run& a, const Run& b) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a.config) keys.insert(k);
  for (const auto& [k, v] : b.config) keys.insert(k);
  std::vector<ConfigDelta> out;
  for (const auto& k : keys) {
    auto ia = a.config.find(k), ib = b.config.find(k);
    std::string va = ia == a.config.end() ? "<unset>" : ia->second;
    std::string vb = ib == b.config.end() ? "<unset>" : ib->second;
    if (va != vb) out.push_back({k, va, vb});
  }
  return out;
}

// The differing keys that can explain a finding: a key one run lacks only
// counts when that run snapshots its namespace at all (the part before the
// first '.'), so a JAX run's missing torch.* keys steer nothing, while an
// environment variable set on one side only still does.
std::vector<ConfigDelta> ComparableKeys(const Run& a, const Run& b, const std::vector<ConfigDelta>& deltas) {
  auto has_namespace = [](const Run& run, const std::string& key) {
    std::string ns = key.substr(0, key.find('.') + 1);
    auto it = run.config.lower_bound(ns);
    return it != run.config.end() && it->first.compare(0, ns.size(), ns) == 0;
  };
  std::vector<ConfigDelta> out;
  for (const auto& d : deltas)
    if ((d.value_a != "<unset>" || has_namespace(a, d.key)) && (d.value_b != "<unset>" || has_namespace(b, d.key)))
      out.push_back(d);
  return out;
}

// Compute-op names with their call sites: regions that repeat the same code
// (every layer, every iteration) share this key and become one finding.
std::string GroupKey(const RegionSide& side, std::vector<std::string>* names) {
  std::vector<std::string> parts;
  auto compute = ComputeOps(side);
  if (compute.empty()) compute = *side.ops;  // only metadata: still group by what it is
  for (auto id : compute) {
    const Op& op = side.run->ops[id];
    if (names) names->push_back(op.name);
    parts.push_back(op.name + "@" + Describe(UserCallSite(*side.run, op.stack)));
  }
  std::sort(parts.begin(), parts.end());
  return fmt::format("{}", fmt::join(parts, ";"));
}

std::string OpsPhrase(std::vector<std::string> names) {
  std::map<std::string, int> counts;
  std::vector<std::string> order;
  for (auto& n : names)
    if (counts[n]++ == 0) order.push_back(n);
  std::vector<std::string> parts;
  for (const auto& n : order) parts.push_back(counts[n] > 1 ? fmt::format("{} x{}", n, counts[n]) : n);
  if (parts.size() > 4) {
    size_t more = parts.size() - 3;
    parts.resize(3);
    parts.push_back(fmt::format("{} more", more));
  }
  return parts.empty() ? "(no ops)" : fmt::format("{}", fmt::join(parts, " + "));
}

// A recording pass's times include its fingerprinting (seconds where the
// program takes milliseconds): set against a measured pass, the gap reads as
// a machine hundreds of times slower, or as waste on the wrong side.
Status MeasuredOnBothOrNeither(const DiffInput& a, const DiffInput& b) {
  for (auto [side, in, other] : {std::tuple{'a', &a, &b}, std::tuple{'b', &b, &a}})
    if (!in->measured && other->measured && Fingerprinted(*in->run))
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("run {} was recorded with fingerprints and has no measured pass, while run {} has "
                                   "one: a recording pass's times include its fingerprinting and cannot be set "
                                   "against a measured pass's (give --measured-{} too, or neither)",
                                   side, side == 'a' ? 'b' : 'a', side));
  // Replay measurements (record(..., replay=True)) cost the operators apart from the fingerprinting.
  if (!a.measured && !b.measured && Fingerprinted(*a.run) && Fingerprinted(*b.run) && a.run->replays.empty() &&
      b.run->replays.empty())
    return MakeError(ErrorCode::kInvalidArgument,
                     "both runs are recording passes (fingerprints) and no measured pass was given: their times are "
                     "the fingerprinting's, not the programs' (give --measured-a and --measured-b, or record each "
                     "side with `python -m magneton record`, which writes both passes into one file)");
  return Status::Ok();
}

// By op id of one side's run (nested ops too, by their top-level ancestor): its matched region, or -1.
std::vector<int32_t> RegionOfOps(const Run& run, const MatchResult& matched, char side) {
  std::vector<int32_t> out(run.ops.size(), -1);
  for (size_t r = 0; r < matched.regions.size(); ++r)
    for (int64_t op : side == 'a' ? matched.regions[r].ops_a : matched.regions[r].ops_b)
      if (op >= 0 && op < static_cast<int64_t>(out.size())) out[static_cast<size_t>(op)] = static_cast<int32_t>(r);
  for (const Op& op : run.ops)  // ops come after their parents: one pass reaches the top
    if (op.parent != kNone && op.parent < op.id) out[static_cast<size_t>(op.id)] = out[static_cast<size_t>(op.parent)];
  return out;
}

// Aligns each side's measured pass, if any, and says where costs come from.
Status UseMeasuredPasses(const DiffInput& in, char side, const MatchResult& matched,
                         const std::optional<UntracedSteps>& untraced, CostModel& cost,
                         std::vector<std::string>& notes) {
  if (!in.measured) {
    if (Fingerprinted(*in.run))
      notes.push_back(fmt::format(
          "run {} was recorded with fingerprints and no measured pass was given: its times and energy "
          "include the fingerprinting (record a pass without fingerprints and pass it with --measured-{})",
          side, side));
    return Status::Ok();
  }
  const double program_seconds = untraced && untraced->steps > 0 ? untraced->seconds : kUnmeasured;
  if (in.alignment) {  // placed by the caller, who also says how
    cost.UseMeasuredPass(*in.measured, *in.measured_energy, *in.alignment, program_seconds);
    return Status::Ok();
  }
  const std::vector<int32_t> regions = RegionOfOps(*in.run, matched, side);
  auto alignment = AlignPasses(*in.run, *in.measured, &regions);
  if (!alignment.ok())
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("measured pass of run {}: {}", side, alignment.error().message));
  cost.UseMeasuredPass(*in.measured, *in.measured_energy, std::move(*alignment), program_seconds);
  const PassAlignment& al = *cost.alignment();
  const char* items = al.by_device_work ? "kernels and copies" : "operators";
  notes.push_back(fmt::format("run {}: time and energy from its measured pass ({} repetition{} of the recorded "
                              "step of {} {}{}{}{}{})",
                              side, al.repeats, al.repeats == 1 ? "" : "s", al.step_items, items,
                              al.recording_steps > 1
                                  ? fmt::format(", one of {} that the recording repeats", al.recording_steps)
                                  : "",
                              al.by_device_work ? ", aligned with the recording's by launch order" : "",
                              al.exact == al.repeats ? "" : fmt::format("; {} identical to it", al.exact),
                              al.outside ? fmt::format("; {} measured {} outside the repetitions", al.outside, items)
                                         : ""));
  if (al.by_names)
    notes.push_back(fmt::format(
        "run {}: its step's shapes change from one iteration to the next (a loop over a growing sequence, such as "
        "decoding): the measured iterations are aligned with the recorded one by {} names alone, so each region "
        "costs the mean over the iterations, not the recorded iteration's shapes",
        side, al.by_device_work ? "kernel" : "operator"));
  if (al.outside > al.repeats * al.step_items)
    notes.push_back(fmt::format(
        "run {}: most of its measured pass lies outside the repetitions of the recorded step: the recorded step is "
        "not the step the program repeats (a first iteration that creates state, such as an optimizer's, differs "
        "from the rest); record the recording pass over 3 iterations or more, and the diff takes its last",
        side));
  if (al.unaligned > 0)
    notes.push_back(fmt::format("run {}: {} measured {} inside the repetitions align with nothing recorded "
                                "(their energy counts as unattributed): {}",
                                side, al.unaligned, items, MostUnaligned(al)));
  return Status::Ok();
}

// The fewest sensor readings behind the energy of a device that did work
// (INT64_MAX when none did).
int64_t FewestSensorUpdates(const energy::Attribution& e, int64_t* window_ns) {
  int64_t n = std::numeric_limits<int64_t>::max();
  for (const auto& d : e.devices)
    if (d.method != "unavailable" && d.busy_j > 0 && d.sensor_updates < n) {
      n = d.sensor_updates;
      *window_ns = d.end_ns - d.start_ns;
    }
  return n;
}

// Decides what costs are compared in (energy, device time, host time) and notes it.
void ChooseUnit(DiffReport& report, CostModel& ca, CostModel& cb, const energy::Attribution& ea,
                const energy::Attribution& eb, const DiffOptions& options) {
  bool resolved = true;
  for (auto [side, cost, e] : {std::tuple{'a', &ca, &ea}, std::tuple{'b', &cb, &eb}}) {
    if (!cost->energy_measured() || cost->used_replays()) continue;
    int64_t window_ns = 0;
    int64_t n = FewestSensorUpdates(*e, &window_ns);
    if (n >= options.min_sensor_updates) continue;
    resolved = false;
    report.notes.push_back(fmt::format(
        "run {}: its energy rests on {} sensor reading{} over {:.2f} s, too few to tell regions apart (at "
        "least {}): both sides are compared by time; record a longer measured pass (more repetitions)",
        side, n, n == 1 ? "" : "s", window_ns * 1e-9, options.min_sensor_updates));
  }
  report.energy_measured = resolved && ca.energy_measured() && cb.energy_measured();
  report.cost_unit = report.energy_measured ? "J" : "s";
  report.host_time_only = !report.energy_measured && !report.a.has_kernels && !report.b.has_kernels;
  if (report.energy_measured) return;
  // Energy compares with energy only; one unmeasured side makes both time.
  if (ca.energy_measured() != cb.energy_measured())
    report.notes.push_back(fmt::format("energy was measured in run {} only: both sides are compared by time",
                                       ca.energy_measured() ? 'a' : 'b'));
  else if (!ca.energy_measured())
    report.notes.push_back(
        "energy unmeasured in both runs (no energy or power sensor): time stands in for energy, "
        "so a finding means more time for the same result");
  report.a.joules = report.b.joules = kUnmeasured;
  ca.UseTimeOnly();
  cb.UseTimeOnly();
  if (report.host_time_only) {
    ca.UseFastestRepetition();
    cb.UseFastestRepetition();
  }
}

// Divides b's host times by the machine's speed ratio when the regions whose
// code cannot differ show one (host_time.h); returns the ratio used.
double NormalizeHostTime(const Run& a, const Run& b, const CostModel& ca, const CostModel& cb,
                         const MatchResult& match, DiffReport& report, std::vector<SideCost>& costs_a,
                         std::vector<SideCost>& costs_b) {
  HostTimeJudgement j = JudgeHostTime(a, b, ca, cb, match, costs_a, costs_b);
  if (!j.note.empty()) report.notes.push_back(j.note);
  if (j.ratio == 1) return 1;
  for (auto& c : costs_b) {
    c.seconds /= j.ratio;
    for (auto& x : c.instances) x /= j.ratio;
  }
  report.b.ops_cost /= j.ratio;
  report.host_time_ratio = j.ratio;
  return j.ratio;
}

// The loops the one-command route took for the runs' steps (RunInfo extra
// "step_loop"), where little of the iterations matched: one side's step may
// be a loop inside the other's (rows against a batch), or a library's loop
// found by sampling ("step_loop_sampled") may have recorded another of its
// iterations on each side (a later training step, a later decoding position).
std::optional<std::string> StepLoopsNote(const Run& a, const Run& b, const DiffReport& report) {
  auto loop = [](const Run& r) {
    auto it = r.info.extra.find("step_loop");
    if (it == r.info.extra.end()) return std::string("not found by it");
    return r.info.extra.count("step_loop_sampled") ? it->second + ", found by sampling" : it->second;
  };
  if (!a.info.extra.count("step_loop") && !b.info.extra.count("step_loop")) return std::nullopt;
  if (!report.regions.empty() && std::min(report.matched_share_a, report.matched_share_b) >= kLowMatchedShare)
    return std::nullopt;
  const bool sampled = a.info.extra.count("step_loop_sampled") || b.info.extra.count("step_loop_sampled");
  std::string note = fmt::format(
      "the steps, as `python -m magneton record` found them: a {}, b {}; if they are not the same step of the "
      "program (one a loop inside the other's{}), record again naming the loop that drives the steps "
      "(--step-line FILE:N)",
      loop(a), loop(b),
      sampled ? ", or different iterations of a loop found by sampling: a later training step, a later decoding "
                "position" : "");
  // The loop's iteration each recorded with values ("step_iteration"): a nested
  // loop is taken after more iterations than a flat one, so the same training
  // may be recorded at two different steps, whose weights and batches differ.
  auto iteration = [](const Run& r) {
    auto it = r.info.extra.find("step_iteration");
    return it == r.info.extra.end() ? 0L : std::strtol(it->second.c_str(), nullptr, 10);
  };
  const long ia = iteration(a), ib = iteration(b);
  if (ia > 0 && ib > 0 && ia != ib)
    note += fmt::format(
        "; a recorded its loop's iteration {} with values, b its iteration {}: where the weights or the batches "
        "change from step to step these compute different values, so record {} with --warmup raised by {} "
        "(--warmup {} where it was the default 2)",
        ia, ib, ia < ib ? 'a' : 'b', std::labs(ib - ia), 2 + std::labs(ib - ia));
  return note;
}

// Seconds per iteration in the top-level calls named `scope` (a compiled call's measured time).
// Where the program's own calls ran untraced after them (record_jax's `measured`: many
// calls where the op-level pass has a few), their time per step is the measurement.
std::pair<std::string, double> CallSeconds(const Run& run, const std::string& scope, const RunSummary& summary) {
  if (summary.untraced && summary.untraced->steps > 0)
    return {fmt::format("{} as the program runs it", scope), summary.untraced->seconds};
  double s = 0;
  for (const auto& op : run.ops)
    if (op.parent == kNone && op.name == scope) s += static_cast<double>(op.end_ns - op.start_ns) * 1e-9;
  return {scope, s / static_cast<double>(std::max<int64_t>(1, summary.iterations))};
}

// A finding whose two sides are both shares of compiled calls (estimates,
// dispatch.h) stands only where the measured calls differ the same way by
// the threshold; else the difference is in the estimate's split, not backed.
void BackByCompiledCalls(Finding& f, const std::pair<std::string, double>& call_a,
                         const std::pair<std::string, double>& call_b, const DiffOptions& options) {
  const double hi = f.costly == 'a' ? call_a.second : call_b.second, lo = f.costly == 'a' ? call_b.second : call_a.second;
  if (f.verdict == Verdict::kNoise || hi >= lo * (1 + options.threshold)) {
    f.why += "; both times are estimates (shares of compiled calls)";
    // A share splits a call's measured time by how long each operation ran
    // on its own, which the compiler's fusion does not follow: the finding
    // claims no more of its side's cost than the calls differ by.
    const double cap = hi > 0 ? (hi - lo) / hi * 100 : 0;
    if (f.verdict != Verdict::kNoise && f.saved_pct_of_run > cap) {
      f.why += fmt::format(", sized by the calls' own difference ({:.1f}% of {} {}; the shares said {:.1f}%)", cap,
                           f.costly == 'a' ? call_a.first : call_b.first, Duration(hi), f.saved_pct_of_run);
      const bool timed = std::isnan(f.a.joules) && std::isnan(f.b.joules);  // the cost is seconds: the calls' own
      f.saved_per_iteration = timed ? hi - lo : f.saved_per_iteration * cap / f.saved_pct_of_run;
      f.saved_pct_of_run = cap;
    }
    return;
  }
  f.verdict = Verdict::kNoise;
  f.why = fmt::format(
      "{:.1f}% apart in estimated time: both sides are shares of compiled calls ({} {} on a, {} {} on b), whose "
      "measured times do not differ that way by the {:.0f}% threshold",
      f.cost_delta_pct, call_a.first, Duration(call_a.second), call_b.first, Duration(call_b.second),
      options.threshold * 100);
}

// Regions that run the same code, grouped; each group becomes one finding.
struct Groups {
  std::vector<Finding> findings;
  std::vector<std::string> label_a, label_b;       // operator phrases
  std::vector<const RegionMatch*> representative;  // the costliest instance, for root cause
  std::vector<double> representative_cost;
  std::vector<size_t> of_region;  // by region index
};

// Whether a GroupKey names a line for every operator ("op@" has none).
bool OneLine(const std::string& key) {
  return !key.empty() && key.back() != '@' && key.find("@;") == std::string::npos;
}

std::string SortedNames(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return fmt::format("{}", fmt::join(names, ";"));
}

// Each region's group: regions with the same keys on both sides share one,
// and so do regions that run one line on one side and the same operators on
// the other from different lines (a batch and its labels copied by one line
// of a, by two of b: one cause, one finding).
std::vector<size_t> GroupOfRegions(const Run& a, const Run& b, const CostModel& ca, const CostModel& cb,
                                   const MatchResult& match, std::vector<std::vector<std::string>>* names_a,
                                   std::vector<std::vector<std::string>>* names_b) {
  const size_t n = match.regions.size();
  std::vector<size_t> parent(n);
  for (size_t i = 0; i < n; ++i) parent[i] = i;
  auto root = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::map<std::string, size_t> first;  // key -> the first region that had it
  auto join = [&](const std::string& key, size_t ri) {
    auto [it, fresh] = first.emplace(key, ri);
    if (!fresh) parent[root(ri)] = root(it->second);
  };
  names_a->resize(n);
  names_b->resize(n);
  for (size_t ri = 0; ri < n; ++ri) {
    const RegionMatch& r = match.regions[ri];
    const std::string ka = GroupKey({&a, &ca, &r.ops_a}, &(*names_a)[ri]);
    const std::string kb = GroupKey({&b, &cb, &r.ops_b}, &(*names_b)[ri]);
    join("both " + ka + " || " + kb, ri);
    if (OneLine(ka)) join("a " + ka + " || " + SortedNames((*names_b)[ri]), ri);
    if (OneLine(kb)) join("b " + SortedNames((*names_a)[ri]) + " || " + kb, ri);
  }
  std::vector<size_t> out(n);
  for (size_t ri = 0; ri < n; ++ri) out[ri] = root(ri);
  return out;
}

Groups GroupRegions(const Run& a, const Run& b, const CostModel& ca, const CostModel& cb,
                    const MatchResult& match, std::vector<SideCost>& costs_a, std::vector<SideCost>& costs_b,
                    DiffReport& report) {
  Groups g;
  std::vector<std::vector<std::string>> names_a, names_b;
  const std::vector<size_t> root = GroupOfRegions(a, b, ca, cb, match, &names_a, &names_b);
  std::map<size_t, size_t> group_of;  // root region -> finding
  for (size_t ri = 0; ri < match.regions.size(); ++ri) {
    const RegionMatch& r = match.regions[ri];
    std::vector<std::string>& na = names_a[ri];
    std::vector<std::string>& nb = names_b[ri];
    auto [it, fresh] = group_of.emplace(root[ri], g.findings.size());
    size_t gi = it->second;
    if (fresh) {
      g.findings.emplace_back();
      g.label_a.push_back(OpsPhrase(std::move(na)));
      g.label_b.push_back(OpsPhrase(std::move(nb)));
      g.representative.push_back(&r);
      g.representative_cost.push_back(-1);
    }
    SideCost& cost_a = costs_a[ri];
    SideCost& cost_b = costs_b[ri];
    // Instances pair up by position (repetition of the measured pass).
    size_t n = std::min(cost_a.instances.size(), cost_b.instances.size());
    cost_a.instances.resize(n);
    cost_b.instances.resize(n);
    Finding& f = g.findings[gi];
    f.outputs_compared = match.by_values();
    f.regions.push_back(r.id);
    f.output_rel_diff = std::max(f.output_rel_diff, r.output_rel_diff);
    AddInstance(f.a, cost_a, f.regions.size() - 1);
    AddInstance(f.b, cost_b, f.regions.size() - 1);
    g.of_region.push_back(gi);
    if (double c = std::max(cost_a.cost(), cost_b.cost()); c > g.representative_cost[gi]) {
      g.representative_cost[gi] = c;
      g.representative[gi] = &r;
    }
    RegionPair pair{r.id, -1, {}, {}, cost_a, cost_b, r.output_rel_diff};
    for (auto id : r.ops_a) pair.ops_a.push_back(a.ops[id].name);
    for (auto id : r.ops_b) pair.ops_b.push_back(b.ops[id].name);
    report.regions.push_back(std::move(pair));
  }
  return g;
}

// Evidence, recommendations and the call site for a non-noise finding. A
// finding with nothing structural behind it becomes noise, with what explains
// it (same_work.h); returns whether it did.
bool Explain(Finding& f, const RegionSide& ra, const RegionSide& rb, const DiffReport& report,
             const DiffOptions& options) {
  auto rc = FindRootCause(ra, rb, f.costly, ComparableKeys(*ra.run, *rb.run, report.config), options.rules);
  f.evidence = std::move(rc.evidence);
  f.rules = std::move(rc.rules);
  // Where the costly side's code runs, so the label points at a line.
  const RegionSide& costly = f.costly == 'a' ? ra : rb;
  auto compute = ComputeOps(costly);
  if (!compute.empty())
    if (auto site = Describe(UserCallSite(*costly.run, costly.run->ops[compute.front()].stack)); !site.empty())
      f.label += " at " + site;
  if (!Unbacked(f)) return false;
  JudgeSameWork(f, ra, rb, report, options);
  return true;
}

// A region group run eagerly on one side and inside a compiled call on the
// other becomes noise, compared within the eager-vs-compiled finding: on the
// compiled side its cost is a share of the call's (or misses the work the
// compiler fused into other kernels). Returns whether it did.
bool FoldIntoDispatch(Finding& f, size_t region, const DispatchUse& da, const DispatchUse& db) {
  if (region >= da.region_compiled.size() || region >= db.region_compiled.size() ||
      da.region_compiled[region] == db.region_compiled[region])
    return false;
  const char compiled = da.region_compiled[region] ? 'a' : 'b';
  f.verdict = Verdict::kNoise;
  f.why = fmt::format(
      "{:.1f}% apart, but it runs eagerly on {} and inside a compiled call on {}: compared within the "
      "eager-vs-compiled finding, since a compiled call's cost does not split into its regions",
      f.cost_delta_pct, compiled == 'a' ? 'b' : 'a', compiled);
  return true;
}

// The findings in report order (RankFindings); regions point at their finding.
void Rank(DiffReport& report, Groups& g) {
  const std::vector<int> new_index = RankFindings(g.findings);
  report.findings = std::move(g.findings);
  for (size_t i = 0; i < report.regions.size(); ++i) report.regions[i].finding = new_index[g.of_region[i]];
}

// Kernels linked to no operator (or launched outside every NVTX range, when
// ranges are the regions) carry energy that no region holds: say so, since
// regions then look cheaper than they are (0 J when none is linked).
void NoteUnlinkedKernels(const DiffInput& in, char side, bool by_range, std::vector<std::string>& notes) {
  const Run& run = in.measured ? *in.measured : *in.run;
  if (run.ops.empty()) return;
  int64_t unlinked = 0;
  for (const auto& k : run.kernels) unlinked += k.op == kNone;
  if (unlinked * 20 <= static_cast<int64_t>(run.kernels.size())) return;  // under 5%
  notes.push_back(fmt::format("run {}: {} of {} kernels{} {}: their time and energy are in no region", side, unlinked,
                              run.kernels.size(), in.measured ? " of its measured pass" : "",
                              by_range ? "were launched outside every NVTX range" : "are linked to no operator"));
}

// The run-level host CPU comparison (host_cpu.h), from the passes the costs
// come from. A fingerprinting pass without a measured one is left out: its
// CPU time is mostly the fingerprinting's.
void AddHostCpuFinding(const DiffInput& in_a, const DiffInput& in_b, const CostModel& ca, const CostModel& cb,
                       const DiffReport& report, const DiffOptions& options, std::vector<Finding>& findings) {
  if ((!in_a.measured && Fingerprinted(*in_a.run)) || (!in_b.measured && Fingerprinted(*in_b.run))) return;
  const Run& ra = in_a.measured ? *in_a.measured : *in_a.run;
  const Run& rb = in_b.measured ? *in_b.measured : *in_b.run;
  // The repetitions' stretch: from the first one's start to the last full one's end.
  auto use = [](const Run& run, const CostModel& cost) {
    const auto& steps = cost.timeline().steps;
    if (steps.size() < 2) return MeasureHostCpu(run, cost.measured_repeats());
    return MeasureHostCpu(run, static_cast<int64_t>(steps.size()) - 1, steps.front().start_ns, steps.back().start_ns);
  };
  const char host_slower = ca.host_slower_throughout() ? 'a' : cb.host_slower_throughout() ? 'b' : 0;
  auto f = HostCpuFinding(use(ra, ca), use(rb, cb), report, ComparableKeys(*in_a.run, *in_b.run, report.config),
                          options, host_slower);
  if (!f) return;
  f->outputs_compared = !report.matched_by_range && !report.matched_by_kernels;
  findings.push_back(std::move(*f));
}

// Which recorded ops a matched region holds, nested ones included.
std::vector<char> InRegions(const CostModel& cost, size_t ops, const MatchResult& match, bool side_a) {
  std::vector<int64_t> tops;
  for (const auto& r : match.regions)
    for (auto op : side_a ? r.ops_a : r.ops_b) tops.push_back(op);
  std::vector<char> out(ops, 0);
  for (auto o : cost.index().Subtrees(tops))
    if (o < static_cast<int64_t>(ops)) out[o] = 1;
  return out;
}

// Repetitions of a measured pass that one or more take more than twice the
// typical one (another process, a garbage collection, I/O): the
// per-iteration totals are means and carry them, the regions' costs do not.
std::optional<std::string> UnevenIterations(const StepTimeline& tl) {
  std::vector<double> s;
  for (size_t i = 0; i < tl.steps.size(); ++i)
    if (tl.full_period(i)) s.push_back(tl.steps[i].length_ns() * 1e-9);
  if (s.size() < 3) return std::nullopt;
  std::vector<double> sorted = s;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2], slowest = sorted.back();
  if (slowest <= 2 * median) return std::nullopt;
  const auto slow = std::count_if(s.begin(), s.end(), [&](double x) { return x > 2 * median; });
  return fmt::format(
      "its iterations are uneven: {} of {} took more than twice the median {:.3g} ms (the slowest {:.3g} ms), slowed "
      "by something outside the step (another process, a garbage collection, I/O); the per-iteration totals are "
      "means and include them, the regions' costs (each region's median or fastest repetition) do not",
      slow, s.size(), median * 1e3, slowest * 1e3);
}

// The per-iteration split of each side (accounting.h); the matched share then
// comes from it, and a low one is said.
void AccountIterations(const MatchResult& match, const CostModel& ca, const CostModel& cb, DiffReport& report) {
  bool host_said = false;
  for (auto [side, cost, summary, share] : {std::tuple{'a', &ca, &report.a, &report.matched_share_a},
                                            std::tuple{'b', &cb, &report.b, &report.matched_share_b}}) {
    const size_t ops = cost->index().ops();
    summary->account = AccountIteration(*cost, InRegions(*cost, ops, match, side == 'a'), report.energy_measured);
    const IterationAccount& acc = summary->account;
    if (!acc.available || acc.total <= 0) continue;
    const StepTimeline& tl = cost->timeline();
    // Operators run synchronously on a CPU: their own times, recorded one by
    // one, are the measurement, and the recording's cost is in each of them.
    if (!tl.on_device && !std::exchange(host_said, true))
      report.notes.push_back(
          "no device timeline: iterations are timed on the host from the operators themselves, recorded one by one "
          "(the recording adds its own cost to each operator, on both sides alike; with kernels traced on a GPU, "
          "the measured pass records none)");
    if (tl.foreign_windows > 0)
      report.notes.push_back(fmt::format(
          "run {}: {} of its iterations also ran {} {} outside the step (the program's other work between steps: "
          "an evaluation, logging, a checkpoint); they are left out of the per-iteration figures",
          side, tl.foreign_windows, tl.foreign_items, tl.on_device ? "kernels and copies" : "operators"));
    if (auto uneven = UnevenIterations(tl)) report.notes.push_back(fmt::format("run {}: {}", side, *uneven));
    if (std::string note = UntracedNote(side, summary->untraced, tl); !note.empty()) report.notes.push_back(note);
    *share = acc.matched_share();
    if (*share >= kLowMatchedShare || match.regions.empty()) continue;
    auto pct = [&](double x) { return x / acc.total * 100; };
    report.notes.push_back(fmt::format(
        "run {}: only {:.0f}% of an iteration's {} is in matched regions (operators in no region {:.0f}%, {} "
        "{:.0f}%, unattributed {:.0f}%): findings can miss what lies outside them",
        side, pct(acc.regions), acc.energy ? "energy" : "time", pct(acc.unmatched),
        acc.on_device ? "device idle" : "host after the last operator", pct(acc.idle), pct(acc.unattributed)));
  }
}

}  // namespace

DiffReport Diff(const Run& a, const Run& b, const MatchResult& match, const energy::Attribution& energy_a,
                const energy::Attribution& energy_b, const DiffOptions& options) {
  return std::move(Diff(DiffInput{&a, &energy_a}, DiffInput{&b, &energy_b}, match, options)).value();
}

Result<DiffReport> Diff(const DiffInput& in_a, const DiffInput& in_b, const MatchResult& matched,
                        const DiffOptions& options) {
  const Run& a = *in_a.run;
  const Run& b = *in_b.run;
  DiffReport report;
  report.options = options;
  CostModel ca(a, *in_a.energy), cb(b, *in_b.energy);
  MAGNETON_RETURN_IF_ERROR(UseMeasuredPasses(in_a, 'a', matched, options.untraced_a, ca, report.notes));
  MAGNETON_RETURN_IF_ERROR(UseMeasuredPasses(in_b, 'b', matched, options.untraced_b, cb, report.notes));
  MAGNETON_RETURN_IF_ERROR(MeasuredOnBothOrNeither(in_a, in_b));
  report.matched_by_range = matched.by_range_name;
  report.matched_by_kernels = matched.by_kernels;
  if (!matched.by_kernels) {  // segments hold every aligned kernel; the caller notes the rest
    NoteUnlinkedKernels(in_a, 'a', report.matched_by_range, report.notes);
    NoteUnlinkedKernels(in_b, 'b', report.matched_by_range, report.notes);
  }
  report.a = Summarize(a, ca, in_a.measured ? *in_a.measured_energy : *in_a.energy, options);
  report.b = Summarize(b, cb, in_b.measured ? *in_b.measured_energy : *in_b.energy, options);
  report.a.untraced = options.untraced_a;
  report.b.untraced = options.untraced_b;
  ChooseUnit(report, ca, cb, in_a.measured ? *in_a.measured_energy : *in_a.energy,
             in_b.measured ? *in_b.measured_energy : *in_b.energy, options);
  if (report.a.has_replays || report.b.has_replays)
    report.notes.push_back("operator energy from replay measurements where present, else attributed");
  if (report.a.iterations != report.b.iterations)
    report.notes.push_back(
        fmt::format("the runs ran {} and {} iterations: savings are per iteration of run a",
                    report.a.iterations, report.b.iterations));
  report.config = ConfigDiff(a, b);
  for (auto [side, run] : {std::pair{'a', &a}, std::pair{'b', &b}})
    if (run->config.empty())
      report.notes.push_back(fmt::format(
          "run {} holds no configuration snapshot (none is recorded for a program without a framework): no "
          "configuration key can be named as a cause",
          side));
  MatchResult match = matched;
  if (int fused = MergeFusedRegions(a, b, ca, cb, match))
    report.notes.push_back(fmt::format(
        "{} matched region{} merged into a neighbour: XLA fused {} operators into the neighbour's kernels, "
        "so alone {} would cost nothing on that side",
        fused, fused == 1 ? " was" : "s were", fused == 1 ? "its" : "their", fused == 1 ? "it" : "they"));

  // All operators, each costed like a region's (per-op estimates, summed).
  for (auto [run, cost, summary] : {std::tuple{&a, &ca, &report.a}, std::tuple{&b, &cb, &report.b}})
    for (const auto& op : run->ops)
      if (op.parent == kNone) summary->ops_cost += cost->Cost({op.id}).cost();
  std::vector<SideCost> costs_a, costs_b;
  for (const auto& r : match.regions) {
    costs_a.push_back(ca.Cost(r.ops_a));
    costs_b.push_back(cb.Cost(r.ops_b));
  }
  double scale_b =
      report.host_time_only && options.normalize_host_time
          ? NormalizeHostTime(a, b, ca, cb, match, report, costs_a, costs_b)
          : 1;
  if (!report.host_time_only) {
    const LaunchDelayJudgement launches = JudgeLaunchDelays(a, b, ca, cb, match, costs_a, costs_b);
    if (launches.slower) {
      (launches.slower == 'a' ? ca : cb).MarkHostSlowerThroughout();
      report.notes.push_back(launches.note);
    }
  }
  Groups g = GroupRegions(a, b, ca, cb, match, costs_a, costs_b, report);

  double whole_a = report.a.cost(), whole_b = report.b.cost() / scale_b;
  double matched_a = 0, matched_b = 0;
  for (const auto& p : report.regions) matched_a += p.a.cost(), matched_b += p.b.cost();
  report.matched_share_a = whole_a > 0 ? matched_a / whole_a : 0;
  report.matched_share_b = whole_b > 0 ? matched_b / whole_b : 0;
  AccountIterations(match, ca, cb, report);
  report.unmatched_ops_a = static_cast<int64_t>(match.unmatched_a.size());
  report.unmatched_ops_b = static_cast<int64_t>(match.unmatched_b.size());
  if (match.regions.empty())
    report.notes.push_back(
        match.by_range_name ? "no regions matched: no NVTX range path that both runs have holds device work"
        : Fingerprinted(a) && Fingerprinted(b)
            ? "no regions matched: the two runs compute no value in common (other programs, other inputs or "
              "weights: both sides must run the same workload, from the same seed)"
            : "no regions matched: record both runs with fingerprints (magneton.record(..., "
              "fingerprints=True)) on the same inputs");
  if (auto note = StepLoopsNote(a, b, report)) report.notes.push_back(*note);

  // Eager against compiled: one run-level finding, into which the region
  // groups compiled on one side only are folded (dispatch.h).
  const DispatchUse da = MeasureDispatch(a, ca, match, true, report.a, report.energy_measured);
  const DispatchUse db = MeasureDispatch(b, cb, match, false, report.b, report.energy_measured);
  std::optional<Finding> dispatch = DispatchFinding(da, db, report, options);
  int folded = 0;

  int64_t iterations = std::max<int64_t>(1, report.a.iterations);
  int same_work = 0;
  bool estimated = false;  // a finding with a side costed by estimate
  std::vector<std::vector<size_t>> members(g.findings.size());  // each group's regions
  for (size_t ri = 0; ri < g.of_region.size(); ++ri) members[g.of_region[ri]].push_back(ri);
  for (size_t gi = 0; gi < g.findings.size(); ++gi) {
    Finding& f = g.findings[gi];
    f.costly = f.a.cost() >= f.b.cost() ? 'a' : 'b';
    double saved = std::fabs(f.a.cost() - f.b.cost());
    double whole = f.costly == 'a' ? whole_a : whole_b;
    Judge(f, whole, options, report.energy_measured);
    f.saved_per_iteration = saved / static_cast<double>(iterations);
    f.saved_pct_of_run = whole > 0 ? saved / whole * 100 : 0;
    f.label = g.label_a[gi] == g.label_b[gi] ? g.label_a[gi]
                                             : fmt::format("{} (a) vs {} (b)", g.label_a[gi], g.label_b[gi]);
    if (f.verdict == Verdict::kNoise) continue;
    const RegionMatch& rep = *g.representative[gi];
    if (dispatch && FoldIntoDispatch(f, static_cast<size_t>(&rep - match.regions.data()), da, db)) {
      ++folded;
      continue;
    }
    std::vector<int64_t> group_a, group_b;
    for (size_t ri : members[gi]) {
      const RegionMatch& r = match.regions[ri];
      group_a.insert(group_a.end(), r.ops_a.begin(), r.ops_a.end());
      group_b.insert(group_b.end(), r.ops_b.begin(), r.ops_b.end());
    }
    same_work += Explain(f, {&a, &ca, &rep.ops_a, &group_a}, {&b, &cb, &rep.ops_b, &group_b}, report, options);
    const std::string scope_a = EstimatedScope({&a, &ca, &rep.ops_a}), scope_b = EstimatedScope({&b, &cb, &rep.ops_b});
    if (!scope_a.empty() && !scope_b.empty()) {
      BackByCompiledCalls(f, CallSeconds(a, scope_a, report.a), CallSeconds(b, scope_b, report.b), options);
    } else if (!scope_a.empty() || !scope_b.empty()) {
      f.why += fmt::format("; {}'s time is an estimate (a share of {}'s)", scope_a.empty() ? 'b' : 'a',
                           scope_a + scope_b);
    }
    estimated |= (!scope_a.empty() || !scope_b.empty()) && f.verdict != Verdict::kNoise;
  }
  if (dispatch) {
    if (folded > 0)
      report.notes.push_back(fmt::format(
          "{} region group{} that run{} eagerly on one side and inside a compiled call on the other {} compared "
          "within the eager-vs-compiled finding: a compiled call's cost does not split into its regions",
          folded, folded == 1 ? "" : "s", folded == 1 ? "s" : "", folded == 1 ? "is" : "are"));
    g.findings.push_back(std::move(*dispatch));
  }
  if (estimated)
    report.notes.push_back(
        "findings whose times are estimates compare operations inside a compiled call with no kernel trace: the "
        "call's measured time shared out in proportion to each operation's time run eagerly (docs/jax.md); on a "
        "GPU with kernels traced they are measured");
  if (same_work > 0 && !report.host_time_only)
    report.notes.push_back(fmt::format(
        "{} region group{} cost{} at least {:.0f}% more on one side with the same operators, kernels, launch "
        "parameters and input layouts: noise, not waste, with what explains each (--all lists them)",
        same_work, same_work == 1 ? "" : "s", same_work == 1 ? "s" : "", options.threshold * 100));
  AddHostCpuFinding(in_a, in_b, ca, cb, report, options, g.findings);
  if (auto unmatched = UnmatchedWorkFinding(ca, cb, report, options)) g.findings.push_back(std::move(*unmatched));
  // The iteration's idle (idle_time.h), where no timeline finding of that
  // side already names the waits at their place.
  if (auto idle = IdleFinding(ca, cb, report, options);
      idle && std::none_of(g.findings.begin(), g.findings.end(), [&](const Finding& f) {
        return f.verdict == Verdict::kWaste && f.costly == idle->costly &&
               f.evidence_class() == EvidenceClass::kTimeline;
      }))
    g.findings.push_back(std::move(*idle));
  Rank(report, g);
  report.timelines = {BuildIterationTimeline(a, ca, match, true, report),
                      BuildIterationTimeline(b, cb, match, false, report)};
  return report;
}

}  // namespace magneton::analysis
