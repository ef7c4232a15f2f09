// Why two matched regions cost differently, strongest evidence first
// (docs/diff.md): different operators, then different kernels for the same
// operators, then the same kernels launched differently or fed different
// input layouts, then the same operators called with other arguments. Known
// patterns (rules) add recommendations and name the configuration keys that
// steer the choice.
#pragma once

#include <vector>

#include "analysis/diff/finding.h"
#include "analysis/diff/region_cost.h"
#include "analysis/diff/rules.h"
#include "analysis/match/region_match.h"
#include "core/run.h"

namespace magneton::analysis {

// One side of a region, as root-cause analysis sees it.
struct RegionSide {
  const Run* run = nullptr;
  const CostModel* cost = nullptr;
  const std::vector<int64_t>* ops = nullptr;  // top-level op ids of the region
  // Those of every region of its finding's group (null: the region's): the
  // synchronizing calls before the group's work are counted over all of them
  // (a sync before the first layer belongs to the finding of the layers).
  const std::vector<int64_t>* group = nullptr;
};

struct RootCause {
  std::vector<Evidence> evidence;  // strongest first; never empty
  std::vector<RuleHit> rules;
};

// Ops that only describe or allocate memory (views, reshapes, empty) do no
// work of their own; operator comparisons look past them.
bool IsMetadataOp(const std::string& name);

// Composite ops that hand all their work to the ops they call (aten::linear
// to aten::addmm, aten::conv2d to a backend convolution).
bool IsWrapperOp(const std::string& name);

// The ops of a region (nested ones included) that do work: not metadata and
// not a wrapper whose work shows as its children. Id order. This is what
// "operator combination" compares.
std::vector<int64_t> ComputeOps(const RegionSide& side);

// The same operators (ComputeOps, by name and count) on the same input
// layouts (dtype, shape, strides), called the same way (arguments.h) on both
// sides: code that cannot differ.
bool SameOperatorsAndLayouts(const RegionSide& a, const RegionSide& b);

RootCause FindRootCause(const RegionSide& a, const RegionSide& b, char costly,
                        const std::vector<ConfigDelta>& config, const std::vector<Rule>& rules);

}  // namespace magneton::analysis
