#include "energy/energy_curve.h"

#include <algorithm>
#include <functional>

namespace magneton::energy {

double EnergyCurve::At(int64_t t) const {
  if (knot_t.empty()) return 0;
  if (knot_t.size() == 1) return knot_j[0];
  size_t hi = static_cast<size_t>(std::upper_bound(knot_t.begin(), knot_t.end(), t) - knot_t.begin());
  hi = std::clamp<size_t>(hi, 1, knot_t.size() - 1);  // outside: the end segment's line
  size_t lo = hi - 1;
  double slope = (knot_j[hi] - knot_j[lo]) / double(knot_t[hi] - knot_t[lo]);
  return knot_j[lo] + slope * double(t - knot_t[lo]);
}

namespace {

// The integral of a sample-and-hold series: each value holds from its time to
// the next sample's; before the first sample, the first value is assumed.
class StepIntegral {
 public:
  explicit StepIntegral(const SensorSeries& s) : s_(s), cum_(s.t_ns.size(), 0.0) {
    for (size_t i = 1; i < s.t_ns.size(); ++i)
      cum_[i] = cum_[i - 1] + s.value[i - 1] * double(s.t_ns[i] - s.t_ns[i - 1]) * 1e-9;
  }
  double At(int64_t t) const {
    auto it = std::upper_bound(s_.t_ns.begin(), s_.t_ns.end(), t);
    size_t k = it == s_.t_ns.begin() ? 0 : static_cast<size_t>(it - s_.t_ns.begin()) - 1;
    return cum_[k] + s_.value[k] * double(t - s_.t_ns[k]) * 1e-9;
  }
  double Peak(int64_t from, int64_t to) const {
    double peak = 0;
    for (size_t i = 0; i < s_.t_ns.size(); ++i) {
      bool holds_in_window = s_.t_ns[i] <= to && (i + 1 == s_.t_ns.size() || s_.t_ns[i + 1] > from);
      if (holds_in_window) peak = std::max(peak, s_.value[i]);
    }
    return peak;
  }

 private:
  const SensorSeries& s_;
  std::vector<double> cum_;
};

// How far a power reading lags the power it describes. A sampled reading
// held until the next one describes, on average, the middle of its update
// period, so it is moved back by half the period (estimated as the median
// spacing of its changes, which under load change at every update). NVML's
// instant power is also the mean of the last 25 ms before its update, so
// another 12.5 ms (DESIGN.md "Measurement facts").
int64_t ReadingLag(const SensorSeries& s) {
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < s.t_ns.size(); ++i)
    if (s.t_ns[i] > s.t_ns[i - 1]) gaps.push_back(s.t_ns[i] - s.t_ns[i - 1]);
  if (gaps.size() < 3) return 0;
  std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
  int64_t period = std::min<int64_t>(gaps[gaps.size() / 2], 200'000'000);
  int64_t window = s.source == "nvml" && s.sensor == "power.instant" ? 25'000'000 : 0;
  return period / 2 + window / 2;
}

SensorSeries Shifted(const SensorSeries& s, int64_t lag) {
  SensorSeries out = s;
  for (int64_t& t : out.t_ns) t -= lag;
  return out;
}

bool Usable(const SensorSeries* s) {
  return s && !s->t_ns.empty() && s->t_ns.size() == s->value.size();
}

}  // namespace

void SpreadBetweenAnchors(const CounterAnchors& anchors, const std::function<double(int64_t)>& cumulative,
                          EnergyCurve* curve) {
  // Each anchor interval [at[i], at[i+1]] holds exactly value[i+1]-value[i]
  // joules; `cumulative` says when inside it they were spent. Outside the
  // anchors the nearest interval's scale (or slope) continues.
  const std::vector<int64_t>& at = anchors.t_ns;
  const std::vector<double>& value = anchors.joules;
  curve->knot_j.resize(curve->knot_t.size());
  for (size_t k = 0; k < curve->knot_t.size(); ++k) {
    int64_t t = curve->knot_t[k];
    size_t i = static_cast<size_t>(std::upper_bound(at.begin(), at.end(), t) - at.begin());
    i = std::clamp<size_t>(i, 1, at.size() - 1) - 1;  // interval [at[i], at[i+1]]
    double dc = value[i + 1] - value[i];
    double dg = cumulative ? cumulative(at[i + 1]) - cumulative(at[i]) : 0;
    double fraction = dg > 0 ? (cumulative(t) - cumulative(at[i])) / dg
                             : double(t - at[i]) / double(at[i + 1] - at[i]);
    curve->knot_j[k] = value[i] + dc * fraction;
  }
}

CounterAnchors FindCounterAnchors(const Run& run, int32_t device) {
  CounterAnchors a;
  const SensorSeries* counter = run.FindSeries(device, "energy.total");
  if (!Usable(counter)) return a;
  size_t first = counter->t_ns.size() >= 3 ? 1 : 0;
  a.t_ns.assign(counter->t_ns.begin() + first, counter->t_ns.end());
  a.joules.assign(counter->value.begin() + first, counter->value.end());
  a.source = counter->source;
  if (a.t_ns.size() < 2) a = CounterAnchors{};
  return a;
}

bool HasEnergySeries(const Run& run) {
  for (const SensorSeries& s : run.series) {
    if (s.sensor == "energy.total") return true;
    for (const char* p : kPowerSensors)
      if (s.sensor == p) return true;
  }
  return false;
}

int64_t SensorUpdates(const Run& run, int32_t device, int64_t from_ns, int64_t to_ns) {
  const SensorSeries* s = run.FindSeries(device, "energy.total");
  if (!Usable(s)) {
    s = nullptr;
    for (const char* sensor : kPowerSensors)
      if ((s = run.FindSeries(device, sensor))) break;
  }
  if (!s) return 0;
  auto lo = std::upper_bound(s->t_ns.begin(), s->t_ns.end(), from_ns);
  auto hi = std::lower_bound(s->t_ns.begin(), s->t_ns.end(), to_ns);
  return hi > lo ? hi - lo : 0;
}

EnergyCurve BuildEnergyCurve(const Run& run, int32_t device, int64_t from_ns, int64_t to_ns) {
  EnergyCurve curve;
  const SensorSeries* counter = run.FindSeries(device, "energy.total");
  if (!Usable(counter)) counter = nullptr;
  const SensorSeries* shape = nullptr;
  for (const char* sensor : kPowerSensors)
    if (const SensorSeries* s = run.FindSeries(device, sensor); Usable(s)) {
      shape = s;
      break;
    }
  if (!counter && !shape) return curve;
  std::vector<int64_t> knots;
  SensorSeries centred;
  if (shape) {
    curve.peak_w = StepIntegral(*shape).Peak(from_ns, to_ns);
    centred = Shifted(*shape, ReadingLag(*shape));
    knots = centred.t_ns;
  }

  CounterAnchors anchors = FindCounterAnchors(run, device);
  const std::vector<int64_t>& at = anchors.t_ns;

  if (at.size() >= 2) {
    curve.method = shape ? "energy.total+" + shape->sensor : "energy.total";
    curve.source = anchors.source;
    curve.data_from_ns = at.front();
    curve.data_to_ns = at.back();
    knots.insert(knots.end(), at.begin(), at.end());
  } else if (shape) {
    curve.method = shape->sensor + " integral";
    curve.source = shape->source;
    curve.data_from_ns = centred.t_ns.front();
    curve.data_to_ns = centred.t_ns.back();
  } else {
    return curve;  // one counter reading and no power: no rate to go on
  }
  knots.push_back(from_ns);
  knots.push_back(to_ns);
  std::sort(knots.begin(), knots.end());
  knots.erase(std::unique(knots.begin(), knots.end()), knots.end());

  curve.knot_t = knots;
  curve.knot_j.resize(knots.size());
  if (at.size() < 2) {
    StepIntegral g(centred);
    for (size_t k = 0; k < knots.size(); ++k) curve.knot_j[k] = g.At(knots[k]);
    return curve;
  }
  std::optional<StepIntegral> g;
  if (shape) g.emplace(centred);
  SpreadBetweenAnchors(anchors, g ? std::function<double(int64_t)>([&](int64_t t) { return g->At(t); }) : nullptr,
                       &curve);
  return curve;
}

}  // namespace magneton::energy
