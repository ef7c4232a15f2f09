#include "analysis/diff/iteration_timeline.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_set>

#include "analysis/diff/diff.h"
#include "analysis/diff/sync_sites.h"

namespace magneton::analysis {
namespace {

// Power is shown in this many equal steps over the iteration: the energy
// curve's own knots can number one per kernel edge.
constexpr int kPowerSteps = 160;

// The window and the items of the iteration to show, before they become TimelineItems.
struct Pick {
  int64_t start_ns = 0, end_ns = 0;
  std::string what;
  double joules = kUnmeasured;
  std::vector<size_t> kernels, transfers, ops;  // Run indices
  std::vector<int64_t> recorded_op;             // by measured op (ops only): the recorded op it stands for
};

// By recorded op (nested ones included): the index of the matched region that holds it.
std::vector<int64_t> RegionOfOps(const CostModel& cost, const MatchResult& match, bool side_a) {
  std::vector<int64_t> out(cost.index().ops(), -1);
  for (size_t r = 0; r < match.regions.size(); ++r)
    for (auto op : side_a ? match.regions[r].ops_a : match.regions[r].ops_b)
      if (op >= 0 && op < static_cast<int64_t>(out.size()))
        for (auto o : cost.index().Subtree(op)) out[o] = static_cast<int64_t>(r);
  return out;
}

// The repetition of median length among the full periods.
Pick PickRepetition(const CostModel& cost) {
  const StepTimeline& tl = cost.timeline();
  const PassAlignment& al = *cost.alignment();
  const Run& run = cost.source_run();
  std::vector<size_t> full;
  for (size_t i = 0; i < tl.steps.size(); ++i)
    if (tl.full_period(i)) full.push_back(i);
  auto length = [&](size_t i) { return tl.steps[i].length_ns(); };
  std::sort(full.begin(), full.end(), [&](size_t x, size_t y) { return length(x) < length(y); });
  const StepWindow& w = tl.steps[full[full.size() / 2]];
  Pick p{w.start_ns, w.end_ns,
         fmt::format("repetition {} of {} of the measured pass (the median length of {})", w.rep + 1, al.repeats,
                     full.size()),
         w.joules, {}, {}, {}, {}};
  if (tl.on_device) {
    for (size_t k = 0; k < run.kernels.size(); ++k)
      if (al.kernel_rep[k] == w.rep) p.kernels.push_back(k);
    for (size_t t = 0; t < run.transfers.size(); ++t)
      if (al.transfer_rep[t] == w.rep) p.transfers.push_back(t);
    return p;
  }
  p.recorded_op.assign(run.ops.size(), kNone);
  for (size_t op = 0; op < al.measured_ops.size(); ++op)
    if (w.rep < static_cast<int32_t>(al.measured_ops[op].size()))
      if (int64_t m = al.measured_ops[op][w.rep]; m != kNone) p.recorded_op[m] = static_cast<int64_t>(op);
  for (size_t m = 0; m < run.ops.size(); ++m)
    if (al.op_rep[m] == w.rep && run.ops[m].parent == kNone) p.ops.push_back(m);
  return p;
}

// Without a measured pass: the recorded run from its first item to its last.
Pick WholeRun(const CostModel& cost) {
  const Run& run = cost.source_run();
  Pick p;
  p.what = "the recorded run as a whole (no measured pass)";
  for (size_t k = 0; k < run.kernels.size(); ++k) p.kernels.push_back(k);
  for (size_t t = 0; t < run.transfers.size(); ++t) p.transfers.push_back(t);
  if (p.kernels.empty() && p.transfers.empty())
    for (size_t m = 0; m < run.ops.size(); ++m)
      if (run.ops[m].parent == kNone && run.ops[m].framework != "nvtx") p.ops.push_back(m);
  p.start_ns = INT64_MAX;
  p.end_ns = INT64_MIN;
  auto span = [&](int64_t s, int64_t e) { p.start_ns = std::min(p.start_ns, s), p.end_ns = std::max(p.end_ns, e); };
  for (auto k : p.kernels) span(run.kernels[k].start_ns, run.kernels[k].end_ns);
  for (auto t : p.transfers) span(run.transfers[t].start_ns, run.transfers[t].end_ns);
  for (auto m : p.ops) span(run.ops[m].start_ns, run.ops[m].end_ns);
  return p;
}

// Stretches of [0, length) that no item covers.
std::vector<std::pair<int64_t, int64_t>> Idle(const std::vector<TimelineItem>& items, int64_t length,
                                              int64_t* busy) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const auto& i : items) spans.emplace_back(std::max<int64_t>(0, i.start_ns), std::min(length, i.end_ns));
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<int64_t, int64_t>> idle;
  int64_t covered = 0;
  *busy = 0;
  for (auto [s, e] : spans) {
    if (s > covered) idle.emplace_back(covered, s);
    if (e > covered) *busy += e - std::max(s, covered), covered = e;
  }
  if (covered < length) idle.emplace_back(covered, length);
  return idle;
}

}  // namespace

IterationTimeline BuildIterationTimeline(const Run& recorded, const CostModel& cost, const MatchResult& match,
                                         bool side_a, const DiffReport& report) {
  IterationTimeline out;
  const bool measured = cost.alignment() && !cost.timeline().steps.empty();
  Pick p = measured ? PickRepetition(cost) : WholeRun(cost);
  if (p.end_ns <= p.start_ns) return out;
  const Run& run = cost.source_run();
  const std::vector<int64_t> region_of = RegionOfOps(cost, match, side_a);
  const PassAlignment* al = cost.alignment();
  out.available = true;
  out.on_device = !p.kernels.empty() || !p.transfers.empty();
  out.what = p.what;
  out.length_ns = p.end_ns - p.start_ns;
  out.joules = p.joules;

  std::map<std::string, int32_t> lane_of;
  auto lane = [&](const std::string& name) {
    auto [it, fresh] = lane_of.emplace(name, static_cast<int32_t>(out.lanes.size()));
    if (fresh) out.lanes.push_back(name);
    return it->second;
  };
  std::set<int32_t> devices;
  auto device_name = [&](int32_t d) {
    return d >= 0 && d < static_cast<int32_t>(run.devices.size())
               ? fmt::format("{}{}", run.devices[d].kind, run.devices[d].ordinal)
               : fmt::format("device {}", d);
  };
  auto add = [&](int64_t start, int64_t end, std::string name, int64_t op, const std::string& lane_name) {
    TimelineItem it{start - p.start_ns, end - p.start_ns, std::move(name), "", lane(lane_name), -1, -1,
                    op == kRecorderWork};
    if (op >= 0 && op < static_cast<int64_t>(recorded.ops.size())) it.op = recorded.ops[op].name;
    if (op >= 0 && op < static_cast<int64_t>(region_of.size())) {
      it.region = region_of[op];
      if (it.region >= 0 && it.region < static_cast<int64_t>(report.regions.size()))
        it.finding = report.regions[it.region].finding;
    }
    out.items.push_back(std::move(it));
  };
  // A measured item belongs to a recorded op through the alignment.
  for (auto k : p.kernels) {
    const Kernel& x = run.kernels[k];
    add(x.start_ns, x.end_ns, x.name, measured ? al->kernel_op[k] : x.op,
        fmt::format("{} stream {}", device_name(x.device), x.stream));
    devices.insert(x.device);
  }
  for (auto t : p.transfers) {
    const Transfer& x = run.transfers[t];
    if (x.kind == "sync") continue;
    add(x.start_ns, x.end_ns, "copy " + x.kind, measured ? al->transfer_op[t] : x.op,
        fmt::format("{} stream {}", device_name(x.device), x.stream));
    devices.insert(x.device);
  }
  for (auto m : p.ops) {
    const Op& x = run.ops[m];
    add(x.start_ns, x.end_ns, x.name, measured ? p.recorded_op[m] : static_cast<int64_t>(m),
        fmt::format("thread {}", x.thread));
  }
  std::sort(out.items.begin(), out.items.end(),
            [](const TimelineItem& x, const TimelineItem& y) { return x.start_ns < y.start_ns; });
  out.idle = Idle(out.items, out.length_ns, &out.busy_ns);
  if (out.items.size() > kMaxTimelineItems) {
    out.items_left_out = static_cast<int64_t>(out.items.size() - kMaxTimelineItems);
    out.items.resize(kMaxTimelineItems);
  }

  // The host waiting for the device: CUPTI's synchronization records, and
  // synchronizing API calls that left none.
  std::unordered_set<int64_t> synced;
  auto sync = [&](int64_t start, int64_t end, const std::string& name) {
    if (end < p.start_ns || start > p.end_ns) return;
    out.syncs.push_back({std::max(start, p.start_ns) - p.start_ns, std::min(end, p.end_ns) - p.start_ns, name});
  };
  for (const SyncCall& c : SyncCalls(run)) {
    sync(c.sync->start_ns, c.sync->end_ns, c.name());
    synced.insert(c.sync->correlation);
  }
  for (const auto& a : run.api_calls)
    if (a.name.find("Synchronize") != std::string::npos && !synced.count(a.correlation))
      sync(a.start_ns, a.end_ns, ApiName(a.name));

  // Power: the attribution's energy curve of the devices that ran the
  // iteration, in equal steps.
  const energy::Attribution& e = cost.source_energy();
  if (!e.measured) return out;
  if (!out.on_device)
    for (const auto& d : e.devices) devices.insert(d.device);
  const double step = static_cast<double>(out.length_ns) / kPowerSteps;
  for (int i = 0; i <= kPowerSteps; ++i) out.power_t_ns.push_back(static_cast<int64_t>(std::llround(i * step)));
  for (int i = 0; i < kPowerSteps; ++i) {
    const int64_t from = p.start_ns + out.power_t_ns[i], to = p.start_ns + out.power_t_ns[i + 1];
    double j = 0;
    bool any = false;
    for (int32_t d : devices)
      if (double x = e.Between(d, from, to); !std::isnan(x)) j += x, any = true;
    if (!any || to <= from) {
      out.power_t_ns.clear();
      out.power_w.clear();
      return out;
    }
    out.power_w.push_back(j / ((to - from) * 1e-9));
  }
  return out;
}

}  // namespace magneton::analysis
