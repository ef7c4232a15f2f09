// Call sites and call paths from a run's recorded stacks (Run::stacks/frames).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/diff/finding.h"
#include "core/run.h"

namespace magneton::analysis {

CallSite ToCallSite(const Frame& f);

// "file.py:119 (forward)" or "libfoo.so!gemm"; empty when the site is empty.
std::string Describe(const CallSite& site);

// The frames of a stack, outermost first; empty when the stack is kNone or unknown.
std::vector<const Frame*> OutermostFirst(const Run& run, int64_t stack);

// The innermost Python frame outside the framework's own code (torch,
// importlib, <frozen ...>): where the user's (or library's) code made the call.
// A native-only stack (record --stacks) gives its innermost frame outside
// CUDA's libraries and c10; else the innermost frame of any kind.
CallSite UserCallSite(const Run& run, int64_t stack);

// The first frame where two call paths part, comparing outermost first.
// Python frames compare by file, function and line; native frames by
// function and module (addresses differ between processes).
Divergence FirstDivergence(const Run& a, int64_t stack_a, const Run& b, int64_t stack_b);

}  // namespace magneton::analysis
