// A device's cumulative energy as a function of time, built from whatever
// series a run has for it (docs/energy.md, "From readings to joules"):
//  - the energy counter ("energy.total") anchors the joules: its value is
//    exact at each update, and between updates the energy is distributed in
//    proportion to the power series' integral (linearly when there is none);
//  - without a counter, the power series is integrated (sample and hold).
// Every window energy, attribution and Monitor reading goes through this one
// function, so all agree.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/run.h"

namespace magneton::energy {

class EnergyCurve {
 public:
  bool empty() const { return knot_t.empty(); }
  // Joules since the curve's origin at `t_ns`; linear between knots and
  // continued with the end segments' slopes outside them.
  double At(int64_t t_ns) const;
  double Between(int64_t from_ns, int64_t to_ns) const { return At(to_ns) - At(from_ns); }

  std::string method;        // "energy.total", "energy.total+power.instant", "power.instant integral", ...
  std::string source;        // "nvml", "rapl", "meter", ...
  int64_t data_from_ns = 0;  // span the readings cover; outside it the curve is extrapolated
  int64_t data_to_ns = 0;
  double peak_w = 0;         // highest power reading within the span asked for (0: no power series)
  std::vector<int64_t> knot_t;  // knots, strictly increasing
  std::vector<double> knot_j;   // joules at the knots
};

// The energy counter's readings usable as anchors: its updates, each at the
// time it was first seen. The first reading is dropped when later ones exist:
// it only marks when sampling began (the counter last changed up to one
// update period before). Empty when fewer than two remain.
struct CounterAnchors {
  std::vector<int64_t> t_ns;
  std::vector<double> joules;
  std::string source;
};
CounterAnchors FindCounterAnchors(const Run& run, int32_t device);

// Sets curve->knot_j at curve->knot_t: each anchor interval holds exactly its
// counter delta, spent in proportion to `cumulative` (a non-decreasing
// function of time: a power integral or a model of it); linearly in time
// where it is null or flat. Outside the anchors the nearest interval continues.
void SpreadBetweenAnchors(const CounterAnchors& anchors, const std::function<double(int64_t)>& cumulative,
                          EnergyCurve* curve);

// How many times the device's energy reading changed inside (from_ns, to_ns):
// the energy counter's updates, else the first power sensor's. Samplers store
// a reading when it changes, so this is the number of independent readings
// behind the energy of the window.
int64_t SensorUpdates(const Run& run, int32_t device, int64_t from_ns, int64_t to_ns);

// The series BuildEnergyCurve reads, in order of preference for the power shape.
inline constexpr const char* kPowerSensors[] = {"power.instant", "power.usage", "power"};

// Whether some device of `run` has an energy counter or a power series.
bool HasEnergySeries(const Run& run);

// The curve of `device` with knots at least over [from_ns, to_ns]. Empty when
// the run has no energy or power series for the device.
EnergyCurve BuildEnergyCurve(const Run& run, int32_t device, int64_t from_ns, int64_t to_ns);

}  // namespace magneton::energy
