// A verdict only where something backs it (docs/diff.md, "Same work, other
// cost"). When root cause finds nothing structural between the two sides of a
// region group (the same operators, kernels, launch parameters and input
// layouts, and no configuration key known to steer them), its cost difference
// is not the code's: it is judged noise, with what explains the difference
// when the runs show it:
//  - host times of the same operators on a CPU-only run: the machine;
//  - energy attributed by different curve methods in the two runs;
//  - the region's device work running beside other work (a copy or a kernel
//    on another stream) for a different share of its time;
//  - the device running slower on one side (lower SM clocks; or the same
//    kernels simply taking longer: clocks, temperature, another process);
//  - the same device time but different energy: the region's joules are its
//    share of sensor readings shared with the work around it.
// A `timeline` difference (the same kernels, waited for longer) is structural
// and stays a finding (root_cause.h).
#pragma once

#include <string>

#include "analysis/diff/diff.h"
#include "analysis/diff/finding.h"
#include "analysis/diff/root_cause.h"

namespace magneton::analysis {

// Whether `f` (a waste or trade-off) rests on nothing structural: its
// evidence is of class `none` and names no configuration key.
bool Unbacked(const Finding& f);

// Makes an unbacked finding noise: sets its verdict, its why (what explains
// the difference, or that nothing recorded does) and its evidence summary;
// drops its rules. `ra`, `rb`: its costliest region's sides.
void JudgeSameWork(Finding& f, const RegionSide& ra, const RegionSide& rb, const DiffReport& report,
                   const DiffOptions& options);

}  // namespace magneton::analysis
