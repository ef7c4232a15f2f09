#include "energy/activity_curve.h"

#include <algorithm>
#include <cmath>

namespace magneton::energy {

namespace {

// Busy nanoseconds before `t`, by prefix sums over the disjoint intervals.
class BusyClock {
 public:
  explicit BusyClock(const BusyIntervals& busy) : busy_(busy), before_(busy.size() + 1, 0) {
    for (size_t i = 0; i < busy.size(); ++i) before_[i + 1] = before_[i] + (busy[i].second - busy[i].first);
  }
  int64_t Before(int64_t t) const {
    auto it = std::upper_bound(busy_.begin(), busy_.end(), t,
                               [](int64_t x, const std::pair<int64_t, int64_t>& iv) { return x < iv.first; });
    size_t i = static_cast<size_t>(it - busy_.begin());  // intervals [0, i) start at or before t
    if (i == 0) return 0;
    const auto& last = busy_[i - 1];
    return before_[i - 1] + (std::min(t, last.second) - last.first);
  }

 private:
  const BusyIntervals& busy_;
  std::vector<int64_t> before_;
};

}  // namespace

BusyIntervals UnionOf(std::vector<std::pair<int64_t, int64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  BusyIntervals out;
  for (const auto& iv : intervals) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  }
  return out;
}

namespace {

// One counter interval: its length (s), busy fraction and mean power (W).
struct Interval {
  double w, x, y;
};

std::optional<ActivityModel> FitIntervals(const std::vector<Interval>& intervals) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const Interval& i : intervals) {
    sw += i.w;
    sx += i.w * i.x;
    sy += i.w * i.y;
    sxx += i.w * i.x * i.x;
    sxy += i.w * i.x * i.y;
  }
  if (sw <= 0) return std::nullopt;
  double mx = sx / sw, my = sy / sw;
  double var = sxx / sw - mx * mx;
  if (var < 0.05 * 0.05) return std::nullopt;  // busy fraction nearly constant: nothing to fit
  double slope = (sxy / sw - mx * my) / var;
  ActivityModel m{std::max(0.0, my - slope * mx), 0};
  m.busy_w = m.idle_w + slope;
  if (slope <= 0) return std::nullopt;
  return m;
}

}  // namespace

std::optional<ActivityModel> FitActivityModel(const std::vector<const ActivityTrace*>& traces) {
  // A counter reading is seen some milliseconds after the update it reports,
  // and that delay varies: one interval's mean power scatters by several
  // percent around the truth, more than its busy fraction moves in a steady
  // loop, and an interval beside a change of activity holds some of its
  // neighbour's joules. So consecutive intervals about as busy as each other
  // are pooled into one stretch (its edges' delays cancel within it) and the
  // fit goes over stretches of two or more intervals: a steady loop and the
  // recorder's idle hold after it give two clean points. Without such
  // stretches, every interval is a point of its own.
  constexpr double kSettled = 0.1;
  std::vector<Interval> all, pooled;
  for (const ActivityTrace* trace : traces) {
    const CounterAnchors& anchors = trace->anchors;
    if (anchors.t_ns.size() < 4) continue;
    BusyClock clock(trace->busy);
    Interval stretch{0, 0, 0};  // sums of w, w x and w y
    int count = 0;
    auto close = [&] {
      if (count >= 2) pooled.push_back({stretch.w, stretch.x / stretch.w, stretch.y / stretch.w});
      stretch = {0, 0, 0};
      count = 0;
    };
    for (size_t i = 0; i + 1 < anchors.t_ns.size(); ++i) {
      int64_t a = anchors.t_ns[i], b = anchors.t_ns[i + 1];
      if (b <= a) continue;
      double w = double(b - a) * 1e-9;
      Interval one{w, double(clock.Before(b) - clock.Before(a)) * 1e-9 / w, (anchors.joules[i + 1] - anchors.joules[i]) / w};
      all.push_back(one);
      if (count > 0 && std::fabs(one.x - stretch.x / stretch.w) > kSettled) close();
      stretch.w += one.w;
      stretch.x += one.w * one.x;
      stretch.y += one.w * one.y;
      ++count;
    }
    close();
  }
  if (auto m = FitIntervals(pooled)) return m;
  return FitIntervals(all);
}

ActivityTrace TraceActivity(const Run& run, int32_t device) {
  ActivityTrace out;
  out.anchors = FindCounterAnchors(run, device);
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const Kernel& k : run.kernels)
    if (k.device == device) spans.emplace_back(k.start_ns, k.end_ns);
  // A copy between host and device keeps a copy engine and the link busy,
  // not the SMs: alone it draws about the idle level, so only device-side work
  // makes the device busy (counted busy, a 3.6 ms pageable copy was charged
  // 1.7 J, six times the whole steps' measured difference; docs/energy.md).
  for (const Transfer& t : run.transfers)
    if (t.device == device && t.kind != "sync" && t.kind != "HtoD" && t.kind != "DtoH")
      spans.emplace_back(t.start_ns, t.end_ns);
  out.busy = UnionOf(std::move(spans));
  return out;
}

EnergyCurve ActivityCurve(const CounterAnchors& anchors, const BusyIntervals& busy, const ActivityModel& model,
                          int64_t from_ns, int64_t to_ns) {
  EnergyCurve curve;
  curve.method = "energy.total+activity";
  curve.source = anchors.source;
  curve.data_from_ns = anchors.t_ns.front();
  curve.data_to_ns = anchors.t_ns.back();
  std::vector<int64_t> knots = anchors.t_ns;
  for (const auto& [a, b] : busy) {
    if (b < from_ns || a > to_ns) continue;
    knots.push_back(a);
    knots.push_back(b);
  }
  knots.push_back(from_ns);
  knots.push_back(to_ns);
  std::sort(knots.begin(), knots.end());
  knots.erase(std::unique(knots.begin(), knots.end()), knots.end());
  curve.knot_t = std::move(knots);
  BusyClock clock(busy);
  const int64_t origin = curve.knot_t.front();
  auto modelled = [&](int64_t t) {  // joules the model spends from `origin` to t
    double busy_s = double(clock.Before(t) - clock.Before(origin)) * 1e-9;
    return model.idle_w * double(t - origin) * 1e-9 + (model.busy_w - model.idle_w) * busy_s;
  };
  SpreadBetweenAnchors(anchors, modelled, &curve);
  return curve;
}

}  // namespace magneton::energy
