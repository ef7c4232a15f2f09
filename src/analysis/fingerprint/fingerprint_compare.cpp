#include "analysis/fingerprint/fingerprint_compare.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <numeric>

namespace magneton::analysis {

DtypeClass ClassifyDtype(const std::string& dtype) {
  std::string d(dtype);
  for (auto& c : d) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (d.rfind("torch.", 0) == 0) d = d.substr(6);
  if (d.find("complex") != std::string::npos) return DtypeClass::kOther;
  if (d.find("float") != std::string::npos || d == "double" || d == "half") return DtypeClass::kFloat;
  if (d == "bool") return DtypeClass::kBool;
  // int8..int64, uint8.., and c10's names (Byte, Char, Short, Int, Long).
  if (d.find("int") != std::string::npos || d == "byte" || d == "char" || d == "short" || d == "long")
    return DtypeClass::kInt;
  return DtypeClass::kOther;
}

bool Informative(const Tensor& t) {
  return t.fingerprint && t.fingerprint->numel >= 2 && t.fingerprint->max > t.fingerprint->min &&
         std::isfinite(t.fingerprint->l2);
}

bool TwoValued(const Tensor& t) {
  if (!t.fingerprint || t.fingerprint->quantiles.empty()) return false;
  const Fingerprint& f = *t.fingerprint;
  for (float q : f.quantiles)
    if (q != static_cast<float>(f.min) && q != static_cast<float>(f.max)) return false;
  return true;
}

namespace {

// The dims that carry information (size-1 dims add trivial unfoldings), in
// order; tensors of more than kMaxDims significant dims skip spectra.
constexpr size_t kMaxDims = 8;
struct Dims {
  std::array<int64_t, kMaxDims> d{};
  size_t n = 0;
  bool ok = true;
};
Dims SignificantDims(const std::vector<int64_t>& shape) {
  Dims dims;
  for (auto d : shape) {
    if (d == 1) continue;
    if (dims.n == kMaxDims) {
      dims.ok = false;
      break;
    }
    dims.d[dims.n++] = d;
  }
  return dims;
}

// Difference of two normalized spectra (singular values / Frobenius norm),
// relative to the larger leading value. Empty (capped) spectra carry no
// evidence either way.
double SpectrumDiff(const std::vector<float>& a, const std::vector<float>& b) {
  const size_t n = std::min(a.size(), b.size());
  if (n == 0) return 0;
  const double scale = std::max({static_cast<double>(a[0]), static_cast<double>(b[0]), 1e-30});
  double worst = 0;
  for (size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])) / scale);
  return worst;
}

// Spectra are stored per significant dim, in dim order. A permutation of the
// dims permutes the list, so compare them as a multiset: within each group of
// equal dim sizes take the best assignment (brute force for groups of up to
// five, which is every real tensor; sorted by leading value beyond that).
double SpectraDiff(const Dims& da, const Fingerprint& fa, const Dims& db, const Fingerprint& fb) {
  if (!da.ok || !db.ok || da.n != db.n || fa.spectra.size() != da.n || fb.spectra.size() != db.n) return 0;
  std::array<int64_t, kMaxDims> sa = da.d, sb = db.d;
  std::sort(sa.begin(), sa.begin() + da.n);
  std::sort(sb.begin(), sb.begin() + db.n);
  if (!std::equal(sa.begin(), sa.begin() + da.n, sb.begin())) return 0;  // a reshape regroups elements
  double worst = 0;
  for (size_t i = 0; i < da.n;) {
    const int64_t size = sa[i];
    size_t j = i;
    while (j < da.n && sa[j] == size) ++j;
    std::array<const std::vector<float>*, kMaxDims> ga{}, gb{};
    size_t g = 0, h = 0;
    for (size_t k = 0; k < da.n; ++k)
      if (da.d[k] == size) ga[g++] = &fa.spectra[k];
    for (size_t k = 0; k < db.n; ++k)
      if (db.d[k] == size) gb[h++] = &fb.spectra[k];
    double best = kNotComparable;
    if (g <= 5) {
      std::array<size_t, kMaxDims> perm{};
      std::iota(perm.begin(), perm.begin() + g, 0);
      do {
        double w = 0;
        for (size_t k = 0; k < g && w < best; ++k) w = std::max(w, SpectrumDiff(*ga[k], *gb[perm[k]]));
        best = std::min(best, w);
      } while (best > 0 && std::next_permutation(perm.begin(), perm.begin() + g));
    } else {
      // Vectors, not the arrays: GCC cannot see g <= kMaxDims through std::sort
      // and warns of an out-of-bounds access (-Warray-bounds).
      std::vector<const std::vector<float>*> xa(ga.begin(), ga.begin() + g), xb(gb.begin(), gb.begin() + g);
      auto lead = [](const std::vector<float>* s) { return s->empty() ? 0.0f : (*s)[0]; };
      auto by_lead = [&](auto* x, auto* y) { return lead(x) < lead(y); };
      std::sort(xa.begin(), xa.end(), by_lead);
      std::sort(xb.begin(), xb.end(), by_lead);
      best = 0;
      for (size_t k = 0; k < g; ++k) best = std::max(best, SpectrumDiff(*xa[k], *xb[k]));
    }
    worst = std::max(worst, best);
    i = j;
  }
  return worst;
}

}  // namespace

namespace {

// The largest relative difference when it is at most `limit`; otherwise some
// value above `limit` (it stops at the first feature out of reach and skips
// the divisions when only the verdict matters).
double Difference(const Tensor& a, const Tensor& b, double limit) {
  if (!a.fingerprint || !b.fingerprint) return kNotComparable;
  const Fingerprint& fa = *a.fingerprint;
  const Fingerprint& fb = *b.fingerprint;
  if (fa.numel != fb.numel || (a.dtype != b.dtype && ClassifyDtype(a.dtype) != ClassifyDtype(b.dtype)))
    return kNotComparable;
  if (fa.numel == 0) return 0;
  const bool exact = std::isinf(limit);
  double d = 0;
  // Adds |x - y| / scale; false once it is beyond the limit (or not a number).
  auto within = [&](double x, double y, double scale) {
    if (x == y) return true;
    const double diff = std::fabs(x - y);
    if (!(diff <= limit * scale) || !(scale > 0)) {
      d = scale > 0 && std::isfinite(diff / scale) ? std::max(d, diff / scale) : kNotComparable;
      return false;
    }
    if (exact) d = std::max(d, diff / scale);
    return true;
  };
  if (!ForEachStatistic(fa, fb, [&](const ComparedStatistic& st) { return within(st.a, st.b, st.scale); })) return d;
  if (!fa.spectra.empty() && !fb.spectra.empty() && fa.spectra_kind == fb.spectra_kind)
    d = std::max(d, SpectraDiff(SignificantDims(a.shape), fa, SignificantDims(b.shape), fb));
  return std::isnan(d) ? kNotComparable : d;
}

}  // namespace

double FingerprintDifference(const Tensor& a, const Tensor& b) { return Difference(a, b, kNotComparable); }

bool FingerprintsWithin(const Tensor& a, const Tensor& b, double tolerance) {
  return Difference(a, b, tolerance) <= tolerance;
}

}  // namespace magneton::analysis
