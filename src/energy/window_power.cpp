#include "energy/window_power.h"

#include <algorithm>
#include <vector>

#include "energy/energy_curve.h"

namespace magneton::energy {

namespace {

bool Measures(const Device& dev, int32_t device) {
  return device == kHostDevice ? dev.kind == "cpu" : (dev.kind == "gpu" && dev.ordinal == device);
}

// When the device's reading changed: the energy counter's updates, else the
// first power series with two readings.
std::vector<int64_t> SensorChanges(const Run& run, int32_t dev) {
  std::vector<int64_t> changes = FindCounterAnchors(run, dev).t_ns;
  if (changes.size() >= 2) return changes;
  for (const char* s : kPowerSensors)
    if (const SensorSeries* ss = run.FindSeries(dev, s); ss && ss->t_ns.size() >= 2) return ss->t_ns;
  return changes;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

WindowPower MeasureWindowPower(const Run& run, int32_t device, int64_t t0, int64_t t1) {
  WindowPower p;
  std::vector<double> periods;
  for (const Device& dev : run.devices) {
    if (!Measures(dev, device)) continue;
    EnergyCurve curve = BuildEnergyCurve(run, dev.id, t0, t1);
    if (curve.empty() || curve.source == "estimate" || curve.source == "procfs") continue;
    const std::vector<int64_t> changes = SensorChanges(run, dev.id);
    std::vector<int64_t> inside;
    for (int64_t t : changes)
      if (t > t0 && t < t1) inside.push_back(t);
    for (size_t i = 1; i < changes.size(); ++i) periods.push_back((changes[i] - changes[i - 1]) * 1e-9);
    // Edges on sensor changes; the first change inside is skipped (rise time).
    int64_t a = t0, b = t1;
    if (inside.size() >= 3) {
      a = inside[1];
      b = inside.back();
      p.aligned = true;
    }
    if (b <= a) continue;
    p.watts += curve.Between(a, b) / ((b - a) * 1e-9);
    p.ok = true;
    p.source = curve.source;
  }
  p.period_s = Median(std::move(periods));
  return p;
}

}  // namespace magneton::energy
