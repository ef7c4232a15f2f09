// Regions of runs that have kernels and NVTX ranges but no operator values (a
// C++ engine annotated with NVTX, recorded by `magneton record`): nothing to
// match by fingerprint, so the diff matches NVTX ranges by name instead
// (docs/diff.md, "Runs without operators: NVTX ranges").
//
// Each range becomes an NVTX-derived op (framework "nvtx") named by its path,
// outermost range first ("engine/iteration > gemm_chain/layer3"). It owns the
// work launched in it and in none of its sub-ranges (energy/launch_site.h, the
// rule of `magneton top --by range`), so a leaf range costs its kernels and a
// parent only what its children do not cover. The ops are flat (no parent):
// costing one never counts a sub-range's work twice. Costs, verdicts, root
// cause and reports then treat these ops like any others.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/match/region_match.h"
#include "core/run.h"

namespace magneton::analysis {

inline constexpr const char* kRangePathSeparator = " > ";

// Both runs hold kernels and NVTX ranges, and neither holds values to match
// by (no operators, or no fingerprinted tensor).
bool MatchesByRanges(const Run& a, const Run& b);

struct RangeRun {
  Run run;  // a copy whose ops are the ranges, in start order; work linked to its range
  int64_t kernels_placed_by_start = 0;  // no launch record: placed where they ran on the device
  std::string iteration_range;          // the path whose instances are the run's iterations, if inferred
};

// The run with its ranges as ops (marks, which last no time, left out), its
// kernels and transfers linked to the innermost range holding their launch
// (kNone outside every range). Operators, tensors and replays of the original
// are dropped: the ops now are the ranges.
// A program without a framework says nothing of its iterations, so when
// RunInfo has no "iterations" they are inferred: the instances of the
// outermost range path that repeats (the most frequent one at that depth), set
// as run.info.extra["iterations"] with the path in iteration_range.
RangeRun WithRangeOps(const Run& run);

// Pairs the i-th instance of a path in a with the i-th in b (both WithRangeOps
// runs). A pair where neither side holds work is no region; the instances one
// side has more of are unmatched. by_range_name is set.
MatchResult MatchRanges(const Run& a, const Run& b);

// What the report says about such a diff: how regions were matched, the range
// paths one side lacks, and the kernels placed without a launch record.
std::vector<std::string> RangeNotes(const RangeRun& a, const RangeRun& b, const MatchResult& match);

}  // namespace magneton::analysis
