#include "analysis/diff/host_cpu.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/diff/verdict.h"
#include "core/thread_name.h"
#include "energy/window.h"

namespace magneton::analysis {
namespace {

// Below this many cores kept busy on average, a CPU-time difference is the
// host's ordinary bookkeeping, not waste worth a finding.
constexpr double kMinBusyCores = 0.1;

constexpr std::string_view kThreadPrefix = "cpu.time.thread.";

// "cpu.time.thread.1234.pt_main_thread" -> "pt_main_thread (tid 1234)".
std::string ThreadLabel(const std::string& sensor) {
  std::string rest = sensor.substr(kThreadPrefix.size());
  size_t dot = rest.find('.');
  if (dot == std::string::npos) return rest;
  return fmt::format("{} (tid {})", rest.substr(dot + 1), rest.substr(0, dot));
}

// A thread Magneton started and named (core/thread_name.h): "cpu.time.thread.1234.mgt-nvml".
bool IsOwnThread(const std::string& sensor) {
  size_t dot = sensor.find('.', kThreadPrefix.size());
  return dot != std::string::npos && std::string_view(sensor).substr(dot + 1).rfind(kOwnThreadPrefix, 0) == 0;
}

// Waiting on the device: the calls whose count tells polling from blocking.
bool IsWaitCall(const std::string& name) {
  return name.find("Synchronize") != std::string::npos || name.find("Query") != std::string::npos;
}

std::string Ms(double s) { return fmt::format("{:.2f} ms", s * 1e3); }
std::string Share(double part, double whole) {
  return whole > 0 ? fmt::format("{:.0f}%", 100 * part / whole) : "-";
}

std::string Calls(const std::vector<NamedCount>& calls, double per) {
  if (calls.empty()) return "none recorded";
  std::string out;
  for (const auto& c : calls)
    out += fmt::format("{}{} x{:.3g}", out.empty() ? "" : ", ", c.name, static_cast<double>(c.count) / per);
  return out;
}

std::vector<std::string> Names(const std::vector<NamedCount>& calls, const std::vector<NamedCount>& other) {
  std::vector<std::string> out;
  for (const auto& c : calls)
    if (std::none_of(other.begin(), other.end(), [&](const NamedCount& o) { return o.name == c.name; }))
      out.push_back(c.name);
  return out;
}

// The same wait and poll calls per iteration on both sides: by name, counts
// within a tenth (or half a call).
bool SameWaitCalls(const HostCpuUse& a, const HostCpuUse& b) {
  std::map<std::string, std::pair<double, double>> per;
  for (const auto& c : a.syncs) per[c.name].first += static_cast<double>(c.count) / a.repeats;
  for (const auto& c : b.syncs) per[c.name].second += static_cast<double>(c.count) / b.repeats;
  for (const auto& [name, n] : per)
    if (std::fabs(n.first - n.second) > std::max(0.5, 0.1 * std::max(n.first, n.second))) return false;
  return true;
}

}  // namespace

HostCpuUse MeasureHostCpu(const Run& run, int64_t repeats, int64_t from_ns, int64_t to_ns) {
  HostCpuUse use;
  const SensorSeries* process = nullptr;
  for (const auto& s : run.series)
    if (s.sensor == "cpu.time" && !s.t_ns.empty()) process = &s;
  if (!process) return use;
  int64_t from = run.info.start_ns, to = run.info.end_ns;
  if (to_ns > from_ns) from = from_ns, to = to_ns;
  if (to <= from) from = process->t_ns.front(), to = process->t_ns.back();
  if (to <= from) return use;
  double per = static_cast<double>(std::max<int64_t>(1, repeats));
  use.recorded = true;
  use.repeats = per;
  use.wall_s = (to - from) * 1e-9 / per;
  use.cpu_s = energy::CounterDelta(*process, from, to) / per;
  for (const auto& k : run.kernels)
    if (k.start_ns >= from && k.end_ns <= to) use.device_s += (k.end_ns - k.start_ns) * 1e-9 / per;
  std::vector<const SensorSeries*> own;  // Magneton's threads
  for (const auto& s : run.series) {
    if (s.sensor.rfind(kThreadPrefix, 0) != 0) continue;
    double t = energy::CounterDelta(s, from, to) / per;
    if (IsOwnThread(s.sensor)) {
      use.own_s += t;  // the samplers, the CUPTI drain, the run writer: the recorder's cost, not the program's
      own.push_back(&s);
    } else if (t > use.busiest_s) {
      use.busiest_s = t;
      use.busiest_thread = ThreadLabel(s.sensor);
    }
  }
  const double process_s = use.cpu_s;
  use.cpu_s = std::max(0.0, process_s - use.own_s);
  // Per reading interval: the program's cores busy, times the wall time of an iteration.
  for (size_t i = 0; i + 1 < process->t_ns.size(); ++i) {
    const int64_t t0 = process->t_ns[i], t1 = process->t_ns[i + 1];
    if (t0 < from || t1 > to || t1 <= t0) continue;
    double cpu = energy::CounterDelta(*process, t0, t1);
    for (const SensorSeries* s : own) cpu -= energy::CounterDelta(*s, t0, t1);
    use.cpu_s_samples.push_back(std::max(0.0, cpu) / ((t1 - t0) * 1e-9) * use.wall_s);
  }
  // The estimate is the process's CPU time x watts per core: the program's
  // share of it is its share of the CPU time. RAPL measures the whole package
  // (other processes too), which no per-thread share can split soundly.
  const double program_share = process_s > 0 ? use.cpu_s / process_s : 1;
  for (const auto& e : energy::WindowEnergy(run, from, to))
    if (e.device.kind == "cpu") {
      double& j = e.estimate ? use.estimate_j : use.rapl_j;
      j = (std::isnan(j) ? 0 : j) + e.joules / per * (e.estimate ? program_share : 1);
    }
  std::map<std::string, int64_t> calls;
  for (const auto& c : run.api_calls)
    if (c.start_ns >= from && c.start_ns <= to && IsWaitCall(c.name)) calls[c.name] += c.count;
  for (const auto& [name, n] : calls) use.syncs.push_back({name, n, 0, {}});
  return use;
}

std::optional<Finding> HostCpuFinding(const HostCpuUse& a, const HostCpuUse& b, const DiffReport& report,
                                      const std::vector<ConfigDelta>& config, const DiffOptions& options,
                                      char host_slower) {
  if (!a.recorded || !b.recorded || report.host_time_only || report.regions.empty()) return std::nullopt;
  // Magneton's threads named on one side only (a run recorded before they had
  // names): that side's CPU time holds the recorder's, the other's does not.
  if ((a.own_s > 0) != (b.own_s > 0)) return std::nullopt;
  Finding f;
  f.costly = a.cpu_s >= b.cpu_s ? 'a' : 'b';
  const HostCpuUse& hi = f.costly == 'a' ? a : b;
  const HostCpuUse& lo = f.costly == 'a' ? b : a;
  double wall_hi = f.costly == 'a' ? report.a.seconds : report.b.seconds;
  double wall_lo = f.costly == 'a' ? report.b.seconds : report.a.seconds;
  if (hi.cpu_s < lo.cpu_s * (1 + options.threshold) || hi.cpu_s - lo.cpu_s < kMinBusyCores * hi.wall_s)
    return std::nullopt;
  if (host_slower == f.costly && SameWaitCalls(a, b)) return std::nullopt;
  // A difference must stand out of the readings' spread; with fewer readings
  // there is no spread to judge it by (an A/A pair of 0.06 s JAX runs on an
  // H100 differed by 26%), so no finding.
  constexpr size_t kNoiseSamples = 5;
  if (hi.cpu_s_samples.size() < kNoiseSamples || lo.cpu_s_samples.size() < kNoiseSamples ||
      !Separated(hi.cpu_s_samples, lo.cpu_s_samples))
    return std::nullopt;
  // Not the same device work: under CUDA's default spin wait a host thread is
  // busy as long as the kernels it waits for, so slower kernels show as CPU
  // time too (TF32 off). The regions' findings name that cause.
  if (a.device_s > 0 && b.device_s > 0 &&
      std::max(a.device_s, b.device_s) > std::min(a.device_s, b.device_s) * (1 + options.threshold))
    return std::nullopt;
  for (const auto& r : report.regions) f.output_rel_diff = std::max(f.output_rel_diff, r.output_rel_diff);
  if (f.output_rel_diff > options.output_tolerance) return std::nullopt;  // not the same work

  bool rapl = !std::isnan(a.rapl_j) && !std::isnan(b.rapl_j);
  auto cpu_j = [&](const HostCpuUse& u) { return rapl ? u.rapl_j : u.estimate_j; };
  bool joules = report.energy_measured && !std::isnan(cpu_j(a)) && !std::isnan(cpu_j(b));
  for (auto [cost, use] : {std::pair{&f.a, &a}, std::pair{&f.b, &b}}) {
    cost->seconds = use->cpu_s;
    cost->joules = joules ? cpu_j(*use) : kUnmeasured;
    cost->source = !joules ? CostSource::kTime : rapl ? CostSource::kAttributed : CostSource::kEstimate;
    cost->instances = {cost->cost()};
  }
  double per_a = static_cast<double>(std::max<int64_t>(1, report.a.iterations));
  double per_b = static_cast<double>(std::max<int64_t>(1, report.b.iterations));
  double saved = std::fabs(f.a.cost() - f.b.cost());
  double whole = f.costly == 'a' ? report.a.cost() : report.b.cost();
  f.saved_per_iteration = saved / per_a;
  f.saved_pct_of_run = whole > 0 ? saved / whole * 100 : 0;
  f.cost_delta_pct = lo.cpu_s > 0 ? (hi.cpu_s / lo.cpu_s - 1) * 100 : INFINITY;
  f.time_delta_pct = wall_lo > 0 ? (wall_hi / wall_lo - 1) * 100 : 0;
  f.label = fmt::format("host CPU: {} on a CPU {} of the run ({}) vs {} ({})",
                        hi.busiest_thread.empty() ? "the process" : hi.busiest_thread,
                        Share(hi.busiest_s, hi.wall_s), f.costly, Share(lo.busiest_s, lo.wall_s),
                        f.costly == 'a' ? 'b' : 'a');
  std::string energy_part =
      joules ? fmt::format(", {:.3g} J of CPU energy per iteration {}", f.saved_per_iteration,
                           rapl ? "(RAPL)" : "(estimated from CPU time: no RAPL)")
             : "";
  if (wall_hi < wall_lo * (1 - options.max_speedup)) {
    f.verdict = Verdict::kTradeOff;
    f.why = fmt::format("{:.0f}x the CPU time to finish {:.1f}% sooner", hi.cpu_s / std::max(lo.cpu_s, 1e-9),
                        (1 - wall_hi / wall_lo) * 100);
  } else {
    f.verdict = Verdict::kWaste;
    f.why = fmt::format("{:.0f}x the CPU time for the same device work{}, time {:+.1f}%{}",
                        hi.cpu_s / std::max(lo.cpu_s, 1e-9),
                        report.matched_by_range ? " (outputs not compared)" : " and outputs", f.time_delta_pct,
                        energy_part);
  }

  Evidence e;
  e.kind = EvidenceClass::kHost;
  e.summary = fmt::format(
      "run {}'s process used {} of CPU time against {}; its busiest thread was on a CPU {} of the "
      "wall time: a thread polling the device (busy-wait) instead of blocking, or host work the other side "
      "does not do",
      f.costly, Ms(hi.cpu_s), Ms(lo.cpu_s), Share(hi.busiest_s, hi.wall_s));
  auto param = [&](const std::string& what, const std::string& va, const std::string& vb) {
    e.params.push_back({"host", what, va, vb});
  };
  param("CPU time per iteration", Ms(a.cpu_s / per_a), Ms(b.cpu_s / per_b));
  param("recorder threads' CPU time per iteration (left out)", Ms(a.own_s / per_a), Ms(b.own_s / per_b));
  param("busiest thread", a.busiest_thread.empty() ? "-" : a.busiest_thread,
        b.busiest_thread.empty() ? "-" : b.busiest_thread);
  param("busiest thread's share of wall time", Share(a.busiest_s, a.wall_s), Share(b.busiest_s, b.wall_s));
  param("wait calls per iteration", Calls(a.syncs, per_a * a.repeats), Calls(b.syncs, per_b * b.repeats));
  e.all_a = a.syncs;
  e.all_b = b.syncs;
  const auto& hi_calls = f.costly == 'a' ? a.syncs : b.syncs;
  const auto& lo_calls = f.costly == 'a' ? b.syncs : a.syncs;
  RuleSubject subject;
  subject.evidence = EvidenceClass::kHost;
  subject.costly = f.costly;
  subject.costly_ops = Names(hi_calls, lo_calls);
  subject.lean_ops = Names(lo_calls, hi_calls);
  subject.config = config;
  for (auto& m : MatchRules(options.rules, subject)) {
    for (auto& d : m.steering) e.config.push_back(d);
    f.rules.push_back(std::move(m.hit));
  }
  f.evidence.push_back(std::move(e));
  return f;
}

}  // namespace magneton::analysis
