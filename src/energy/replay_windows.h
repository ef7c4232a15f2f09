// One operator key's measurement by replay (docs/energy.md, "Replay"): windows
// of calls, each spanning several sensor updates, repeated until the mean per
// call has converged. The caller launches the calls (capture/torch: the
// dispatcher or a CUDA graph); this decides how long each window is, reads
// its energy from the meter, and when to stop.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/replay_status.h"
#include "core/status.h"
#include "energy/power_meter.h"

namespace magneton::energy {

struct WindowRule {
  double window_s = 0.5;        // shortest measurement window
  int min_updates = 5;          // ... and at least this many sensor updates per window
  double target_rse = 0.01;     // converged once the mean's relative standard error is at most this
  int min_repeats = 3;          // windows before convergence is judged
  int max_repeats = 20;         // then the key is noisy
  double host_window_s = 0.05;  // windows of keys with no device work: host time only
};

// One window's calls, timed on the meter's clock with the device synchronized
// at both edges.
struct CallWindow {
  int64_t t0_ns = 0;
  int64_t t1_ns = 0;
  int64_t calls = 0;
};
// Launches the calls a window of `seconds` holds; an error ends the key.
using WindowCalls = std::function<Result<CallWindow>(double seconds)>;

struct WindowSeries {
  int64_t calls = 0;            // calls per window (the last one kept)
  int32_t repeats = 0;          // windows kept
  double seconds_per_call = 0;  // mean over the windows (0 when none was kept)
  bool energy = false;          // every window kept has its energy
  double joules_per_call = -1;  // mean, when energy; for host keys idle power x time
  double cv = 0;                // coefficient of variation of joules (else seconds) per call
  ReplayStatus status = ReplayStatus::kBudget;  // kOk, kHost, kBudget or kNoisy
  std::string energy_source;    // "nvml", ... or why there is no energy
};

// Measures windows of calls on `device` (a CUDA ordinal or kHostDevice) until
// convergence, `deadline_ns` or rule.max_repeats. `host_only`: the key
// launches no device work, so it draws nothing above idle and is timed in
// short windows; its energy is `idle_watts` over its time, when measured.
Result<WindowSeries> MeasureWindows(PowerMeter& meter, int32_t device, bool host_only,
                                    std::optional<double> idle_watts, int64_t deadline_ns, const WindowRule& rule,
                                    const WindowCalls& calls);

double Mean(const std::vector<double>& v);
// Sample standard deviation over |mean|; 0 for fewer than two values or a zero mean.
double CoefficientOfVariation(const std::vector<double>& v);

}  // namespace magneton::energy
