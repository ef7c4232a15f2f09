// Series shaped like the H200's NVML readings (DESIGN.md "Measurement facts";
// SC24, Yang et al.), built from a known true power so tests can compare
// against the truth:
//  - energy.total: the true cumulative energy, updated every 100 ms, first
//    seen by a 15 ms poll plus half of a 3.5 ms read;
//  - power.instant: every 100 ms, the mean of the last 25 ms of true power,
//    first seen by a 2 ms poll;
// both stored as changes only, as the samplers store them.
#pragma once

#include <cmath>
#include <functional>
#include <vector>

#include "core/run.h"

namespace magneton::energy::testing {

inline constexpr int64_t kMs = 1'000'000;
inline constexpr int64_t kSec = 1'000'000'000;

// True power as steps: from each t the power holds until the next step.
struct PowerSteps {
  std::vector<int64_t> t;
  std::vector<double> w;
  double At(int64_t x) const {
    double v = w.front();
    for (size_t i = 0; i < t.size() && t[i] <= x; ++i) v = w[i];
    return v;
  }
  double Energy(int64_t a, int64_t b) const {  // joules over [a, b]
    double j = 0;
    for (int64_t x = a; x < b;) {
      int64_t next = b;
      for (int64_t s : t)
        if (s > x && s < next) next = s;
      j += At(x) * double(next - x) * 1e-9;
      x = next;
    }
    return j;
  }
};

inline void AppendChange(SensorSeries& s, int64_t t, double v) {
  if (!s.value.empty() && s.value.back() == v) return;
  s.t_ns.push_back(t);
  s.value.push_back(v);
}

// Adds a GPU device 0 with energy.total and power.instant over [begin, end].
// `phase` shifts the sensor's 100 ms update grid against the workload.
inline void AddNvmlSeries(Run& run, const PowerSteps& truth, int64_t begin, int64_t end, int64_t phase = 37 * kMs,
                          bool counter = true, bool instant = true) {
  if (run.devices.empty()) run.devices.push_back(Device{0, "gpu", "NVIDIA H200", "GPU-test", 0, 0});
  const double counter_origin = 123456.0;  // J since the driver loaded
  SensorSeries energy{static_cast<int64_t>(run.series.size()), 0, "energy.total", "J", "nvml", {}, {}};
  SensorSeries power{static_cast<int64_t>(run.series.size()) + (counter ? 1 : 0), 0, "power.instant", "W", "nvml", {}, {}};
  // The first readings, when sampling starts: the last update before `begin`.
  int64_t update = begin - ((begin - phase) % (100 * kMs));
  double last_instant = truth.Energy(update - 25 * kMs, update) / 0.025;
  energy.t_ns.push_back(begin);
  energy.value.push_back(counter_origin + truth.Energy(begin - 10 * kSec, update));
  power.t_ns.push_back(begin);
  power.value.push_back(last_instant);
  int k = 0;
  for (update += 100 * kMs; update <= end; update += 100 * kMs, ++k) {
    int64_t counter_seen = update + (k * 7 % 15) * kMs + 1750000;  // poll phase varies
    int64_t power_seen = update + (k % 2) * kMs;
    if (counter_seen <= end) AppendChange(energy, counter_seen, counter_origin + truth.Energy(begin - 10 * kSec, update));
    AppendChange(power, power_seen, truth.Energy(update - 25 * kMs, update) / 0.025);
  }
  if (counter) run.series.push_back(energy);
  if (instant) run.series.push_back(power);
}

}  // namespace magneton::energy::testing
