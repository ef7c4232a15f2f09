// Energy samplers running alongside a recording (energy="nvml" / "auto").
// Builds without src/energy/samplers.cpp record no energy and say so.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/run.h"
#include "core/status.h"

namespace magneton {
class RunWriter;
}

namespace magneton::capture {

class EnergyCapture {
 public:
  // `which`: "none", "nvml", "rapl", "auto". Devices and series the samplers
  // measure are added to `writer` and to the run's device table `devices`
  // now; absent sensors become Stats in `problems`.
  static Result<std::unique_ptr<EnergyCapture>> Start(const std::string& which, RunWriter* writer,
                                                      std::vector<Device>* devices, std::vector<Stat>* problems);
  virtual ~EnergyCapture() = default;
  virtual int64_t series_count() const = 0;
  // Writes the readings taken so far (the writer's user must hold its lock).
  virtual Status Drain(RunWriter* writer) = 0;
  // Stops sampling and writes the rest.
  virtual Status Stop(RunWriter* writer) = 0;
};

}  // namespace magneton::capture
