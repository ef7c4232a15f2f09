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
#include "analysis/diff/step_align.h"

#include <fmt/core.h>

#include <algorithm>
#include <dtl/dtl.hpp>
#include <map>
#include <utility>

namespace magneton::analysis {

namespace {

// Share of the step a measured window must align to be a repetition of it:
// the same program varies by an allocator memset or a kernel picked otherwise
// once; a variant of it (a GELU written out) differs by more.
constexpr double kMinAligned = 0.8;
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
  const size_t mid = a.occurrences.size() / 2;
  const int64_t p = a.recorded_at, middle = a.occurrences[mid];
  const int64_t reach = period + slack;
  Pairs pairs = CommonPairs(rec, std::max<int64_t>(0, p - reach), std::min(n, p + reach), mea,
                            std::max<int64_t>(0, middle - reach), std::min(total, middle + reach));
  // The measured occurrence the anchor aligned with (any full step in reach may have been chosen).
  int64_t m = middle;
  for (auto [i, j] : pairs)
    if (i == p) m = j;
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
  int64_t best_s = p, best_count = 0, running = 0;
  for (int64_t s = s0; s <= p; ++s) {
    running += delta[s - s0];
    if (running > best_count) best_count = running, best_s = s;
  }
  RecordedStep best{p, p + 1, 0};
  const int64_t ms = m - (p - best_s);
  for (auto [i, j] : pairs)
    if (i >= best_s && i < best_s + period && j >= ms && j < ms + period) {
      best.begin = std::min(best.begin, i);
      best.end = std::max(best.end, i + 1);
    }
  best.begin = std::min(best.begin, p);
  best.end = std::max(best.end, p + 1);
  best.phase = p - best.begin;
  auto at = std::lower_bound(a.occurrences.begin(), a.occurrences.end(), m);
  best.occurrence = at != a.occurrences.end() && *at == m ? static_cast<size_t>(at - a.occurrences.begin()) : mid;
  return best;
}

// Step 3 for one choice of step starts in the measured sequence.
struct Tiling {
  StepAlignment alignment;
  int64_t aligned = 0;       // items aligned over all repetitions
  int64_t best_matched = 0;  // the best window, accepted or not
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
    t.best_matched = std::max(t.best_matched, r.matched);
    // Of the step, and of the measured period: a stretch that shares
    // only the anchor with the recording is no repetition of it.
    if (static_cast<double>(r.matched) < kMinAligned * static_cast<double>(std::max(len, period))) continue;
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

Result<StepAlignment> AlignSteps(const std::vector<int>& rec, const std::vector<int>& mea, const std::string& what) {
  if (rec.empty()) return MakeError(ErrorCode::kInvalidArgument, fmt::format("the recording holds no {}", what));
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
                                 "repeating every {}; at best {} of a repetition's {} align with the recording, "
                                 "under {:.0f}%)",
                                 rec.size(), what, mea.size(), period, best.best_matched, std::max(len, period),
                                 kMinAligned * 100));
  return std::move(out);
}

}  // namespace magneton::analysis
