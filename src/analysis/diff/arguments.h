// What the two sides gave the same operators besides their inputs' layouts
// (evidence class `arguments`, docs/diff.md): the arguments that are not
// tensors (non_blocking, dtype, approximate, ...), where each input lives
// (device, pinned or pageable host memory), and for the region's copies
// between host and device, where they read and wrote and whether the host
// waited for them.
#pragma once

#include <string>
#include <vector>

#include "analysis/diff/finding.h"
#include "analysis/diff/root_cause.h"

namespace magneton::analysis {

// Differences between ops paired by name among `wa` and `wb` (ComputeOps of
// each side) and between the copies the regions' ops issued, paired by kind:
// copies first, then memory kinds, then arguments.
std::vector<ParamDelta> ArgumentDeltas(const RegionSide& a, const std::vector<int64_t>& wa, const RegionSide& b,
                                       const std::vector<int64_t>& wb);

// "HtoD copy source memory pageable on a, pinned on b; aten::copy_
// non_blocking False on a, True on b" (the first few).
std::string ArgumentSummary(const std::vector<ParamDelta>& deltas);

// "dtype=float16, non_blocking=True" as (name, value) pairs; a value may hold
// ", " (a string), so only ", name=" starts the next argument.
std::vector<std::pair<std::string, std::string>> SplitArgs(const std::string& args);

}  // namespace magneton::analysis
