#include "analysis/diff/same_work.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <unordered_set>
#include <vector>

#include "energy/activity_curve.h"

namespace magneton::analysis {
namespace {

// Overlap this many points apart between the sides explains a cost difference.
constexpr double kOverlapPoints = 0.10;
// SM clocks this much lower on the costly side explain slower kernels.
constexpr double kClockDrop = 0.03;

// The method part of a RunSummary::energy_methods entry ("NVIDIA H200: energy.total+activity").
std::vector<std::string> Methods(const RunSummary& s) {
  std::vector<std::string> out;
  for (const auto& m : s.energy_methods)
    out.push_back(m.substr(m.find(": ") == std::string::npos ? 0 : m.find(": ") + 2));
  return out;
}

// A kernel or a copy of the pass the costs come from.
struct Item {
  int64_t start, end;
  int32_t device;
  const std::string* name;  // kernel name, or the copy's kind
  bool mine;                // launched by the region's ops
};

std::vector<Item> DeviceItems(const RegionSide& s) {
  std::unordered_set<int64_t> ops;
  for (auto op : *s.ops)
    if (op >= 0 && op < static_cast<int64_t>(s.run->ops.size()))
      for (auto o : s.cost->index().Subtree(op)) ops.insert(o);
  const Run& run = s.cost->source_run();
  const PassAlignment* al = s.cost->alignment();
  auto mine = [&](bool kernel, size_t i, int64_t own_op) {
    if (!al) return ops.count(own_op) > 0;
    const auto& rep = kernel ? al->kernel_rep : al->transfer_rep;
    const auto& op = kernel ? al->kernel_op : al->transfer_op;
    return i < rep.size() && rep[i] >= 0 && ops.count(op[i]) > 0;
  };
  std::vector<Item> out;
  for (size_t k = 0; k < run.kernels.size(); ++k) {
    const Kernel& x = run.kernels[k];
    out.push_back({x.start_ns, x.end_ns, x.device, &x.name, mine(true, k, x.op)});
  }
  for (size_t t = 0; t < run.transfers.size(); ++t) {
    const Transfer& x = run.transfers[t];
    if (x.kind != "sync") out.push_back({x.start_ns, x.end_ns, x.device, &x.kind, mine(false, t, x.op)});
  }
  return out;
}

// How much of the region's device time other device work ran beside it, and
// the work it ran beside the longest.
struct Overlap {
  double busy = 0, beside = 0;  // seconds
  std::string with;
  double share() const { return busy > 0 ? beside / busy : 0; }
};

Overlap OverlapOf(const RegionSide& s) {
  Overlap out;
  std::vector<Item> items = DeviceItems(s);
  std::map<int32_t, std::vector<const Item*>> others;
  for (const Item& it : items)
    if (!it.mine) others[it.device].push_back(&it);
  std::map<int32_t, energy::BusyIntervals> busy;  // the others' union, per device
  std::map<int32_t, int64_t> longest;             // the others' longest item, per device
  for (auto& [device, v] : others) {
    std::sort(v.begin(), v.end(), [](const Item* x, const Item* y) { return x->start < y->start; });
    energy::BusyIntervals spans;
    for (const Item* it : v) {
      spans.emplace_back(it->start, it->end);
      longest[device] = std::max(longest[device], it->end - it->start);
    }
    busy[device] = energy::UnionOf(std::move(spans));
  }
  std::map<std::string, int64_t> by_name;
  for (const Item& it : items) {
    if (!it.mine || it.end <= it.start) continue;
    out.busy += (it.end - it.start) * 1e-9;
    auto u = busy.find(it.device);
    if (u == busy.end()) continue;
    const auto& spans = u->second;
    auto at = std::upper_bound(spans.begin(), spans.end(), std::pair<int64_t, int64_t>{it.start, INT64_MAX});
    if (at != spans.begin()) --at;
    for (; at != spans.end() && at->first < it.end; ++at)
      if (int64_t o = std::min(it.end, at->second) - std::max(it.start, at->first); o > 0) out.beside += o * 1e-9;
    // Which work it ran beside, by name: others that start before it ends
    // and no longer before it starts than the longest of them lasts.
    const auto& v = others[it.device];
    auto first = std::lower_bound(v.begin(), v.end(), it.end, [](const Item* x, int64_t t) { return x->start < t; });
    for (auto j = first; j != v.begin();) {
      const Item* o = *--j;
      if (it.start - o->start > longest[it.device]) break;
      if (int64_t ov = std::min(it.end, o->end) - std::max(it.start, o->start); ov > 0) by_name[*o->name] += ov;
    }
  }
  int64_t most = 0;
  for (const auto& [name, ns] : by_name)
    if (ns > most) most = ns, out.with = name;
  return out;
}

// Time-weighted mean of a sample-and-hold series over [from, to); NaN without samples.
double MeanOver(const SensorSeries& s, int64_t from, int64_t to) {
  double sum = 0;
  int64_t covered = 0;
  for (size_t i = 0; i < s.t_ns.size(); ++i) {
    const int64_t a = std::max(from, s.t_ns[i]);
    const int64_t b = std::min(to, i + 1 < s.t_ns.size() ? s.t_ns[i + 1] : to);
    if (b > a) sum += s.value[i] * static_cast<double>(b - a), covered += b - a;
  }
  return covered > 0 ? sum / static_cast<double>(covered) : kUnmeasured;
}

// Mean SM clock of the device the region's work ran on, over the costed pass.
double MeanSmClock(const RegionSide& s) {
  const Run& run = s.cost->source_run();
  for (const Item& it : DeviceItems(s))
    if (it.mine)
      if (const SensorSeries* clock = run.FindSeries(it.device, "clock.sm"); clock && !clock->t_ns.empty())
        return MeanOver(*clock, run.info.start_ns, run.info.end_ns);
  return kUnmeasured;
}

// The mean time between the energy sensor's readings in the costed pass.
double SensorPeriod(const RegionSide& s) {
  for (const auto& d : s.cost->source_energy().devices)
    if (d.sensor_updates > 0 && d.end_ns > d.start_ns) return (d.end_ns - d.start_ns) * 1e-9 / d.sensor_updates;
  return kUnmeasured;
}

// What explains the difference, when the runs show it.
std::optional<std::string> Explanation(const Finding& f, const RegionSide& ra, const RegionSide& rb,
                                       const DiffReport& report, const DiffOptions& options) {
  const char lean = f.costly == 'a' ? 'b' : 'a';
  if (report.host_time_only)
    return "both sides run the same operators on the same layouts, and no configuration key that differs is "
           "known to matter here: machine noise, not the code";
  if (report.energy_measured && Methods(report.a) != Methods(report.b))
    return fmt::format(
        "its energy was attributed by different methods in the two runs (a: {}; b: {}): the method moves "
        "joules between kernels and idle time, the code does not",
        fmt::join(Methods(report.a), ", "), fmt::join(Methods(report.b), ", "));
  const Overlap oa = OverlapOf(ra), ob = OverlapOf(rb);
  if (std::fabs(oa.share() - ob.share()) >= kOverlapPoints) {
    const Overlap& more = oa.share() > ob.share() ? oa : ob;
    return fmt::format(
        "its device work runs beside other work for {:.0f}% of its time on a and {:.0f}% on b ({}{}): "
        "overlapped stretches share their energy and contend for the device, so the overlap differs, not the "
        "region's code",
        oa.share() * 100, ob.share() * 100, more.with.empty() ? "other device work" : "mostly ",
        more.with.empty() ? "" : more.with.substr(0, 60));
  }
  const SideCost& hi = f.costly == 'a' ? f.a : f.b;
  const SideCost& lo = f.costly == 'a' ? f.b : f.a;
  if ((f.costly == 'a' ? ra : rb).cost->host_slower_throughout() && hi.wait_seconds > lo.wait_seconds)
    return fmt::format(
        "the device waited {} for these launches on {} and {} on {}, as it waited longer on {} in most regions "
        "of unchanged code: {}'s host issued the same code more slowly throughout (load, clocks), not this code",
        Duration(hi.wait_seconds), f.costly, Duration(lo.wait_seconds), lean, f.costly, f.costly);
  const double run_hi = hi.seconds - hi.wait_seconds, run_lo = lo.seconds - lo.wait_seconds;
  if (run_lo > 0 && run_hi > run_lo * (1 + options.threshold)) {
    const double clock_hi = MeanSmClock(f.costly == 'a' ? ra : rb), clock_lo = MeanSmClock(f.costly == 'a' ? rb : ra);
    if (clock_hi < clock_lo * (1 - kClockDrop))
      return fmt::format(
          "the same kernels run {:.0f}% longer on {} at a mean SM clock of {:.0f} MHz against {:.0f} MHz on {}: "
          "the device was throttled or capped, not the code",
          (run_hi / run_lo - 1) * 100, f.costly, clock_hi, clock_lo, lean);
    return fmt::format(
        "the same kernels, launched the same way on the same inputs, run {:.0f}% longer on {} ({} against {}): "
        "the device ran slower (clocks, temperature, another process on it), not the code",
        (run_hi / run_lo - 1) * 100, f.costly, Duration(run_hi), Duration(run_lo));
  }
  if (report.energy_measured && lo.seconds > 0 && hi.seconds < lo.seconds * (1 + options.threshold)) {
    const double period = SensorPeriod(f.costly == 'a' ? ra : rb);
    return fmt::format(
        "the same kernels take the same device time ({} on {}, {} on {}) but were given different energy: the "
        "region's joules are its share of sensor readings{} shared with the work around it, an attribution "
        "effect rather than the code",
        Duration(hi.seconds), f.costly, Duration(lo.seconds), lean,
        std::isnan(period) ? "" : fmt::format(" ({} apart)", Duration(period)));
  }
  return std::nullopt;
}

}  // namespace

bool Unbacked(const Finding& f) {
  return f.verdict != Verdict::kNoise && f.evidence_class() == EvidenceClass::kNone && !f.evidence.empty() &&
         f.evidence[0].config.empty();
}

void JudgeSameWork(Finding& f, const RegionSide& ra, const RegionSide& rb, const DiffReport& report,
                   const DiffOptions& options) {
  const char* what = report.energy_measured ? "energy" : report.host_time_only ? "host time" : "time";
  auto explained = Explanation(f, ra, rb, report, options);
  f.verdict = Verdict::kNoise;
  f.why = fmt::format("{:.1f}% apart in {}, but {}", f.cost_delta_pct, what,
                      explained ? *explained
                                : "nothing recorded differs: the same operators, kernels, launch parameters and "
                                  "input layouts; what makes the costs differ is not in the recordings, so it is "
                                  "no evidence of waste");
  f.evidence[0].summary = explained ? "same work, other cost: " + *explained : f.evidence[0].summary;
  f.rules.clear();
}

}  // namespace magneton::analysis
