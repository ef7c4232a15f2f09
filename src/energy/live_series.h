// Samplers running into a Run held in memory: what Monitor, `magneton
// measure` and the Python binding read from. Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "core/run.h"
#include "energy/samplers.h"

namespace magneton::energy {

class LiveSeries {
 public:
  // Opens and starts the samplers `options` ask for; absent sensors become
  // problems(), never a failure.
  explicit LiveSeries(const SamplerOptions& options);
  ~LiveSeries();
  LiveSeries(const LiveSeries&) = delete;
  LiveSeries& operator=(const LiveSeries&) = delete;

  // Adds and starts one more sampler (e.g. procfs on a child known only after fork).
  Status Add(std::unique_ptr<Sampler> sampler);
  void Stop();                                  // stops every sampler; idempotent
  Run Snapshot();                               // devices, series and stats so far
  // Drops readings older than `before_ns`, keeping each series' last reading
  // before it (it still holds at `before_ns`). Bounds memory between windows.
  void Forget(int64_t before_ns);

  const std::vector<Stat>& problems() const { return problems_; }
  // True when some device has an energy counter or a power series.
  bool measures_energy();
  // Why nothing measures energy, from problems(); empty when something does.
  std::string why_no_energy();

 private:
  std::mutex mu_;
  Run run_;
  SampleBuffer buffer_;
  std::vector<std::unique_ptr<Sampler>> samplers_;
  std::vector<Stat> problems_;
};

}  // namespace magneton::energy
