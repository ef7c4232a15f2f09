// Attribution (docs/energy.md, "Attribution"):
//  1. Per device, a cumulative energy curve F(t) over the run's window
//     (energy/energy_curve.h): counter-anchored, shaped by instant power.
//  2. A sweep over the start/end instants of the device's kernels and
//     transfers (all streams together): between two consecutive instants the
//     set of running items is constant, the segment's energy is F(b) - F(a),
//     and each running item gets an equal share; with nothing running the
//     segment is idle energy. Shares are accumulated per item, so an item's
//     energy is its duration-weighted share of every instant it ran.
//     Because the segments partition the window, busy + idle = F(end) - F(start),
//     the counter delta over the window, exactly.
//  3. Rollups: kernels -> their op -> the op's ancestors (inclusive), and to
//     ranges by launch time on the range's thread.
#include "energy/attribution.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "core/run_index.h"
#include "energy/activity_curve.h"
#include "energy/energy_curve.h"
#include "energy/launch_site.h"

namespace magneton::energy {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A kernel or a transfer: something that occupies the device for a while.
struct Item {
  int64_t start_ns, end_ns;
  double* joules;  // where its energy goes
};

// The window of one device: the run's, or else the span of its data.
std::pair<int64_t, int64_t> DeviceWindow(const Run& run, int32_t device) {
  if (run.info.end_ns > run.info.start_ns) return {run.info.start_ns, run.info.end_ns};
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  auto span = [&](int64_t a, int64_t b) {
    lo = std::min(lo, a);
    hi = std::max(hi, b);
  };
  for (const Kernel& k : run.kernels)
    if (k.device == device) span(k.start_ns, k.end_ns);
  for (const Transfer& t : run.transfers)
    if (t.device == device) span(t.start_ns, t.end_ns);
  if (lo > hi)  // no activity: the series' own span
    for (const SensorSeries& s : run.series)
      if (s.device == device && !s.t_ns.empty()) span(s.t_ns.front(), s.t_ns.back());
  if (lo > hi) return {0, 0};
  return {lo, hi};
}

// Step 2 for one device; fills each item's joules and the device's busy/idle.
void Sweep(const EnergyCurve& curve, std::vector<Item>& items, DeviceEnergy& dev) {
  struct Event {
    int64_t t;
    bool start;
    size_t item;
  };
  std::vector<Event> events;
  events.reserve(items.size() * 2);
  for (size_t i = 0; i < items.size(); ++i) {
    Item& it = items[i];
    int64_t a = std::max(it.start_ns, dev.start_ns), b = std::min(it.end_ns, dev.end_ns);
    *it.joules = 0;
    if (b <= a) continue;  // outside the window, or zero length
    events.push_back({a, true, i});
    events.push_back({b, false, i});
  }
  // Ends before starts at the same instant: back-to-back kernels do not overlap.
  std::sort(events.begin(), events.end(), [](const Event& x, const Event& y) {
    return x.t != y.t ? x.t < y.t : (!x.start && y.start);
  });
  std::vector<double> share_at_start(items.size(), 0.0);
  double share = 0;  // joules one item would have received from the window's start
  int64_t running = 0, prev = dev.start_ns;
  double f_prev = curve.At(prev);
  auto advance = [&](int64_t t) {
    if (t <= prev) return;
    double f = curve.At(t), e = f - f_prev;
    if (running > 0) {
      share += e / double(running);
      dev.busy_j += e;
      dev.busy_ns += t - prev;
    } else {
      dev.idle_j += e;
      dev.idle_ns += t - prev;
    }
    prev = t;
    f_prev = f;
  };
  for (const Event& ev : events) {
    advance(ev.t);
    if (ev.start) {
      share_at_start[ev.item] = share;
      ++running;
    } else {
      *items[ev.item].joules = share - share_at_start[ev.item];
      --running;
    }
  }
  advance(dev.end_ns);
  dev.idle_w = dev.idle_ns > 0 ? dev.idle_j / (double(dev.idle_ns) * 1e-9) : 0;
}

// Step 3a: op totals including their descendants' (Op.parent), in place;
// deepest first, so a child's total is complete before it is added to its parent.
void RollUpOps(const RunIndex& index, std::vector<double>& value) {
  for (int64_t i : index.deepest_first())
    if (int64_t p = index.parent(i); p != kNone) value[p] += value[i];
}

// Step 3b: a range gets the items launched on its thread while it was open
// (launch = the CUDA API call with the item's correlation id, else the start
// of the op that launched it). Items with neither count by the midpoint of
// their execution, on any thread.
void RollUpRanges(const Run& run, const std::vector<double>& kernel_j, const std::vector<double>& transfer_j,
                  std::map<int64_t, double>& range_j) {
  LaunchSites sites(run);
  struct Launch {
    int64_t t;
    double j;
  };
  std::unordered_map<int64_t, std::vector<Launch>> by_thread;
  std::vector<Launch> unplaced;
  auto place = [&](int64_t corr, int64_t op, int64_t start, int64_t end, double j) {
    if (std::isnan(j)) return;
    LaunchSite l = sites.Of(corr, op, start);
    if (l.thread != kAnyThread)
      by_thread[l.thread].push_back({l.t_ns, j});
    else
      unplaced.push_back({start + (end - start) / 2, j});
  };
  for (size_t i = 0; i < run.kernels.size(); ++i) {
    const Kernel& k = run.kernels[i];
    place(k.correlation, k.op, k.start_ns, k.end_ns, kernel_j[i]);
  }
  for (size_t i = 0; i < run.transfers.size(); ++i) {
    const Transfer& t = run.transfers[i];
    place(t.correlation, t.op, t.start_ns, t.end_ns, transfer_j[i]);
  }
  // Sorted launches with prefix sums: a range is two binary searches.
  auto prepare = [](std::vector<Launch>& v) {
    std::sort(v.begin(), v.end(), [](const Launch& a, const Launch& b) { return a.t < b.t; });
    for (size_t i = 1; i < v.size(); ++i) v[i].j += v[i - 1].j;
  };
  auto sum = [](const std::vector<Launch>& v, int64_t from, int64_t to) {
    auto lo = std::lower_bound(v.begin(), v.end(), from, [](const Launch& l, int64_t t) { return l.t < t; });
    auto hi = std::upper_bound(v.begin(), v.end(), to, [](int64_t t, const Launch& l) { return t < l.t; });
    if (hi == v.begin() || hi <= lo) return 0.0;
    return (hi - 1)->j - (lo == v.begin() ? 0.0 : (lo - 1)->j);
  };
  for (auto& [thread, v] : by_thread) prepare(v);
  prepare(unplaced);
  for (const Range& r : run.ranges) {
    double j = sum(unplaced, r.start_ns, r.end_ns);
    if (auto it = by_thread.find(r.thread); it != by_thread.end()) j += sum(it->second, r.start_ns, r.end_ns);
    range_j[r.id] = j;
  }
}

}  // namespace

double Attribution::Between(int32_t device, int64_t from_ns, int64_t to_ns) const {
  for (const DeviceEnergy& d : devices)
    if (d.device == device && !d.curve.empty()) return d.curve.Between(from_ns, to_ns);
  return kNaN;
}

Attribution Attribute(const Run& run, const AttributionOptions& options) {
  Attribution out;
  out.kernel_j.assign(run.kernels.size(), kNaN);
  out.transfer_j.assign(run.transfers.size(), kNaN);
  out.op_j.assign(run.ops.size(), 0.0);
  out.op_gpu_ns.assign(run.ops.size(), 0.0);

  std::vector<int32_t> devices;
  for (const Device& d : run.devices) devices.push_back(d.id);
  for (const Kernel& k : run.kernels)
    if (std::find(devices.begin(), devices.end(), k.device) == devices.end()) devices.push_back(k.device);
  for (int32_t device : devices) {
    bool active = std::any_of(run.kernels.begin(), run.kernels.end(), [&](const Kernel& k) { return k.device == device; });
    bool has_power = run.FindSeries(device, "energy.total") != nullptr;
    for (const char* s : kPowerSensors) has_power = has_power || run.FindSeries(device, s) != nullptr;
    if (!active && !has_power) continue;  // e.g. the procfs host device
    DeviceEnergy dev;
    dev.device = device;
    std::tie(dev.start_ns, dev.end_ns) = DeviceWindow(run, device);
    EnergyCurve curve = BuildEnergyCurve(run, device, dev.start_ns, dev.end_ns);
    if (curve.empty() || dev.end_ns <= dev.start_ns) {
      dev.method = "unavailable";
      out.devices.push_back(dev);
      continue;
    }
    dev.method = curve.method;
    dev.source = curve.source;
    dev.total_j = curve.Between(dev.start_ns, dev.end_ns);
    dev.sensor_updates = SensorUpdates(run, device, dev.start_ns, dev.end_ns);
    std::vector<Item> items;
    for (size_t i = 0; i < run.kernels.size(); ++i)
      if (run.kernels[i].device == device) items.push_back({run.kernels[i].start_ns, run.kernels[i].end_ns, &out.kernel_j[i]});
    for (size_t i = 0; i < run.transfers.size(); ++i) {
      const Transfer& t = run.transfers[i];
      if (t.device != device) continue;
      if (t.kind == "sync") {  // a host-side wait, not device work
        out.transfer_j[i] = 0;
        continue;
      }
      items.push_back({t.start_ns, t.end_ns, &out.transfer_j[i]});
    }
    // With a counter and a kernel trace, activity shapes each counter
    // interval better than 100 ms power readings can (activity_curve.h).
    if (!options.power_shaped.count(device)) {
      ActivityTrace trace = TraceActivity(run, device);
      std::optional<ActivityModel> model;
      if (auto given = options.activity.find(device); given != options.activity.end())
        model = given->second;
      else
        model = FitActivityModel({&trace});
      if (!trace.anchors.t_ns.empty() && model) {
        curve = ActivityCurve(trace.anchors, trace.busy, *model, dev.start_ns, dev.end_ns);
        dev.method = curve.method;
        dev.total_j = curve.Between(dev.start_ns, dev.end_ns);
        dev.activity = *model;
      }
    }
    Sweep(curve, items, dev);
    dev.curve = std::move(curve);
    out.measured = true;
    out.devices.push_back(dev);
  }

  if (!out.measured) {
    std::fill(out.op_j.begin(), out.op_j.end(), kNaN);
  } else {
    auto add = [&](int64_t op, double j) {
      if (op >= 0 && op < static_cast<int64_t>(run.ops.size()) && !std::isnan(j)) out.op_j[op] += j;
    };
    for (size_t i = 0; i < run.kernels.size(); ++i) add(run.kernels[i].op, out.kernel_j[i]);
    for (size_t i = 0; i < run.transfers.size(); ++i) add(run.transfers[i].op, out.transfer_j[i]);
  }
  const RunIndex index(run);
  if (out.measured) RollUpOps(index, out.op_j);
  for (size_t k = 0; k < run.kernels.size(); ++k)
    if (int64_t op = index.op_of_kernel(k); op != kNone)
      out.op_gpu_ns[op] += double(run.kernels[k].end_ns - run.kernels[k].start_ns);
  RollUpOps(index, out.op_gpu_ns);
  if (out.measured) RollUpRanges(run, out.kernel_j, out.transfer_j, out.range_j);
  return out;
}

}  // namespace magneton::energy
