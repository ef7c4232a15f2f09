// The energy of one command, start to exit (`magneton measure`): samplers
// start first, the command runs untouched, and the window's edges are
// bracketed by energy-counter updates so neither end is extrapolated.
#pragma once

#include <string>
#include <vector>

#include "core/run.h"
#include "energy/child_process.h"
#include "energy/samplers.h"
#include "energy/window.h"

namespace magneton::energy {

struct CommandEnergy {
  std::vector<std::string> argv;
  int64_t start_ns = 0, end_ns = 0;
  ChildExit exit;                           // exit code and CPU time (rusage)
  std::vector<DeviceWindowEnergy> devices;  // measured, then estimates
  bool energy_available = false;
  std::string unavailable_reason;           // when !energy_available
  double cpu_watts_per_core = 0;
  std::vector<Stat> problems;               // sensors absent or failing, with why
  Run series;                               // what the samplers recorded
};

// Runs argv and measures it. Fails only when the command cannot be started
// (the error says why; *exit_code is then 127 or 126, as a shell's).
Result<CommandEnergy> MeasureCommand(const std::vector<std::string>& argv, const SamplerOptions& options,
                                     int* exit_code);

// Joules summed over the devices whose energies may be added: GPUs and CPU
// packages. A meter or a platform (psys) sensor already includes them, and
// estimates are not measurements.
double AddableJoules(const std::vector<DeviceWindowEnergy>& devices);

}  // namespace magneton::energy
