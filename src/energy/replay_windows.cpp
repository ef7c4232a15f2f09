#include "energy/replay_windows.h"

#include <algorithm>
#include <cmath>

namespace magneton::energy {

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double CoefficientOfVariation(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double m = Mean(v), ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return m != 0 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) / std::fabs(m) : 0;
}

namespace {

// Per-call figures of the windows kept so far.
struct Windows {
  std::vector<double> seconds, joules;
  int64_t calls = 0;
  bool converged = false, budget = false;
  std::string energy_source;

  bool energy() const { return !joules.empty() && joules.size() == seconds.size(); }
  // Energy when every window has it, else time.
  const std::vector<double>& judged() const { return energy() ? joules : seconds; }
  // The mean's relative standard error: a window's own spread (~2% for 0.6 s
  // NVML windows) shrinks with the number of windows averaged.
  bool Converged(const WindowRule& rule) const {
    const auto& v = judged();
    const double rse = CoefficientOfVariation(v) / std::sqrt(static_cast<double>(v.size()));
    return static_cast<int>(v.size()) >= rule.min_repeats && rse <= rule.target_rse;
  }
};

// Long enough for min_updates sensor updates when energy is measured; short
// for host-only keys, whose time is the only figure.
double WindowSeconds(const WindowRule& rule, bool host_only, bool measure_energy, double period_s) {
  if (host_only) return std::min(rule.window_s, rule.host_window_s);
  return std::max(rule.window_s, measure_energy ? (rule.min_updates + 1) * period_s : 0.0);
}

// A key with no device work draws nothing above idle: a call costs the idle
// power over its time, when the device's idle power was measured.
void HostOnlyEnergy(std::optional<double> idle_watts, bool timed, WindowSeries* s) {
  s->energy = timed && idle_watts.has_value();
  s->joules_per_call = s->energy ? *idle_watts * s->seconds_per_call : -1;
  s->energy_source = s->energy ? "idle power x host time (no device work)" : "no device work; idle power not measured";
}

WindowSeries Summarize(const Windows& w, const PowerMeter& meter, bool host_only, std::optional<double> idle_watts,
                       const WindowRule& rule) {
  WindowSeries s;
  s.energy = w.energy();
  s.calls = w.calls;
  s.repeats = static_cast<int32_t>(w.seconds.size());
  s.seconds_per_call = Mean(w.seconds);
  s.joules_per_call = s.energy ? Mean(w.joules) : -1;
  s.cv = CoefficientOfVariation(s.energy ? w.joules : w.seconds);
  s.energy_source = w.energy_source;
  if (host_only) {
    HostOnlyEnergy(idle_watts, !w.seconds.empty(), &s);
    if (!meter.available()) s.energy_source = meter.reason();
    // A valid measurement once the CV can be judged: the time is the only
    // figure and a noisy one is still its best estimate.
    s.status = s.repeats >= rule.min_repeats ? ReplayStatus::kHost : ReplayStatus::kBudget;
  } else {
    s.status = w.converged ? ReplayStatus::kOk : w.budget ? ReplayStatus::kBudget : ReplayStatus::kNoisy;
  }
  return s;
}

}  // namespace

Result<WindowSeries> MeasureWindows(PowerMeter& meter, int32_t device, bool host_only,
                                    std::optional<double> idle_watts, int64_t deadline_ns, const WindowRule& rule,
                                    const WindowCalls& calls) {
  // With no device work nothing is drawn above idle: no energy windows
  // (their CV would never converge), short windows of host time instead.
  const bool measure_energy = meter.available() && !host_only;
  Windows w;
  w.energy_source = meter.available() ? "" : meter.reason();
  int short_windows = 0;
  while (static_cast<int>(w.seconds.size()) < rule.max_repeats) {
    const double window = WindowSeconds(rule, host_only, measure_energy, meter.period_s());
    if (meter.Now() + static_cast<int64_t>(window * 1e9) > deadline_ns) {
      w.budget = true;
      break;
    }
    Result<CallWindow> c = calls(window);
    if (!c.ok()) return c.error();
    const double elapsed = (c->t1_ns - c->t0_ns) * 1e-9;
    // Cut short by a high estimate of the time per call (the warm-up's plain
    // launches before a graph): too few sensor updates. Again, at the
    // caller's corrected estimate.
    if (elapsed < 0.8 * window && short_windows < 3) {
      ++short_windows;
      continue;
    }
    const double s = elapsed / static_cast<double>(c->calls);
    w.calls = c->calls;
    w.seconds.push_back(s);
    if (measure_energy) {
      WindowPower p = meter.Average(device, c->t0_ns, c->t1_ns);
      if (p.ok) {
        w.joules.push_back(p.watts * s);
        w.energy_source = p.source + (p.aligned ? "" : " (window edges not aligned)");
      }
    }
    if (w.Converged(rule)) {
      w.converged = true;
      break;
    }
    if (measure_energy) meter.ShiftPhase();  // a random phase shift against the sensor's update period
  }
  return Summarize(w, meter, host_only, idle_watts, rule);
}

}  // namespace magneton::energy
