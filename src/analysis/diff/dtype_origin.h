// Where a dtype comes from (docs/diff.md, "Root cause"): operators that
// compute in float64 on one side usually do so because one cast or one data
// source upstream made their inputs float64, and that place, not the matmul
// that pays for it, is what the user changes.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/diff/root_cause.h"

namespace magneton::analysis {

// Walking the dataflow up from the first input of `dtype` that the side's
// ops read, through operators that take that dtype in and give it out: the
// first operator that gives it out without taking it in (a cast, a creation
// in that dtype), as "from aten::_to_copy at train.py:47 (main)"; or, where
// the walk reaches a tensor no recorded operator produced, that the values
// were made before the step. "" when no input of the side has `dtype`.
std::string DtypeOrigin(const RegionSide& side, const std::string& dtype);

}  // namespace magneton::analysis
