// Candidate equivalent tensors by hashing coarse features, so finding the
// equivalents of N tensors among M costs about N + M, never N x M.
//
// Key: (numel, dtype class, bucket of log(rms)); buckets are as wide as the
// largest log(rms) gap the tolerance allows, so two tensors within tolerance
// land in the same or a neighboring bucket and a query probes three. Inside a bucket the entries are sorted by
// mean/rms and a query scans only the window that the tolerance allows.
#pragma once

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
  struct Entry {
    uint64_t key;
    double skew;  // mean / rms, in [-1, 1]
    int32_t id;
  };
  struct Features {
    bool ok = false;
    uint64_t key_base = 0;
    int64_t bucket = 0;
    double skew = 0;
  };
  Features Describe(const Tensor& t) const;
  static uint64_t Key(uint64_t base, int64_t bucket);

  double bucket_width_;
  double skew_window_;
  std::vector<Entry> entries_;                          // sorted by (key, skew)
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> ranges_;  // key -> [begin, end)
};

template <class Visit>
void CandidateIndex::ForEachCandidate(const Tensor& t, Visit&& visit) const {
  const Features f = Describe(t);
  if (!f.ok) return;
  // With |mean_a - mean_b| <= tol * rms_max and rms_min >= (1 - tol) rms_max,
  // |mean_a/rms_a - mean_b/rms_b| <= 2 tol / (1 - tol).
  const double window = skew_window_;
  for (int64_t b = f.bucket - 1; b <= f.bucket + 1; ++b) {
    auto it = ranges_.find(Key(f.key_base, b));
    if (it == ranges_.end()) continue;
    const Entry* first = entries_.data() + it->second.first;
    const Entry* last = entries_.data() + it->second.second;
    const Entry* lo = first;
    // Binary search the window start inside the bucket.
    for (auto count = last - first; count > 0;) {
      auto step = count / 2;
      if (lo[step].skew < f.skew - window) {
        lo += step + 1;
        count -= step + 1;
      } else {
        count = step;
      }
    }
    for (const Entry* e = lo; e != last && e->skew <= f.skew + window; ++e) visit(e->id);
  }
}

}  // namespace magneton::analysis
