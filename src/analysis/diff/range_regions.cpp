#include "analysis/diff/range_regions.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "energy/launch_site.h"

namespace magneton::analysis {
namespace {

bool HoldsValues(const Run& run) {
  if (run.ops.empty()) return false;
  return std::any_of(run.tensors.begin(), run.tensors.end(), [](const Tensor& t) { return t.fingerprint.has_value(); });
}

bool IsMark(const Range& r) { return r.end_ns <= r.start_ns; }

// Outermost name first; a parent chain that loops (a corrupt file) stops where it closes.
std::string PathOf(const Run& run, const Range& r) {
  std::vector<const std::string*> names{&r.name};
  const int64_t n = static_cast<int64_t>(run.ranges.size());
  for (int64_t p = r.parent, hops = 0; p >= 0 && p < n && hops < n; p = run.ranges[p].parent, ++hops)
    names.push_back(&run.ranges[p].name);
  std::string out;
  for (auto it = names.rbegin(); it != names.rend(); ++it) out += (out.empty() ? "" : kRangePathSeparator) + **it;
  return out;
}

// The innermost range open at each instant on one thread: of the ranges open
// then, the one that started last (the shorter on a tie). Start/end ranges may
// overlap without nesting, so this is a sweep, not a stack.
class OpenRanges {
 public:
  OpenRanges(const Run& run, const std::vector<int64_t>& ranges) : run_(run) {
    struct Event {
      int64_t t;
      bool open;
      int64_t range;
    };
    std::vector<Event> events;
    for (auto id : ranges) {
      events.push_back({run.ranges[id].start_ns, true, id});
      events.push_back({run.ranges[id].end_ns + 1, false, id});  // the end instant still belongs to the range
    }
    std::sort(events.begin(), events.end(), [](const Event& x, const Event& y) { return x.t < y.t; });
    std::set<std::tuple<int64_t, int64_t, int64_t>> open;  // (start, -end, id): the last one is innermost
    auto key = [&](int64_t id) {
      return std::tuple{run.ranges[id].start_ns, -run.ranges[id].end_ns, id};
    };
    for (size_t i = 0; i < events.size();) {
      int64_t t = events[i].t;
      for (; i < events.size() && events[i].t == t; ++i) {
        if (events[i].open)
          open.insert(key(events[i].range));
        else
          open.erase(key(events[i].range));
      }
      steps_.emplace_back(t, open.empty() ? kNone : std::get<2>(*open.rbegin()));
    }
  }
  // The innermost range holding instant t, or kNone.
  int64_t At(int64_t t) const {
    auto it = std::upper_bound(steps_.begin(), steps_.end(), t,
                               [](int64_t x, const std::pair<int64_t, int64_t>& s) { return x < s.first; });
    return it == steps_.begin() ? kNone : std::prev(it)->second;
  }
  // Which of two ranges is nested deeper (started later, or ends sooner).
  bool Inner(int64_t x, int64_t y) const {
    const Range& a = run_.ranges[x];
    const Range& b = run_.ranges[y];
    return std::tuple{a.start_ns, -a.end_ns} > std::tuple{b.start_ns, -b.end_ns};
  }

 private:
  const Run& run_;
  std::vector<std::pair<int64_t, int64_t>> steps_;  // (from instant, innermost range)
};

// The innermost range holding work launched at a site (energy/launch_site.h), or kNone.
class RangeOwner {
 public:
  explicit RangeOwner(const Run& run) {
    std::map<int64_t, std::vector<int64_t>> by_thread;
    for (size_t i = 0; i < run.ranges.size(); ++i)
      if (!IsMark(run.ranges[i])) by_thread[run.ranges[i].thread].push_back(static_cast<int64_t>(i));
    for (const auto& [thread, ids] : by_thread) threads_.emplace(thread, OpenRanges(run, ids));
  }
  int64_t Of(const energy::LaunchSite& l) const {
    if (l.thread != energy::kAnyThread) {
      auto it = threads_.find(l.thread);
      return it == threads_.end() ? kNone : it->second.At(l.t_ns);
    }
    // Launched on no known thread: it belongs to a range on any thread.
    int64_t best = kNone;
    for (const auto& [thread, open] : threads_)
      if (int64_t r = open.At(l.t_ns); r != kNone && (best == kNone || open.Inner(r, best))) best = r;
    return best;
  }

 private:
  std::map<int64_t, OpenRanges> threads_;
};

// Which ops of a WithRangeOps run hold device work (kernels, copies; not host waits).
std::vector<char> HoldsWork(const Run& run) {
  std::vector<char> out(run.ops.size(), 0);
  auto mark = [&](int64_t op) {
    if (op >= 0 && op < static_cast<int64_t>(out.size())) out[op] = 1;
  };
  for (const auto& k : run.kernels) mark(k.op);
  for (const auto& t : run.transfers)
    if (t.kind != "sync") mark(t.op);
  return out;
}

// "P (2 instances, 16 kernels)" for each path of these ops, in first-seen order.
std::string PathCounts(const Run& run, const std::vector<int64_t>& ops) {
  std::map<int64_t, int64_t> kernels;
  for (const auto& k : run.kernels) ++kernels[k.op];
  std::vector<std::string> order;
  std::map<std::string, std::pair<int64_t, int64_t>> counts;  // instances, kernels
  for (auto id : ops) {
    const std::string& path = run.ops[id].name;
    auto [it, fresh] = counts.try_emplace(path, 0, 0);
    if (fresh) order.push_back(path);
    it->second.first++;
    it->second.second += kernels[id];
  }
  std::vector<std::string> parts;
  for (const auto& path : order) {
    auto [n, k] = counts[path];
    parts.push_back(fmt::format("{} ({} instance{}, {} kernel{})", path, n, n == 1 ? "" : "s", k, k == 1 ? "" : "s"));
  }
  if (parts.size() > 6) {
    size_t more = parts.size() - 5;
    parts.resize(5);
    parts.push_back(fmt::format("{} more", more));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

bool MatchesByRanges(const Run& a, const Run& b) {
  for (const Run* run : {&a, &b})
    if (HoldsValues(*run) || run->kernels.empty() || std::all_of(run->ranges.begin(), run->ranges.end(), IsMark))
      return false;
  return true;
}

RangeRun WithRangeOps(const Run& run) {
  RangeRun out;
  Run& r = out.run;
  r = run;  // all the run holds but what describes its operators: the ops become the ranges
  r.ops.clear();
  r.tensors.clear();
  r.replays.clear();

  // Ops in start order, an enclosing range before the ranges it holds.
  std::vector<int64_t> order;  // indices into run.ranges
  for (size_t i = 0; i < run.ranges.size(); ++i)
    if (!IsMark(run.ranges[i])) order.push_back(static_cast<int64_t>(i));
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    const Range& a = run.ranges[x];
    const Range& b = run.ranges[y];
    return std::tuple{a.start_ns, -a.end_ns, x} < std::tuple{b.start_ns, -b.end_ns, y};
  });
  std::unordered_map<int64_t, int64_t> op_of_range;
  for (auto id : order) {
    const Range& range = run.ranges[id];
    Op op;
    op.id = static_cast<int64_t>(r.ops.size());
    op.name = PathOf(run, range);
    op.framework = "nvtx";
    op.thread = range.thread;
    op.start_ns = range.start_ns;
    op.end_ns = range.end_ns;
    op_of_range.emplace(id, op.id);
    r.ops.push_back(std::move(op));
  }

  if (!run.info.extra.count("iterations")) {
    std::map<std::string, int64_t> instances;
    for (const auto& op : r.ops) ++instances[op.name];
    auto depth = [](const std::string& path) {
      int64_t n = 0;
      for (size_t at = path.find(kRangePathSeparator); at != std::string::npos;
           at = path.find(kRangePathSeparator, at + 1))
        ++n;
      return n;
    };
    std::tuple<int64_t, int64_t> best{0, 0};  // (-depth, instances): outermost, then most frequent
    for (const auto& [path, n] : instances)
      if (n > 1 && (out.iteration_range.empty() || std::tuple{-depth(path), n} > best)) {
        best = {-depth(path), n};
        out.iteration_range = path;
      }
    if (!out.iteration_range.empty()) r.info.extra["iterations"] = std::to_string(std::get<1>(best));
  }

  // Where work was launched comes from the original run: its ops may say.
  energy::LaunchSites sites(run);
  RangeOwner owner(run);
  auto op_of = [&](const energy::LaunchSite& l) {
    int64_t range = owner.Of(l);
    return range == kNone ? kNone : op_of_range.at(range);
  };
  for (auto& k : r.kernels) {
    energy::LaunchSite l = sites.Of(k);
    out.kernels_placed_by_start += l.thread == energy::kAnyThread;
    k.op = op_of(l);
  }
  for (auto& t : r.transfers) t.op = op_of(sites.Of(t));
  return out;
}

MatchResult MatchRanges(const Run& a, const Run& b) {
  MatchResult m;
  m.by_range_name = true;
  std::map<std::string, std::vector<int64_t>> in_b;
  for (const auto& op : b.ops) in_b[op.name].push_back(op.id);
  auto work_a = HoldsWork(a), work_b = HoldsWork(b);
  std::map<std::string, size_t> seen;
  for (const auto& op : a.ops) {
    size_t i = seen[op.name]++;
    const auto& peers = in_b[op.name];
    if (i >= peers.size()) {
      m.unmatched_a.push_back(op.id);
      continue;
    }
    int64_t peer = peers[i];
    if (!work_a[op.id] && !work_b[peer]) continue;  // matched, but nothing to cost on either side
    RegionMatch r;
    r.id = static_cast<int64_t>(m.regions.size());
    r.ops_a = {op.id};
    r.ops_b = {peer};
    m.regions.push_back(std::move(r));
  }
  for (const auto& [path, ids] : in_b)
    for (size_t i = seen[path]; i < ids.size(); ++i) m.unmatched_b.push_back(ids[i]);
  std::sort(m.unmatched_b.begin(), m.unmatched_b.end());
  return m;
}

std::vector<std::string> RangeNotes(const RangeRun& a, const RangeRun& b, const MatchResult& match) {
  std::vector<std::string> notes;
  notes.push_back(
      "matched by NVTX range name: the runs hold kernels and NVTX ranges but no operator values, so each "
      "region is a range path (its own kernels, not its sub-ranges'); outputs not compared");
  for (auto [side, other, run, unmatched] :
       {std::tuple{'a', 'b', &a.run, &match.unmatched_a}, std::tuple{'b', 'a', &b.run, &match.unmatched_b}})
    if (!unmatched->empty())
      notes.push_back(fmt::format("NVTX ranges only in run {} (or more often than in run {}), not compared: {}", side,
                                  other, PathCounts(*run, *unmatched)));
  auto count = [](const RangeRun& r) { return r.run.info.extra.at("iterations"); };
  if (!a.iteration_range.empty() && a.iteration_range == b.iteration_range)
    notes.push_back(fmt::format(
        "an iteration is one instance of NVTX range {} ({} in run a, {} in run b): savings are per instance "
        "of it (--iterations N sets the count)",
        a.iteration_range, count(a), count(b)));
  else
    for (auto [side, r] : {std::pair{'a', &a}, std::pair{'b', &b}})
      if (!r->iteration_range.empty())
        notes.push_back(fmt::format("run {}: an iteration is one instance of NVTX range {} ({} in the run)", side,
                                    r->iteration_range, count(*r)));
  for (auto [side, r] : {std::pair{'a', &a}, std::pair{'b', &b}})
    if (r->kernels_placed_by_start > 0)
      notes.push_back(fmt::format(
          "run {}: {} of {} kernels have no launch record (CUDA API call or operator), so each belongs to the "
          "range open when it started on the device; an asynchronous kernel can then count in an enclosing "
          "range rather than in the one that launched it (`magneton record --api all` records the launches, "
          "--only-ranges included)",
          side, r->kernels_placed_by_start, r->run.kernels.size()));
  // Placed by where they ran on one side and by their launch on the other,
  // the same work lands in different ranges: the pairs compare unlike things.
  auto mostly_unplaced = [](const RangeRun& r) { return r.kernels_placed_by_start * 2 > std::ssize(r.run.kernels); };
  if (mostly_unplaced(a) != mostly_unplaced(b))
    notes.push_back(fmt::format(
        "run {} places its kernels by where they ran and run {} by their launch: the same work can sit in "
        "different ranges on the two sides, so record both the same way before trusting a range's finding",
        mostly_unplaced(a) ? 'a' : 'b', mostly_unplaced(a) ? 'b' : 'a'));
  return notes;
}

}  // namespace magneton::analysis
