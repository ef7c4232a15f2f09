#include "capture/torch/fingerprint.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>

namespace magneton::capture {

namespace {

Status Supported(const at::Tensor& t) {
  if (!t.defined()) return MakeError(ErrorCode::kUnsupported, "fingerprint: undefined tensor");
  if (t.is_sparse() || t.is_quantized() || t.is_complex() || t.is_meta() || !t.has_storage())
    return MakeError(ErrorCode::kUnsupported,
                     "fingerprint: unsupported tensor kind (sparse, quantized, complex or storage-less)");
  return Status::Ok();
}

// The sizes that carry information: size-1 dims only add trivial unfoldings.
std::vector<int64_t> SignificantDims(const at::Tensor& t) {
  std::vector<int64_t> dims;
  for (auto d : t.sizes())
    if (d != 1) dims.push_back(d);
  return dims;
}

// Below this many multiply-adds a CPU product is computed single-threaded with
// Eigen: ATen's BLAS would wake its thread pool, which on a busy machine costs
// milliseconds for microseconds of arithmetic.
constexpr double kHostProductFlops = 5e7;

// a x b for float64 matrices, on their device.
at::Tensor Product(const at::Tensor& a, const at::Tensor& b) {
  const double flops = static_cast<double>(a.size(0)) * static_cast<double>(a.size(1)) * static_cast<double>(b.size(1));
  if (!a.is_cpu() || flops > kHostProductFlops) return at::mm(a, b);
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const at::Tensor ac = a.contiguous(), bc = b.contiguous();
  Eigen::Map<const RowMajor> ma(ac.data_ptr<double>(), ac.size(0), ac.size(1));
  Eigen::Map<const RowMajor> mb(bc.data_ptr<double>(), bc.size(0), bc.size(1));
  at::Tensor out = at::empty({ac.size(0), bc.size(1)}, ac.options());
  Eigen::Map<RowMajor>(out.data_ptr<double>(), out.size(0), out.size(1)).noalias() = ma * mb;
  return out;
}

// The Gram matrix of the smaller side of the mode-k unfolding of `y`.
at::Tensor ModeGram(const at::Tensor& y, int64_t mode) {
  const int64_t rows = y.size(mode);
  const int64_t cols = y.numel() / rows;
  at::Tensor m = y.movedim(mode, 0).reshape({rows, cols});
  return rows <= cols ? Product(m, m.t()) : Product(m.t(), m);
}

// tr(G^k) for k = 2 .. values + 1, from the powers G .. G^ceil((values + 1) / 2):
// tr(G^(a+b)) = <G^a, G^b> for the symmetric powers. Matrix products only, so
// no eigensolver and no synchronization (an eigensolver on the device cost
// 90-95% of a fingerprint, docs/benchmarks.md).
at::Tensor PowerTraces(const at::Tensor& gram, int values) {
  const int top = values + 1;
  std::vector<at::Tensor> powers = {gram};  // powers[i] = G^(i+1)
  while (static_cast<int>(powers.size()) < (top + 1) / 2) powers.push_back(Product(gram, powers.back()));
  std::vector<at::Tensor> traces;
  for (int k = 2; k <= top; ++k) traces.push_back((powers[k / 2 - 1] * powers[(k + 1) / 2 - 1]).sum());
  return at::stack(traces);
}

// The values of `v` at `ranks[first, last)` (ascending) as if `v[lo, hi)`
// were sorted: the middle rank by nth_element, then each side's ranks within
// its side, about n log(ranks) steps against a full sort's n log n.
void SelectRanks(std::vector<double>& v, const std::vector<int64_t>& ranks, size_t first, size_t last, int64_t lo,
                 int64_t hi, std::vector<double>& out) {
  if (first >= last) return;
  const size_t mid = first + (last - first) / 2;
  const int64_t r = ranks[mid];
  std::nth_element(v.begin() + lo, v.begin() + r, v.begin() + hi);
  out[mid] = v[r];
  SelectRanks(v, ranks, first, mid, lo, r, out);
  SelectRanks(v, ranks, mid + 1, last, r + 1, hi, out);
}

// The order statistics at `ranks` (ascending) of a 1-D double tensor: on the
// host by selection (sorting a large CPU tensor with its indices took most of
// a recording pass's time), on a device by its sort.
at::Tensor OrderStatistics(const at::Tensor& x, const std::vector<int64_t>& ranks) {
  if (!x.is_cpu())
    return std::get<0>(x.sort()).index_select(0, at::tensor(ranks, at::TensorOptions().dtype(at::kLong)).to(x.device()));
  const at::Tensor c = x.contiguous();
  std::vector<double> v(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  // NaN after every number, as a sort orders them; the numbers selected among themselves.
  const auto numbers = std::partition(v.begin(), v.end(), [](double a) { return !std::isnan(a); }) - v.begin();
  std::vector<double> out(ranks.size(), std::nan(""));
  const size_t below = std::lower_bound(ranks.begin(), ranks.end(), numbers) - ranks.begin();
  SelectRanks(v, ranks, 0, below, 0, numbers, out);
  return at::tensor(out, at::TensorOptions().dtype(at::kDouble));
}

}  // namespace

Result<Fingerprint> ComputeFingerprint(const at::Tensor& t, const FingerprintOptions& o) {
  MAGNETON_RETURN_IF_ERROR(Supported(t));
  at::RecordFunctionGuard no_recording(false);
  c10::NoGradGuard no_grad;
  Fingerprint fp;
  fp.numel = t.numel();
  if (fp.numel == 0) return fp;
  try {
    at::Tensor x = t.detach().to(at::kDouble).reshape({-1});
    at::Tensor l2 = x.norm();
    const int64_t n = fp.numel;
    // Ranks 0 and n - 1 (min and max, NaN last as in a sort), then the quantiles'.
    std::vector<int64_t> ranks = {0, n - 1};
    for (int k = 0; k < o.quantiles; ++k)
      ranks.push_back(o.quantiles == 1 ? 0 : (k * (n - 1) + (o.quantiles - 1) / 2) / (o.quantiles - 1));
    std::vector<int64_t> order = ranks;
    std::sort(order.begin(), order.end());
    order.erase(std::unique(order.begin(), order.end()), order.end());
    const at::Tensor at_order = OrderStatistics(x, order);
    std::vector<int64_t> pick;  // each of `ranks` as its place in `order`
    for (int64_t r : ranks) pick.push_back(std::lower_bound(order.begin(), order.end(), r) - order.begin());
    const at::Tensor picked =
        at_order.index_select(0, at::tensor(pick, at::TensorOptions().dtype(at::kLong)).to(at_order.device()));
    std::vector<at::Tensor> parts = {
        at::stack({x.mean(), x.std(/*dim=*/c10::nullopt, /*correction=*/0, /*keepdim=*/false), picked[0], picked[1],
                   x.abs().sum(), l2}),
        picked.slice(0, 2)};

    // Spectra: per mode, the Schatten norms (tr(G^k))^(1/2k) of the unfolding
    // divided by the Frobenius norm (scale-free, descending, in [0, 1]).
    std::vector<int64_t> dims = SignificantDims(t);
    std::vector<bool> computed;  // per mode: false when over the side cap
    if (dims.size() >= 2 && n <= o.spectra_max_numel && o.spectrum_values > 0) {
      at::Tensor y = x.reshape(dims) / l2.clamp_min(1e-300);
      // A matrix's two unfoldings are transposes with the same spectrum: compute one.
      const size_t modes = dims.size() == 2 ? 1 : dims.size();
      for (size_t k = 0; k < modes; ++k) {
        computed.push_back(std::min(dims[k], n / dims[k]) <= o.spectra_max_side);
        if (computed.back()) parts.push_back(PowerTraces(ModeGram(y, static_cast<int64_t>(k)), o.spectrum_values));
      }
    }
    // One device-to-host copy for everything.
    at::Tensor host = at::cat(parts).cpu().contiguous();
    const double* v = host.data_ptr<double>();
    fp.mean = v[0];
    fp.stddev = v[1];
    fp.min = v[2];
    fp.max = v[3];
    fp.l1 = v[4];
    fp.l2 = v[5];
    size_t pos = 6;
    fp.quantiles.assign(v + pos, v + pos + o.quantiles);
    pos += o.quantiles;
    for (bool mode_computed : computed) {
      std::vector<float> norms;
      for (int k = 2; mode_computed && k <= o.spectrum_values + 1; ++k)
        norms.push_back(static_cast<float>(std::pow(std::max(0.0, v[pos++]), 1.0 / (2 * k))));
      fp.spectra.push_back(std::move(norms));
    }
    if (dims.size() == 2 && !fp.spectra.empty()) fp.spectra.push_back(fp.spectra.front());
  } catch (const std::exception& e) {
    std::string what = e.what();
    return MakeError(ErrorCode::kInternal, "fingerprint: " + what.substr(0, what.find('\n')));
  }
  return fp;
}

}  // namespace magneton::capture
