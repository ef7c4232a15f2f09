#include "analysis/fingerprint/candidate_index.h"

#include <algorithm>
#include <cmath>

#include "analysis/fingerprint/fingerprint_compare.h"
#include "analysis/fingerprint/mix_hash.h"

namespace magneton::analysis {

uint64_t CandidateIndex::Key(uint64_t base, int64_t bucket) {
  return MixHash(base ^ MixHash(static_cast<uint64_t>(bucket)));
}

CandidateIndex::Description CandidateIndex::Describe(const Tensor& t) const {
  Description d;
  if (!Informative(t)) return d;
  const Fingerprint& fp = *t.fingerprint;
  const double rms = RootMeanSquare(fp);
  if (!(rms > 0) || !std::isfinite(rms) || !(fp.l1 > 0)) return d;
  const size_t nq = fp.quantiles.size();
  auto quartile = [&](int k) { return nq ? std::asinh(fp.quantiles[(k * (nq - 1) + 2) / 4] / rms) : 0.0; };
  d.ok = true;
  d.key_base =
      MixHash((static_cast<uint64_t>(fp.numel) * 4 + static_cast<uint64_t>(ClassifyDtype(t.dtype))) * 1024 + nq);
  d.f = {static_cast<float>(std::log(rms)), static_cast<float>(fp.mean / rms),
         static_cast<float>(quartile(1)),   static_cast<float>(quartile(2)),
         static_cast<float>(quartile(3)),   static_cast<float>(std::log(fp.l1 / fp.numel / rms))};
  d.bucket = static_cast<int64_t>(std::floor(d.f[0] / radius_[0]));
  return d;
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
  const double gaps[kFeatures] = {log_gap, 2 * t, q_gap, q_gap, q_gap, 2 * log_gap};
  for (int k = 0; k < kFeatures; ++k) radius_[k] = static_cast<float>(gaps[k] * 1.01 + 1e-6);
  entries_.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i]) continue;
    Description d = Describe(*tensors[i]);
    if (d.ok) entries_.push_back({Key(d.key_base, d.bucket), d.f, static_cast<int32_t>(i)});
  }
  std::sort(entries_.begin(), entries_.end(),
            [](const Entry& x, const Entry& y) { return x.key != y.key ? x.key < y.key : x.f[1] < y.f[1]; });
  ranges_.reserve(entries_.size() / 2 + 1);
  for (size_t i = 0; i < entries_.size();) {
    size_t j = i;
    while (j < entries_.size() && entries_[j].key == entries_[i].key) ++j;
    ranges_[entries_[i].key] = {static_cast<int32_t>(i), static_cast<int32_t>(j)};
    i = j;
  }
}

}  // namespace magneton::analysis
