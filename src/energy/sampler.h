// Energy and activity samplers behind one small interface. A sampler polls its
// sensors on its own thread and reports each *change* of a reading, stamped on
// the run's clock (energy/clock.h), so window edges can be aligned to the
// sensor's updates. Samplers never abort the host: a failing sensor reports a
// Stat and stops.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/run.h"
#include "core/status.h"

namespace magneton::energy {

// What a sampler measures; one per (device, sensor).
struct SeriesSpec {
  int32_t device = 0;   // index into the devices this sampler reports
  std::string sensor;   // "power.instant", "power.usage", "energy.total", "clock.sm", "util.gpu", ...
  std::string unit;
  std::string source;   // "nvml", "rapl", "meter", "procfs"
};

// Receives readings. Called from the sampler's thread; implementations must be
// cheap and thread-safe (the recorder queues them for its writer).
class SampleSink {
 public:
  virtual ~SampleSink() = default;
  virtual void OnSample(int series_index, int64_t t_ns, double value) = 0;
  virtual void OnStat(const Stat& stat) = 0;
  // Announces a series that appears while sampling (a new thread seen by
  // procfs, a new meter channel) at `series_index` >= series().size(), before
  // its first sample. Sinks that cannot take new series may ignore it.
  virtual void OnSeries(int series_index, const SeriesSpec& spec) {}
};

class Sampler {
 public:
  virtual ~Sampler() = default;
  virtual std::string name() const = 0;               // "nvml", "rapl", ...
  virtual std::vector<Device> devices() const = 0;    // what it measures
  virtual std::vector<SeriesSpec> series() const = 0; // series_index = position
  virtual Status Start(SampleSink* sink) = 0;         // starts the poll thread
  virtual void Stop() = 0;                            // joins it; idempotent
};

}  // namespace magneton::energy
