#include "analysis/match/dominators.h"

#include <utility>

namespace magneton::analysis {

void DominatorTree::Attach(int32_t v, int32_t parent) {
  idom_[v] = parent;
  depth_[v] = depth_[parent] + 1;
  // Skew-binary jump pointers (Myers 1983): jump to the parent's jump's jump
  // when the two jumps span equal depths, else to the parent.
  const int32_t j = jump_[parent];
  jump_[v] = (depth_[parent] - depth_[j] == depth_[j] - depth_[jump_[j]]) ? jump_[j] : parent;
}

int32_t DominatorTree::Intersect(int32_t a, int32_t b) const {
  if (depth_[a] < depth_[b]) std::swap(a, b);
  while (depth_[a] > depth_[b]) a = depth_[jump_[a]] >= depth_[b] ? jump_[a] : idom_[a];
  // Same depth: jumps at equal depths land at equal depths.
  while (a != b) {
    if (jump_[a] != jump_[b]) {
      a = jump_[a];
      b = jump_[b];
    } else {
      a = idom_[a];
      b = idom_[b];
    }
  }
  return a;
}

void DominatorTree::NumberTree() {
  const int32_t n = static_cast<int32_t>(idom_.size());
  // Children lists, then an iterative depth-first walk for entry/exit times.
  std::vector<int32_t> begin(n + 1, 0), child;
  for (int32_t v = 0; v < n - 1; ++v)
    if (idom_[v] >= 0) ++begin[idom_[v] + 1];
  for (int32_t v = 0; v < n; ++v) begin[v + 1] += begin[v];
  child.resize(begin[n]);
  std::vector<int32_t> fill(begin.begin(), begin.end() - 1);
  for (int32_t v = 0; v < n - 1; ++v)
    if (idom_[v] >= 0) child[fill[idom_[v]]++] = v;
  tin_.assign(n, -1);
  tout_.assign(n, -1);
  std::vector<std::pair<int32_t, int32_t>> stack{{n - 1, begin[n - 1]}};
  int32_t clock = 0;
  tin_[n - 1] = clock++;
  while (!stack.empty()) {
    auto& [v, next] = stack.back();
    if (next < begin[v + 1]) {
      const int32_t c = child[next++];
      tin_[c] = clock++;
      stack.emplace_back(c, begin[c]);
    } else {
      tout_[v] = clock++;
      stack.pop_back();
    }
  }
}

}  // namespace magneton::analysis
