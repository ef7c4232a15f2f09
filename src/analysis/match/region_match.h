// The result of semantic matching between two runs (docs/matching.md).
#pragma once

#include <cstdint>
#include <vector>

#include "core/run.h"

namespace magneton::analysis {

// A pair of regions, one per run, that compute the same values: the same
// (equivalent) input tensors go in and equivalent output tensors come out.
struct RegionMatch {
  int64_t id = 0;
  std::vector<int64_t> ops_a, ops_b;        // top-level op ids on each side
  std::vector<int64_t> inputs_a, inputs_b;  // boundary tensors (equivalent pairwise)
  std::vector<int64_t> outputs_a, outputs_b;
  double output_rel_diff = 0;  // largest relative fingerprint difference of outputs
  int depth = 0;               // recursion depth of Algorithm 1 that produced it
};

// Counts that explain a match and its cost (docs/matching.md).
struct MatchStats {
  int64_t nodes_a = 0, nodes_b = 0;  // graph nodes (see "Granularity")
  int64_t core_a = 0, core_b = 0;    // nodes that reach a main output
  int64_t components_a = 0, components_b = 0;
  int64_t comparisons = 0;   // full fingerprint comparisons
  int64_t equivalences = 0;  // value pairs within tolerance
  int64_t cut_points = 0;    // accepted cuts, all depths
  // Wall time per phase: graphs and dominators, equivalence classes, cuts.
  double graph_seconds = 0, classes_seconds = 0, cuts_seconds = 0;
};

struct MatchResult {
  std::vector<RegionMatch> regions;  // disjoint on each side, in topological order
  std::vector<int64_t> unmatched_a, unmatched_b;
  std::vector<std::pair<int64_t, int64_t>> tensor_pairs;  // equivalent cut-point tensors (a, b)
  MatchStats stats;
  // Regions are NVTX ranges paired by name (diff/range_regions.h), or
  // stretches of two aligned kernel sequences (diff/kernel_regions.h), not
  // matched by values: their outputs were never compared.
  bool by_range_name = false;
  bool by_kernels = false;
  bool by_values() const { return !by_range_name && !by_kernels; }
};

struct MatchOptions {
  double tolerance = 1e-2;   // relative fingerprint tolerance (docs/matching.md)
  int max_equivalents = 16;  // equivalents kept per value (nearest in execution position)
  int threads = 0;           // for the equivalence search; 0: one per hardware thread
};

// Matches the dataflow graphs of two runs. Pure: no I/O, no GPU.
MatchResult MatchRuns(const Run& a, const Run& b, const MatchOptions& options = {});

}  // namespace magneton::analysis
