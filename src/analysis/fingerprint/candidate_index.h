// Candidate equivalent tensors by their coarse features, so finding the
// equivalents of N tensors among M costs about (N + M) log M, never N x M.
//
// Tensors are grouped by (numel, dtype class, quantile count); within a
// group a k-d tree over ten scale-free features (log rms, mean/rms,
// log(mean|x|/rms), the octiles as asinh(q/rms)) answers box queries: all
// entries within the largest gap per feature that two tensors within
// tolerance can have. Every bound is derived from FingerprintDifference's
// definition, so the index never hides a tensor the comparison would accept;
// it only spares comparing the others.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/run.h"

namespace magneton::analysis {

class CandidateIndex {
 public:
  // `tensors[i]` must outlive the index; entries without an informative
  // fingerprint (or nullptr) are skipped. Ids are the positions in `tensors`.
  CandidateIndex(const std::vector<const Tensor*>& tensors, double tolerance);

  static constexpr int kFeatures = 10;
  using Features = std::array<float, kFeatures>;
  // A tensor's coarse features, computed once per query.
  struct Query {
    bool ok = false;  // an informative fingerprint
    uint64_t group = 0;
    Features f{};
  };
  static Query Describe(const Tensor& t);

  // Calls visit(id) for every indexed tensor whose coarse features are within
  // tolerance of the query's; the caller confirms with FingerprintDifference.
  template <class Visit>
  void ForEachCandidate(const Query& q, Visit&& visit) const;
  template <class Visit>
  void ForEachCandidate(const Tensor& t, Visit&& visit) const {
    ForEachCandidate(Describe(t), visit);
  }

  // Where a query falls in the index (-1 when nowhere): queries taken in
  // this order walk the same parts of the index one after another, which
  // keeps them in cache on large runs.
  int64_t Locality(const Query& q) const;

  size_t size() const { return entries_.size(); }

 private:
  static constexpr int32_t kLeaf = 64;  // ranges this small are scanned
  struct Entry {
    Features f;
    int32_t id;
  };
  // Arranges entries_[lo, hi) as an implicit k-d tree: the middle entry
  // splits on dim_[mid], the halves recursively.
  void Build(int32_t lo, int32_t hi);

  Features radius_{};           // the largest gap per feature two equivalent tensors can have
  std::vector<Entry> entries_;  // grouped, each group an implicit k-d tree
  std::vector<uint8_t> dim_;    // split dimension per entry (meaningful at tree nodes)
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> groups_;  // group -> [begin, end)
};

template <class Visit>
void CandidateIndex::ForEachCandidate(const Query& d, Visit&& visit) const {
  if (!d.ok) return;
  auto it = groups_.find(d.group);
  if (it == groups_.end()) return;
  auto near = [&](const Entry& e) {
    for (int k = 0; k < kFeatures; ++k)
      if (!(std::fabs(e.f[k] - d.f[k]) <= radius_[k])) return false;
    return true;
  };
  // Explicit stack of [lo, hi) ranges; depth is at most log2 of the group size.
  std::pair<int32_t, int32_t> stack[64];
  int top = 0;
  stack[top++] = it->second;
  while (top > 0) {
    const auto [lo, hi] = stack[--top];
    if (hi - lo <= kLeaf) {
      for (int32_t i = lo; i < hi; ++i)
        if (near(entries_[i])) visit(entries_[i].id);
      continue;
    }
    const int32_t mid = lo + (hi - lo) / 2;
    const int k = dim_[mid];
    const float split = entries_[mid].f[k];
    if (near(entries_[mid])) visit(entries_[mid].id);
    if (d.f[k] - radius_[k] <= split) stack[top++] = {lo, mid};
    if (d.f[k] + radius_[k] >= split) stack[top++] = {mid + 1, hi};
  }
}

}  // namespace magneton::analysis
