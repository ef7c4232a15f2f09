#include "report/top.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

#include <fmt/core.h>

#include "energy/launch_site.h"
#include "report/format.h"

namespace magneton::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Group {
  TopRow row;
  bool any_energy = false;
};

void AddEnergy(Group& g, double j) {
  if (std::isnan(j)) return;
  g.row.joules += j;
  g.any_energy = true;
}

// Kernel time launched on each thread, by launch time (energy::LaunchSites),
// with prefix sums, so a range's GPU time is two binary searches. Kernels
// launched on no known thread (key kAnyThread) count in ranges on any thread.
class KernelTimeIndex {
 public:
  explicit KernelTimeIndex(const Run& run) {
    energy::LaunchSites sites(run);
    for (const Kernel& k : run.kernels) {
      energy::LaunchSite l = sites.Of(k);
      by_thread_[l.thread].push_back({l.t_ns, k.end_ns - k.start_ns});
    }
    for (auto& [t, v] : by_thread_) {
      std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (size_t i = 1; i < v.size(); ++i) v[i].second += v[i - 1].second;
    }
  }
  int64_t Between(int64_t thread, int64_t from, int64_t to) const {
    return Sum(thread, from, to) + (thread != energy::kAnyThread ? Sum(energy::kAnyThread, from, to) : 0);
  }

 private:
  int64_t Sum(int64_t thread, int64_t from, int64_t to) const {
    auto it = by_thread_.find(thread);
    if (it == by_thread_.end()) return 0;
    const auto& v = it->second;
    auto lo = std::lower_bound(v.begin(), v.end(), from, [](const auto& l, int64_t t) { return l.first < t; });
    auto hi = std::upper_bound(v.begin(), v.end(), to, [](int64_t t, const auto& l) { return t < l.first; });
    if (hi <= lo) return 0;
    return (hi - 1)->second - (lo == v.begin() ? 0 : (lo - 1)->second);
  }
  std::unordered_map<int64_t, std::vector<std::pair<int64_t, int64_t>>> by_thread_;
};

// Small shares keep two significant digits: an idle-heavy run puts most kernels below 0.1%.
std::string Pct(double pct) {
  if (std::isnan(pct) || pct >= 1 || pct == 0) return FormatPct(pct);
  return fmt::format("{:.2g}%", pct);
}

std::string EnergyNote(const Run& run, const energy::Attribution& a) {
  if (a.measured) {
    std::string methods;
    for (const auto& d : a.devices)
      if (d.method != "unavailable" && methods.find(d.method) == std::string::npos)
        methods += (methods.empty() ? "" : ", ") + d.method;
    return "energy from " + methods;
  }
  std::string why = "the run has no energy readings";
  for (const Stat& s : run.stats)
    if (s.name.find("nvml") != std::string::npos || s.name.find("sampler") != std::string::npos ||
        s.name.find("energy") != std::string::npos)
      return why + " (" + s.description + ")";
  return why + " (recorded with --no-energy, or where no sensor was readable)";
}

}  // namespace

const char* TopByName(TopBy by) {
  switch (by) {
    case TopBy::kKernel: return "kernel";
    case TopBy::kRange: return "range";
    case TopBy::kOp: return "op";
  }
  return "?";
}

TopTable BuildTop(const Run& run, const energy::Attribution& a, TopBy by) {
  TopTable t;
  t.by = by;
  t.energy_available = a.measured;
  t.energy_note = EnergyNote(run, a);
  t.run_ns = run.info.end_ns > run.info.start_ns ? run.info.end_ns - run.info.start_ns : 0;
  for (const Kernel& k : run.kernels) t.run_gpu_ns += k.end_ns - k.start_ns;
  t.run_joules = a.measured ? 0 : kNaN;
  t.fingerprinted = Fingerprinted(run);
  if (a.measured)
    for (const auto& d : a.devices) {
      bool gpu = d.device >= 0 && d.device < static_cast<int32_t>(run.devices.size())
                     ? run.devices[d.device].kind == "gpu"
                     : true;
      if (gpu && d.method != "unavailable") t.run_joules += d.total_j;
    }

  std::map<std::string, Group> groups;
  auto at = [](const std::vector<double>& v, size_t i) { return i < v.size() ? v[i] : kNaN; };
  if (by == TopBy::kKernel) {
    for (size_t i = 0; i < run.kernels.size(); ++i) {
      const Kernel& k = run.kernels[i];
      Group& g = groups[k.name];
      g.row.calls++;
      g.row.gpu_ns += k.end_ns - k.start_ns;
      g.row.wall_ns += k.end_ns - k.start_ns;
      AddEnergy(g, at(a.kernel_j, i));
    }
  } else if (by == TopBy::kRange) {
    KernelTimeIndex launches(run);
    for (const Range& r : run.ranges) {
      if (IsStepMark(r)) continue;  // the program's step boundaries, not ranges
      Group& g = groups[r.name];
      g.row.calls++;
      g.row.wall_ns += r.end_ns - r.start_ns;
      g.row.gpu_ns += launches.Between(r.thread, r.start_ns, r.end_ns);
      if (auto it = a.range_j.find(r.id); it != a.range_j.end()) AddEnergy(g, it->second);
    }
  } else {
    for (size_t i = 0; i < run.ops.size(); ++i) {
      const Op& op = run.ops[i];
      Group& g = groups[op.name];
      g.row.calls++;
      g.row.wall_ns += op.end_ns - op.start_ns;
      g.row.gpu_ns += static_cast<int64_t>(at(a.op_gpu_ns, i) >= 0 ? at(a.op_gpu_ns, i) : 0);
      AddEnergy(g, at(a.op_j, i));
    }
  }

  for (auto& [name, g] : groups) {
    TopRow& r = g.row;
    r.name = name;
    if (!g.any_energy) r.joules = kNaN;
    r.energy_pct = t.run_joules > 0 ? 100.0 * r.joules / t.run_joules : kNaN;
    r.gpu_pct = t.run_gpu_ns > 0 ? 100.0 * static_cast<double>(r.gpu_ns) / static_cast<double>(t.run_gpu_ns) : kNaN;
    // Power while the group's kernels ran (a scope's energy is its kernels' energy).
    r.avg_w = r.gpu_ns > 0 ? r.joules / (static_cast<double>(r.gpu_ns) * 1e-9) : kNaN;
    t.rows.push_back(std::move(r));
  }
  auto key = [&](const TopRow& r) {
    return t.energy_available && !std::isnan(r.joules) ? r.joules : -1.0;
  };
  std::stable_sort(t.rows.begin(), t.rows.end(), [&](const TopRow& x, const TopRow& y) {
    if (key(x) != key(y)) return key(x) > key(y);
    if (x.gpu_ns != y.gpu_ns) return x.gpu_ns > y.gpu_ns;
    return x.wall_ns > y.wall_ns;
  });
  return t;
}

std::string RenderTop(const TopTable& t, const std::string& title, size_t limit) {
  std::string out;
  const bool scopes = t.by != TopBy::kKernel;
  const bool wall = t.by_wall();
  out += fmt::format("\n {} by {} - {}\n", t.by == TopBy::kKernel ? "Kernels" : t.by == TopBy::kRange ? "NVTX ranges" : "Operators",
                     t.energy_available ? "energy" : wall ? "wall time" : "GPU time", title);
  if (wall)
    out += fmt::format(" run {}, no kernels: wall time, nested {} included{}\n\n", FormatSeconds(t.run_ns * 1e-9),
                       t.by == TopBy::kRange ? "ranges" : "operators",
                       t.fingerprinted ? "; a recording pass: its times include the fingerprinting (a measured pass "
                                         "has the program's own)"
                                       : "");
  else
    out += fmt::format(" run {}, kernel time {}, GPU energy {}; {}\n\n", FormatSeconds(t.run_ns * 1e-9),
                       FormatSeconds(t.run_gpu_ns * 1e-9), t.energy_available ? FormatJoules(t.run_joules) : "-",
                       t.energy_available ? t.energy_note : "energy unavailable: " + t.energy_note);
  if (t.rows.empty()) {
    out += fmt::format("  no {}s in this run\n", TopByName(t.by));
    return out;
  }
  out += fmt::format("  {:>10} {:>7}  {:>10} {:>7}  {:>8}  {:>10}  {:>8}  {}\n", "Energy", "%", wall ? "Wall" : "GPU time",
                     "%", "Calls", scopes ? "Wall avg" : "Avg", "Avg W", "Name");
  size_t n = limit ? std::min(limit, t.rows.size()) : t.rows.size();
  for (size_t i = 0; i < n; ++i) {
    const TopRow& r = t.rows[i];
    double avg = static_cast<double>(scopes ? r.wall_ns : r.gpu_ns) * 1e-9 / static_cast<double>(std::max<int64_t>(r.calls, 1));
    const double time_ns = static_cast<double>(wall ? r.wall_ns : r.gpu_ns);
    const double time_pct = wall ? (t.run_ns > 0 ? 100.0 * time_ns / static_cast<double>(t.run_ns) : kNaN) : r.gpu_pct;
    out += fmt::format("  {:>10} {:>7}  {:>10} {:>7}  {:>8}  {:>10}  {:>8}  {}\n", FormatJoules(r.joules),
                       Pct(r.energy_pct), FormatSeconds(time_ns * 1e-9), Pct(time_pct), r.calls,
                       FormatSeconds(avg), std::isnan(r.avg_w) ? "-" : fmt::format("{:.1f}", r.avg_w),
                       Shorten(r.name, 100));
  }
  if (n < t.rows.size()) out += fmt::format("  ... {} more (-n 0 shows all)\n", t.rows.size() - n);
  return out;
}

nlohmann::json TopToJson(const TopTable& t, size_t limit) {
  using nlohmann::json;
  auto num = [](double v) { return std::isnan(v) ? json(nullptr) : json(v); };
  json rows = json::array();
  size_t n = limit ? std::min(limit, t.rows.size()) : t.rows.size();
  for (size_t i = 0; i < n; ++i) {
    const TopRow& r = t.rows[i];
    rows.push_back({{"name", r.name}, {"calls", r.calls}, {"joules", num(r.joules)}, {"energy_pct", num(r.energy_pct)},
                    {"gpu_ns", r.gpu_ns}, {"gpu_pct", num(r.gpu_pct)}, {"wall_ns", r.wall_ns}, {"avg_w", num(r.avg_w)}});
  }
  return {{"by", TopByName(t.by)},
          {"energy_available", t.energy_available},
          {"energy_note", t.energy_note},
          {"run_joules", num(t.run_joules)},
          {"run_gpu_ns", t.run_gpu_ns},
          {"run_ns", t.run_ns},
          {"groups", t.rows.size()},
          {"rows", rows}};
}

}  // namespace magneton::report
