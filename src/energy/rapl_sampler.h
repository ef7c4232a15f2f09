// CPU energy from RAPL: Linux powercap zones (intel-rapl:*: package, core,
// uncore, dram, psys), or the perf_event `power` PMU where powercap is absent.
// Both roots are options, so tests run against fixture trees.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "energy/sampler.h"
#include "energy/samplers.h"

namespace magneton::energy {

// A hardware energy counter that wraps at `range` (0: never, a 64-bit count).
// Update takes each raw reading and returns the count since the first one,
// adding a wrap whenever the raw value steps back. Poll faster than one wrap
// period (RAPL's 2^32 uJ range lasts minutes even at full package power).
class WrappingCounter {
 public:
  explicit WrappingCounter(double range = 0) : range_(range) {}
  double Update(double raw);
  int64_t wraps() const { return wraps_; }

 private:
  double range_;
  bool first_ = true;
  double last_raw_ = 0, total_ = 0;
  int64_t wraps_ = 0;
};

// One powercap zone as found under the root.
struct RaplZone {
  std::string dir;          // ".../intel-rapl:0:2"
  std::string name;         // "package-0", "core", "dram", "psys"
  std::string device_kind;  // "cpu" or "platform" (psys)
  int32_t package = 0;      // ordinal of the device it belongs to
  std::string sensor;       // "energy.total" for package/psys, "energy.<name>" for sub-zones
  double max_range_uj = 0;
  std::string problem;      // empty: energy_uj readable; else why not
};
// Lists intel-rapl:* zones under `root` (sorted by path). An absent root is an
// error saying so; unreadable zones are listed with their problem.
Result<std::vector<RaplZone>> ScanPowercap(const std::string& root);

// One event of the perf `power` PMU.
struct PerfPowerEvent {
  std::string name;         // "energy-pkg"
  uint64_t config = 0;      // from "event=0x02"
  double scale = 1;         // joules per count
  std::string sensor;       // "energy.total", "energy.core", "energy.dram", ...
  std::string device_kind;  // "cpu" or "platform"
};
struct PerfPowerPmu {
  int type = -1;            // perf_event_attr.type
  std::vector<int> cpus;    // one CPU per package (cpumask)
  std::vector<PerfPowerEvent> events;
};
Result<PerfPowerPmu> ScanPerfPower(const std::string& root);

// Whether the PMU's events can be opened here (one trial open each); the
// error says why not (absent PMU, perf_event_paranoid, no CAP_PERFMON).
Result<PerfPowerPmu> ProbePerfPower(const std::string& root);

// One count of an open perf event. perf fds are not seekable (pread fails
// with ESPIPE), so this is a plain read of the 8-byte value.
Result<uint64_t> ReadPerfCount(int fd);

// Opens powercap zones that can be read; where none can, the perf PMU's events.
Result<std::unique_ptr<Sampler>> OpenRaplSampler(const SamplerOptions& options, std::vector<Stat>* problems);

}  // namespace magneton::energy
