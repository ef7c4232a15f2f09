// The average power a device drew over a measurement window, read from a
// run's sensor series (docs/energy.md, "Replay"): the window's edges move onto
// the sensor's updates inside it, so the energy between them is what the
// readings actually measured rather than an extrapolation across a partial
// update period.
#pragma once

#include <cstdint>
#include <string>

#include "core/run.h"

namespace magneton::energy {

struct WindowPower {
  bool ok = false;        // some sensor measured the device over the window
  double watts = 0;       // summed over the run devices that measure it (CPU packages)
  double period_s = 0;    // median time between sensor updates (0: not seen)
  bool aligned = false;   // the edges sit on sensor updates
  std::string source;     // "nvml", "rapl", ...
};

// `device`: a CUDA ordinal, or kHostDevice for the CPU (every CPU package of
// the run). Estimates and procfs series do not count as measurements.
WindowPower MeasureWindowPower(const Run& run, int32_t device, int64_t t0_ns, int64_t t1_ns);

}  // namespace magneton::energy
