// The steps of a measured pass that ran after kernel tracing stopped
// (`record(..., traced_steps=N)`, RunInfo extra kTracedUntilKey): CUPTI
// detached, the program at its own speed, only its step marks and energy
// readings recorded. Their time and energy per step is the iteration as the
// program runs; the traced steps before them are what regions are matched
// and costed on (docs/recording.md, "Untraced steps"; docs/diff.md, "Time and
// energy per iteration").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "analysis/diff/finding.h"
#include "analysis/diff/step_timeline.h"
#include "core/run.h"

namespace magneton::analysis {

struct UntracedSteps {
  int64_t steps = 0;               // whole steps between the stretch's first and last marks
  double seconds = kUnmeasured;    // per step
  // Per step, on the measured GPUs; NaN without their energy or where the
  // stretch is under a second or ten readings of each GPU series.
  double joules = kUnmeasured;
};

// Takes the untraced stretch out of `run` and summarizes it: its marks and
// the sensor readings after the first one past the cut leave the run, which
// ends where tracing stopped, so the timeline and the energy attribution see
// only traced steps. nullopt for a run traced to its end.
std::optional<UntracedSteps> TakeUntracedSteps(Run& run);

// A note when the traced steps (`timeline`, built with the untraced steps'
// time, step_timeline.h) ran more than 10% slower than the untraced ones (the
// tracer's cost on this program, which stretches its idle gaps), saying what
// was taken off the gaps; or when too few untraced steps followed to
// measure; "" otherwise.
std::string UntracedNote(char side, const std::optional<UntracedSteps>& untraced, const StepTimeline& timeline);

}  // namespace magneton::analysis
