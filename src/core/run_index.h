// A run's foreign keys inverted once: the children, subtree, kernels and
// copies of an op, the op of a kernel, and the op that made a tensor. Region costing, root cause and
// attribution all ask these of 100k-op runs, so the lists are flat arrays
// built in one pass over the rows. The run must outlive the index unchanged.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/run.h"

namespace magneton {

class RunIndex {
 public:
  explicit RunIndex(const Run& run);

  size_t ops() const { return parent_.size(); }
  // The op's enclosing op, kNone at top level. A parent out of range, or one
  // that closes a cycle of a corrupt file, is cut: the ops form a forest.
  int64_t parent(int64_t op) const { return parent_[op]; }
  // The ops directly nested in `op`, in id order.
  std::span<const int64_t> children(int64_t op) const { return Slice(children_, child_begin_, op); }
  // The op and every op nested in it, in id order.
  std::vector<int64_t> Subtree(int64_t op) const;
  // The union of the subtrees of `tops` (ids out of range skipped), in id
  // order: the cost is the subtrees', not the run's (it is asked per region).
  std::vector<int64_t> Subtrees(const std::vector<int64_t>& tops) const;
  // Ops deepest first, ties in id order: each op comes before its parent.
  const std::vector<int64_t>& deepest_first() const { return deepest_first_; }

  // Indices into run.kernels / run.transfers of the op's own rows (not its
  // nested ops'), in row order.
  std::span<const int64_t> kernels(int64_t op) const { return Slice(kernels_, kernel_begin_, op); }
  std::span<const int64_t> transfers(int64_t op) const { return Slice(transfers_, transfer_begin_, op); }
  // The op that launched kernel `k`; kNone where it names none of the run's ops.
  int64_t op_of_kernel(size_t k) const { return kernel_op_[k]; }
  // The first op (in id order) to give out tensor `t`: the one that made it
  // (an in-place op gives out what it took in); kNone where no op did.
  int64_t producer(int64_t t) const {
    return t >= 0 && t < static_cast<int64_t>(producer_.size()) ? producer_[t] : kNone;
  }

 private:
  static std::span<const int64_t> Slice(const std::vector<int64_t>& flat, const std::vector<int64_t>& begin,
                                        int64_t op) {
    return {flat.data() + begin[op], static_cast<size_t>(begin[op + 1] - begin[op])};
  }

  std::vector<int64_t> parent_;
  std::vector<int64_t> child_begin_, children_;  // children of op i: children_[child_begin_[i], child_begin_[i+1])
  std::vector<int64_t> kernel_begin_, kernels_;
  std::vector<int64_t> transfer_begin_, transfers_;
  std::vector<int64_t> kernel_op_;
  std::vector<int64_t> producer_;  // by tensor id
  std::vector<int64_t> deepest_first_;
};

}  // namespace magneton
