// Work one side does that the other side's step has no counterpart for
// (docs/diff.md, "Work with no counterpart"): operators in no matched region,
// whose values the other side's step never computes. A tensor grown with
// torch.cat at every step against pieces collected and joined once after the
// loop, a statistic computed and never read: the regions are the same, the
// cost sits outside them, and no region finding can show it.
#pragma once

#include <optional>

#include "analysis/diff/diff.h"
#include "analysis/diff/finding.h"
#include "analysis/diff/region_cost.h"

namespace magneton::analysis {

// A run-level finding of class operators, from each side's accounting
// (accounting.h): the costlier side's work in no region against the other's,
// per iteration, tested over the repetitions. Its cost is the difference; it
// must be at least the threshold's share of the costlier iteration (not just
// of the other side's unmatched work) and hold over the repetitions. The
// evidence names each side's unmatched operators, costliest first, with their
// call sites; operator rules apply to them. nullopt otherwise, where a side
// has no accounting, or where no region matched (nothing shows that the two
// iterations are the same step).
std::optional<Finding> UnmatchedWorkFinding(const CostModel& ca, const CostModel& cb, const DiffReport& report,
                                            const DiffOptions& options);

}  // namespace magneton::analysis
