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
#include <string>
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
};

// `recorded` and `measured` are token ids (equal ids: the same operator or
// kernel). Fails, naming what it found, when the measured sequence holds no
// repetition of any step of the recorded one. `what` names the items in
// messages ("operators", "kernels and copies").
Result<StepAlignment> AlignSteps(const std::vector<int>& recorded, const std::vector<int>& measured,
                                 const std::string& what);

}  // namespace magneton::analysis
