// Structural invariants every MatchResult must satisfy, whatever the runs:
// regions disjoint and in execution order on both sides, every graph node
// (the outermost op with tensors: a top-level op, or an op under a tensor-less
// scope such as autograd's evaluate_function) in exactly one region or
// unmatched and no other op listed, boundary and cut tensors equivalent.
#pragma once

#include <gtest/gtest.h>

#include "analysis/fingerprint/fingerprint_compare.h"
#include "analysis/match/dataflow_graph.h"
#include "analysis/match/region_match.h"
#include "core/run.h"

namespace magneton::testing {

using analysis::FingerprintDifference;
using analysis::MatchResult;

inline void CheckWellFormed(const MatchResult& m, const Run& a, const Run& b, double tolerance) {
  std::vector<int> seen_a(a.ops.size(), 0), seen_b(b.ops.size(), 0);
  int64_t last_a = -1, last_b = -1;
  for (const auto& r : m.regions) {
    ASSERT_FALSE(r.ops_a.empty());
    ASSERT_FALSE(r.ops_b.empty());
    // Disjoint and in execution order on both sides.
    EXPECT_GT(r.ops_a.front(), last_a);
    EXPECT_GT(r.ops_b.front(), last_b);
    last_a = r.ops_a.back();
    last_b = r.ops_b.back();
    for (auto op : r.ops_a) EXPECT_EQ(seen_a[op]++, 0);
    for (auto op : r.ops_b) EXPECT_EQ(seen_b[op]++, 0);
    EXPECT_EQ(r.inputs_a.size(), r.inputs_b.size());
    EXPECT_EQ(r.outputs_a.size(), r.outputs_b.size());
    EXPECT_FALSE(r.outputs_a.empty());
    EXPECT_LE(r.output_rel_diff, tolerance);
    for (size_t i = 0; i < r.inputs_a.size(); ++i)
      EXPECT_LE(FingerprintDifference(a.tensors[r.inputs_a[i]], b.tensors[r.inputs_b[i]]), tolerance);
  }
  for (auto op : m.unmatched_a) EXPECT_EQ(seen_a[op]++, 0);
  for (auto op : m.unmatched_b) EXPECT_EQ(seen_b[op]++, 0);
  // Every node lands in exactly one region or in the unmatched list.
  for (const auto& [run, seen] : {std::pair{&a, &seen_a}, std::pair{&b, &seen_b}}) {
    std::vector<int> node(run->ops.size(), 0);
    for (int64_t op : analysis::BuildDataflowGraph(*run).node_op) node[op] = 1;
    for (const Op& op : run->ops) EXPECT_EQ((*seen)[op.id], node[op.id]) << "op " << op.id << " " << op.name;
  }
  for (auto [ta, tb] : m.tensor_pairs) EXPECT_LE(FingerprintDifference(a.tensors[ta], b.tensors[tb]), tolerance);
}

}  // namespace magneton::testing
