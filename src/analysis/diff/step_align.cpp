// How the step is found (docs/diff.md, "Measured passes"):
//  1. Anchor: a token the recorded step holds once (else the fewest times)
//     and the measured sequence holds most often among such tokens: it marks
//     one place in every measured step. Its occurrences give the period.
//  2. The step within the recording: the recorded items around the anchor
//     are aligned (longest common subsequence, dtl) with the measured items
//     around one of its occurrences; the recorded stretch of one period that
//     aligns best is the step, and the anchor's offset in it is the phase.
//  3. Each measured window, from one anchor occurrence (less the phase) to
//     the next, is aligned with the recorded step; it is a repetition when at
//     least half the step aligns. Items before, after and between
//     repetitions are outside (set-up, warm-up, a summary).
// A stream without a recording (FindSteps) is tiled by a stretch of itself,
// one period long, for each period its recurring tokens suggest.
#include "analysis/diff/step_align.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <dtl/dtl.hpp>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

namespace magneton::analysis {

namespace {

// A measured window is a repetition of the recorded step when it lacks at
// most one item or 5% of the step (the program runs its step as recorded; a
// variant of it, a GELU written out, lacks more) and the step makes 80% of
// the window (an allocator's memset, a kernel picked otherwise once, are
// extras; a warm-up step's autotuning is too many).
constexpr double kMaxMissing = 0.05;
constexpr double kMinOfWindow = 0.8;
// Phases tried for a step of several identical layers (one per layer, up to this).
constexpr size_t kMaxPhases = 64;

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// Common pairs (index in a, index in b) of a longest common subsequence of
// a[a0, a1) and b[b0, b1), in absolute indices.
Pairs CommonPairs(const std::vector<int>& a, int64_t a0, int64_t a1, const std::vector<int>& b, int64_t b0,
                  int64_t b1) {
  Pairs out;
  if (a1 <= a0 || b1 <= b0) return out;
  std::vector<int> sa(a.begin() + a0, a.begin() + a1), sb(b.begin() + b0, b.begin() + b1);
  dtl::Diff<int> diff(sa, sb);
  diff.compose();
  for (const auto& [token, info] : diff.getSes().getSequence())
    if (info.type == dtl::SES_COMMON) out.emplace_back(a0 + info.beforeIdx - 1, b0 + info.afterIdx - 1);
  return out;
}

// Items a repetition may gain or lose and still sit on the anchor's diagonal.
constexpr int64_t kBand = 8;

// A longest common subsequence of a[lo, hi) and b restricted to the band
// |j - i - d| <= w: dynamic programming over (2w+1) cells per row. Of equally
// long ones it takes the one closest to the diagonal (a periodic step fits
// several), by scoring a match `unit` less its distance from it.
Pairs BandedPairs(const std::vector<int>& a, int64_t lo, int64_t hi, const std::vector<int>& b, int64_t d,
                  int64_t w) {
  const int64_t rows = std::max<int64_t>(0, hi - lo), width = 2 * w + 1, total = static_cast<int64_t>(b.size());
  const int64_t unit = (w + 1) * (rows + 1);  // one more match outweighs every distance
  // score[r * width + k]: best score for a[lo, lo+r] and b[.., j], j = lo + r + d + k - w; -1 outside b.
  std::vector<int64_t> score(static_cast<size_t>(rows * width), -1);
  auto at = [&](int64_t r, int64_t k) -> int64_t {
    return r < 0 || k < 0 || k >= width ? 0 : std::max<int64_t>(0, score[r * width + k]);
  };
  auto gain = [&](int64_t k) { return unit - std::llabs(k - w); };
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < width; ++k) {
      const int64_t j = lo + r + d + k - w;
      if (j < 0 || j >= total) continue;
      const int64_t match = a[lo + r] == b[j] ? at(r - 1, k) + gain(k) : 0;  // (r-1, j-1) is cell k of row r-1
      score[r * width + k] = std::max({match, at(r - 1, k + 1), at(r, k - 1)});
    }
  // Back from the best cell of the last row, the way each score was made.
  Pairs out;
  int64_t r = rows - 1, k = 0;
  for (int64_t c = 1; r >= 0 && c < width; ++c)
    if (at(r, c) > at(r, k)) k = c;
  while (r >= 0 && k >= 0 && k < width && at(r, k) > 0) {
    const int64_t j = lo + r + d + k - w;
    const int64_t here = at(r, k);
    if (a[lo + r] == b[j] && here == at(r - 1, k) + gain(k)) {
      out.emplace_back(lo + r, j);
      --r;
    } else if (here == at(r - 1, k + 1)) {
      --r, ++k;
    } else {
      --k;
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

struct Anchor {
  int token = -1;
  int64_t recorded_at = -1;          // first position in the recording
  int64_t per_step = 1;              // occurrences in the recording (a step of identical layers: one per layer)
  std::vector<int64_t> occurrences;  // positions in the measured sequence
};

// Step 1. Among the tokens the recording holds fewest times (ideally once),
// the repetition count most of them agree on, then the earliest such token.
Anchor FindAnchor(const std::vector<int>& rec, const std::vector<int>& mea) {
  int tokens = 0;
  for (int t : rec) tokens = std::max(tokens, t + 1);
  for (int t : mea) tokens = std::max(tokens, t + 1);
  std::vector<int64_t> in_rec(tokens, 0), in_mea(tokens, 0), first(tokens, -1);
  for (size_t i = 0; i < rec.size(); ++i) {
    if (first[rec[i]] < 0) first[rec[i]] = static_cast<int64_t>(i);
    ++in_rec[rec[i]];
  }
  for (int t : mea) ++in_mea[t];
  int64_t fewest = INT64_MAX;
  for (int t = 0; t < tokens; ++t)
    if (in_rec[t] > 0 && in_mea[t] > 0) fewest = std::min(fewest, in_rec[t]);
  Anchor a;
  if (fewest == INT64_MAX) return a;
  // Measured count -> tokens with it. Set-up and summary items occur once on
  // both sides: a count that repeats wins over them however many they are.
  std::map<int64_t, int64_t> votes;
  for (int t = 0; t < tokens; ++t)
    if (in_rec[t] == fewest && in_mea[t] > 0) ++votes[in_mea[t]];
  int64_t count = 0, best = 0;
  for (auto [c, v] : votes)
    if (v >= best || (count <= fewest && c > fewest)) best = v, count = c;  // ties: the larger count
  for (int t = 0; t < tokens; ++t)
    if (in_rec[t] == fewest && in_mea[t] == count && (a.token < 0 || first[t] < a.recorded_at))
      a.token = t, a.recorded_at = first[t];
  a.per_step = fewest;
  for (size_t j = 0; j < mea.size(); ++j)
    if (mea[j] == a.token) a.occurrences.push_back(static_cast<int64_t>(j));
  return a;
}

// The median distance between an occurrence and the `stride`-th next one.
int64_t MedianGap(const std::vector<int64_t>& at, size_t stride, int64_t otherwise) {
  if (at.size() <= stride) return otherwise;
  std::vector<int64_t> gaps;
  for (size_t i = stride; i < at.size(); ++i) gaps.push_back(at[i] - at[i - stride]);
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
  return gaps[gaps.size() / 2];
}

// Step 2: the recorded step [begin, end), the anchor's offset in it, and the
// index of the measured occurrence the recording's first anchor aligned with
// (with several anchors per step, that picks which of them start steps).
struct RecordedStep {
  int64_t begin = 0, end = 0, phase = 0;
  size_t occurrence = 0;
};

RecordedStep FindRecordedStep(const std::vector<int>& rec, const std::vector<int>& mea, const Anchor& a,
                              int64_t period, int64_t slack) {
  const int64_t n = static_cast<int64_t>(rec.size()), total = static_cast<int64_t>(mea.size());
  const int64_t p = a.recorded_at, reach = period + slack;
  // Which measured occurrence of the anchor stands where the recording's
  // does: of those around the middle of the measured sequence, the one whose
  // diagonal (measured position - recorded position) matches the most items
  // exactly. A step of identical layers matches almost as well one layer off;
  // the true diagonal matches all of them.
  const size_t mid = a.occurrences.size() / 2;
  int64_t m = a.occurrences[mid], best = -1;
  for (size_t k = mid > 0 ? mid - 1 : 0; k <= mid + 1 && k < a.occurrences.size(); ++k) {
    const int64_t d = a.occurrences[k] - p;
    int64_t same = 0;
    for (int64_t i = std::max<int64_t>({0, p - reach, -d}); i < std::min<int64_t>({n, p + reach, total - d}); ++i)
      same += rec[i] == mea[i + d];
    if (same > best) best = same, m = a.occurrences[k];
  }
  // The alignment along that diagonal, a few items either side of it (a stray
  // item shifts what follows it). An unbanded longest common subsequence would
  // not do: set-up items that match nothing leave it free to take the step
  // one period off.
  const int64_t lo = std::max<int64_t>(0, p - reach), hi = std::min(n, p + reach), d = m - p;
  Pairs pairs = BandedPairs(rec, lo, hi, mea, d, kBand);
  // The step starts at s (s <= p < s + period) and its measured occurrence at
  // m - (p - s): count the pairs inside both for every s at once (each pair
  // lies inside both for an interval of s), and the best s wins.
  const int64_t s0 = std::max<int64_t>(0, p - period + 1);
  std::vector<int64_t> delta(static_cast<size_t>(p - s0 + 2), 0);
  for (auto [i, j] : pairs) {
    const int64_t d = j - i - (m - p);  // the pair's offset from the anchor's diagonal
    const int64_t lo = std::max({s0, i - period + 1, i + d - period + 1}), hi = std::min({p, i, i + d});
    if (lo > hi) continue;
    ++delta[lo - s0];
    --delta[hi - s0 + 1];
  }
  int64_t best_s = p, best_count = 0, running = 0;  // the sweep's best start
  for (int64_t s = s0; s <= p; ++s) {
    running += delta[s - s0];
    if (running > best_count) best_count = running, best_s = s;
  }
  RecordedStep step{p, p + 1, 0};
  const int64_t ms = m - (p - best_s);
  // One measured period bounds the step; the recording's side may hold a few
  // more items (a stray kernel no operator launched, inside its step), so it
  // is bounded by the slack beyond the period only.
  for (auto [i, j] : pairs)
    if (i >= best_s && i < best_s + period + slack && j >= ms && j < ms + period) {
      step.begin = std::min(step.begin, i);
      step.end = std::max(step.end, i + 1);
    }
  step.begin = std::min(step.begin, p);
  step.end = std::max(step.end, p + 1);
  step.phase = p - step.begin;
  step.occurrence = static_cast<size_t>(std::lower_bound(a.occurrences.begin(), a.occurrences.end(), m) -
                                        a.occurrences.begin());
  return step;
}

// Step 3 for one choice of step starts in the measured sequence.
struct Tiling {
  StepAlignment alignment;
  int64_t aligned = 0;  // items aligned over all repetitions
  double best_of_step = 0, best_of_window = 0;  // the window that holds most of the step, accepted or not
};

Tiling Tile(const std::vector<int>& rec, const std::vector<int>& mea, const RecordedStep& step,
            const std::vector<int64_t>& at, int64_t period, int64_t slack) {
  const int64_t total = static_cast<int64_t>(mea.size()), len = step.end - step.begin;
  Tiling t;
  StepAlignment& out = t.alignment;
  out.step_begin = step.begin;
  out.step_end = step.end;
  out.recorded_of.assign(mea.size(), -1);
  out.repetition_of.assign(mea.size(), -1);
  int64_t prev_end = 0;
  for (size_t k = 0; k < at.size(); ++k) {
    int64_t begin = std::max(prev_end, at[k] - step.phase);
    int64_t next = k + 1 < at.size() ? at[k + 1] - step.phase : total;
    int64_t end = std::clamp(next, begin, std::min(total, begin + len + slack));
    if (end <= begin) continue;
    StepAlignment::Repetition r{begin, end, 0, false};
    Pairs pairs;
    if (end - begin == len && std::equal(mea.begin() + begin, mea.begin() + end, rec.begin() + step.begin)) {
      r.exact = true;
      for (int64_t i = 0; i < len; ++i) pairs.emplace_back(step.begin + i, begin + i);
    } else {
      pairs = CommonPairs(rec, step.begin, step.end, mea, begin, end);
    }
    r.matched = static_cast<int64_t>(pairs.size());
    const double of_step = static_cast<double>(r.matched) / static_cast<double>(len);
    const double of_window = static_cast<double>(r.matched) / static_cast<double>(end - begin);
    if (of_step > t.best_of_step) t.best_of_step = of_step, t.best_of_window = of_window;
    const double missing = static_cast<double>(len - r.matched);
    if (missing > std::max(1.0, kMaxMissing * static_cast<double>(len)) || of_window < kMinOfWindow) continue;
    // A repetition runs to the next anchor when that follows at once, so that
    // repetitions tile the loop; after the last one, or before a long stretch
    // (a summary, an evaluation), it ends with its last aligned item.
    int64_t last = begin;
    for (auto [i, j] : pairs) last = std::max(last, j + 1);
    r.end = k + 1 < at.size() && next <= begin + len + slack ? std::max(next, last) : last;
    const auto rep = static_cast<int32_t>(out.repetitions.size());
    for (int64_t j = r.begin; j < r.end; ++j) out.repetition_of[j] = rep;
    for (auto [i, j] : pairs) out.recorded_of[j] = i;
    out.repetitions.push_back(r);
    prev_end = r.end;
    t.aligned += r.matched;
  }
  return t;
}

}  // namespace

namespace {

Result<StepAlignment> AlignOnce(const std::vector<int>& rec, const std::vector<int>& mea, const std::string& what) {
  if (mea.empty())
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("the measured pass holds no {}", what));
  Anchor anchor = FindAnchor(rec, mea);
  if (anchor.token < 0)
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("the measured pass shares no {} with the recording ({} recorded, {} measured): "
                                 "it is a recording of another program",
                                 what, rec.size(), mea.size()));
  const int64_t n = static_cast<int64_t>(rec.size());
  const size_t stride = static_cast<size_t>(anchor.per_step);
  const int64_t period = std::max<int64_t>(1, MedianGap(anchor.occurrences, stride, n));
  const int64_t slack = std::max<int64_t>(16, period / 4);
  const RecordedStep step = FindRecordedStep(rec, mea, anchor, period, slack);
  const int64_t len = step.end - step.begin;

  // The anchor occurrences that start a step: every stride-th. With one
  // anchor per step that is all of them; with several (a step of identical
  // layers) each phase is tried, the one the recording's anchor aligned with
  // first, and the phase that aligns the most items wins.
  Tiling best;
  const size_t phases = std::min<size_t>(stride, kMaxPhases);
  for (size_t i = 0; i < phases; ++i) {
    std::vector<int64_t> starts;
    for (size_t k = (step.occurrence + i) % stride; k < anchor.occurrences.size(); k += stride)
      starts.push_back(anchor.occurrences[k]);
    Tiling t = Tile(rec, mea, step, starts, period, slack);
    if (i == 0 || t.aligned > best.aligned) best = std::move(t);
  }
  StepAlignment& out = best.alignment;
  if (out.repetitions.empty())
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("the measured pass does not repeat the recorded step ({} {} recorded, {} measured, "
                                 "repeating every {}: at best a stretch holds {:.0f}% of the step's {} (a repetition "
                                 "lacks at most one or {:.0f}%), and the step {:.0f}% of the stretch ({:.0f}%))",
                                 rec.size(), what, mea.size(), period, best.best_of_step * 100, len,
                                 kMaxMissing * 100, best.best_of_window * 100, kMinOfWindow * 100));
  return std::move(out);
}

std::vector<StepAlignment> PeriodicTilings(const std::vector<int>& stream, const std::string& what);

int64_t Covered(const StepAlignment& al) {
  return std::count_if(al.repetition_of.begin(), al.repetition_of.end(), [](int32_t r) { return r >= 0; });
}

}  // namespace

Result<StepAlignment> AlignSteps(const std::vector<int>& rec, const std::vector<int>& mea, const std::string& what,
                                 bool whole_script, const StepPreference& prefer) {
  if (rec.empty()) return MakeError(ErrorCode::kInvalidArgument, fmt::format("the recording holds no {}", what));
  auto direct = AlignOnce(rec, mea, what);
  // Repeats through most of the measured pass: the recording is one step (or
  // the measured pass is mostly set-up and summary: nothing better is found).
  // A whole script found there once only is the measured pass's double (the
  // same arguments twice): its own loop's step is sought, and the whole
  // recording stays the step only where none repeats. (A bracketed step
  // measured once stays whole: its identical layers are no steps.)
  const int64_t half = static_cast<int64_t>(mea.size()) / 2;
  const bool once = whole_script && direct.ok() && direct->repetitions.size() == 1;
  if (direct.ok() && !once && Covered(*direct) >= half) return direct;
  // A recording of several iterations (a whole script with --steps 3): its
  // first may differ from the rest (an optimizer creating its state). Each
  // period that repeats in the recording offers its last repetition as the
  // step; the one that explains most of the measured pass wins (a layer
  // explains less of it than the step that holds the layers).
  std::optional<StepAlignment> best;
  int64_t best_covered = direct.ok() && !once ? Covered(*direct) : 0;
  for (const StepAlignment& own : PeriodicTilings(rec, what)) {
    const StepAlignment::Repetition last = own.repetitions.back();
    auto again = AlignOnce(std::vector<int>(rec.begin() + last.begin, rec.begin() + last.end), mea, what);
    if (!again.ok()) continue;
    const int64_t covered = Covered(*again);
    if (covered < half || covered < best_covered) continue;
    best_covered = covered;
    // Of the repetitions identical to the last, the first is the step: values
    // a recording repeats unchanged (the same input every iteration) are
    // matched where they first appear (tensor_classes.h), so their costs must
    // come there.
    int64_t at = last.begin;
    for (const auto& r : own.repetitions)
      if (r.end - r.begin == last.end - last.begin &&
          std::equal(rec.begin() + r.begin, rec.begin() + r.end, rec.begin() + last.begin)) {
        at = r.begin;
        break;
      }
    // So is the first iteration where it differs from the others by no more
    // than a repetition may (a library's first-call set-up: cuDNN's workspace
    // memsets): the first iteration then is the step on both sides of a diff,
    // where each side alone might pick another.
    const int64_t len = last.end - last.begin;
    std::optional<StepAlignment> same;  // the last's alignment, for the caller's choice among its equals
    if (prefer) same = *again;
    if (const auto first = own.repetitions.front(); at != first.begin) {
      auto early = AlignOnce(std::vector<int>(rec.begin() + first.begin, rec.begin() + first.end), mea, what);
      if (early.ok() && static_cast<double>(Covered(*early)) >= static_cast<double>(covered) * (1 - kMaxMissing)) {
        again = std::move(early);
        at = first.begin;
      }
    }
    if (prefer) {  // the caller's choice among the iterations that can be the step
      int64_t score = prefer(at, at == own.repetitions.front().begin ? own.repetitions.front().end : at + len);
      for (const auto& r : own.repetitions)
        if (r.begin != at && r.end - r.begin == len &&
            std::equal(rec.begin() + r.begin, rec.begin() + r.end, rec.begin() + last.begin))
          if (const int64_t s = prefer(r.begin, r.end); s > score) score = s, at = r.begin, again = *same;
    }
    again->step_begin += at;
    again->step_end += at;
    for (int64_t& r : again->recorded_of)
      if (r >= 0) r += at;
    again->recording_steps = static_cast<int64_t>(own.repetitions.size());
    best = std::move(*again);
  }
  if (!best) return direct;
  return std::move(*best);
}

std::vector<std::pair<int64_t, int64_t>> CommonSubsequence(const std::vector<int>& a, const std::vector<int>& b) {
  return CommonPairs(a, 0, static_cast<int64_t>(a.size()), b, 0, static_cast<int64_t>(b.size()));
}

Result<StepAlignment> TileSteps(const std::vector<int>& stream, int64_t begin, int64_t end, const std::string& what) {
  if (begin < 0 || end > static_cast<int64_t>(stream.size()) || end <= begin)
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("no step of {} at [{}, {})", what, begin, end));
  // The step's first item is the anchor, at phase 0: repetitions start where the step does.
  const int token = stream[begin];
  std::vector<int64_t> occurrences;
  for (size_t j = 0; j < stream.size(); ++j)
    if (stream[j] == token) occurrences.push_back(static_cast<int64_t>(j));
  const auto per_step = static_cast<size_t>(std::count(stream.begin() + begin, stream.begin() + end, token));
  const auto first = static_cast<size_t>(std::lower_bound(occurrences.begin(), occurrences.end(), begin) -
                                         occurrences.begin());
  std::vector<int64_t> starts;
  for (size_t k = first % per_step; k < occurrences.size(); k += per_step) starts.push_back(occurrences[k]);
  const int64_t len = end - begin;
  Tiling t = Tile(stream, stream, RecordedStep{begin, end, 0, first}, starts, len, std::max<int64_t>(16, len / 4));
  if (t.alignment.repetitions.empty())
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("the {} {} at [{}, {}) do not repeat", len, what, begin, end));
  return std::move(t.alignment);
}

namespace {

// Periods tried: at most this many, those the most tokens recur at first.
constexpr size_t kMaxPeriods = 8;

int64_t Aligned(const StepAlignment& al) {
  return std::count_if(al.recorded_of.begin(), al.recorded_of.end(), [](int64_t r) { return r >= 0; });
}

// How many items before the first repetition still repeat the stretch one
// period later: the periodic stretch starts that much earlier (less than a
// period). Not when the period before it is a warm-up step, most of it the
// step with some kernels picked otherwise: that step starts where the
// repetitions do, and its tail matching theirs says nothing of where.
int64_t PeriodicBefore(const std::vector<int>& stream, const StepAlignment& al) {
  const int64_t period = al.step_end - al.step_begin, b = al.repetitions.front().begin;
  if (b >= period && 2 * static_cast<int64_t>(CommonPairs(stream, b - period, b, stream, al.step_begin,
                                                          al.step_end).size()) >= period)
    return 0;
  int64_t k = 0;
  while (k + 1 < period && b - 1 - k >= 0 && stream[b - 1 - k] == stream[b - 1 - k + period]) ++k;
  return k;
}

// A period tiles the stream from where its periodic stretch starts, not
// from the token that suggested it.
Result<StepAlignment> Tiled(const std::vector<int>& stream, int64_t begin, int64_t end, const std::string& what) {
  auto al = TileSteps(stream, begin, end, what);
  if (!al.ok()) return al;
  if (int64_t k = PeriodicBefore(stream, *al); k > 0 && begin - k >= 0) {
    auto shifted = TileSteps(stream, begin - k, end - k, what);
    if (shifted.ok() && shifted->repetitions.size() >= al->repetitions.size()) return shifted;
  }
  return al;
}

// Every period's tiling that repeats at least twice, shortest step first.
std::vector<StepAlignment> PeriodicTilings(const std::vector<int>& stream, const std::string& what) {
  const int64_t n = static_cast<int64_t>(stream.size());
  std::unordered_map<int, std::vector<int64_t>> at;
  for (int64_t i = 0; i < n; ++i) at[stream[i]].push_back(i);
  // Candidate periods: each token's median gap, voted for by the tokens of
  // the same recurrence count that show it, kept when it recurs over a
  // quarter of the stream or more. The gaps leave out the first where there
  // are others: a first iteration that does more (an optimizer creating its
  // state) would make a recording of three iterations periodic in its
  // length. Not one token per count decides: a set-up call made three times
  // in a row recurs as often as the step's operators.
  struct Candidate {
    int64_t votes = 0, period = 0, begin = 0;
  };
  struct Period {
    int64_t votes = 0, first = 0, begin = 0;
  };
  std::map<int64_t, std::map<int64_t, Period>> periods_of;  // count -> period -> its tokens
  for (const auto& [token, pos] : at) {
    const int64_t c = static_cast<int64_t>(pos.size());
    if (c < 2) continue;
    const int64_t period = c >= 3 ? MedianGap(std::vector<int64_t>(pos.begin() + 1, pos.end()), 1, 0)
                                  : MedianGap(pos, 1, 0);
    Period& p = periods_of[c][period];
    if (p.votes++ == 0 || pos.front() < p.first) {
      p.first = pos.front();
      p.begin = pos[pos.size() / 2];  // a middle occurrence: inside the loop
    }
  }
  std::vector<Candidate> candidates;
  for (const auto& [c, periods] : periods_of)
    for (const auto& [period, p] : periods)
      if (period > 0 && c * period * 4 >= n && p.begin + period <= n) candidates.push_back({p.votes, period, p.begin});
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& x, const Candidate& y) { return x.votes > y.votes; });
  std::vector<int64_t> periods;
  std::vector<StepAlignment> tilings;
  for (const auto& cand : candidates) {
    if (periods.size() >= kMaxPeriods) break;
    if (std::find(periods.begin(), periods.end(), cand.period) != periods.end()) continue;
    periods.push_back(cand.period);
    auto al = Tiled(stream, cand.begin, cand.begin + cand.period, what);
    if (al.ok() && al->repetitions.size() >= 2) tilings.push_back(std::move(*al));
  }
  std::sort(tilings.begin(), tilings.end(), [](const StepAlignment& x, const StepAlignment& y) {
    return x.step_end - x.step_begin < y.step_end - y.step_begin;
  });
  return tilings;
}

}  // namespace

Result<StepAlignment> FindSteps(const std::vector<int>& stream, int64_t repetitions, const std::string& what) {
  const int64_t n = static_cast<int64_t>(stream.size());
  std::vector<StepAlignment> tilings = PeriodicTilings(stream, what);
  if (tilings.empty())
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("no step repeats in the {} {}: it holds no stretch that recurs at least twice",
                                 n, what));
  auto reps = [&](size_t t) { return static_cast<int64_t>(tilings[t].repetitions.size()); };
  size_t best = 0;
  for (size_t i = 1; i < tilings.size(); ++i) {
    if (repetitions > 0) {
      if (std::llabs(reps(i) - repetitions) < std::llabs(reps(best) - repetitions)) best = i;
    } else if (Aligned(tilings[i]) >= Aligned(tilings[best]) + reps(i)) {
      best = i;
    }
  }
  StepAlignment& chosen = tilings[best];
  // Told of fewer iterations than the stream repeats (a step of identical
  // layers and nothing else): the step is that many periods.
  if (const auto reps = static_cast<int64_t>(chosen.repetitions.size()); repetitions > 0 && reps >= 2 * repetitions) {
    const int64_t times = (reps + repetitions / 2) / repetitions, len = chosen.step_end - chosen.step_begin;
    const int64_t begin = chosen.repetitions.front().begin;
    auto longer = Tiled(stream, begin, std::min(n, begin + times * len), what);
    if (longer.ok() && std::llabs(static_cast<int64_t>(longer->repetitions.size()) - repetitions) < reps - repetitions)
      chosen = std::move(*longer);
  }
  return std::move(chosen);
}

}  // namespace magneton::analysis
