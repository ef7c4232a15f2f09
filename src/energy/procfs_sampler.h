// CPU activity from procfs, available everywhere: a process's CPU time and
// utilization, one CPU-time series per busy thread (host-side waste such as
// busy-waiting shows up here even without an energy sensor), and an energy
// *estimate* from CPU time x a per-core power figure. The estimate is its own
// sensor ("energy.estimate", source "estimate") on its own device, so it is
// never added to measured joules.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "energy/sampler.h"
#include "energy/samplers.h"

namespace magneton::energy {

// The fields of /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat Magneton uses.
struct ProcStat {
  std::string comm;
  int64_t utime_ticks = 0, stime_ticks = 0;    // this process/thread
  int64_t cutime_ticks = 0, cstime_ticks = 0;  // children it has waited for
  int64_t threads = 0;
};
// Parses the text of a stat file; comm may hold spaces and ')' (it is the
// text between the first '(' and the last ')').
Result<ProcStat> ParseProcStat(std::string_view text);

// Watches options.pid (0: this process). The device is the host's CPUs
// (kind "cpu", ordinal -1).
Result<std::unique_ptr<Sampler>> OpenProcfsSampler(const SamplerOptions& options);

}  // namespace magneton::energy
