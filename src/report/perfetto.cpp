#include "report/perfetto.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

namespace magneton::report {
namespace {

constexpr int kHostPid = 1;
constexpr int kDevicePid0 = 10;  // device d is process kDevicePid0 + d

std::string Q(const std::string& s) { return nlohmann::json(s).dump(); }

struct Slice {
  int64_t start = 0, end = 0;
  std::string name, cat;
  nlohmann::json args;
};

// One named track group ("thread 7", "stream 3"); lanes are added when
// slices overlap without nesting.
struct TrackGroup {
  int pid = kHostPid;
  std::string name;
  std::vector<Slice> slices;
};

class TraceWriter {
 public:
  TraceWriter(std::ostream& out, int64_t t0) : out_(out), t0_(t0) { out_ << "{\"traceEvents\":[\n"; }

  void Meta(const char* what, int pid, int tid, const std::string& name) {
    Event(fmt::format("{{\"ph\":\"M\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}", what,
                      pid, tid, Q(name)));
  }

  // Spreads the group's slices over lanes where each nests in the one before.
  void Slices(TrackGroup& g) {
    auto& s = g.slices;
    std::sort(s.begin(), s.end(), [](const Slice& x, const Slice& y) {
      return x.start != y.start ? x.start < y.start : x.end > y.end;
    });
    std::vector<std::vector<int64_t>> open;  // per lane: ends of the enclosing slices
    std::vector<int> tids;
    for (const auto& sl : s) {
      size_t lane = 0;
      for (; lane < open.size(); ++lane) {
        auto& st = open[lane];
        while (!st.empty() && st.back() <= sl.start) st.pop_back();
        if (st.empty() || st.back() >= sl.end) break;
      }
      if (lane == open.size()) {
        open.emplace_back();
        tids.push_back(next_tid_++);
        Meta("thread_name", g.pid, tids.back(),
             lane == 0 ? g.name : fmt::format("{} ({})", g.name, lane + 1));
        ++stats.tracks;
      }
      open[lane].push_back(sl.end);
      Event(fmt::format(
          "{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"name\":{},\"cat\":{},\"args\":{}}}",
          g.pid, tids[lane], Us(sl.start), Dur(sl.start, sl.end), Q(sl.name), Q(sl.cat), sl.args.dump()));
      ++stats.slices;
    }
  }

  void Counter(int pid, const std::string& name, const std::string& unit, int64_t t, double v) {
    if (!std::isfinite(v)) return;
    Event(fmt::format("{{\"ph\":\"C\",\"pid\":{},\"name\":{},\"ts\":{},\"args\":{{{}:{}}}}}", pid, Q(name),
                      Us(t), Q(unit), nlohmann::json(v).dump()));
    ++stats.counters;
  }

  void Finish(const Run& run) {
    out_ << "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"magneton " MAGNETON_VERSION
            "\",\"command\":"
         << Q(run.info.command) << ",\"clock_domain\":" << Q(run.info.clock_domain) << ",\"start_ns\":" << t0_
         << "}}\n";
  }

  TraceStats stats;

 private:
  // Microseconds since the start of the run, with nanosecond digits.
  std::string Us(int64_t t) const {
    int64_t d = t - t0_;
    return fmt::format("{}{}.{:03}", d < 0 ? "-" : "", std::llabs(d) / 1000, std::llabs(d) % 1000);
  }
  std::string Dur(int64_t a, int64_t b) const {
    int64_t d = std::max<int64_t>(0, b - a);
    return fmt::format("{}.{:03}", d / 1000, d % 1000);
  }
  void Event(const std::string& e) {
    if (!first_) out_ << ",\n";
    first_ = false;
    out_ << e;
  }

  std::ostream& out_;
  int64_t t0_;
  bool first_ = true;
  int next_tid_ = 1;
};

int64_t StartOf(const Run& run) {
  int64_t t0 = run.info.start_ns;
  if (t0 > 0) return t0;
  t0 = INT64_MAX;
  for (const auto& op : run.ops) t0 = std::min(t0, op.start_ns);
  for (const auto& k : run.kernels) t0 = std::min(t0, k.start_ns);
  for (const auto& s : run.series)
    if (!s.t_ns.empty()) t0 = std::min(t0, s.t_ns.front());
  return t0 == INT64_MAX ? 0 : t0;
}

double At(const std::vector<double>& v, int64_t i) {
  return i >= 0 && i < static_cast<int64_t>(v.size()) ? v[i] : NAN;
}

nlohmann::json Energy(double j) { return std::isfinite(j) ? nlohmann::json(j) : nlohmann::json(nullptr); }

}  // namespace

TraceStats WritePerfettoTrace(const Run& run, const energy::Attribution& energy, std::ostream& out) {
  TraceWriter w(out, StartOf(run));
  w.Meta("process_name", kHostPid, 0, fmt::format("host {} (pid {})", run.info.host, run.info.pid));
  for (const auto& d : run.devices)
    w.Meta("process_name", kDevicePid0 + d.id, 0, fmt::format("{} {}: {}", d.kind, d.ordinal, d.name));

  // Host: operators per thread, ranges per thread (their own tracks: NVTX
  // start/end ranges need not nest with operators).
  std::map<int64_t, TrackGroup> op_tracks, range_tracks;
  for (const auto& op : run.ops) {
    auto& g = op_tracks[op.thread];
    g.name = fmt::format("ops thread {}", op.thread);
    nlohmann::json args = {{"op", op.id}, {"framework", op.framework}};
    if (energy.measured) args["energy_j"] = Energy(At(energy.op_j, op.id));
    g.slices.push_back({op.start_ns, op.end_ns, op.name, "op", std::move(args)});
  }
  for (const auto& r : run.ranges) {
    auto& g = range_tracks[r.thread];
    g.name = fmt::format("ranges thread {}", r.thread);
    nlohmann::json args = {{"range", r.id}, {"domain", r.domain}};
    if (auto it = energy.range_j.find(r.id); it != energy.range_j.end())
      args["energy_j"] = Energy(it->second);
    g.slices.push_back({r.start_ns, r.end_ns, r.name, "range", std::move(args)});
  }
  // Devices: kernels and transfers per stream.
  std::map<std::pair<int32_t, int64_t>, TrackGroup> streams;
  auto stream = [&](int32_t device, int64_t id) -> TrackGroup& {
    auto& g = streams[{device, id}];
    g.pid = kDevicePid0 + device;
    g.name = fmt::format("stream {}", id);
    return g;
  };
  for (const auto& k : run.kernels) {
    nlohmann::json args = {{"kernel", k.id},
                           {"grid", {k.grid[0], k.grid[1], k.grid[2]}},
                           {"block", {k.block[0], k.block[1], k.block[2]}},
                           {"registers", k.registers},
                           {"smem", k.static_smem + k.dynamic_smem},
                           {"correlation", k.correlation}};
    if (k.op >= 0 && k.op < static_cast<int64_t>(run.ops.size())) args["op"] = run.ops[k.op].name;
    if (energy.measured) args["energy_j"] = Energy(At(energy.kernel_j, k.id));
    stream(k.device, k.stream).slices.push_back({k.start_ns, k.end_ns, k.name, "kernel", std::move(args)});
  }
  for (const auto& t : run.transfers)
    stream(t.device, t.stream)
        .slices.push_back({t.start_ns,
                           t.end_ns,
                           fmt::format("{} {} B", t.kind, t.bytes),
                           "transfer",
                           {{"bytes", t.bytes}, {"kind", t.kind}}});
  for (auto* groups : {&op_tracks, &range_tracks})
    for (auto& [tid, g] : *groups) w.Slices(g);
  for (auto& [key, g] : streams) w.Slices(g);

  // Counters: every recorded series, then the energy attributed to kernels, cumulatively.
  for (const auto& s : run.series) {
    std::string name = fmt::format("{} ({}, {})", s.sensor, s.unit, s.source);
    for (size_t i = 0; i < s.t_ns.size() && i < s.value.size(); ++i)
      w.Counter(kDevicePid0 + s.device, name, s.unit, s.t_ns[i], s.value[i]);
  }
  if (energy.measured) {
    std::map<int32_t, std::vector<const Kernel*>> by_device;
    for (const auto& k : run.kernels) by_device[k.device].push_back(&k);
    for (auto& [device, ks] : by_device) {
      std::sort(ks.begin(), ks.end(), [](const Kernel* x, const Kernel* y) { return x->end_ns < y->end_ns; });
      double sum = 0;
      for (const Kernel* k : ks) {
        double j = At(energy.kernel_j, k->id);
        if (!std::isfinite(j)) continue;
        sum += j;
        w.Counter(kDevicePid0 + device, "energy attributed to kernels (J)", "J", k->end_ns, sum);
      }
    }
  }
  w.Finish(run);
  return w.stats;
}

}  // namespace magneton::report
