#include "analysis/diff/sync_sites.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string_view>
#include <utility>

#include "analysis/diff/call_site.h"

namespace magneton::analysis {
namespace {

// The recorded op whose device work is the first launched after each call:
// correlation ids are assigned per API call, in call order.
template <class OpOf>
std::vector<int64_t> NextWorkOps(const Run& run, const std::vector<SyncCall>& calls, OpOf op_of) {
  const auto work = DeviceWorkInLaunchOrder(run);
  std::vector<int64_t> correlations;
  for (const auto& w : work)
    correlations.push_back(w.kernel ? run.kernels[w.id].correlation : run.transfers[w.id].correlation);
  std::vector<int64_t> out;
  for (const auto& c : calls) {
    auto next = std::upper_bound(correlations.begin(), correlations.end(), c.sync->correlation);
    out.push_back(next == correlations.end() ? kNone : op_of(work[static_cast<size_t>(next - correlations.begin())]));
  }
  return out;
}

// The innermost op running at `t` (any thread: the ops a step runs are
// usually one thread's), kNone when none is.
int64_t EnclosingOp(const Run& run, const std::vector<int64_t>& by_start, int64_t t) {
  auto it = std::upper_bound(by_start.begin(), by_start.end(), t,
                             [&](int64_t x, int64_t id) { return x < run.ops[id].start_ns; });
  if (it == by_start.begin()) return kNone;
  for (int64_t op = *(it - 1); op != kNone; op = run.ops[op].parent)
    if (run.ops[op].end_ns >= t) return op;
  return kNone;
}

int64_t TopLevel(const Run& run, int64_t op) {
  while (run.ops[op].parent != kNone) op = run.ops[op].parent;
  return op;
}

// "cudaStreamSynchronize in aten::item at train.py:41 (step)" for a call
// inside an operator; for one between operators, "cudaDeviceSynchronize at
// model.py:30 (forward)" where the recording took the call's own stack (a
// torch recording's Python stack), else "cudaDeviceSynchronize before
// aten::linear at model.py:31".
std::string Label(const Run& run, const SyncCall& call, int64_t inside, int64_t next) {
  const std::string name = call.name();
  if (inside != kNone) {
    const int64_t top = TopLevel(run, inside);
    const std::string site = Describe(UserCallSite(run, run.ops[inside].stack));
    return site.empty() ? fmt::format("{} in {}", name, run.ops[top].name)
                        : fmt::format("{} in {} at {}", name, run.ops[top].name, site);
  }
  if (call.api && call.api->stack != kNone)
    if (const std::string own = Describe(UserCallSite(run, call.api->stack)); !own.empty())
      return fmt::format("{} at {}", name, own);
  if (next == kNone) return name;
  const int64_t top = TopLevel(run, next);
  const std::string site = Describe(UserCallSite(run, run.ops[top].stack));
  return site.empty() ? fmt::format("{} before {}", name, run.ops[top].name)
                      : fmt::format("{} before {} at {}", name, run.ops[top].name, site);
}

}  // namespace

namespace {
// A call in which the host blocked this long was ahead of the device (one
// that returns at once takes a few microseconds).
constexpr int64_t kAheadNs = 10'000;
// A gap before an item this long means the device waited for its launch
// (queued kernels follow each other within a microsecond or two).
constexpr int64_t kIdleNs = 3'000;
}  // namespace

std::vector<int> WaitsAfterSyncs(const Run& run, const std::vector<DeviceWork>& work,
                                 const std::vector<SyncCall>& calls) {
  std::vector<size_t> order(calls.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return calls[x].sync->correlation < calls[y].sync->correlation; });
  std::vector<int> out(work.size(), -1);
  size_t next_call = 0;
  int chain = -1;
  bool first = false;
  int64_t blocked = 0;              // the host's time blocked in the call
  int64_t budget = 0;               // ...not yet waited out by the device
  int64_t busy_since = INT64_MIN;   // the start of the device's current stretch without a wait
  int64_t device_free = INT64_MIN;  // the latest end of the work launched so far
  for (size_t j = 0; j < work.size(); ++j) {
    const DeviceWork& w = work[j];
    const int64_t correlation = w.kernel ? run.kernels[w.id].correlation : run.transfers[w.id].correlation;
    const int64_t start = w.kernel ? run.kernels[w.id].start_ns : run.transfers[w.id].start_ns;
    const int64_t end = w.kernel ? run.kernels[w.id].end_ns : run.transfers[w.id].end_ns;
    for (; next_call < order.size() && calls[order[next_call]].sync->correlation < correlation; ++next_call) {
      const SyncCall& c = calls[order[next_call]];
      if (const int64_t b = c.sync->end_ns - c.sync->start_ns; b >= kAheadNs)
        chain = static_cast<int>(order[next_call]), first = true, blocked = budget = b;
    }
    const int64_t wait = device_free == INT64_MIN ? 0 : start - device_free;
    if (wait >= kIdleNs) busy_since = start;
    // Without the call the host would have launched everything after it that
    // much earlier: the device's later waits are the call's until they add up
    // to the time the host lost in it, and after that for as long as the host
    // has not rebuilt its lead: until the device runs back to back, with no
    // wait, for as long as the host blocked (a step whose launches the device
    // outran before the call, so that the host stays behind for the rest of it).
    if (chain >= 0 && budget <= 0 && device_free != INT64_MIN && device_free - busy_since >= blocked) chain = -1;
    if (chain >= 0 && wait >= kIdleNs) {
      if (!first) out[j] = chain;
      budget -= wait;
    }
    first = false;
    device_free = std::max(device_free, end);
  }
  return out;
}

namespace {
constexpr std::string_view kStillWaiting = ", the device still waiting after it";
}
std::string StillWaitingAfter(const std::string& label) { return label + std::string(kStillWaiting); }
bool IsStillWaitingAfter(const std::string& label) { return std::string_view(label).ends_with(kStillWaiting); }
std::string CallLabel(const std::string& label) {
  return IsStillWaitingAfter(label) ? label.substr(0, label.size() - kStillWaiting.size()) : label;
}

std::unordered_map<int64_t, std::map<std::string, double>> PlacesWaitingAfterSyncs(
    const Run& run, const std::vector<DeviceWork>& work, const std::vector<SyncCall>& calls,
    const std::vector<std::string>& labels, double repeats, const std::function<int64_t(size_t)>& place_of) {
  std::unordered_map<int64_t, std::map<std::string, double>> out;
  const auto after = WaitsAfterSyncs(run, work, calls);
  std::set<std::pair<int64_t, int>> seen;
  for (size_t j = 0; j < work.size(); ++j) {
    if (after[j] < 0) continue;
    const std::string& label = labels[static_cast<size_t>(after[j])];
    if (label.empty()) continue;
    const int64_t place = place_of(j);
    if (place < 0 || !seen.insert({place, after[j]}).second) continue;
    out[place][StillWaitingAfter(label)] += 1 / repeats;
  }
  return out;
}

std::vector<SyncCall> SyncCalls(const Run& run) {
  std::unordered_map<int64_t, const ApiCall*> api;
  for (const auto& a : run.api_calls) api.emplace(a.correlation, &a);
  std::vector<SyncCall> out;
  for (const auto& t : run.transfers) {
    if (t.kind != "sync" || t.op == kRecorderWork) continue;
    auto it = api.find(t.correlation);
    out.push_back({&t, it != api.end() ? it->second : nullptr});
  }
  return out;
}

std::string ApiName(std::string name) {
  if (auto v = name.rfind("_v"); v != std::string::npos && v + 2 < name.size() &&
                                  std::all_of(name.begin() + v + 2, name.end(), ::isdigit))
    name.erase(v);
  return name;
}

std::string SyncPhrase(const std::map<std::string, double>& syncs) {
  if (syncs.empty()) return "none";
  std::vector<std::string> parts;
  for (const auto& [name, n] : syncs) parts.push_back(fmt::format("{} x{:.3g}", name, n));
  return fmt::format("{}", fmt::join(parts, ", "));
}

double Total(const std::map<std::string, double>& syncs) {
  double n = 0;
  for (const auto& [name, count] : syncs) n += count;
  return n;
}

std::vector<ParamDelta> TimelineParams(const std::map<std::string, double>& a, const std::map<std::string, double>& b,
                                       char costly, const std::string& cause) {
  std::vector<ParamDelta> out;
  std::map<std::string, std::pair<double, double>> both;
  for (const auto& [name, n] : a) both[name].first = n;
  for (const auto& [name, n] : b) both[name].second = n;
  for (const auto& [name, n] : both) {
    const double more = costly == 'a' ? n.first - n.second : n.second - n.first;
    // With a cause, the calls the costlier side makes more of; else every call that differs.
    if (cause.empty() ? std::fabs(more) >= 0.5 : more >= 0.5)
      out.push_back({"synchronizing calls", name, fmt::format("{:.3g}", n.first), fmt::format("{:.3g}", n.second)});
  }
  if (!cause.empty()) out.push_back({"timeline", "cause", costly == 'a' ? cause : "-", costly == 'b' ? cause : "-"});
  return out;
}

SyncSites::SyncSites(const Run& recorded, const Run& measured, const PassAlignment& al) {
  const auto n_ops = static_cast<int64_t>(recorded.ops.size());
  auto valid = [&](int64_t op) { return op >= 0 && op < n_ops ? op : kNone; };
  // Where the recording pass made the calls that precede each op's work.
  const auto rec_calls = SyncCalls(recorded);
  const auto rec_next = NextWorkOps(recorded, rec_calls, [&](const DeviceWork& w) {
    return valid(w.kernel ? recorded.kernels[w.id].op : recorded.transfers[w.id].op);
  });
  std::vector<int64_t> by_start(static_cast<size_t>(n_ops));
  for (int64_t i = 0; i < n_ops; ++i) by_start[i] = i;
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](int64_t x, int64_t y) { return recorded.ops[x].start_ns < recorded.ops[y].start_ns; });
  std::unordered_map<int64_t, std::map<std::string, std::string>> label_before;  // op -> API name -> label
  // Calls after the recording's last work (a loss read back at the end of the
  // step): in the measured pass they come before the next step's first work.
  std::map<std::string, std::string> label_last;  // API name -> label
  for (size_t i = 0; i < rec_calls.size(); ++i) {
    const SyncCall& c = rec_calls[i];
    const int64_t inside = EnclosingOp(recorded, by_start, c.api ? c.api->start_ns : c.sync->start_ns);
    if (rec_next[i] != kNone)
      label_before[rec_next[i]].try_emplace(c.name(), Label(recorded, c, inside, rec_next[i]));
    else if (inside != kNone || (c.api && c.api->stack != kNone))
      label_last.insert_or_assign(c.name(), Label(recorded, c, inside, kNone));
  }
  // The measured pass's calls, per iteration, before the recorded op of their next work.
  const auto calls = SyncCalls(measured);
  const double reps = std::max<double>(1, static_cast<double>(al.repeats));
  // The recorded op of a measured item, within an aligned repetition.
  const auto op_of = [&](const DeviceWork& w) {
    const auto& rep = w.kernel ? al.kernel_rep : al.transfer_rep;
    const auto& op = w.kernel ? al.kernel_op : al.transfer_op;
    const auto i = static_cast<size_t>(w.id);
    return i < rep.size() && rep[i] >= 0 && i < op.size() ? valid(op[i]) : kNone;
  };
  const auto next = NextWorkOps(measured, calls, op_of);
  std::vector<std::string> labels(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    if (next[i] == kNone) continue;
    const std::string name = calls[i].name();
    std::string& label = labels[i] = name;
    if (auto l = label_before.find(next[i]); l != label_before.end() && l->second.count(name))
      label = l->second.at(name);
    else if (auto last = label_last.find(name); last != label_last.end())
      label = last->second;
    by_op_[next[i]][label] += 1 / reps;
    blocked_by_op_[next[i]] += calls[i].blocked_seconds() / reps;
  }
  const auto work = DeviceWorkInLaunchOrder(measured);
  after_by_op_ = PlacesWaitingAfterSyncs(measured, work, calls, labels, reps,
                                         [&](size_t j) { return op_of(work[j]); });
}

std::map<std::string, double> SyncSites::After(const std::vector<int64_t>& ops) const {
  std::map<std::string, double> out;
  for (auto op : ops)
    if (auto it = after_by_op_.find(op); it != after_by_op_.end())
      for (const auto& [label, n] : it->second) out[label] = std::max(out[label], n);  // one call, many ops
  return out;
}

std::map<std::string, double> SyncSites::Before(const std::vector<int64_t>& ops) const {
  std::map<std::string, double> out;
  for (auto op : ops)
    if (auto it = by_op_.find(op); it != by_op_.end())
      for (const auto& [label, n] : it->second) out[label] += n;
  return out;
}

double SyncSites::BlockedBefore(const std::vector<int64_t>& ops) const {
  double s = 0;
  for (auto op : ops)
    if (auto it = blocked_by_op_.find(op); it != blocked_by_op_.end()) s += it->second;
  return s;
}

}  // namespace magneton::analysis
