// Candidate equivalent tensors by hashing coarse features, so finding the
// equivalents of N tensors among M costs about N + M, never N x M.
//
// Key: (numel, dtype class, quantile count, bucket of log(rms)); buckets are
// as wide as the largest log(rms) gap the tolerance allows, so two tensors
// within tolerance land in the same or a neighboring bucket and a query
// probes three. Inside a bucket entries are sorted by mean/rms; a query scans
// the window the tolerance allows and drops entries whose other scale-free
// features (quartiles, mean |x|) are out of reach before any full comparison.
// Every bound is derived from FingerprintDifference's definition, so the
// index never hides a tensor that the comparison would accept.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/run.h"

namespace magneton::analysis {

class CandidateIndex {
 public:
  // `tensors[i]` must outlive the index; entries without an informative
  // fingerprint are skipped. Ids are the positions in `tensors`.
  CandidateIndex(const std::vector<const Tensor*>& tensors, double tolerance);

  // Calls visit(id) for every indexed tensor whose coarse features are within
  // tolerance of `t`'s; the caller confirms with FingerprintDifference.
  template <class Visit>
  void ForEachCandidate(const Tensor& t, Visit&& visit) const;

  size_t size() const { return entries_.size(); }

 private:
  // log rms, mean/rms, asinh(q25/rms), asinh(q50/rms), asinh(q75/rms), log(mean|x| / rms)
  static constexpr int kFeatures = 6;
  using Features = std::array<float, kFeatures>;
  struct Entry {
    uint64_t key;
    Features f;
    int32_t id;
  };
  struct Description {
    bool ok = false;
    uint64_t key_base = 0;
    int64_t bucket = 0;
    Features f{};
  };
  Description Describe(const Tensor& t) const;
  static uint64_t Key(uint64_t base, int64_t bucket);

  Features radius_{};           // the largest gap per feature two equivalent tensors can have
  std::vector<Entry> entries_;  // sorted by (key, mean/rms)
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> ranges_;  // key -> [begin, end)
};

template <class Visit>
void CandidateIndex::ForEachCandidate(const Tensor& t, Visit&& visit) const {
  const Description d = Describe(t);
  if (!d.ok) return;
  for (int64_t b = d.bucket - 1; b <= d.bucket + 1; ++b) {
    auto it = ranges_.find(Key(d.key_base, b));
    if (it == ranges_.end()) continue;
    const Entry* first = entries_.data() + it->second.first;
    const Entry* last = entries_.data() + it->second.second;
    const float low = d.f[1] - radius_[1], high = d.f[1] + radius_[1];
    const Entry* e = first;
    for (auto count = last - first; count > 0;) {  // first entry with mean/rms >= low
      auto step = count / 2;
      if (e[step].f[1] < low) {
        e += step + 1;
        count -= step + 1;
      } else {
        count = step;
      }
    }
    for (; e != last && e->f[1] <= high; ++e) {
      bool near = true;
      for (int k = 0; k < kFeatures && near; ++k)
        if (k != 1) near = std::abs(e->f[k] - d.f[k]) <= radius_[k];
      if (near) visit(e->id);
    }
  }
}

}  // namespace magneton::analysis
