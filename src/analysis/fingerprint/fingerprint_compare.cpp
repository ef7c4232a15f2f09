#include "analysis/fingerprint/fingerprint_compare.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <numeric>
#include <vector>

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

double RootMeanSquare(const Fingerprint& fp) {
  return fp.numel > 0 ? fp.l2 / std::sqrt(static_cast<double>(fp.numel)) : 0.0;
}

bool Informative(const Tensor& t) {
  return t.fingerprint && t.fingerprint->numel >= 2 && t.fingerprint->max > t.fingerprint->min &&
         std::isfinite(t.fingerprint->l2);
}

namespace {

double RelDiff(double a, double b, double scale) {
  if (a == b) return 0;  // also covers equal infinities
  if (!(scale > 0) || !std::isfinite(scale)) return std::isfinite(a - b) ? 0 : kNotComparable;
  return std::fabs(a - b) / scale;
}

std::vector<int64_t> SignificantDims(const std::vector<int64_t>& shape) {
  std::vector<int64_t> dims;
  for (auto d : shape)
    if (d != 1) dims.push_back(d);
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
// equal dim sizes take the best assignment (brute force for small groups,
// which is every real tensor; sorted by leading value beyond that).
double SpectraDiff(const std::vector<int64_t>& dims_a, const Fingerprint& fa, const std::vector<int64_t>& dims_b,
                   const Fingerprint& fb) {
  if (fa.spectra.size() != dims_a.size() || fb.spectra.size() != dims_b.size()) return 0;
  std::vector<int64_t> sa = dims_a, sb = dims_b;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  if (sa != sb) return 0;  // a reshape regroups the elements: unfoldings are not comparable
  double worst = 0;
  for (size_t i = 0; i < sa.size();) {
    const int64_t size = sa[i];
    size_t j = i;
    while (j < sa.size() && sa[j] == size) ++j;
    std::vector<const std::vector<float>*> ga, gb;
    for (size_t k = 0; k < dims_a.size(); ++k)
      if (dims_a[k] == size) ga.push_back(&fa.spectra[k]);
    for (size_t k = 0; k < dims_b.size(); ++k)
      if (dims_b[k] == size) gb.push_back(&fb.spectra[k]);
    const size_t g = ga.size();
    double best = kNotComparable;
    if (g <= 5) {
      std::vector<size_t> perm(g);
      std::iota(perm.begin(), perm.end(), 0);
      do {
        double w = 0;
        for (size_t k = 0; k < g && w < best; ++k) w = std::max(w, SpectrumDiff(*ga[k], *gb[perm[k]]));
        best = std::min(best, w);
      } while (best > 0 && std::next_permutation(perm.begin(), perm.end()));
    } else {
      auto lead = [](const std::vector<float>* s) { return s->empty() ? 0.0f : (*s)[0]; };
      auto by_lead = [&](auto* x, auto* y) { return lead(x) < lead(y); };
      std::sort(ga.begin(), ga.end(), by_lead);
      std::sort(gb.begin(), gb.end(), by_lead);
      best = 0;
      for (size_t k = 0; k < g; ++k) best = std::max(best, SpectrumDiff(*ga[k], *gb[k]));
    }
    worst = std::max(worst, best);
    i = j;
  }
  return worst;
}

}  // namespace

double FingerprintDifference(const Tensor& a, const Tensor& b) {
  if (!a.fingerprint || !b.fingerprint) return kNotComparable;
  const Fingerprint& fa = *a.fingerprint;
  const Fingerprint& fb = *b.fingerprint;
  if (fa.numel != fb.numel || ClassifyDtype(a.dtype) != ClassifyDtype(b.dtype)) return kNotComparable;
  if (fa.numel == 0) return 0;
  const double rms_a = RootMeanSquare(fa), rms_b = RootMeanSquare(fb);
  const double s = std::max(rms_a, rms_b);
  double d = RelDiff(rms_a, rms_b, s);
  d = std::max(d, RelDiff(fa.mean, fb.mean, s));
  d = std::max(d, RelDiff(fa.stddev, fb.stddev, s));
  d = std::max(d, RelDiff(fa.l1, fb.l1, std::max(fa.l1, fb.l1)));
  auto point = [&](double x, double y) { return RelDiff(x, y, std::max({s, std::fabs(x), std::fabs(y)})); };
  d = std::max(d, point(fa.min, fb.min));
  d = std::max(d, point(fa.max, fb.max));
  if (fa.quantiles.size() == fb.quantiles.size())
    for (size_t i = 0; i < fa.quantiles.size(); ++i) d = std::max(d, point(fa.quantiles[i], fb.quantiles[i]));
  if (!fa.spectra.empty() && !fb.spectra.empty())
    d = std::max(d, SpectraDiff(SignificantDims(a.shape), fa, SignificantDims(b.shape), fb));
  return std::isnan(d) ? kNotComparable : d;
}

}  // namespace magneton::analysis
