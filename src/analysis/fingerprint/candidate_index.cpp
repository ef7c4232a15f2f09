#include "analysis/fingerprint/candidate_index.h"

#include <algorithm>

#include "analysis/fingerprint/fingerprint_compare.h"
#include "analysis/fingerprint/mix_hash.h"

namespace magneton::analysis {

CandidateIndex::Query CandidateIndex::Describe(const Tensor& t) {
  Query d;
  if (!Informative(t)) return d;
  const Fingerprint& fp = *t.fingerprint;
  const double rms = RootMeanSquare(fp);
  if (!(rms > 0) || !std::isfinite(rms) || !(fp.l1 > 0)) return d;
  const size_t nq = fp.quantiles.size();
  auto octile = [&](int k) {
    return static_cast<float>(nq ? std::asinh(fp.quantiles[(k * (nq - 1) + 4) / 8] / rms) : 0.0);
  };
  d.ok = true;
  d.group = MixHash((static_cast<uint64_t>(fp.numel) * 4 + static_cast<uint64_t>(ClassifyDtype(t.dtype))) * 1024 + nq);
  d.f = {static_cast<float>(std::log(rms)),
         static_cast<float>(fp.mean / rms),
         static_cast<float>(std::log(fp.l1 / fp.numel / rms)),
         octile(1),
         octile(2),
         octile(3),
         octile(4),
         octile(5),
         octile(6),
         octile(7)};
  return d;
}

void CandidateIndex::Build(int32_t lo, int32_t hi) {
  if (hi - lo <= kLeaf) return;
  // Split on the feature that varies most, in units of its radius.
  Features low, high;
  low.fill(INFINITY);
  high.fill(-INFINITY);
  for (int32_t i = lo; i < hi; ++i)
    for (int k = 0; k < kFeatures; ++k) {
      low[k] = std::min(low[k], entries_[i].f[k]);
      high[k] = std::max(high[k], entries_[i].f[k]);
    }
  int dim = 0;
  for (int k = 1; k < kFeatures; ++k)
    if ((high[k] - low[k]) / radius_[k] > (high[dim] - low[dim]) / radius_[dim]) dim = k;
  const int32_t mid = lo + (hi - lo) / 2;
  std::nth_element(entries_.begin() + lo, entries_.begin() + mid, entries_.begin() + hi,
                   [dim](const Entry& x, const Entry& y) { return x.f[dim] < y.f[dim]; });
  dim_[mid] = static_cast<uint8_t>(dim);
  Build(lo, mid);
  Build(mid + 1, hi);
}

int64_t CandidateIndex::Locality(const Query& d) const {
  if (!d.ok) return -1;
  auto it = groups_.find(d.group);
  if (it == groups_.end()) return -1;
  auto [lo, hi] = it->second;
  while (hi - lo > kLeaf) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (d.f[dim_[mid]] < entries_[mid].f[dim_[mid]])
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

CandidateIndex::CandidateIndex(const std::vector<const Tensor*>& tensors, double tolerance) {
  // Bounds implied by FingerprintDifference <= tol (t' = tol / (1 - tol)):
  //  rms within tol:       |log rms_a - log rms_b| <= -log(1 - tol)
  //  mean within tol rms:  |mean/rms| gap <= 2 t'
  //  quantile q within tol max(rms, |q|): |q/rms| gap <= 2 t' max(1, |q/rms|),
  //                        so the asinh gap <= 2 t' (1 + 2 t') / (1 - 2 t')
  //  l1 within tol:        |log(l1/rms)| gap <= -2 log(1 - tol)
  // with 1% slack for float rounding; float features add 1e-6 absolute.
  const double tol = std::min(tolerance, 0.3);
  const double t = tol / (1 - tol), log_gap = -std::log1p(-tol);
  const double q_gap = tolerance >= 0.3 ? 1e9 : 2 * t * (1 + 2 * t) / (1 - 2 * t);
  const double gaps[kFeatures] = {log_gap, 2 * t, 2 * log_gap, q_gap, q_gap, q_gap, q_gap, q_gap, q_gap, q_gap};
  for (int k = 0; k < kFeatures; ++k) radius_[k] = static_cast<float>(gaps[k] * 1.01 + 1e-6);

  std::vector<std::pair<uint64_t, Entry>> keyed;
  keyed.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i]) continue;
    const Query d = Describe(*tensors[i]);
    if (d.ok) keyed.push_back({d.group, Entry{d.f, static_cast<int32_t>(i)}});
  }
  std::sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  entries_.reserve(keyed.size());
  for (auto& [group, e] : keyed) entries_.push_back(e);
  dim_.assign(entries_.size(), 0);
  groups_.reserve(keyed.size() / 4 + 1);
  for (size_t i = 0; i < keyed.size();) {
    size_t j = i;
    while (j < keyed.size() && keyed[j].first == keyed[i].first) ++j;
    groups_[keyed[i].first] = {static_cast<int32_t>(i), static_cast<int32_t>(j)};
    Build(static_cast<int32_t>(i), static_cast<int32_t>(j));
    i = j;
  }
}

}  // namespace magneton::analysis
