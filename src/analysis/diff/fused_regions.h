// XLA fuses elementwise operators into a neighbour's kernel (a bias add and a
// relu into the convolution's epilogue, a cast into a reduction). The fused
// equations launch nothing of their own, so a matched region made only of
// them costs 0 on the JAX side while its eager peer pays for its own kernel:
// every such region would read as "the other side wastes 100%". Before
// costing, such a region is merged, on both sides, with the neighbouring
// region whose kernels did its work (docs/diff.md "Fused operators").
#pragma once

#include "analysis/diff/region_cost.h"
#include "analysis/match/region_match.h"
#include "core/run.h"

namespace magneton::analysis {

// Merges every region that is fused away on either side into its producer
// region (else its consumer) when that neighbour launches kernels on the
// fused side. Returns how many regions were merged away. Regions stay in
// topological order; ids are kept from the surviving region.
int MergeFusedRegions(const Run& a, const Run& b, const CostModel& ca, const CostModel& cb, MatchResult& match);

}  // namespace magneton::analysis
