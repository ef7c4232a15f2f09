#include "analysis/diff/kernel_regions.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analysis/diff/call_site.h"
#include "analysis/diff/step_align.h"
#include "analysis/diff/sync_sites.h"
#include "analysis/diff/verdict.h"

namespace magneton::analysis {
namespace {

constexpr const char* kWhat = "kernels and copies";
// "1 kernel or copy", "47 kernels and copies".
std::string Items(int64_t n) { return fmt::format("{} {}", n, n == 1 ? "kernel or copy" : kWhat); }
constexpr const char* kKernelsNotCompared = "outputs not compared: the runs hold no values; matched by kernel sequence";
// A wait that starts a segment of its own: at least this long, and this
// share of an iteration (launch gaps of a few microseconds are everywhere).
constexpr int64_t kSplitWaitNs = 20'000;
constexpr double kSplitWaitShare = 0.02;
// Labels name this many distinct items, then count the rest.
constexpr size_t kLabelItems = 3;
constexpr size_t kLabelChars = 60;

bool HoldsValues(const Run& run) {
  if (run.ops.empty()) return false;
  return std::any_of(run.tensors.begin(), run.tensors.end(), [](const Tensor& t) { return t.fingerprint.has_value(); });
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// "void at::native::foo<T>(float*, int)" -> "foo<T>": no return type, no
// parameter list, no namespaces every PyTorch kernel shares.
std::string ShortKernelName(std::string name) {
  if (name.rfind("void ", 0) == 0) name.erase(0, 5);
  if (!name.empty() && name.back() == ')') {
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
      if (name[i] == ')') ++depth;
      if (name[i] == '(' && --depth == 0) {
        name.erase(i);
        break;
      }
    }
  }
  for (const std::string noise : {"at::native::", "(anonymous namespace)::"})
    for (size_t at = name.find(noise); at != std::string::npos; at = name.find(noise, at)) name.erase(at, noise.size());
  return name.size() <= kLabelChars ? name : name.substr(0, kLabelChars - 3) + "...";
}

std::string Bytes(int64_t b) {
  if (b < 1024) return fmt::format("{} B", b);
  if (b < (1 << 20)) return fmt::format("{:.3g} KiB", b / 1024.0);
  return fmt::format("{:.3g} MiB", b / 1048576.0);
}

// What an item is called in labels and evidence.
std::string ItemName(const Run& run, const DeviceWork& w) {
  if (w.kernel) return ShortKernelName(run.kernels[w.id].name);
  const Transfer& t = run.transfers[w.id];
  return t.kind == "memset" ? "memset " + Bytes(t.bytes) : fmt::format("copy {} {}", t.kind, Bytes(t.bytes));
}

// "copy_kernel + sgemm x3 + 2 more": distinct names in order, with counts.
std::string Phrase(const std::vector<std::string>& names) {
  std::vector<std::string> order;
  std::map<std::string, int64_t> count;
  for (const auto& n : names)
    if (count[n]++ == 0) order.push_back(n);
  std::vector<std::string> parts;
  for (size_t i = 0; i < order.size() && i < kLabelItems; ++i)
    parts.push_back(count[order[i]] > 1 ? fmt::format("{} x{}", order[i], count[order[i]]) : order[i]);
  if (order.size() > kLabelItems) parts.push_back(fmt::format("{} more", order.size() - kLabelItems));
  return parts.empty() ? "nothing" : fmt::format("{}", fmt::join(parts, " + "));
}

// One run's stream of device work, its step and what the diff needs of it.
struct Stream {
  const Run* run = nullptr;
  std::vector<DeviceWork> work;  // launch order
  std::vector<int> tokens;
  std::vector<int64_t> gap;  // by stream position: the device idle just before the item
  StepAlignment steps;
  bool whole = false;
  int64_t len() const { return steps.step_end - steps.step_begin; }
  int token(int64_t offset) const { return tokens[steps.step_begin + offset]; }
};

// The device idle before each item: since the latest end of the items that
// started before it on its device.
std::vector<int64_t> GapsBefore(const Run& run, const std::vector<DeviceWork>& work) {
  struct Span {
    int32_t device;
    int64_t start, end;
    size_t at;
  };
  std::vector<Span> spans;
  for (size_t j = 0; j < work.size(); ++j) {
    const DeviceWork& w = work[j];
    if (w.kernel) {
      const Kernel& k = run.kernels[w.id];
      spans.push_back({k.device, k.start_ns, k.end_ns, j});
    } else {
      const Transfer& t = run.transfers[w.id];
      spans.push_back({t.device, t.start_ns, t.end_ns, j});
    }
  }
  std::sort(spans.begin(), spans.end(),
            [](const Span& x, const Span& y) { return std::tie(x.device, x.start) < std::tie(y.device, y.start); });
  std::vector<int64_t> out(work.size(), 0);
  int64_t latest = 0;
  for (size_t i = 0; i < spans.size(); ++i) {
    if (i == 0 || spans[i].device != spans[i - 1].device) latest = spans[i].start;
    out[spans[i].at] = std::max<int64_t>(0, spans[i].start - latest);
    latest = std::max(latest, spans[i].end);
  }
  return out;
}

StepAlignment Whole(int64_t n) {
  StepAlignment s;
  s.step_end = n;
  s.repetitions.push_back({0, n, n, true});
  s.recorded_of.resize(n);
  for (int64_t j = 0; j < n; ++j) s.recorded_of[j] = j;
  s.repetition_of.assign(n, 0);
  return s;
}

// Per offset of the step: the median gap before the item there, over repetitions.
std::vector<double> GapProfile(const Stream& s) {
  std::vector<std::vector<double>> at(s.len());
  for (size_t j = 0; j < s.tokens.size(); ++j)
    if (int64_t r = s.steps.recorded_of[j]; r >= 0 && s.steps.repetition_of[j] >= 0)
      at[r - s.steps.step_begin].push_back(static_cast<double>(s.gap[j]));
  std::vector<double> out;
  for (auto& v : at) out.push_back(Median(std::move(v)));
  return out;
}

// The device time of an iteration: the median distance between the starts of
// consecutive repetitions' first items (0 with one repetition).
double IterationNs(const Stream& s) {
  std::vector<int64_t> first(s.steps.repetitions.size(), INT64_MAX);
  for (size_t j = 0; j < s.tokens.size(); ++j)
    if (int32_t r = s.steps.repetition_of[j]; r >= 0) {
      const DeviceWork& w = s.work[j];
      first[r] = std::min(first[r], w.kernel ? s.run->kernels[w.id].start_ns : s.run->transfers[w.id].start_ns);
    }
  std::vector<double> d;
  for (size_t r = 1; r < first.size(); ++r) d.push_back(static_cast<double>(first[r] - first[r - 1]));
  return Median(std::move(d));
}

// The step cut to start at `offset` of the current one: a stretch of two
// consecutive identical repetitions, where there is one, so the cut holds
// nothing stray.
void Rotate(Stream& s, int64_t offset) {
  if (offset <= 0) return;
  const auto& reps = s.steps.repetitions;
  int64_t begin = s.steps.step_begin + offset;
  for (size_t r = 0; r + 1 < reps.size(); ++r)
    if (reps[r].exact && reps[r + 1].exact && reps[r].end == reps[r + 1].begin) {
      begin = reps[r].begin + offset;
      break;
    }
  const int64_t n = static_cast<int64_t>(s.tokens.size());
  if (begin + s.len() > n) begin -= s.len();
  if (begin < 0) return;
  auto tiled = TileSteps(s.tokens, begin, begin + s.len(), kWhat);
  if (tiled.ok() && tiled->repetitions.size() * 2 >= reps.size()) s.steps = std::move(*tiled);
}

// Both steps start before the same item: one each step launches once, on
// both sides, where neither device waits (so an iteration's tail holds no
// wait that a region should carry); of those, the first of a's step.
void AlignPhases(Stream& a, Stream& b) {
  std::unordered_map<int, int64_t> once_a, once_b;  // token -> offset; -1: more than once
  for (auto [s, once] : {std::pair{&a, &once_a}, std::pair{&b, &once_b}})
    for (int64_t i = 0; i < s->len(); ++i) {
      auto [it, fresh] = once->try_emplace(s->token(i), i);
      if (!fresh) it->second = -1;
    }
  std::vector<double> ga = GapProfile(a), gb = GapProfile(b);
  struct Cut {
    int64_t a, b;
    double wait;
  };
  std::vector<Cut> cuts;
  for (int64_t i = 0; i < a.len(); ++i) {
    auto in_b = once_b.find(a.token(i));
    if (once_a.at(a.token(i)) < 0 || in_b == once_b.end() || in_b->second < 0) continue;
    cuts.push_back({i, in_b->second, std::max(ga[i], gb[in_b->second])});
  }
  if (cuts.empty()) return;
  double least = INFINITY;
  for (const auto& c : cuts) least = std::min(least, c.wait);
  for (const auto& c : cuts)
    if (c.wait <= 2 * least + 2000) {
      Rotate(a, c.a);
      Rotate(b, c.b);
      return;
    }
}

// The aligned steps cut into segments (see the header).
std::vector<Segment> Segments(const Stream& a, const Stream& b) {
  std::vector<int> sa(a.tokens.begin() + a.steps.step_begin, a.tokens.begin() + a.steps.step_end);
  std::vector<int> sb(b.tokens.begin() + b.steps.step_begin, b.tokens.begin() + b.steps.step_end);
  auto pairs = CommonSubsequence(sa, sb);
  std::vector<double> ga = GapProfile(a), gb = GapProfile(b);
  const double wait_a = std::max<double>(kSplitWaitNs, kSplitWaitShare * IterationNs(a));
  const double wait_b = std::max<double>(kSplitWaitNs, kSplitWaitShare * IterationNs(b));

  std::vector<Segment> out;
  Segment pending;  // items only one side has, waiting for the shared item after them
  int64_t ia = 0, ib = 0;
  for (size_t p = 0; p <= pairs.size(); ++p) {
    const int64_t na = p < pairs.size() ? pairs[p].first : a.len(), nb = p < pairs.size() ? pairs[p].second : b.len();
    // The gap before this pair: different items on both sides stand alone;
    // items on one side only go with the next shared item.
    if (na > ia && nb > ib) {
      Segment d;
      for (int64_t i = ia; i < na; ++i) d.a.push_back(i);
      for (int64_t i = ib; i < nb; ++i) d.b.push_back(i);
      out.push_back(std::move(d));
    } else {
      for (int64_t i = ia; i < na; ++i) pending.a.push_back(i);
      for (int64_t i = ib; i < nb; ++i) pending.b.push_back(i);
    }
    if (p == pairs.size()) break;
    const auto [i, j] = pairs[p];
    if (!pending.a.empty() || !pending.b.empty()) {
      pending.a.push_back(i);
      pending.b.push_back(j);
      out.push_back(std::exchange(pending, {}));
    } else if (out.empty() || !out.back().shared || ga[i] >= wait_a || gb[j] >= wait_b) {
      Segment shared;
      shared.a = {i};
      shared.b = {j};
      shared.shared = true;
      out.push_back(std::move(shared));
    } else {
      out.back().a.push_back(i);
      out.back().b.push_back(j);
    }
    ia = i + 1;
    ib = j + 1;
  }
  // Items only one side has at the end of the step go with the shared item before them.
  if (!pending.a.empty() || !pending.b.empty()) {
    if (!out.empty() && out.back().shared) {
      Segment& last = out.back();
      pending.a.insert(pending.a.begin(), last.a.back());
      pending.b.insert(pending.b.begin(), last.b.back());
      last.a.pop_back();
      last.b.pop_back();
      if (last.a.empty()) out.pop_back();
    } else if (!out.empty()) {
      pending.a.insert(pending.a.begin(), out.back().a.begin(), out.back().a.end());
      pending.b.insert(pending.b.begin(), out.back().b.begin(), out.back().b.end());
      out.pop_back();
    }
    out.push_back(std::move(pending));
  }
  return out;
}

// Segment names: what each holds. Segments that hold the same items (every
// layer's) share a name and so group into one finding; different contents
// never do, even where their names would read alike.
std::vector<std::string> SegmentNames(const Stream& a, const Stream& b, const std::vector<Segment>& segments) {
  auto names = [](const Stream& s, const std::vector<int64_t>& offsets) {
    std::vector<std::string> out;
    for (auto o : offsets) out.push_back(ItemName(*s.run, s.work[s.steps.step_begin + o]));
    return out;
  };
  auto tokens = [](const Stream& s, const std::vector<int64_t>& offsets) {
    std::vector<int> out;
    for (auto o : offsets) out.push_back(s.token(o));
    return out;
  };
  std::map<std::pair<std::vector<int>, std::vector<int>>, std::string> by_content;
  std::map<std::string, int> taken;
  std::vector<std::string> out;
  for (const auto& seg : segments) {
    auto key = std::pair{tokens(a, seg.a), tokens(b, seg.b)};
    auto it = by_content.find(key);
    if (it == by_content.end()) {
      std::string name = seg.shared ? Phrase(names(a, seg.a))
                                    : fmt::format("{} (a) vs {} (b)", Phrase(names(a, seg.a)), Phrase(names(b, seg.b)));
      if (int n = taken[name]++; n > 0) name += fmt::format(" [{}]", n + 1);
      it = by_content.emplace(std::move(key), std::move(name)).first;
    }
    out.push_back(it->second);
  }
  return out;
}

// The run with the segments as its ops, and its device work placed.
KernelSide Side(const Stream& s, const std::vector<Segment>& segments, const std::vector<std::string>& names,
                bool side_a) {
  KernelSide out;
  out.whole = s.whole;
  Run& r = out.run;
  r = *s.run;
  r.ops.clear();
  r.tensors.clear();
  r.replays.clear();
  for (auto& k : r.kernels) k.op = k.op == kRecorderWork ? kRecorderWork : kNone;
  for (auto& t : r.transfers) t.op = t.op == kRecorderWork ? kRecorderWork : kNone;
  if (!s.whole) r.info.extra["iterations"] = "1";  // costs are per repetition of the step
  std::vector<int64_t> segment_of(s.len(), kNone);
  for (size_t g = 0; g < segments.size(); ++g) {
    Op op;
    op.id = static_cast<int64_t>(g);
    op.name = names[g];
    op.framework = kSegmentFramework;
    op.start_ns = INT64_MAX;
    op.end_ns = INT64_MIN;
    for (auto o : side_a ? segments[g].a : segments[g].b) {
      segment_of[o] = op.id;
      const DeviceWork& w = s.work[s.steps.step_begin + o];
      op.start_ns = std::min(op.start_ns, w.kernel ? r.kernels[w.id].start_ns : r.transfers[w.id].start_ns);
      op.end_ns = std::max(op.end_ns, w.kernel ? r.kernels[w.id].end_ns : r.transfers[w.id].end_ns);
    }
    if (op.start_ns > op.end_ns) op.start_ns = op.end_ns = 0;  // nothing on this side
    r.ops.push_back(std::move(op));
  }

  PassAlignment& al = out.alignment;
  al.by_device_work = true;
  al.repeats = static_cast<int64_t>(s.steps.repetitions.size());
  for (const auto& rep : s.steps.repetitions) al.exact += rep.exact;
  al.step_items = s.len();
  al.kernel_rep.assign(r.kernels.size(), -1);
  al.kernel_op.assign(r.kernels.size(), kNone);
  al.transfer_rep.assign(r.transfers.size(), -1);
  al.transfer_op.assign(r.transfers.size(), kNone);
  for (size_t j = 0; j < s.work.size(); ++j) {
    const DeviceWork& w = s.work[j];
    const int32_t rep = s.steps.repetition_of[j];
    const int64_t at = s.steps.recorded_of[j];
    const int64_t op = at >= 0 ? segment_of[at - s.steps.step_begin] : kNone;
    (w.kernel ? al.kernel_rep : al.transfer_rep)[w.id] = rep;
    (w.kernel ? al.kernel_op : al.transfer_op)[w.id] = op;
    if (rep < 0) {
      ++al.outside;
    } else if (op == kNone) {
      ++al.unaligned;
      ++al.unaligned_names[ItemName(r, w)];
    }
  }

  // Synchronizing calls: each before the next item launched after it.
  out.syncs_before.resize(segments.size());
  out.blocked_before.assign(segments.size(), 0.0);
  std::vector<int64_t> correlations;
  for (const auto& w : s.work)
    correlations.push_back(w.kernel ? r.kernels[w.id].correlation : r.transfers[w.id].correlation);
  const double reps = std::max<double>(1, static_cast<double>(al.repeats));
  const auto calls = SyncCalls(r);
  std::vector<std::string> call_names(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    const SyncCall& c = calls[i];
    auto next = std::upper_bound(correlations.begin(), correlations.end(), c.sync->correlation);
    if (next == correlations.end()) continue;
    const size_t j = static_cast<size_t>(next - correlations.begin());
    if (s.steps.repetition_of[j] < 0) continue;
    // Where the call was made, when its stack was recorded (record --stacks).
    const std::string site = c.api && c.api->stack >= 0 ? Describe(UserCallSite(r, c.api->stack)) : "";
    const std::string& name = call_names[i] = site.empty() ? c.name() : c.name() + " at " + site;
    out.syncs[name] += 1 / reps;
    if (int64_t at = s.steps.recorded_of[j]; at >= 0) {
      const auto seg = segment_of[at - s.steps.step_begin];
      out.syncs_before[seg][name] += 1 / reps;
      out.blocked_before[seg] += c.blocked_seconds() / reps;
    }
  }
  // Segments whose items still wait after a call.
  out.after_syncs.resize(segments.size());
  const auto after = PlacesWaitingAfterSyncs(r, s.work, calls, call_names, reps, [&](size_t j) -> int64_t {
    const int64_t at = s.steps.repetition_of[j] < 0 ? kNone : s.steps.recorded_of[j];
    return at < 0 ? kNone : segment_of[at - s.steps.step_begin];
  });
  for (const auto& [seg, calls_after] : after) out.after_syncs[static_cast<size_t>(seg)] = calls_after;
  return out;
}

std::string StepNote(char side, const Stream& s, const KernelSide& k, int64_t iterations) {
  const PassAlignment& al = k.alignment;
  if (s.whole && iterations == 1) return fmt::format("run {}: compared whole, as one iteration (--iterations 1)", side);
  if (s.whole)
    return fmt::format("run {}: no step of its {} repeats, so the run is one iteration (--iterations N divides it)",
                       side, Items(static_cast<int64_t>(s.tokens.size())));
  std::string out = fmt::format("run {}: an iteration is one repetition of a step of {} ({} repetition{}, {} identical",
                                side, Items(al.step_items), al.repeats, al.repeats == 1 ? "" : "s", al.exact);
  if (al.outside > 0) out += fmt::format("; {} outside them: set-up, warm-up, summary", Items(al.outside));
  if (al.unaligned > 0)
    out += fmt::format("; {} inside them align with nothing in its step, their cost unattributed: {}", al.unaligned,
                       MostUnaligned(al));
  return out + ")";
}

}  // namespace

bool MatchesByKernels(const Run& a, const Run& b) {
  for (const Run* run : {&a, &b})
    if (HoldsValues(*run) || run->kernels.empty()) return false;
  return true;
}

namespace {

// Both runs as token streams, each with its step where one repeats. `shapes`:
// a kernel is its name, grid and block (a copy its kind and size), else its
// name (kind) alone.
std::pair<Stream, Stream> Streams(const Run& run_a, const Run& run_b, int64_t iterations, bool shapes) {
  std::unordered_map<std::string, int> ids;  // shared, so equal items are equal tokens on both sides
  Stream a, b;
  for (auto [s, run] : {std::pair{&a, &run_a}, std::pair{&b, &run_b}}) {
    s->run = run;
    s->work = DeviceWorkInLaunchOrder(*run);
    for (const auto& w : s->work)
      s->tokens.push_back(ids.emplace(DeviceWorkKey(*run, w, shapes), static_cast<int>(ids.size())).first->second);
    s->gap = GapsBefore(*run, s->work);
    if (iterations == 1) {  // told the run is one iteration
      s->whole = true;
      continue;
    }
    auto steps = FindSteps(s->tokens, iterations, kWhat);
    s->whole = !steps.ok();
    if (steps.ok()) s->steps = std::move(*steps);
  }
  return {std::move(a), std::move(b)};
}

}  // namespace

KernelRegions BuildKernelRegions(const Run& run_a, const Run& run_b, int64_t iterations) {
  auto [a, b] = Streams(run_a, run_b, iterations, true);
  // A step whose grids change from one iteration to the next (decoding over a
  // growing sequence) repeats its kernels' names only.
  bool by_names = false;
  if (iterations != 1 && (a.whole || b.whole)) {
    auto [na, nb] = Streams(run_a, run_b, iterations, false);
    if (!na.whole && !nb.whole) {
      a = std::move(na);
      b = std::move(nb);
      by_names = true;
    }
  }
  // A step against a whole run compares unlike things: both whole then.
  if (a.whole || b.whole)
    for (Stream* s : {&a, &b}) {
      s->whole = true;
      s->steps = Whole(static_cast<int64_t>(s->tokens.size()));
    }
  else
    AlignPhases(a, b);

  KernelRegions out;
  out.segments = Segments(a, b);
  for (auto& seg : out.segments)
    for (auto [s, offsets, copies] : {std::tuple{&a, &seg.a, &seg.copies_a}, std::tuple{&b, &seg.b, &seg.copies_b}})
      for (auto o : *offsets)
        if (const DeviceWork& w = s->work[s->steps.step_begin + o]; !w.kernel) copies->push_back(ItemName(*s->run, w));
  auto names = SegmentNames(a, b, out.segments);
  out.a = Side(a, out.segments, names, true);
  out.b = Side(b, out.segments, names, false);
  out.a.alignment.by_names = out.b.alignment.by_names = by_names;
  out.match.by_kernels = true;
  for (size_t g = 0; g < out.segments.size(); ++g) {
    RegionMatch r;
    r.id = static_cast<int64_t>(g);
    r.ops_a = {r.id};
    r.ops_b = {r.id};
    out.match.regions.push_back(std::move(r));
  }

  int64_t shared = 0, differ = 0, only_a = 0, only_b = 0;
  for (const auto& seg : out.segments) {
    if (seg.shared) {
      shared += static_cast<int64_t>(seg.a.size());
    } else {
      ++differ;
      only_a += static_cast<int64_t>(seg.a.size());
      only_b += static_cast<int64_t>(seg.b.size());
    }
  }
  out.notes.push_back(
      "matched by kernel sequence: the runs hold kernels but no operator values or NVTX ranges to match by, so each "
      "run's repeated step is found in its stream of kernels and copies, and the two steps are aligned item by item "
      "(kernel name, grid and block; copy kind and size); outputs not compared, so nothing shows that the two sides "
      "compute the same thing");
  if (by_names)
    out.notes.push_back(
        "the steps' grids and sizes change from one iteration to the next (a loop over a growing sequence, such as "
        "decoding): the steps are found and aligned by kernel names and copy kinds alone, and each place costs the "
        "mean over the iterations");
  out.notes.push_back(StepNote('a', a, out.a, iterations));
  out.notes.push_back(StepNote('b', b, out.b, iterations));
  out.notes.push_back(fmt::format(
      "the steps share {} in {} stretch{}; they differ at {} place{} (a: {} items there, b: {})", Items(shared),
      out.segments.size() - differ, out.segments.size() - differ == 1 ? "" : "es", differ, differ == 1 ? "" : "s",
      only_a, only_b));
  if (!out.a.syncs.empty() || !out.b.syncs.empty())
    out.notes.push_back(fmt::format("synchronizing calls per iteration: a {:.3g} ({}), b {:.3g} ({})",
                                    Total(out.a.syncs), SyncPhrase(out.a.syncs), Total(out.b.syncs),
                                    SyncPhrase(out.b.syncs)));
  return out;
}

namespace {

std::string Listed(const std::vector<NamedCount>& v) {
  std::vector<std::string> parts;
  for (const auto& c : v) parts.push_back(c.count > 1 ? fmt::format("{} x{}", c.name, c.count) : c.name);
  return parts.empty() ? std::string("nothing extra") : fmt::format("{}", fmt::join(parts, " + "));
}

// What x holds more of than y.
std::vector<NamedCount> Surplus(const std::vector<std::string>& x, const std::vector<std::string>& y) {
  std::map<std::string, int64_t> count;
  for (const auto& n : x) ++count[n];
  for (const auto& n : y) --count[n];
  std::vector<NamedCount> out;
  for (const auto& [name, n] : count)
    if (n > 0) out.push_back({name, n, 0, {}});
  return out;
}

// Copies one side makes at this place: root cause compares kernels only. With
// other kernels there, they join that evidence; else they are evidence of
// their own, first only where nothing stronger explains the cost (a copy's
// own device time is small, a wait it comes with is not).
void AddCopies(Finding& f, const Segment& seg) {
  auto only_a = Surplus(seg.copies_a, seg.copies_b), only_b = Surplus(seg.copies_b, seg.copies_a);
  if (only_a.empty() && only_b.empty()) return;
  const std::string copies = fmt::format("a makes {}, b makes {}", Listed(only_a), Listed(only_b));
  if (!f.evidence.empty() && f.evidence.front().kind == EvidenceClass::kKernels) {
    Evidence& e = f.evidence.front();
    e.summary += "; copies: " + copies;
    e.only_a.insert(e.only_a.end(), only_a.begin(), only_a.end());
    e.only_b.insert(e.only_b.end(), only_b.begin(), only_b.end());
    return;
  }
  Evidence e;
  e.kind = EvidenceClass::kKernels;
  e.summary = "different copies at the same place in the step: " + copies;
  e.only_a = std::move(only_a);
  e.only_b = std::move(only_b);
  const bool first = f.evidence.empty() || f.evidence.front().kind == EvidenceClass::kNone;
  f.evidence.insert(first ? f.evidence.begin() : f.evidence.end(), std::move(e));
}

// Where the costlier side's items still wait after a synchronizing call made
// earlier in the step, within the time its host blocked there
// (WaitsAfterSyncs): the call is the cause. True when it is.
bool AddWaitsAfterSyncs(Finding& f, const KernelRegions& k) {
  std::map<std::string, double> a, b;
  for (auto g : f.regions) {
    for (const auto& [name, n] : k.a.after_syncs[g]) a[name] = std::max(a[name], n);
    for (const auto& [name, n] : k.b.after_syncs[g]) b[name] = std::max(b[name], n);
  }
  const double more = f.costly == 'a' ? Total(a) - Total(b) : Total(b) - Total(a);
  if (more < 0.5) return false;
  Evidence e;
  e.kind = EvidenceClass::kTimeline;
  e.summary = fmt::format(
      "the host blocked at a synchronizing call earlier in the step, and without it would have launched these "
      "items that much earlier, per iteration: a {}, b {}: {}'s device still idles before them",
      SyncPhrase(a), SyncPhrase(b), f.costly);
  e.params = TimelineParams(a, b, f.costly, kCauseSyncs);
  const bool first = f.evidence.empty() || f.evidence.front().kind == EvidenceClass::kNone;
  f.evidence.insert(first ? f.evidence.begin() : f.evidence.end(), std::move(e));
  return true;
}

// The synchronizing calls before the finding's items, per iteration, when
// one side makes at least one more every other iteration. True when they
// are why the costlier side waits (it makes more, and blocked in them:
// SyncsExplainWait), or an earlier call is (AddWaitsAfterSyncs).
bool AddSyncs(Finding& f, const KernelRegions& k) {
  std::map<std::string, double> a, b;
  double blocked_a = 0, blocked_b = 0;
  for (auto g : f.regions) {
    for (const auto& [name, n] : k.a.syncs_before[g]) a[name] += n;
    for (const auto& [name, n] : k.b.syncs_before[g]) b[name] += n;
    blocked_a += k.a.blocked_before[g], blocked_b += k.b.blocked_before[g];
  }
  if (std::fabs(Total(a) - Total(b)) < 0.5) return AddWaitsAfterSyncs(f, k);
  const char more = Total(a) > Total(b) ? 'a' : 'b';
  const double more_blocked = more == 'a' ? blocked_a - blocked_b : blocked_b - blocked_a;
  const double more_wait = more == 'a' ? f.a.wait_seconds - f.b.wait_seconds : f.b.wait_seconds - f.a.wait_seconds;
  const bool cause = more == f.costly && SyncsExplainWait(more_blocked, more_wait);
  Evidence e;
  e.kind = EvidenceClass::kTimeline;
  e.summary = cause ? fmt::format("synchronizing calls before these items, per iteration: a {}, b {}: {}'s host waits "
                                  "for the device there, and the device idles until the host launches again",
                                  SyncPhrase(a), SyncPhrase(b), more)
                    : fmt::format("synchronizing calls before these items, per iteration: a {}, b {}; {}'s host "
                                  "blocked in them {} per iteration more: not why its device waits",
                                  SyncPhrase(a), SyncPhrase(b), more, Duration(std::max(0.0, more_blocked)));
  e.params = TimelineParams(a, b, f.costly, cause ? kCauseSyncs : "");
  const bool first = f.evidence.empty() || (f.evidence.front().kind == EvidenceClass::kNone && cause);
  f.evidence.insert(first ? f.evidence.begin() : f.evidence.end(), std::move(e));
  return cause || AddWaitsAfterSyncs(f, k);
}

// A timeline finding the synchronizing calls do not explain: the host
// launched the same kernels later (root cause leaves the cause of a run of
// kernels alone to this file).
void AddLateLaunchCause(Finding& f) {
  for (auto& e : f.evidence)
    if (e.kind == EvidenceClass::kTimeline && e.params.empty()) {
      e.params = TimelineParams({}, {}, f.costly, kCauseLateLaunch);
      return;
    }
}

}  // namespace

void ExplainKernelFindings(const KernelRegions& k, const std::vector<Rule>& rules, DiffReport& report) {
  for (auto& f : report.findings) {
    for (const std::string from : {kOutputsNotCompared, "outputs not compared"})
      if (auto at = f.why.find(from); at != std::string::npos) {
        f.why.replace(at, from.size(), kKernelsNotCompared);
        break;
      }
    if (f.verdict == Verdict::kNoise || f.regions.empty()) continue;
    // The finding's segments hold the same items: the first one speaks for them.
    AddCopies(f, k.segments[f.regions.front()]);
    if (!AddSyncs(f, k)) AddLateLaunchCause(f);
    MatchTimelineRules(f, rules);
  }
}

}  // namespace magneton::analysis
