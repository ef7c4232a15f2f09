// How each side's host launched its kernels, from the recording pass's launch
// API rows: one call per kernel (cudaLaunchKernel) against one call for a
// whole captured CUDA graph (cudaGraphLaunch). A device that waits for the
// launches on one side and not on the other is told why by this difference.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "analysis/diff/finding.h"
#include "core/run.h"

namespace magneton::analysis {

// The launch calls that the program's kernels (not the recorder's own)
// correlate with, by call name without its version suffix.
std::map<std::string, int64_t> LaunchCalls(const Run& run);

// Timeline evidence naming the calls when the two runs launch their kernels
// with different calls; nullopt when they launch alike or hold no launch rows.
std::optional<Evidence> LaunchCallEvidence(const Run& a, const Run& b);

}  // namespace magneton::analysis
