// Named measurement windows, nestable and in any order, like Zeus's
// begin_window/end_window:
//   Monitor m;
//   m.BeginWindow("epoch");  m.BeginWindow("step");
//   ...  auto step = m.EndWindow("step");  ...  auto epoch = m.EndWindow("epoch");
// Samplers run for the Monitor's life; a window's energy is read from their
// series (energy/window.h). Without any energy sensor a window still has its
// time, and says why its energy is unavailable.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "energy/live_series.h"
#include "energy/samplers.h"
#include "energy/window.h"

namespace magneton::energy {

struct Measurement {
  std::string name;
  int64_t start_ns = 0, end_ns = 0;
  double time_s = 0;
  std::vector<DeviceWindowEnergy> devices;    // measured, and estimates flagged as such
  bool available = false;                     // some device's energy was measured
  std::string reason;                         // why not, when !available
  double measured_j() const;                  // sum over measured devices only
};

class Monitor {
 public:
  explicit Monitor(const SamplerOptions& options = {});
  ~Monitor();

  Status BeginWindow(const std::string& name);
  // Ends an open window. With `settle`, first waits (up to 0.3 s) until every
  // energy counter has updated after the window's end, so the end is
  // interpolated between two counter readings instead of extrapolated from power.
  Result<Measurement> EndWindow(const std::string& name, bool settle = false);
  std::vector<std::string> OpenWindows() const;

  bool available() { return live_.measures_energy(); }
  std::string reason() { return live_.why_no_energy(); }
  const std::vector<Stat>& problems() const { return live_.problems(); }
  Run Snapshot() { return live_.Snapshot(); }
  // Completed windows as ranges (domain "magneton"), for a recording.
  std::vector<Range> Windows() const { return done_; }

 private:
  LiveSeries live_;
  int64_t retain_ns_;                    // SamplerOptions::retain_s
  std::map<std::string, int64_t> open_;  // name -> start
  std::vector<Range> done_;
};

}  // namespace magneton::energy
