// Finding the recorded step in a measured stream (docs/diff.md, "Measured
// passes"). A recording pass holds one step of a program (the documented API:
// one call of the step), or its set-up, one or more steps and a summary (a
// whole script with --iters 1); the measured pass holds many steps, with
// warm-up, set-up or a summary around them. Both are sequences of tokens:
// operator signatures, or device work (kernel name and launch shape, copy
// kind and size). This finds every repetition of the recording's step in the
// measured sequence and aligns each to it, item by item, tolerating items
// that only one side has (an allocator's memset, a kernel picked differently
// once).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace magneton::analysis {

struct StepAlignment {
  int64_t step_begin = 0, step_end = 0;  // the step within the recorded sequence: [begin, end)
  struct Repetition {
    int64_t begin = 0, end = 0;  // measured positions [begin, end)
    int64_t matched = 0;         // items aligned to the recorded step
    bool exact = false;          // identical to the recorded step
  };
  std::vector<Repetition> repetitions;  // in order, disjoint
  // By measured position: the recorded position it aligns to (-1: none), and
  // the repetition it lies in (-1: outside every repetition).
  std::vector<int64_t> recorded_of;
  std::vector<int32_t> repetition_of;
  // Repetitions of its own step the recording holds, where the step is the
  // first of them identical to the last (a recording of several
  // iterations); 1 otherwise.
  int64_t recording_steps = 1;
};

// `recorded` and `measured` are token ids (equal ids: the same operator or
// kernel). Where the recording holds several iterations of its own and the
// first differs (an optimizer creating its state), the first iteration
// identical to its last is the step, if that explains more of the measured
// pass. `whole_script`: both are whole runs of a script (set-up, its loop, a
// summary), so a recording found only once in the measured pass (the same
// arguments twice) is still cut to its loop's step. Fails, naming what it
// found, when the measured sequence holds no repetition of any step of the
// recorded one. `what` names the items in messages ("operators", "kernels
// and copies").
//
// `prefer` scores a stretch [begin, end) of the recorded sequence as the step:
// of the recording's iterations that can be the step (those identical to its
// last, and a first one that differs little), the highest score wins, ties
// going by the rule above. The diff scores by the regions the value matching
// found there: where iterations compute the same values, the matching may
// pair them in another iteration than the first (one whose dataflow the
// first's one-time set-up does not cross), and the step must be where it did.
using StepPreference = std::function<int64_t(int64_t begin, int64_t end)>;
Result<StepAlignment> AlignSteps(const std::vector<int>& recorded, const std::vector<int>& measured,
                                 const std::string& what, bool whole_script = false,
                                 const StepPreference& prefer = nullptr);

// The common pairs (index in a, index in b) of a longest common subsequence
// of a and b, in order.
std::vector<std::pair<int64_t, int64_t>> CommonSubsequence(const std::vector<int>& a, const std::vector<int>& b);

// A stream with no recording of its step (a program recorded whole, kernels
// only): its step is found by periodicity. The "recorded" sequence of the
// result is the stream itself: step_begin/step_end cut one repetition of it
// out of the stream, and recorded_of holds stream positions in that cut.
//
// TileSteps: the repetitions of stream[begin, end) in the stream.
Result<StepAlignment> TileSteps(const std::vector<int>& stream, int64_t begin, int64_t end, const std::string& what);
// FindSteps: the step, allowing set-up before the loop, a summary after it,
// warm-up steps that differ and stray items. The period comes from tokens
// that recur regularly; of the periods that tile the stream, the shortest
// wins unless a longer one aligns at least one more item per repetition (a
// step of identical layers is not cut into layers, and a token that happens
// to recur every other step does not double it). The step starts where the
// periodic stretch starts. `repetitions` > 0 (the user's --iterations): of
// the periods that tile, the one whose repetition count is closest to it.
// Fails when no step repeats at least twice.
Result<StepAlignment> FindSteps(const std::vector<int>& stream, int64_t repetitions, const std::string& what);

}  // namespace magneton::analysis
