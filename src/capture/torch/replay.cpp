// Operator replay's measurement: each captured key is checked against its
// recorded outputs, warmed up, then called in windows that energy/ measures
// (energy/replay_windows.h). docs/energy.md, "Replay".
#include "capture/torch/replay.h"

#include <ATen/record_function.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "capture/torch/replay_call.h"
#include "core/fingerprint_stats.h"
#include "core/stats_registry.h"
#include "energy/clock.h"

namespace magneton::capture {

std::string FingerprintDisagreement(const Fingerprint& a, const Fingerprint& b, double rtol) {
  auto differ = [](const char* what, double x, double y) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s %.6g vs %.6g", what, x, y);
    return std::string(buf);
  };
  if (a.numel != b.numel) return differ("numel", static_cast<double>(a.numel), static_cast<double>(b.numel));
  if (a.numel == 0) return "";
  if (a.quantiles.size() != b.quantiles.size())
    return differ("quantile count", static_cast<double>(a.quantiles.size()), static_cast<double>(b.quantiles.size()));
  // The matcher's statistics and scales (core/fingerprint_stats.h), but a
  // NaN where the recording had one agrees: uninitialized memory often holds some.
  std::string why;
  ForEachStatistic(a, b, [&](const ComparedStatistic& st) {
    const double x = st.a, y = st.b;
    bool close = x == y || (std::isnan(x) && std::isnan(y));
    if (!close && std::isfinite(x) && std::isfinite(y)) close = std::fabs(x - y) <= rtol * std::max(st.scale, 1e-30);
    if (!close) why = differ(st.label().c_str(), x, y);
    return close;
  });
  return why;
}

void CallEntry(ReplayEntry& entry, int64_t n) { Calls(FindOp(entry), FreshArgs(entry), n); }

namespace {

using energy::NowNs;

// Torch reports failures by throwing; the replay carries them as errors, of
// the message's first line.
template <class T, class F>
Result<T> Catching(F&& f) {
  try {
    return f();
  } catch (const std::exception& ex) {
    std::string what = ex.what();
    return MakeError(ErrorCode::kInternal, what.substr(0, what.find('\n')));
  }
}

// Seconds per call of a few synchronized calls: the cost order of the keys.
// The recorded wall time cannot serve: in a recording pass it holds the
// recorder's fingerprinting and the clones of nested ops, so a view of a large
// tensor looked costlier than the matmul beside it and was measured first.
// Random ops get the generator's state back. -1 when the call fails.
double ProbeSeconds(const ReplayEntry& e) {
  if (!e.unsupported.empty()) return -1;
  try {
    GeneratorGuard rng;
    if (e.random) rng.Save(e.device);
    c10::OperatorHandle op = FindOp(e);
    std::vector<c10::IValue> args = FreshArgs(e);
    Calls(op, args, 1);  // first call: lazy initialization stays out of the estimate
    Synchronize(e.device);
    const int64_t t0 = NowNs();
    Calls(op, args, 3);
    Synchronize(e.device);
    return (NowNs() - t0) * 1e-9 / 3;
  } catch (const std::exception&) {
    return -1;
  }
}

// The costliest calls first, by a quick probe of each key: a budget that
// runs out leaves the cheap keys unmeasured, not the ones that matter.
std::vector<size_t> CostOrder(const std::vector<std::shared_ptr<ReplayEntry>>& entries) {
  std::vector<double> probe(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) probe[i] = ProbeSeconds(*entries[i]);
  std::vector<size_t> order(entries.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return probe[a] > probe[b]; });
  return order;
}

std::unique_ptr<energy::PowerMeter> OpenMeter(const std::string& energy, std::vector<Stat>* problems) {
#ifdef MAGNETON_HAVE_SAMPLERS
  return energy::PowerMeter::Open(energy, problems);
#else
  (void)energy;
  (void)problems;
  return energy::PowerMeter::Without("this build has no energy samplers");
#endif
}

// Idle power per device label, from a quiet window before any replay.
std::map<std::string, double> MeasureIdle(const std::vector<std::shared_ptr<ReplayEntry>>& entries, double idle_s,
                                          energy::PowerMeter& meter) {
  std::map<std::string, double> idle;
  if (!meter.available() || idle_s <= 0) return idle;
  std::map<std::string, c10::Device> devices;
  for (const auto& e : entries)
    if (e->unsupported.empty()) devices.emplace(DeviceLabel(e->device), e->device);
  for (const auto& [label, d] : devices) {
    Synchronize(d);
    energy::WindowPower p = meter.Idle(DeviceOrdinal(d), idle_s);
    if (p.ok) idle[label] = p.watts;
  }
  return idle;
}

// The check call: fresh copies of written inputs, the recorded RNG state.
// Where the outputs disagree with the recorded fingerprints; "" when they agree.
std::string CheckOutputs(const ReplayEntry& e, const c10::OperatorHandle& op, double rtol) {
  std::vector<c10::IValue> args = FreshArgs(e);
  torch::jit::Stack stack(args.begin(), args.end());
  {
    GeneratorGuard rng;
    if (e.random && e.rng_state.defined()) {
      rng.Save(e.device);
      rng.Set(e.rng_state);
    }
    c10::NoGradGuard no_grad;
    at::RecordFunctionGuard no_record(false);
    op.callBoxed(&stack);
  }
  Synchronize(e.device);
  std::vector<Fingerprint> got = Fingerprints(OutputTensors(stack, args, e.writes), {});
  if (got.size() != e.expected.size())
    return std::to_string(got.size()) + " vs " + std::to_string(e.expected.size()) + " outputs";
  // Values are compared where the call is deterministic; otherwise sizes only.
  const bool values = !(e.uninitialized || (e.random && !e.rng_state.defined()));
  for (size_t k = 0; k < got.size(); ++k) {
    std::string why = values ? FingerprintDisagreement(got[k], e.expected[k], rtol)
                             : (got[k].numel == e.expected[k].numel ? "" : "numel differs");
    if (!why.empty()) return "output " + std::to_string(k) + ": " + why;
  }
  return "";
}

// Warm-up, and a first estimate of the seconds per call.
double WarmUp(const ReplayEntry& e, const c10::OperatorHandle& op) {
  std::vector<c10::IValue> work = FreshArgs(e);
  int64_t warm = 0;
  const int64_t w0 = NowNs();
  while (warm < 3 || (NowNs() - w0 < 20'000'000 && warm < 1000)) {
    Calls(op, work, 1);
    ++warm;
    if (warm == 3) Synchronize(e.device);
  }
  Synchronize(e.device);
  return std::max(1e-9, (NowNs() - w0) * 1e-9 / static_cast<double>(warm));
}

// Counts behind the replay's stats.
struct ReplayCounts {
  int64_t unsupported = 0, mismatches = 0, graphs = 0, host_ops = 0, graph_fallbacks = 0;
};

// What every key's replay shares.
struct KeyRun {
  const ReplayOptions& options;
  energy::PowerMeter& meter;
  const std::map<std::string, double>& idle;
  int64_t total_deadline_ns;
  const RunnerFactory& runners;
  ReplayCounts& counts;
};

// The factory's runner for the entry when a probe call of it works. A probe
// that ran nothing (an empty CUDA graph) marks the key host-only.
CallRunner PickRunner(KeyRun& k, size_t i, ReplayResult* r, bool* host_only) {
  CallRunner runner = k.runners ? k.runners(i) : CallRunner{};
  if (!runner) return runner;
  try {
    const int64_t probe = runner(1);
    *host_only = probe < 0;
    if (probe <= 0) runner = {};
  } catch (const std::exception&) {
    runner = {};
  }
  if (runner) {
    r->cuda_graph = true;
    ++k.counts.graphs;
  } else if (*host_only) {
    ++k.counts.host_ops;
  } else {
    ++k.counts.graph_fallbacks;
  }
  return runner;
}

// Launches (and graph replays) are asynchronous: a loop bounded by host time
// alone queues far more than the window holds. Launches the calls the window
// holds at the current estimate `*per_call` (stopping at the window's host
// time, for host-bound ops), times what they took, and corrects the estimate.
energy::WindowCalls WindowLauncher(const ReplayEntry& e, const c10::OperatorHandle& op, const CallRunner& runner,
                                   double* per_call) {
  return [&e, &op, &runner, per_call](double window) {
    return Catching<energy::CallWindow>([&] {
      std::vector<c10::IValue> work = FreshArgs(e);
      const int64_t target = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(window / *per_call)));
      const int64_t chunk = std::clamp<int64_t>(static_cast<int64_t>(0.01 / *per_call), 1, target);
      Synchronize(e.device);
      energy::CallWindow w;
      w.t0_ns = NowNs();
      do {
        const int64_t n = std::min(chunk, target - w.calls);
        w.calls += runner ? runner(n) : (Calls(op, work, n), n);
      } while (w.calls < target && NowNs() - w.t0_ns < static_cast<int64_t>(window * 1e9));
      Synchronize(e.device);
      w.t1_ns = NowNs();
      *per_call = (w.t1_ns - w.t0_ns) * 1e-9 / static_cast<double>(w.calls);
      return w;
    });
  };
}

// Checks, warms up and measures a supported key within its budget.
Result<ReplayStatus> MeasureKey(ReplayEntry& e, size_t i, int64_t deadline_ns, KeyRun& k, ReplayResult* r) {
  c10::OperatorHandle op = FindOp(e);
  const std::string mismatch = CheckOutputs(e, op, k.options.fingerprint_rtol);
  if (!mismatch.empty()) {
    r->detail = "replayed outputs differ from the recorded fingerprints (" + mismatch + ", replayed vs recorded)";
    ++k.counts.mismatches;
  }
  double per_call = WarmUp(e, op);
  bool host_only = false;
  const CallRunner runner = PickRunner(k, i, r, &host_only);
  auto idle = k.idle.find(DeviceLabel(e.device));
  Result<energy::WindowSeries> s = energy::MeasureWindows(
      k.meter, DeviceOrdinal(e.device), host_only,
      idle == k.idle.end() ? std::nullopt : std::optional<double>(idle->second), deadline_ns, k.options.windows,
      WindowLauncher(e, op, runner, &per_call));
  if (!s.ok()) return s.error();
  r->energy = s->energy;
  r->energy_source = s->energy_source;
  r->m.calls = s->calls;
  r->m.repeats = s->repeats;
  if (s->repeats > 0) r->m.seconds_per_call = s->seconds_per_call;
  r->m.joules_per_call = s->joules_per_call;
  r->m.cv = s->cv;
  return mismatch.empty() ? s->status : ReplayStatus::kMismatch;
}

ReplayStatus ReplayKeyStatus(ReplayEntry& e, size_t i, KeyRun& k, ReplayResult* r) {
  if (!e.unsupported.empty()) {
    r->detail = e.unsupported;
    ++k.counts.unsupported;
    return ReplayStatus::kUnsupported;
  }
  if (NowNs() >= k.total_deadline_ns) {
    r->detail = "total time budget spent before this operator";
    return ReplayStatus::kBudget;
  }
  const int64_t deadline = std::min(k.total_deadline_ns, NowNs() + static_cast<int64_t>(k.options.op_budget_s * 1e9));
  // Random ops draw from the default generator in every call: the workload's
  // random stream is put back as it was once the key is measured.
  GeneratorGuard rng;
  if (e.random) {
    try {
      rng.Save(e.device);
    } catch (const std::exception&) {
      // no default generator for this device: nothing to put back
    }
  }
  Result<ReplayStatus> status = Catching<ReplayStatus>([&] { return MeasureKey(e, i, deadline, k, r); });
  if (status.ok()) return *status;
  r->detail = status.error().message;
  return ReplayStatus::kError;
}

ReplayResult ReplayKey(ReplayEntry& e, size_t i, KeyRun& k) {
  ReplayResult r;
  r.m.id = static_cast<int64_t>(i);
  r.m.op = e.ordinal;
  r.m.key = e.key;
  r.m.device = DeviceOrdinal(e.device);
  r.m.joules_per_call = -1;
  auto idle = k.idle.find(DeviceLabel(e.device));
  r.m.idle_watts = idle == k.idle.end() ? 0 : idle->second;
  r.m.seconds_per_call = e.recorded_ns * 1e-9;
  r.energy_source = k.meter.available() ? "" : k.meter.reason();
  r.m.status = ReplayStatusName(ReplayKeyStatus(e, i, k, &r));
  return r;
}

class Progress {
 public:
  Progress(bool on, size_t total, double budget_s) : on_(on), total_(total), budget_s_(budget_s), t0_(NowNs()) {}
  void Update(size_t done, bool final = false) {
    if (!on_) return;
    const int64_t now = NowNs();
    if (!final && now - last_ < 250'000'000) return;
    last_ = now;
    const double elapsed = (now - t0_) * 1e-9;
    double left = done ? elapsed / static_cast<double>(done) * static_cast<double>(total_ - done) : budget_s_;
    left = std::min(left, std::max(0.0, budget_s_ - elapsed));
    std::fprintf(stderr, "magneton replay: %zu/%zu ops, %.0f s elapsed, ~%.0f s left\n", done, total_, elapsed,
                 final ? 0.0 : left);
  }

 private:
  bool on_;
  size_t total_;
  double budget_s_;
  int64_t t0_, last_ = 0;
};

void AddCounts(const ReplayCounts& c, std::vector<Stat>* out) {
  AddCount(out, stats::kReplayOpsSkipped, c.unsupported);
  AddCount(out, stats::kReplayMismatch, c.mismatches);
  AddCount(out, stats::kReplayCudaGraphs, c.graphs);
  AddCount(out, stats::kReplayHostOps, c.host_ops);
  AddCount(out, stats::kReplayCudaGraphFallback, c.graph_fallbacks);
}

}  // namespace

Result<ReplayReport> RunReplay(const std::vector<std::shared_ptr<ReplayEntry>>& entries, const ReplayOptions& o,
                               const RunnerFactory& runners) {
  ReplayReport rep;
  std::unique_ptr<energy::PowerMeter> meter = OpenMeter(o.energy, &rep.stats);
  if (!meter->available()) rep.energy_reason = meter->reason();
  const int64_t total_deadline = NowNs() + static_cast<int64_t>(o.total_budget_s * 1e9);
  rep.idle_watts = MeasureIdle(entries, o.idle_s, *meter);
  const std::vector<size_t> order = CostOrder(entries);
  rep.results.resize(entries.size());
  ReplayCounts counts;
  KeyRun run{o, *meter, rep.idle_watts, total_deadline, runners, counts};
  Progress progress(o.progress, entries.size(), o.total_budget_s);
  for (size_t done = 0; done < order.size(); ++done) {
    progress.Update(done);
    rep.results[order[done]] = ReplayKey(*entries[order[done]], order[done], run);
  }
  progress.Update(entries.size(), true);
  AddCounts(counts, &rep.stats);
  return rep;
}

}  // namespace magneton::capture
