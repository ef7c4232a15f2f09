// Attribution: gives each kernel its share of the measured device energy, keeps
// idle gaps as idle energy, and rolls kernels up to ops and ranges. Pure over a
// Run (docs/energy.md documents the split).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/run.h"
#include "energy/activity_curve.h"
#include "energy/energy_curve.h"

namespace magneton::energy {

struct DeviceEnergy {
  int32_t device = 0;
  int64_t start_ns = 0, end_ns = 0;
  double total_j = 0;   // energy-counter delta over the window (or integral of power)
  double busy_j = 0;    // attributed to kernels/transfers
  double idle_j = 0;    // gaps with nothing running
  std::string method;   // "energy.total", "power.instant integral", "unavailable"
  // Added by src/energy:
  double idle_w = 0;    // mean power over the idle gaps (0 when there were none)
  int64_t busy_ns = 0;  // time with at least one kernel or transfer running
  int64_t idle_ns = 0;
  std::string source;   // sampler of the series used: "nvml", "rapl", "meter"
  int64_t sensor_updates = 0;  // readings of the energy sensor inside the window (SensorUpdates)
  EnergyCurve curve;           // the cumulative energy the attribution used (empty: unavailable)
  std::optional<ActivityModel> activity;  // the model that shaped the curve ("energy.total+activity")
};

struct Attribution {
  std::vector<DeviceEnergy> devices;
  std::vector<double> kernel_j;             // by Kernel id (NaN where unmeasured)
  std::vector<double> op_j;                 // by Op id, inclusive of children's kernels
  std::vector<double> op_gpu_ns;            // by Op id, kernel time inclusive
  std::map<int64_t, double> range_j;        // by Range id
  bool measured = false;                    // false: no energy series in the run
  // Added by src/energy:
  std::vector<double> transfer_j;           // by Transfer id (NaN where unmeasured; "sync" records get 0)

  // Joules a device spent in [from, to) by the attribution's curve; NaN
  // when the device has none.
  double Between(int32_t device, int64_t from_ns, int64_t to_ns) const;
};

// How the curve of a device is shaped (activity_curve.h). By default a device
// with an energy counter and a kernel trace gets the activity model fitted on
// its own run, when that fit succeeds; two runs that are compared should have
// their energy spent the same way (paired_attribution.h).
struct AttributionOptions {
  std::map<int32_t, ActivityModel> activity;  // by device: use this model instead of fitting one
  std::set<int32_t> power_shaped;              // devices kept on the power-shaped curve
};

Attribution Attribute(const Run& run, const AttributionOptions& options = {});

}  // namespace magneton::energy
