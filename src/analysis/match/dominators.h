// Dominator trees of acyclic graphs (docs/matching.md, "Dominators").
//
// Cooper, Harvey and Kennedy's iterative algorithm ("A Simple, Fast Dominance
// Algorithm", 2001) sets idom(v) to the intersection, over v's predecessors,
// of their dominator-tree paths, and repeats until nothing changes. On a DAG
// visited in topological order every predecessor is final before v is
// visited, so one pass is exact. The intersection climbs the tree by depth
// with skew-binary jump pointers (one extra word per node), so a long skip,
// like a mask read by every layer, costs O(log n) rather than O(depth).
//
// The post-dominator tree is the dominator tree of the reversed graph, rooted
// at a virtual sink.
#pragma once

#include <cstdint>
#include <vector>

namespace magneton::analysis {

class DominatorTree {
 public:
  DominatorTree() = default;

  // Nodes 0..n-1 plus a virtual root, index n. `order` lists the nodes that
  // take part, each after all of its flow predecessors; preds(v, visit) calls
  // visit(u) for each flow predecessor u of v (others than taking part are
  // ignored). A node without predecessors hangs off the virtual root.
  template <class Preds>
  static DominatorTree Build(int32_t n, const std::vector<int32_t>& order, Preds&& preds);

  int32_t root() const { return static_cast<int32_t>(idom_.size()) - 1; }
  bool contains(int32_t v) const { return idom_[v] >= 0; }
  int32_t idom(int32_t v) const { return idom_[v]; }  // -1 when not taking part; root's is itself
  int32_t depth(int32_t v) const { return depth_[v]; }
  // a dominates b (every node dominates itself). Both must take part.
  bool Dominates(int32_t a, int32_t b) const { return tin_[a] <= tin_[b] && tout_[b] <= tout_[a]; }
  // The nearest common dominator of a and b.
  int32_t Intersect(int32_t a, int32_t b) const;

 private:
  void Attach(int32_t v, int32_t parent);
  void NumberTree();

  std::vector<int32_t> idom_, depth_, jump_, tin_, tout_;
};

template <class Preds>
DominatorTree DominatorTree::Build(int32_t n, const std::vector<int32_t>& order, Preds&& preds) {
  DominatorTree t;
  t.idom_.assign(n + 1, -1);
  t.depth_.assign(n + 1, 0);
  t.jump_.assign(n + 1, n);
  t.idom_[n] = n;
  for (int32_t v : order) {
    int32_t d = -1;
    preds(v, [&](int32_t u) {
      if (t.idom_[u] < 0 || u == v) return;
      d = d < 0 ? u : t.Intersect(d, u);
    });
    t.Attach(v, d < 0 ? n : d);
  }
  t.NumberTree();
  return t;
}

}  // namespace magneton::analysis
