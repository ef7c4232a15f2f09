#include "analysis/ranks/collectives.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "energy/energy_curve.h"

namespace magneton::analysis {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::optional<int64_t> ExtraInt(const Run& run, const std::string& key) {
  auto it = run.info.extra.find(key);
  if (it == run.info.extra.end()) return std::nullopt;
  int64_t v = 0;
  const std::string& s = it->second;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string Extra(const Run& run, const std::string& key) {
  auto it = run.info.extra.find(key);
  return it == run.info.extra.end() ? std::string() : it->second;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// The span of the rank's workload: its first to its last operator (the
// recorder's own start-up and shutdown stay out); RunInfo's span without ops.
std::pair<int64_t, int64_t> RunSpan(const Run& run) {
  if (run.ops.empty()) return {run.info.start_ns, run.info.end_ns};
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const auto& o : run.ops) {
    lo = std::min(lo, o.start_ns);
    hi = std::max(hi, o.end_ns);
  }
  return lo <= hi ? std::pair{lo, hi} : std::pair<int64_t, int64_t>{0, 0};
}

// The device whose energy is the rank's: the GPU it computes on
// (dist.cuda_device, else local_rank), else the only device with energy.
int32_t RankDevice(const Run& run, int64_t from, int64_t to) {
  auto measured = [&](int32_t d) { return !energy::BuildEnergyCurve(run, d, from, to).empty(); };
  std::optional<int64_t> ordinal = ExtraInt(run, "dist.cuda_device");
  if (!ordinal) ordinal = ExtraInt(run, "local_rank");
  std::vector<int32_t> with_energy;
  for (const auto& d : run.devices) {
    if (!measured(d.id)) continue;
    if (d.kind == "gpu" && ordinal && d.ordinal == *ordinal) return d.id;
    with_energy.push_back(d.id);
  }
  return with_energy.size() == 1 ? with_energy[0] : static_cast<int32_t>(kNone);
}

}  // namespace

Result<RankIdentity> ReadRankIdentity(const Run& run, const std::string& path) {
  auto rank = ExtraInt(run, "rank");
  auto world = ExtraInt(run, "world_size");
  if (!rank || !world)
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: not a rank of a distributed job (no rank and world_size in its metadata)", path));
  if (*world < 1 || *rank < 0 || *rank >= *world)
    return MakeError(ErrorCode::kCorrupt, fmt::format("{}: rank {} of world size {} is impossible", path, *rank, *world));
  RankIdentity id;
  id.rank = static_cast<int>(*rank);
  id.world_size = static_cast<int>(*world);
  id.job = Extra(run, "dist.job");
  id.backend = Extra(run, "dist.backend");
  id.host = run.info.host;
  return id;
}

bool IsCollectiveName(std::string_view name) {
  static constexpr std::string_view kC10d[] = {
      "allreduce", "allgather", "_allgather_base", "reduce_scatter", "_reduce_scatter_base", "reduce_",
      "broadcast", "gather_", "scatter_", "alltoall", "barrier", "monitored_barrier"};
  static constexpr std::string_view kBackend[] = {
      "all_reduce", "allreduce", "all_gather", "allgather", "_allgather_base", "reduce_scatter",
      "_reduce_scatter_base", "reduce", "broadcast", "gather", "scatter", "all_to_all", "alltoall", "barrier"};
  if (StartsWith(name, "c10d::")) {
    std::string_view rest = name.substr(6);
    for (auto p : kC10d)
      if (StartsWith(rest, p)) return true;
    return false;
  }
  for (std::string_view backend : {"nccl:", "gloo:", "mpi:", "ucc:", "xccl:"}) {
    if (!StartsWith(name, backend)) continue;
    std::string_view rest = name.substr(backend.size());
    for (auto p : kBackend)
      if (StartsWith(rest, p)) return true;
  }
  return false;
}

std::vector<CollectiveCall> FindCollectives(const Run& run) {
  std::vector<CollectiveCall> out;
  std::vector<char> is_coll(run.ops.size(), 0);
  for (const auto& o : run.ops) is_coll[o.id] = IsCollectiveName(o.name);
  for (const auto& o : run.ops) {
    if (!is_coll[o.id]) continue;
    bool nested = false;
    for (int64_t p = o.parent, guard = 0; p >= 0 && p < static_cast<int64_t>(run.ops.size()) && guard < 4096;
         p = run.ops[p].parent, ++guard)
      if (is_coll[p]) {
        nested = true;
        break;
      }
    if (!nested) out.push_back({o.id, o.name, o.start_ns, o.end_ns});
  }
  if (out.empty())
    for (const auto& r : run.ranges)
      if (IsCollectiveName(r.name)) out.push_back({kNone, r.name, r.start_ns, r.end_ns});
  std::stable_sort(out.begin(), out.end(),
                   [](const CollectiveCall& x, const CollectiveCall& y) { return x.start_ns < y.start_ns; });
  return out;
}

namespace {

// Each rank's input, by rank: the files must be one job's, every rank once.
Result<std::vector<int>> RankSlots(const std::vector<RankInput>& inputs, const std::vector<RankIdentity>& ids) {
  const RankIdentity& first = ids[0];
  const std::string& first_path = inputs[0].path;
  std::vector<int> slot(first.world_size, -1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const RankIdentity& id = ids[i];
    if (id.world_size != first.world_size)
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("{}: world size {}, but {} has world size {}: files of different jobs",
                                   inputs[i].path, id.world_size, first_path, first.world_size));
    if (id.job != first.job)
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("{}: job '{}', but {} is job '{}': files of different jobs", inputs[i].path,
                                   id.job, first_path, first.job));
    if (slot[id.rank] >= 0)
      return MakeError(ErrorCode::kInvalidArgument, fmt::format("{}: rank {} is also {}", inputs[i].path, id.rank,
                                                                inputs[slot[id.rank]].path));
    slot[id.rank] = static_cast<int>(i);
  }
  std::vector<std::string> missing;
  for (int r = 0; r < first.world_size; ++r)
    if (slot[r] < 0) missing.push_back(std::to_string(r));
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: rank{} {} of world size {} missing: give every rank's file", first_path,
                                 missing.size() > 1 ? "s" : "", list, first.world_size));
  }

  return slot;
}

// How many collective calls line up, the k-th of each rank the same collective;
// notes say where and why the alignment stops.
size_t AlignCalls(const std::vector<std::vector<CollectiveCall>>& calls, std::vector<std::string>& notes) {
  const int n = static_cast<int>(calls.size());
  size_t aligned = calls[0].size();
  for (int r = 1; r < n; ++r) aligned = std::min(aligned, calls[r].size());
  size_t longest = 0;
  for (int r = 0; r < n; ++r) longest = std::max(longest, calls[r].size());
  for (size_t k = 0; k < aligned; ++k) {
    for (int r = 1; r < n; ++r) {
      if (calls[r][k].name == calls[0][k].name) continue;
      notes.push_back(fmt::format("collective {} is {} on rank 0 but {} on rank {}: aligned the first {} only", k,
                                  calls[0][k].name, calls[r][k].name, r, k));
      aligned = k;
      break;
    }
  }
  if (aligned < longest && (notes.empty() || notes.back().find("aligned the first") == std::string::npos))
    notes.push_back(fmt::format("ranks ran different numbers of collectives ({} at most): aligned the first {}",
                                longest, aligned));
  if (longest == 0) notes.push_back("no collective operators in the runs (c10d::*, nccl:*, gloo:*)");
  return aligned;
}

// Each aligned call's wait on each rank, and each rank's total wait (time and
// energy) inside [window_lo, window_hi].
void AddWaits(const std::vector<std::vector<CollectiveCall>>& calls, const std::vector<energy::EnergyCurve>& curves,
              size_t aligned, int64_t window_lo, int64_t window_hi, DistAnalysis& out) {
  const int n = static_cast<int>(calls.size());
  std::vector<std::vector<std::pair<int64_t, int64_t>>> intervals(n);
  for (size_t k = 0; k < aligned; ++k) {
    CallWait cw;
    cw.name = calls[0][k].name;
    cw.op.resize(n);
    cw.start_ns.resize(n);
    cw.wait_ns.resize(n);
    int64_t last_arrival = std::numeric_limits<int64_t>::min();
    int64_t shortest = std::numeric_limits<int64_t>::max();
    for (int r = 0; r < n; ++r) {
      last_arrival = std::max(last_arrival, calls[r][k].start_ns);
      shortest = std::min(shortest, calls[r][k].end_ns - calls[r][k].start_ns);
    }
    for (int r = 0; r < n; ++r) {
      const CollectiveCall& c = calls[r][k];
      int64_t from = c.start_ns, to = c.start_ns;
      if (out.method == "arrival") {
        from = std::max(c.start_ns, window_lo);
        to = std::min(last_arrival, window_hi);  // from its arrival until the last rank arrived
      } else {
        from = c.start_ns;
        to = c.start_ns + std::max<int64_t>(0, (c.end_ns - c.start_ns) - shortest);
      }
      int64_t wait = std::max<int64_t>(0, to - from);
      cw.op[r] = c.op;
      cw.start_ns[r] = c.start_ns;
      cw.wait_ns[r] = wait;
      if (wait > 0) {
        ++out.ranks[r].waited_calls;
        intervals[r].push_back({from, from + wait});
      }
    }
    out.calls.push_back(std::move(cw));
  }
  // Calls in flight together (DDP's buckets, launched back to back) wait over
  // the same time: a rank's wait is the union of its intervals.
  for (int r = 0; r < n; ++r) {
    auto& iv = intervals[r];
    std::sort(iv.begin(), iv.end());
    RankSummary& s = out.ranks[r];
    for (size_t i = 0; i < iv.size();) {
      int64_t lo = iv[i].first, hi = iv[i].second;
      for (++i; i < iv.size() && iv[i].first <= hi; ++i) hi = std::max(hi, iv[i].second);
      s.wait_ns += hi - lo;
      if (s.device != kNone) s.wait_joules += curves[r].Between(lo, hi);
    }
  }
}

}  // namespace

Result<DistAnalysis> AnalyzeRanks(const std::vector<RankInput>& inputs) {
  if (inputs.empty()) return MakeError(ErrorCode::kInvalidArgument, "no rank runs given");
  std::vector<RankIdentity> ids;
  for (const auto& in : inputs) {
    auto id = ReadRankIdentity(*in.run, in.path);
    if (!id.ok()) return id.error();
    ids.push_back(*id);
  }
  auto slots = RankSlots(inputs, ids);
  if (!slots.ok()) return slots.error();
  const std::vector<int>& slot = *slots;
  const RankIdentity& first = ids[0];
  DistAnalysis out;
  out.world_size = first.world_size;
  out.job = first.job;
  out.backend = first.backend;
  const int n = first.world_size;
  std::vector<const Run*> runs(n);
  std::vector<std::string> paths(n);
  bool one_host = true;
  for (int r = 0; r < n; ++r) {
    runs[r] = inputs[slot[r]].run;
    paths[r] = inputs[slot[r]].path;
    one_host = one_host && ids[slot[r]].host == first.host && runs[r]->info.clock_domain == "CLOCK_MONOTONIC";
  }
  // Ranks of one job on one host record at the same time: their spans overlap.
  if (one_host) {
    auto [s0, e0] = RunSpan(*runs[0]);
    for (int r = 1; r < n; ++r) {
      auto [s, e] = RunSpan(*runs[r]);
      if (s > e0 || s0 > e)
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("{}: recorded at another time than {} (one host, spans do not overlap): files "
                                     "of different jobs",
                                     paths[r], paths[0]));
    }
  }
  out.method = one_host ? "arrival" : "duration";
  if (!one_host)
    out.notes.push_back(
        "ranks on different hosts: clocks are not aligned, so a rank's wait is its time in a collective minus the "
        "shortest rank's (exact for blocking collectives only)");

  std::vector<std::vector<CollectiveCall>> calls(n);
  std::vector<energy::EnergyCurve> curves(n);
  out.ranks.resize(n);
  out.energy_measured = true;
  for (int r = 0; r < n; ++r) {
    RankSummary& s = out.ranks[r];
    s.rank = r;
    s.path = paths[r];
    auto [from, to] = RunSpan(*runs[r]);
    s.run_ns = to - from;
    s.device = RankDevice(*runs[r], from, to);
    if (s.device != kNone) {
      curves[r] = energy::BuildEnergyCurve(*runs[r], s.device, from, to);
      s.device_name = runs[r]->devices[s.device].name;
      s.joules = curves[r].Between(from, to);
    } else {
      s.joules = kNaN;
      s.wait_joules = kNaN;
      out.energy_measured = false;
    }
    calls[r] = FindCollectives(*runs[r]);
    s.collectives = static_cast<int64_t>(calls[r].size());
    for (const auto& c : calls[r]) s.collective_ns += c.end_ns - c.start_ns;
  }
  if (!out.energy_measured)
    out.notes.push_back("energy unmeasured on some rank's device: waits are times only");

  // Waits count only while every rank runs the workload: from the last rank's
  // first operator to the first rank's last one. Before that, a peer may still
  // be starting its recorder, which is not the workload's waiting.
  int64_t window_lo = std::numeric_limits<int64_t>::min(), window_hi = std::numeric_limits<int64_t>::max();
  for (int r = 0; r < n; ++r) {
    if (runs[r]->ops.empty()) continue;
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for (const auto& o : runs[r]->ops) {
      lo = std::min(lo, o.start_ns);
      hi = std::max(hi, o.end_ns);
    }
    window_lo = std::max(window_lo, lo);
    window_hi = std::min(window_hi, hi);
  }

  const size_t aligned = AlignCalls(calls, out.notes);
  out.aligned_calls = static_cast<int64_t>(aligned);
  AddWaits(calls, curves, aligned, window_lo, window_hi, out);
  return out;
}

Result<DistDiff> DiffRankSets(const std::vector<RankInput>& a, const std::vector<RankInput>& b, double threshold) {
  auto ra = AnalyzeRanks(a);
  if (!ra.ok()) return ra.error();
  auto rb = AnalyzeRanks(b);
  if (!rb.ok()) return rb.error();
  DistDiff d;
  d.a = std::move(*ra);
  d.b = std::move(*rb);
  if (d.a.world_size != d.b.world_size)
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: world size {}, but {} has world size {}: compare jobs of the same shape",
                                 b[0].path, d.b.world_size, a[0].path, d.a.world_size));
  const bool joules = d.a.energy_measured && d.b.energy_measured;
  d.unit = joules ? "J" : "s";
  auto cost = [&](const RankSummary& s) { return joules ? s.joules : s.run_ns / 1e9; };
  auto wait = [&](const RankSummary& s) { return joules ? s.wait_joules : s.wait_ns / 1e9; };
  for (int r = 0; r < d.a.world_size; ++r) {
    const RankSummary& sa = d.a.ranks[r];
    const RankSummary& sb = d.b.ranks[r];
    RankDelta rd{r, cost(sa), cost(sb), wait(sa), wait(sb), sa.collectives, sb.collectives};
    d.total_a += rd.cost_a;
    d.total_b += rd.cost_b;
    d.wait_a += rd.wait_a;
    d.wait_b += rd.wait_b;
    d.ranks.push_back(rd);
  }
  const bool a_costlier = d.total_a >= d.total_b;
  const double hi = a_costlier ? d.total_a : d.total_b, lo = a_costlier ? d.total_b : d.total_a;
  d.saving = hi - lo;
  d.saving_pct = hi > 0 ? d.saving / hi : 0;
  d.waste = d.saving_pct >= threshold;
  d.costlier = d.waste ? (a_costlier ? 'a' : 'b') : 0;

  const char costly = a_costlier ? 'a' : 'b', lean = a_costlier ? 'b' : 'a';
  const std::string what = joules ? "energy" : "device time (energy unmeasured)";
  auto fmt_cost = [&](double v) { return joules ? fmt::format("{:.3g} J", v) : fmt::format("{:.3g} s", v); };
  std::string text = fmt::format("{} spends {:.1f}% more {} than {} over {} ranks ({} vs {}).", costly,
                                 d.saving_pct * 100, what, lean, d.a.world_size, fmt_cost(hi), fmt_cost(lo));
  // Where the difference sits: the rank whose wait changed most.
  int worst = 0;
  double worst_delta = -1;
  for (const auto& rd : d.ranks) {
    double delta = a_costlier ? rd.wait_a - rd.wait_b : rd.wait_b - rd.wait_a;
    if (delta > worst_delta) {
      worst_delta = delta;
      worst = rd.rank;
    }
  }
  const DistAnalysis& ca = a_costlier ? d.a : d.b;
  const DistAnalysis& cl = a_costlier ? d.b : d.a;
  const RankSummary& wc = ca.ranks[worst];
  const RankSummary& wl = cl.ranks[worst];
  if (worst_delta > 0) {
    const double more_wait = (a_costlier ? d.wait_a - d.wait_b : d.wait_b - d.wait_a);
    text += fmt::format(" Rank {} waits {:.3g} ms in {} collective calls on {} ({}), {:.3g} ms on {}", worst,
                        wc.wait_ns / 1e6, wc.waited_calls, costly,
                        std::isnan(wc.wait_joules) ? "energy unmeasured" : fmt::format("{:.3g} J", wc.wait_joules),
                        wl.wait_ns / 1e6, lean);
    if (more_wait > 0 && d.saving > 0)
      text += fmt::format("; more waiting for a slower peer is {:.0f}% of the difference",
                          100 * std::min(1.0, more_wait / d.saving));
    text += ".";
  }
  if (wc.collectives > wl.collectives)
    text += fmt::format(" {} runs {} collectives on rank {}, {} runs {}: a rank that ran out of work keeps joining its "
                        "peers' collectives (as dist.Join's shadowing does) instead of leaving.",
                        costly, wc.collectives, worst, lean, wl.collectives);
  d.finding = text;
  return d;
}

}  // namespace magneton::analysis
