// The graph machinery under matching: dataflow graph granularity, dominator
// trees against a brute-force definition, and the monotone chain against a
// quadratic dynamic program.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "analysis/match/cut_chain.h"
#include "analysis/match/dataflow_graph.h"
#include "analysis/match/dominators.h"
#include "tiny_eager.h"

namespace magneton::analysis {
namespace {

TEST(DataflowGraph, NodesAreOutermostOpsWithTensors) {
  tiny::Eager e;
  tiny::T x = e.Input({4, 8}), w = e.Input({6, 8}), b = e.Input({6});
  e.Begin("user_scope", {});      // no tensors: transparent
  tiny::T y = e.Linear(x, w, b);  // aten::linear with aten::t and aten::addmm inside
  e.End({});
  tiny::T z = e.Relu(y);
  const DataflowGraph g = BuildDataflowGraph(e.run);
  ASSERT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(e.run.ops[g.node_op[0]].name, "aten::linear");
  EXPECT_EQ(e.run.ops[g.node_op[1]].name, "aten::relu");
  // Nested ops belong to their node; the scope belongs to none.
  for (const Op& op : e.run.ops) {
    if (op.name == "user_scope") {
      EXPECT_EQ(g.op_node[op.id], -1);
    }
    if (op.name == "aten::t" || op.name == "aten::addmm") {
      EXPECT_EQ(g.op_node[op.id], 0);
    }
  }
  ASSERT_EQ(g.succ.size(0), 1);
  EXPECT_EQ(*g.succ.from(0), 1);
  EXPECT_TRUE(g.reads_graph_input[0]);
  EXPECT_FALSE(g.reads_graph_input[1]);
  EXPECT_EQ(g.reads.size(1), 1);
  EXPECT_EQ(g.values[*g.reads.from(1)].tensor, y.id);
  (void)z;
}

// Brute force: d dominates v iff v is unreachable from the root once d is removed.
std::vector<std::set<int>> BruteDominators(int n, const std::vector<std::vector<int>>& succ) {
  std::vector<std::set<int>> dom(n);
  auto reach = [&](int removed) {
    std::vector<int> seen(n + 1, 0), stack{n};
    seen[n] = 1;
    while (!stack.empty()) {
      int v = stack.back();
      stack.pop_back();
      for (int w : succ[v])
        if (w != removed && !seen[w]) seen[w] = 1, stack.push_back(w);
    }
    return seen;
  };
  for (int d = 0; d < n; ++d) {
    auto seen = reach(d);
    for (int v = 0; v < n; ++v)
      if (!seen[v]) dom[v].insert(d);
  }
  return dom;
}

TEST(Dominators, MatchBruteForceOnRandomDags) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 2 + trial % 40;
    std::vector<std::vector<int>> succ(n + 1), pred(n);
    for (int v = 0; v < n; ++v) {
      // Roots hang off the virtual root n; other nodes get 1-3 earlier predecessors.
      if (v == 0 || rng() % 5 == 0) {
        succ[n].push_back(v);
        continue;
      }
      const int k = 1 + rng() % 3;
      for (int i = 0; i < k; ++i) {
        // Mostly local edges, sometimes long skips (masks, residuals).
        int u = rng() % 4 == 0 ? static_cast<int>(rng() % v) : std::max(0, v - 1 - static_cast<int>(rng() % 3));
        succ[u].push_back(v);
        pred[v].push_back(u);
      }
    }
    std::vector<int32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    auto t = DominatorTree::Build(n, order, [&](int32_t v, auto&& visit) {
      for (int u : pred[v]) visit(u);
    });
    auto brute = BruteDominators(n, succ);
    for (int v = 0; v < n; ++v) {
      std::set<int> chain;
      for (int d = t.idom(v); d != t.root(); d = t.idom(d)) chain.insert(d);
      chain.insert(v);
      EXPECT_EQ(chain, brute[v]) << "trial " << trial << " node " << v;
      for (int d = 0; d < n; ++d) EXPECT_EQ(t.Dominates(d, v), brute[v].count(d) == 1);
    }
  }
}

TEST(Dominators, IntersectIsFastOnLongChains) {
  // A chain of 200k nodes, then 50k nodes that each read the chain's end and
  // one node far up the chain (a long skip, like a mask read by every layer):
  // each intersection climbs most of the chain unless it jumps.
  const int chain = 200000, extra = 50000, n = chain + extra;
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto far = [&](int v) { return static_cast<int>((static_cast<int64_t>(v) * 7919) % chain); };
  auto t = DominatorTree::Build(n, order, [&](int32_t v, auto&& visit) {
    if (v > 0 && v < chain) visit(v - 1);
    if (v >= chain) {
      visit(chain - 1);
      visit(far(v));
    }
  });
  for (int v = 1; v < chain; v += 997) ASSERT_EQ(t.idom(v), v - 1);
  for (int v = chain; v < n; ++v) ASSERT_EQ(t.idom(v), far(v));
  EXPECT_EQ(t.Intersect(chain - 1, 5), 5);
  EXPECT_EQ(t.depth(chain - 1), chain);
}

TEST(LongestMonotoneChain, MatchesQuadraticDp) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::pair<int32_t, int32_t>> pairs;
    const int m = rng() % 30;
    for (int i = 0; i < m; ++i) pairs.emplace_back(rng() % 12, rng() % 12);
    auto chain = LongestMonotoneChain(pairs);
    for (size_t k = 1; k < chain.size(); ++k) {
      EXPECT_LT(chain[k - 1].first, chain[k].first);
      EXPECT_LT(chain[k - 1].second, chain[k].second);
    }
    for (auto& p : chain) EXPECT_NE(std::find(pairs.begin(), pairs.end(), p), pairs.end());
    // Quadratic DP over the sorted distinct pairs.
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    std::vector<int> best(pairs.size(), 1);
    int longest = 0;
    for (size_t i = 0; i < pairs.size(); ++i) {
      for (size_t j = 0; j < i; ++j)
        if (pairs[j].first < pairs[i].first && pairs[j].second < pairs[i].second)
          best[i] = std::max(best[i], best[j] + 1);
      longest = std::max(longest, best[i]);
    }
    EXPECT_EQ(static_cast<int>(chain.size()), longest);
  }
}

}  // namespace
}  // namespace magneton::analysis
