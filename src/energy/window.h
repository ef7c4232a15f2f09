// The energy of each device over a time window, from a run's series: what
// `magneton measure` prints and a Monitor window returns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/run.h"

namespace magneton::energy {

struct DeviceWindowEnergy {
  Device device;
  double joules = 0;
  double avg_w = 0;
  double peak_w = 0;        // highest power reading (0: the device has no power series)
  std::string method;       // how joules were obtained (EnergyCurve::method)
  std::string source;       // "nvml", "rapl", "meter", or "estimate"
  bool estimate = false;    // from CPU time x watts per core: never add to measured joules
};

// Measured devices first (those with an energy counter or power series),
// then estimates, each in device order.
std::vector<DeviceWindowEnergy> WindowEnergy(const Run& run, int64_t from_ns, int64_t to_ns);

// How much a cumulative series (CPU time, an energy estimate) grew over a
// window: read linearly between readings and held flat outside them, never
// extrapolated like a power-backed curve.
double CounterDelta(const SensorSeries& s, int64_t from_ns, int64_t to_ns);

// "gpu0", "cpu-package0", "host-cpu", "meter0": short names for reports.
std::string DeviceLabel(const Device& d);

}  // namespace magneton::energy
