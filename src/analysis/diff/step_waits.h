// The waits of one step told once (docs/diff.md, "Timeline findings"): a
// cause that makes the device wait at many places of the step (a launch-bound
// step, a synchronization after every layer) gives a timeline finding per
// region, each a small share of the step, while the waste is the step's. The
// timeline findings of one side with one cause become one finding holding
// their regions, costed as their sum, with the waits per iteration added up.
#pragma once

#include "analysis/diff/diff.h"

namespace magneton::analysis {

// Folds, re-ranks and re-points the regions at their findings. A run with one
// such finding per cause is left as it is.
void FoldStepWaits(DiffReport& report);

}  // namespace magneton::analysis
