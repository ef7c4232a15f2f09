// Opening the samplers a recording uses, and handing their readings to the
// thread that owns the RunWriter (writers are not thread-safe).
//
// Typical use (a recorder with one RunWriter):
//   std::vector<Stat> problems;
//   auto samplers = OpenSamplers(options, &problems);
//   SampleBuffer buffer;
//   std::vector<Device> devices;              // the run's device table so far
//   for (auto& s : samplers) s->Start(*buffer.Attach(*s, writer, &devices));
//   ... on the writer's thread, now and then: buffer.Drain(writer);
//   for (auto& s : samplers) s->Stop();  buffer.Drain(writer);
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "energy/sampler.h"

namespace magneton {
class RunWriter;
}

namespace magneton::energy {

struct SamplerOptions {
  bool nvml = true;
  bool rapl = true;
  bool procfs = true;                          // CPU time of a process and its threads
  std::vector<int> gpus;                       // CUDA ordinals; empty = all
  std::string meter;                           // CSV file or pipe of an external meter; empty = none
  std::string powercap_root = "/sys/class/powercap";
  int poll_interval_us = 2000;                 // NVML instant power changes every ~100 ms; poll faster
  // Added by src/energy:
  std::string perf_power_root = "/sys/bus/event_source/devices/power";  // perf PMU where powercap is absent
  int energy_poll_interval_us = 15000;         // NVML energy counter: a read costs ~3.5 ms, so its own cadence
  int slow_poll_interval_us = 50000;           // NVML clocks and utilization
  int rapl_poll_interval_us = 10000;           // RAPL counters update about every 1 ms
  int procfs_interval_us = 100000;             // /proc/<pid>/stat and task/*/schedstat
  int64_t pid = 0;                             // procfs: the process to watch; 0 = this process
  bool per_thread = true;                      // procfs: also one CPU-time series per busy thread
  double cpu_watts_per_core = 5.0;             // CPU estimate: watts of one fully busy core (docs/energy.md)
  // Monitor: readings are kept this long (and always while a window is open),
  // so series() and every window see all of theirs. 0 = keep all.
  double retain_s = 3600;
};

// Opens every sampler these options ask for and this machine offers. Sensors
// that are absent are reported in `problems` (one Stat each, with why), never
// as a failure: a recording without energy is still a recording.
std::vector<std::unique_ptr<Sampler>> OpenSamplers(const SamplerOptions& options,
                                                   std::vector<Stat>* problems);

// A thread-safe sink that queues readings; the writer's thread drains them.
// Each sampler numbers its series from 0, so Attach hands out one routing sink
// per sampler that maps them to the run's series ids.
class SampleBuffer {
 public:
  explicit SampleBuffer(int64_t first_series_id = 0);
  ~SampleBuffer();
  SampleBuffer(const SampleBuffer&) = delete;
  SampleBuffer& operator=(const SampleBuffer&) = delete;

  // Declares the sampler's devices and series in `writer` and returns the sink
  // to pass to sampler.Start (owned by this buffer). `devices` is the run's
  // device table so far: a sampler device with the same uuid (or, without one,
  // the same kind and ordinal) reuses that id; others are added to `writer`
  // and appended to `devices`.
  Result<SampleSink*> Attach(const Sampler& sampler, RunWriter* writer, std::vector<Device>* devices);
  // Writes queued series declarations, readings and stats; call from the writer's thread.
  Status Drain(RunWriter* writer);

  // The same into a Run held in memory (Monitor, `measure`): devices, series
  // and stats are appended to `run`, whose series ids must be dense.
  Result<SampleSink*> Attach(const Sampler& sampler, Run* run);
  Status Drain(Run* run);

  int64_t samples_written() const { return samples_written_; }

  class Target;  // where declarations and readings go: a RunWriter or a Run

 private:
  class Route;
  friend class Route;
  Result<SampleSink*> AttachTo(const Sampler& sampler, Target& target, std::vector<Device>* devices);
  Status DrainTo(Target& target);
  struct Pending {
    int64_t series;
    int64_t t_ns;
    double value;
  };
  void Push(const Route& route, int series_index, int64_t t_ns, double value);
  void Declare(Route& route, int series_index, const SeriesSpec& spec);
  void PushStat(const Stat& stat);

  std::mutex mu_;
  std::vector<Pending> pending_;
  std::vector<SensorSeries> declared_;       // series announced while sampling, not yet written
  std::vector<Stat> stats_;
  std::vector<std::unique_ptr<Route>> routes_;
  int64_t next_series_ = 0;
  int64_t samples_written_ = 0;
};

}  // namespace magneton::energy
