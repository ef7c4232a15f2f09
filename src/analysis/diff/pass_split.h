// A run holding both passes (docs/recording.md, "Steps": a recording whose
// first steps were the recording pass and the rest the measured pass, one
// file) split into the two runs `magneton diff` compares: the recorded one
// (operators, values, their kernels) and the measured one, from the moment
// the recorder switched (RunInfo extra "measured_from_ns"; the device was
// synchronized before it, so every kernel of the recording pass started
// before it and every kernel of the measured pass after); where the file
// also notes "recorded_until_ns", the recording pass ends there instead.
#pragma once

#include <optional>
#include <utility>

#include "core/run.h"

namespace magneton::analysis {

struct SplitPasses {
  Run recorded, measured;
};

// The two passes, or nullopt for a run that holds one.
std::optional<SplitPasses> SplitAtMeasuredPass(const Run& run);

}  // namespace magneton::analysis
