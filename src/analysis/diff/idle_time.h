// Waste on the timeline that no region holds (docs/diff.md, "Timeline
// findings"): both sides do the same device work per iteration, but one
// side's device idles longer, and that side makes more synchronizing calls
// per iteration. A wait for the device (a loss read with `.item()` every
// step) stops the host from preparing the next step while the device runs
// this one, so the device then idles through the host's work: the idle is
// spread over the step's gaps, no region's cost shows it, the iteration's does.
#pragma once

#include <optional>

#include "analysis/diff/diff.h"
#include "analysis/diff/finding.h"
#include "analysis/diff/region_cost.h"

namespace magneton::analysis {

// A run-level finding of class timeline, costed as the extra idle energy per
// iteration (seconds without energy), judged like a region over the
// repetitions' idle figures; nullopt when the runs are not on a device
// timeline, their busy time per iteration differs by more than 5% or less
// than 80% of either iteration is matched (other work), the costlier side
// makes no more synchronizing calls, or its extra idle is under 1% of its
// iteration or does not hold over the repetitions.
std::optional<Finding> IdleFinding(const CostModel& ca, const CostModel& cb, const DiffReport& report,
                                   const DiffOptions& options);

}  // namespace magneton::analysis
