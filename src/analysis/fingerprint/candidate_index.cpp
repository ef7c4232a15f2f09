#include "analysis/fingerprint/candidate_index.h"

#include <algorithm>
#include <cmath>

#include "analysis/fingerprint/fingerprint_compare.h"

namespace magneton::analysis {

namespace {
uint64_t Mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

uint64_t CandidateIndex::Key(uint64_t base, int64_t bucket) { return Mix(base ^ Mix(static_cast<uint64_t>(bucket))); }

CandidateIndex::Features CandidateIndex::Describe(const Tensor& t) const {
  Features f;
  if (!Informative(t)) return f;
  const Fingerprint& fp = *t.fingerprint;
  const double rms = RootMeanSquare(fp);
  if (!(rms > 0) || !std::isfinite(rms)) return f;
  f.ok = true;
  f.key_base = Mix(static_cast<uint64_t>(fp.numel) * 4 + static_cast<uint64_t>(ClassifyDtype(t.dtype)));
  f.bucket = static_cast<int64_t>(std::floor(std::log(rms) / bucket_width_));
  f.skew = fp.mean / rms;
  return f;
}

CandidateIndex::CandidateIndex(const std::vector<const Tensor*>& tensors, double tolerance)
    // Within tolerance rms_min >= (1 - tol) rms_max, so the log(rms) gap is at
    // most -log(1 - tol): never more than one bucket apart.
    : bucket_width_(std::max(-std::log1p(-std::min(tolerance, 0.999)) * 1.01, 1e-9)),
      skew_window_(2 * tolerance / (1 - std::min(tolerance, 0.999)) * 1.01 + 1e-12) {
  entries_.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i]) continue;
    Features f = Describe(*tensors[i]);
    if (f.ok) entries_.push_back({Key(f.key_base, f.bucket), f.skew, static_cast<int32_t>(i)});
  }
  std::sort(entries_.begin(), entries_.end(), [](const Entry& x, const Entry& y) {
    return x.key != y.key ? x.key < y.key : x.skew < y.skew;
  });
  ranges_.reserve(entries_.size() / 2 + 1);
  for (size_t i = 0; i < entries_.size();) {
    size_t j = i;
    while (j < entries_.size() && entries_[j].key == entries_[i].key) ++j;
    ranges_[entries_[i].key] = {static_cast<int32_t>(i), static_cast<int32_t>(j)};
    i = j;
  }
}

}  // namespace magneton::analysis
