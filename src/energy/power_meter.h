// Power over windows of time from sensors sampled while the windows run: what
// operator replay measures with (docs/energy.md, "Replay"). The meter keeps
// what it learns of the sensors between windows: their update period, and a
// random stream that shifts windows against it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/run.h"
#include "energy/window_power.h"

namespace magneton::energy {

class LiveSeries;

// The meter's time and wait: the run clock (clock.h) and a sleep, or, in
// tests, a synthetic clock that a sleep advances.
struct MeterClock {
  std::function<int64_t()> now;
  std::function<void(double seconds)> sleep;
  static MeterClock System();
};

class PowerMeter {
 public:
  // Starts the samplers `energy` names ("auto", "nvml", "rapl", "none");
  // sensors that are absent go to `problems` and reason().
  static std::unique_ptr<PowerMeter> Open(const std::string& energy, std::vector<Stat>* problems);
  // A meter with no sensor, for `reason` (a build without samplers).
  static std::unique_ptr<PowerMeter> Without(std::string reason);
  // Readings from `snapshot` (synthetic sensor streams) on `clock`.
  PowerMeter(std::function<Run()> snapshot, MeterClock clock);
  ~PowerMeter();
  PowerMeter(const PowerMeter&) = delete;
  PowerMeter& operator=(const PowerMeter&) = delete;

  bool available() const { return available_; }  // some sensor measures energy
  const std::string& reason() const { return reason_; }  // why not, when not
  // The sensors' update period: 0.1 s until readings refine it.
  double period_s() const { return period_s_; }
  int64_t Now() const { return clock_.now(); }

  // `device`: a CUDA ordinal or kHostDevice (window_power.h).
  WindowPower Average(int32_t device, int64_t t0_ns, int64_t t1_ns);
  // A quiet window of `seconds` from now: the device's idle power.
  WindowPower Idle(int32_t device, double seconds);
  // Waits a random fraction of the update period, so that windows do not
  // keep one phase against the sensor's updates.
  void ShiftPhase();

 private:
  PowerMeter(std::unique_ptr<LiveSeries> live, std::string reason);

  std::unique_ptr<LiveSeries> live_;
  std::function<Run()> snapshot_;
  MeterClock clock_;
  bool available_ = false;
  std::string reason_;
  double period_s_ = 0.1;
  std::mt19937 phase_{12345};
};

}  // namespace magneton::energy
