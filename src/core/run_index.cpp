#include "core/run_index.h"

#include <algorithm>

namespace magneton {
namespace {

// Groups ids 0..n-1 by key (kNone or out of range: left out), in id order
// within each group: a compressed row per key.
void Group(const std::vector<int64_t>& key_of, size_t keys, std::vector<int64_t>& begin, std::vector<int64_t>& flat) {
  begin.assign(keys + 1, 0);
  for (int64_t k : key_of)
    if (k >= 0) ++begin[k + 1];
  for (size_t i = 0; i < keys; ++i) begin[i + 1] += begin[i];
  flat.resize(static_cast<size_t>(begin[keys]));
  std::vector<int64_t> next(begin.begin(), begin.end() - 1);
  for (size_t id = 0; id < key_of.size(); ++id)
    if (key_of[id] >= 0) flat[next[key_of[id]]++] = static_cast<int64_t>(id);
}

}  // namespace

RunIndex::RunIndex(const Run& run) {
  const int64_t n = static_cast<int64_t>(run.ops.size());
  auto valid = [&](int64_t op) { return op >= 0 && op < n; };
  // Depth = number of ancestors, memoized; a corrupt cycle is cut where it closes.
  std::vector<int> depth(static_cast<size_t>(n), -1);
  std::vector<int64_t> chain;
  int deepest = -1;
  for (int64_t i = 0; i < n; ++i) {
    chain.clear();
    int64_t j = i;
    while (valid(j) && depth[j] == -1) {
      depth[j] = -2;  // on the current chain
      chain.push_back(j);
      j = run.ops[j].parent;
    }
    int base = valid(j) && depth[j] >= 0 ? depth[j] : -1;
    for (size_t k = chain.size(); k-- > 0;) depth[chain[k]] = ++base;
    deepest = std::max(deepest, base);
  }
  parent_.assign(static_cast<size_t>(n), kNone);
  for (int64_t i = 0; i < n; ++i)
    if (int64_t p = run.ops[i].parent; valid(p) && depth[p] < depth[i]) parent_[i] = p;
  Group(parent_, static_cast<size_t>(n), child_begin_, children_);

  std::vector<int64_t> by_depth_begin, by_depth;
  std::vector<int64_t> depth64(depth.begin(), depth.end());
  Group(depth64, static_cast<size_t>(deepest + 1), by_depth_begin, by_depth);
  deepest_first_.reserve(static_cast<size_t>(n));
  for (int d = deepest; d >= 0; --d)
    deepest_first_.insert(deepest_first_.end(), by_depth.begin() + by_depth_begin[d],
                          by_depth.begin() + by_depth_begin[d + 1]);

  kernel_op_.resize(run.kernels.size());
  for (size_t k = 0; k < run.kernels.size(); ++k) kernel_op_[k] = valid(run.kernels[k].op) ? run.kernels[k].op : kNone;
  Group(kernel_op_, static_cast<size_t>(n), kernel_begin_, kernels_);
  std::vector<int64_t> transfer_op(run.transfers.size());
  for (size_t t = 0; t < run.transfers.size(); ++t)
    transfer_op[t] = valid(run.transfers[t].op) ? run.transfers[t].op : kNone;
  Group(transfer_op, static_cast<size_t>(n), transfer_begin_, transfers_);

  producer_.assign(run.tensors.size(), kNone);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t t : run.ops[i].outputs)
      if (t >= 0 && t < static_cast<int64_t>(producer_.size()) && producer_[t] == kNone) producer_[t] = i;
}

std::vector<int64_t> RunIndex::Subtree(int64_t op) const {
  std::vector<int64_t> out{op};
  for (size_t i = 0; i < out.size(); ++i)
    for (auto c : children(out[i])) out.push_back(c);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> RunIndex::Subtrees(const std::vector<int64_t>& tops) const {
  std::vector<int64_t> out;
  for (auto top : tops)
    if (top >= 0 && top < static_cast<int64_t>(ops())) out.push_back(top);
  for (size_t i = 0; i < out.size(); ++i)
    for (auto c : children(out[i])) out.push_back(c);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace magneton
