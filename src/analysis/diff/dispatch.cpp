#include "analysis/diff/dispatch.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/diff/verdict.h"
#include "energy/activity_curve.h"

namespace magneton::analysis {
namespace {

std::string Ms(double s) { return s >= 1e-3 ? fmt::format("{:.2f} ms", s * 1e3) : fmt::format("{:.1f} us", s * 1e6); }

std::string Count(double x) { return x == std::floor(x) ? fmt::format("{:.0f}", x) : fmt::format("{:.1f}", x); }

// Host time outside every top-level op over the run's window (a run without
// a measured pass: its ops' times are the program's).
double OutsideTopLevelOps(const Run& run) {
  energy::BusyIntervals spans;
  int64_t from = run.info.start_ns, to = run.info.end_ns;
  for (const auto& op : run.ops)
    if (op.parent == kNone) spans.emplace_back(op.start_ns, op.end_ns);
  if (to <= from)
    for (const auto& [s, e] : spans) from = std::min(from, s), to = std::max(to, e);
  int64_t busy = 0;
  for (const auto& [s, e] : energy::UnionOf(std::move(spans)))
    busy += std::max<int64_t>(0, std::min(e, to) - std::max(s, from));
  return std::max<int64_t>(0, to - from - busy) * 1e-9;
}

}  // namespace

bool IsCompiledScope(const std::string& name) {
  static const char* kScopes[] = {
      "jax:jit", "jax:pjit", "jax:xla_call", "Torch-Compiled Region", "CompiledFunction", "## Call CompiledFxGraph"};
  for (const char* p : kScopes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

std::vector<std::string> DispatchUnits(const RegionSide& s) {
  std::set<int64_t> units;
  const auto n = static_cast<int64_t>(s.run->ops.size());
  for (int64_t op : *s.ops) {
    if (op < 0 || op >= n) continue;
    while (s.run->ops[op].parent >= 0 && s.run->ops[op].parent < n) op = s.run->ops[op].parent;
    units.insert(op);
  }
  std::vector<std::string> out;
  for (int64_t u : units) out.push_back(s.run->ops[u].name);
  std::sort(out.begin(), out.end());
  return out;
}

std::string CompiledScope(const RegionSide& s) {
  std::string out;
  const auto n = static_cast<int64_t>(s.run->ops.size());
  for (int64_t op : *s.ops)
    for (int64_t o = op; o >= 0 && o < n; o = s.run->ops[o].parent)
      if (IsCompiledScope(s.run->ops[o].name)) out = s.run->ops[o].name;  // the outermost
  return out;
}

std::string EstimatedScope(const RegionSide& s) {
  if (s.cost->has_kernels()) return "";
  const auto n = static_cast<int64_t>(s.run->ops.size());
  std::string scope;
  for (int64_t op : *s.ops) {
    if (op < 0 || op >= n) continue;
    if (s.run->ops[op].framework != "jax") return "";
    std::string outer;
    for (int64_t p = s.run->ops[op].parent; p >= 0 && p < n; p = s.run->ops[p].parent)
      if (IsCompiledScope(s.run->ops[p].name)) outer = s.run->ops[p].name;
    if (outer.empty()) return "";
    scope = outer;
  }
  return scope;
}

DispatchUse MeasureDispatch(const Run& run, const CostModel& cost, const MatchResult& match, bool side_a,
                            const RunSummary& summary, bool energy) {
  DispatchUse u;
  const double iterations = static_cast<double>(std::max<int64_t>(1, summary.iterations));
  for (const auto& op : run.ops) {
    u.frameworks.insert(op.framework);
    u.calls += op.parent == kNone;
  }
  u.calls /= iterations;
  const Run& source = cost.source_run();
  const PassAlignment* al = cost.alignment();
  if (!source.kernels.empty()) {
    u.kernels = 0;
    for (size_t k = 0; k < source.kernels.size(); ++k)
      u.kernels += al ? al->kernel_rep[k] >= 0 : source.kernels[k].op != kRecorderWork;
    u.kernels /= al ? static_cast<double>(std::max<int64_t>(1, al->repeats)) : iterations;
  }
  const IterationAccount& acc = summary.account;
  if (acc.available) {  // a measured pass: per iteration on its timeline
    u.iteration_s = acc.seconds;
    u.between_s = acc.idle_seconds;
    u.on_device = acc.on_device;
    u.cost = summary.cost();
    for (size_t i = 0; i < cost.timeline().steps.size(); ++i)
      if (cost.timeline().full_period(i)) {
        const StepWindow& w = cost.timeline().steps[i];
        u.instances.push_back(energy ? w.joules : w.length_ns() * 1e-9);
      }
  } else {
    u.iteration_s = summary.seconds / iterations;
    u.cost = summary.cost() / iterations;
    u.on_device = !source.kernels.empty();
    u.between_s = u.on_device ? 0 : OutsideTopLevelOps(run) / iterations;
    u.instances = {u.cost};
  }
  if (summary.untraced && summary.untraced->steps > 0) {
    u.program_s = summary.untraced->seconds;
    u.program_j = summary.untraced->joules;
  }
  for (const auto& r : match.regions) {
    std::string scope = CompiledScope({&run, &cost, side_a ? &r.ops_a : &r.ops_b});
    u.region_compiled.push_back(!scope.empty());
    if (!scope.empty()) u.compiled.insert(scope);
  }
  return u;
}

char CompiledSide(const DispatchUse& a, const DispatchUse& b) {
  if (a.frameworks != b.frameworks) return 0;
  int64_t only_a = 0, only_b = 0;
  for (size_t r = 0; r < a.region_compiled.size() && r < b.region_compiled.size(); ++r) {
    only_a += a.region_compiled[r] && !b.region_compiled[r];
    only_b += b.region_compiled[r] && !a.region_compiled[r];
  }
  return only_a > 0 && only_b == 0 ? 'a' : only_b > 0 && only_a == 0 ? 'b' : 0;
}

// Both sides' iterations as the programs run them, where both have their own
// calls timed (untraced steps): what the op-level timing leaves out of an
// eager call (JAX re-tracing its transforms) is in them. `energy`: whether
// the costs are joules.
std::pair<DispatchUse, DispatchUse> AsTheProgramsRun(DispatchUse a, DispatchUse b, bool* energy) {
  if (std::isnan(a.program_s) || std::isnan(b.program_s)) return {a, b};
  *energy = *energy && !std::isnan(a.program_j) && !std::isnan(b.program_j);
  for (DispatchUse* u : {&a, &b}) {
    u->iteration_s = u->program_s;
    u->cost = *energy ? u->program_j : u->program_s;
    u->instances = {u->cost};
  }
  return {a, b};
}

std::optional<Finding> DispatchFinding(const DispatchUse& measured_a, const DispatchUse& measured_b,
                                       const DiffReport& report, const DiffOptions& options) {
  const char compiled = CompiledSide(measured_a, measured_b);
  if (!compiled) return std::nullopt;
  bool energy = report.energy_measured;
  const auto [a, b] = AsTheProgramsRun(measured_a, measured_b, &energy);
  const bool own = !std::isnan(measured_a.program_s) && !std::isnan(measured_b.program_s);
  const char eager = compiled == 'a' ? 'b' : 'a';
  const DispatchUse& ue = eager == 'a' ? a : b;
  const DispatchUse& uc = eager == 'a' ? b : a;
  Finding f;
  for (auto [cost, use, scale] : {std::tuple{&f.a, &a, 1.0}, std::tuple{&f.b, &b, report.host_time_ratio}}) {
    cost->seconds = use->iteration_s / scale;
    cost->joules = energy ? use->cost : kUnmeasured;
    cost->source = energy ? CostSource::kAttributed : CostSource::kTime;
    for (double x : use->instances) cost->instances.push_back(energy ? x : x / scale);
  }
  if (f.a.instances.size() != f.b.instances.size()) f.a.instances = {f.a.cost()}, f.b.instances = {f.b.cost()};
  f.costly = f.a.cost() >= f.b.cost() ? 'a' : 'b';
  for (const auto& r : report.regions) f.output_rel_diff = std::max(f.output_rel_diff, r.output_rel_diff);
  f.outputs_compared = !report.matched_by_range;
  const SideCost& hi = f.costly == 'a' ? f.a : f.b;
  Judge(f, hi.cost(), options, energy);
  f.saved_per_iteration = std::fabs(f.a.cost() - f.b.cost());
  f.saved_pct_of_run = hi.cost() > 0 ? f.saved_per_iteration / hi.cost() * 100 : 0;
  const std::string scopes = fmt::format("{}", fmt::join(uc.compiled, ", "));
  f.label = fmt::format("eager vs compiled: {} calls the framework {} times per iteration, {} {} time{} ({})", eager,
                        Count(ue.calls), compiled, Count(uc.calls), uc.calls == 1 ? "" : "s", scopes);

  Evidence e;
  e.kind = EvidenceClass::kDispatch;
  const char* between = ue.on_device ? "device idle" : "host time outside operators";
  e.summary =
      f.costly == eager
          ? fmt::format(
                "{} dispatches its operators one at a time, {} calls into the framework per iteration; {} runs "
                "the same matched work inside compiled calls ({}), {} call{} per iteration: {} per iteration "
                "against {}, {} of it {} against {}: launch and dispatch overhead",
                eager, Count(ue.calls), compiled, scopes, Count(uc.calls), uc.calls == 1 ? "" : "s", Ms(ue.iteration_s),
                Ms(uc.iteration_s), Ms(ue.between_s), between, Ms(uc.between_s))
          : fmt::format(
                "{} runs the matched work inside compiled calls ({}), {} call{} per iteration, and still takes {} "
                "against {} for {}'s {} eager calls: at this size the compiled call costs more than it saves",
                compiled, scopes, Count(uc.calls), uc.calls == 1 ? "" : "s", Ms(uc.iteration_s), Ms(ue.iteration_s),
                eager, Count(ue.calls));
  auto param = [&](const std::string& what, const std::string& va, const std::string& vb) {
    e.params.push_back({"per iteration", what, va, vb});
  };
  param("calls into the framework", Count(a.calls), Count(b.calls));
  if (a.kernels >= 0 && b.kernels >= 0) param("kernels launched", Count(a.kernels), Count(b.kernels));
  param(own ? "time as the program runs (its own calls)" : "time", Ms(a.iteration_s), Ms(b.iteration_s));
  param(between, Ms(a.between_s), Ms(b.between_s));
  param("compiled calls holding matched regions",
        a.compiled.empty() ? "-" : fmt::format("{}", fmt::join(a.compiled, ", ")),
        b.compiled.empty() ? "-" : fmt::format("{}", fmt::join(b.compiled, ", ")));
  RuleSubject subject;
  subject.evidence = EvidenceClass::kDispatch;
  subject.costly = f.costly;
  std::vector<std::string> names(uc.compiled.begin(), uc.compiled.end());
  (f.costly == compiled ? subject.costly_ops : subject.lean_ops) = names;
  subject.ops = names;
  for (auto& m : MatchRules(options.rules, subject)) f.rules.push_back(std::move(m.hit));
  f.evidence.push_back(std::move(e));
  return f;
}

}  // namespace magneton::analysis
