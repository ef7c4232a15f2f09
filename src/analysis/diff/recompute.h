// Work a side does twice: operators that compute values their own run has
// computed before in the same step. Activation checkpointing
// (torch.utils.checkpoint, gradient_checkpointing_enable()) runs each
// checkpointed block's forward again during the backward to save memory; a
// module called twice on the same input does the same. Matching sees the
// recomputed values as the same values, so it is their fingerprints, compared
// within one run, that tell the extra work from other extra operators.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/diff/root_cause.h"

namespace magneton::analysis {

struct Recomputed {
  int64_t ops = 0;           // operators of the side that recompute a value
  double seconds = 0;        // their time
  int64_t first = kNone;     // the first of them
  int64_t original = kNone;  // the op that computed its value before
};

// Among `ops` of a side (its compute ops), those named in `names` (what the
// side runs more of than the other) that are not in-place and give an output
// whose values equal an informative output of an earlier op of the same name,
// in the same step (between the run's step marks). Needs fingerprints (a
// recording pass); without them nothing is found.
Recomputed FindRecomputed(const RegionSide& side, const std::vector<int64_t>& ops,
                          const std::vector<std::string>& names);

}  // namespace magneton::analysis
