#include "energy/energy_curve.h"

#include <algorithm>

namespace magneton::energy {

double EnergyCurve::At(int64_t t) const {
  if (t_ns_.empty()) return 0;
  if (t_ns_.size() == 1) return joules_[0];
  size_t hi = static_cast<size_t>(std::upper_bound(t_ns_.begin(), t_ns_.end(), t) - t_ns_.begin());
  hi = std::clamp<size_t>(hi, 1, t_ns_.size() - 1);  // outside: the end segment's line
  size_t lo = hi - 1;
  double slope = (joules_[hi] - joules_[lo]) / double(t_ns_[hi] - t_ns_[lo]);
  return joules_[lo] + slope * double(t - t_ns_[lo]);
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

bool Usable(const SensorSeries* s) {
  return s && !s->t_ns.empty() && s->t_ns.size() == s->value.size();
}

}  // namespace

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
  if (shape) {
    knots = shape->t_ns;
    curve.peak_w = StepIntegral(*shape).Peak(from_ns, to_ns);
  }

  // Counter anchors: its updates. The first reading only marks when sampling
  // began (the counter last changed up to one update period earlier), so it
  // is an anchor only when there is nothing else.
  std::vector<int64_t> at;
  std::vector<double> value;
  if (counter) {
    size_t first = counter->t_ns.size() >= 3 ? 1 : 0;
    at.assign(counter->t_ns.begin() + first, counter->t_ns.end());
    value.assign(counter->value.begin() + first, counter->value.end());
  }

  if (at.size() >= 2) {
    curve.method = shape ? "energy.total+" + shape->sensor : "energy.total";
    curve.source = counter->source;
    curve.data_from_ns = at.front();
    curve.data_to_ns = at.back();
    knots.insert(knots.end(), at.begin(), at.end());
  } else if (shape) {
    curve.method = shape->sensor + " integral";
    curve.source = shape->source;
    curve.data_from_ns = shape->t_ns.front();
    curve.data_to_ns = shape->t_ns.back();
    at.clear();
  } else {
    return curve;  // one counter reading and no power: no rate to go on
  }
  knots.push_back(from_ns);
  knots.push_back(to_ns);
  std::sort(knots.begin(), knots.end());
  knots.erase(std::unique(knots.begin(), knots.end()), knots.end());

  curve.t_ns_ = knots;
  curve.joules_.resize(knots.size());
  if (at.size() < 2) {
    StepIntegral g(*shape);
    for (size_t k = 0; k < knots.size(); ++k) curve.joules_[k] = g.At(knots[k]);
    return curve;
  }
  // Each counter interval [at[i], at[i+1]] holds exactly value[i+1]-value[i]
  // joules; inside it the power shape says when they were spent. Outside the
  // anchors the nearest interval's scale (or slope) continues.
  std::optional<StepIntegral> g;
  if (shape) g.emplace(*shape);
  for (size_t k = 0; k < knots.size(); ++k) {
    int64_t t = knots[k];
    size_t i = static_cast<size_t>(std::upper_bound(at.begin(), at.end(), t) - at.begin());
    i = std::clamp<size_t>(i, 1, at.size() - 1) - 1;  // interval [at[i], at[i+1]]
    double dc = value[i + 1] - value[i];
    double dg = g ? g->At(at[i + 1]) - g->At(at[i]) : 0;
    double fraction;
    if (g && dg > 0)
      fraction = (g->At(t) - g->At(at[i])) / dg;
    else
      fraction = double(t - at[i]) / double(at[i + 1] - at[i]);
    curve.joules_[k] = value[i] + dc * fraction;
  }
  return curve;
}

}  // namespace magneton::energy
