#include "analysis/fingerprint/host_fingerprint.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

namespace magneton::analysis {

namespace {

// Schatten norms (tr(G^k))^(1/2k), k = 2 .. 1 + spectrum_values, of the
// mode-k unfolding (rows: index k; columns: the other indices in row-major
// order) of `y`, G the Gram matrix of its smaller side, like the recorder.
std::vector<float> ModeSpectrum(const std::vector<double>& y, const std::vector<int64_t>& dims, size_t mode,
                                const HostFingerprintOptions& o) {
  const int64_t n = static_cast<int64_t>(y.size());
  const int64_t rows = dims[mode], cols = n / rows;
  if (std::min(rows, cols) > o.spectra_max_side) return {};
  Eigen::MatrixXd m(rows, cols);
  // stride of `mode` in row-major order, and of the block of dims after it
  int64_t inner = 1;
  for (size_t k = mode + 1; k < dims.size(); ++k) inner *= dims[k];
  for (int64_t i = 0; i < n; ++i) {
    const int64_t outer = i / (inner * rows), row = (i / inner) % rows, in = i % inner;
    m(row, outer * inner + in) = y[i];
  }
  const Eigen::MatrixXd gram = rows <= cols ? Eigen::MatrixXd(m * m.transpose()) : Eigen::MatrixXd(m.transpose() * m);
  Eigen::MatrixXd power = gram;  // G^(k-1)
  std::vector<float> norms;
  for (int k = 2; k <= o.spectrum_values + 1; ++k) {
    power = power * gram;
    norms.push_back(static_cast<float>(std::pow(std::max(0.0, power.trace()), 1.0 / (2 * k))));
  }
  return norms;
}

}  // namespace

Fingerprint HostFingerprint(const std::vector<float>& values, const std::vector<int64_t>& shape,
                            const HostFingerprintOptions& o) {
  Fingerprint fp;
  const int64_t n = static_cast<int64_t>(values.size());
  fp.numel = n;
  if (n == 0) return fp;
  std::vector<double> x(values.begin(), values.end());
  double sum = 0, l1 = 0, sq = 0;
  for (double v : x) {
    sum += v;
    l1 += std::fabs(v);
    sq += v * v;
  }
  fp.mean = sum / n;
  double var = 0;
  for (double v : x) var += (v - fp.mean) * (v - fp.mean);
  fp.stddev = std::sqrt(var / n);
  fp.l1 = l1;
  fp.l2 = std::sqrt(sq);
  std::vector<double> sorted = x;
  std::sort(sorted.begin(), sorted.end());
  fp.min = sorted.front();
  fp.max = sorted.back();
  for (int k = 0; k < o.quantiles; ++k) {
    const int64_t rank = o.quantiles == 1 ? 0 : (k * (n - 1) + (o.quantiles - 1) / 2) / (o.quantiles - 1);
    fp.quantiles.push_back(static_cast<float>(sorted[rank]));
  }
  std::vector<int64_t> dims;
  for (auto d : shape)
    if (d != 1) dims.push_back(d);
  if (dims.size() >= 2 && n <= o.spectra_max_numel) {
    std::vector<double> y(x);
    for (auto& v : y) v /= std::max(fp.l2, 1e-300);
    for (size_t k = 0; k < dims.size(); ++k)
      fp.spectra.push_back(dims.size() == 2 && k == 1 ? fp.spectra[0] : ModeSpectrum(y, dims, k, o));
  }
  return fp;
}

}  // namespace magneton::analysis
