#include "energy/window.h"

#include <algorithm>

#include "energy/energy_curve.h"

namespace magneton::energy {

std::string DeviceLabel(const Device& d) {
  if (d.kind == "cpu") return d.ordinal < 0 ? "host-cpu" : "cpu-package" + std::to_string(d.ordinal);
  return d.kind + std::to_string(d.ordinal);
}

namespace {

double Interpolate(const SensorSeries& s, int64_t t) {
  if (s.t_ns.empty()) return 0;
  auto it = std::upper_bound(s.t_ns.begin(), s.t_ns.end(), t);
  if (it == s.t_ns.begin()) return s.value.front();
  if (it == s.t_ns.end()) return s.value.back();
  size_t hi = static_cast<size_t>(it - s.t_ns.begin()), lo = hi - 1;
  double f = double(t - s.t_ns[lo]) / double(s.t_ns[hi] - s.t_ns[lo]);
  return s.value[lo] + f * (s.value[hi] - s.value[lo]);
}

}  // namespace

double CounterDelta(const SensorSeries& s, int64_t from_ns, int64_t to_ns) {
  return Interpolate(s, to_ns) - Interpolate(s, from_ns);
}

std::vector<DeviceWindowEnergy> WindowEnergy(const Run& run, int64_t from_ns, int64_t to_ns) {
  std::vector<DeviceWindowEnergy> measured, estimates;
  double seconds = double(to_ns - from_ns) * 1e-9;
  for (const Device& d : run.devices) {
    EnergyCurve curve = BuildEnergyCurve(run, d.id, from_ns, to_ns);
    if (!curve.empty()) {
      DeviceWindowEnergy e;
      e.device = d;
      e.joules = curve.Between(from_ns, to_ns);
      e.avg_w = seconds > 0 ? e.joules / seconds : 0;
      e.peak_w = curve.peak_w;
      e.method = curve.method;
      e.source = curve.source;
      measured.push_back(e);
    }
    if (const SensorSeries* s = run.FindSeries(d.id, "energy.estimate"); s && !s->t_ns.empty()) {
      DeviceWindowEnergy e;
      e.device = d;
      e.joules = CounterDelta(*s, from_ns, to_ns);
      e.avg_w = seconds > 0 ? e.joules / seconds : 0;
      e.method = "cpu time x watts per core";
      e.source = "estimate";
      e.estimate = true;
      estimates.push_back(e);
    }
  }
  measured.insert(measured.end(), estimates.begin(), estimates.end());
  return measured;
}

}  // namespace magneton::energy
