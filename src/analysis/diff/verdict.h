// The verdict on a group of matched regions (docs/diff.md, "What it
// computes"): waste, trade-off or noise, with the reason in one line.
#pragma once

#include <vector>

#include "analysis/diff/diff.h"
#include "analysis/diff/finding.h"

namespace magneton::analysis {

// What a verdict says of regions matched by NVTX range name (no values recorded).
inline constexpr const char* kOutputsNotCompared =
    "outputs not compared: the runs hold no values; matched by NVTX range name";

// Adds one region's cost to a group's total (`regions_before` regions in it
// so far). The instances of a one-region group are that region's repetitions
// in the measured pass; a group of several regions has one instance each.
void AddInstance(SideCost& total, const SideCost& one, size_t regions_before);

// Sets verdict, why, cost and time deltas and noise_pct of `f` (whose a, b,
// costly and output_rel_diff are set). `whole_costly`: the costlier run's
// whole cost; `energy`: costs are joules (else host or device time).
void Judge(Finding& f, double whole_costly, const DiffOptions& options, bool energy);

// Whether `hi`'s values lie above `lo`'s beyond their spread: hi's lower
// quartile above lo's upper quartile, over at least 5 values a side (fewer
// cannot tell, and answer false).
bool Separated(std::vector<double> hi, std::vector<double> lo);

// Orders findings as a report lists them: waste by cost saved, then trade-offs,
// then noise; numbers the waste and trade-offs from 1 (noise: 0). Returns, by
// each finding's index before, its index after.
std::vector<int> RankFindings(std::vector<Finding>& findings);

}  // namespace magneton::analysis
