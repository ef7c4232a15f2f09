#include "capture/torch/fingerprint.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <functional>

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

// Grams are decomposed on the host with Eigen (single-threaded) up to these
// sides: for small matrices a LAPACK call costs more in thread wake-ups (or a
// GPU solver launch and sync) than in arithmetic.
constexpr int64_t kHostEigenSideCpu = 1024;
constexpr int64_t kHostEigenSideGpu = 256;

// Below this many multiply-adds a CPU Gram is computed single-threaded with
// Eigen: ATen's BLAS would wake its thread pool, which on a busy machine costs
// milliseconds for microseconds of arithmetic.
constexpr double kHostGramFlops = 5e7;

// The Gram matrix of the smaller side of the mode-k unfolding of `y`: its
// eigenvalues are the squared singular values of the unfolding.
at::Tensor ModeGram(const at::Tensor& y, int64_t mode) {
  const int64_t rows = y.size(mode);
  const int64_t cols = y.numel() / rows;
  const int64_t side = std::min(rows, cols);
  at::Tensor m = y.movedim(mode, 0).reshape({rows, cols});
  if (!y.is_cpu() || static_cast<double>(side) * static_cast<double>(y.numel()) > kHostGramFlops)
    return rows <= cols ? at::mm(m, m.t()) : at::mm(m.t(), m);
  m = m.contiguous();
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const RowMajor> mat(m.data_ptr<double>(), rows, cols);
  at::Tensor gram = at::empty({side, side}, m.options());
  Eigen::Map<RowMajor> g(gram.data_ptr<double>(), side, side);
  if (rows <= cols)
    g.noalias() = mat * mat.transpose();
  else
    g.noalias() = mat.transpose() * mat;
  return gram;
}

std::vector<float> TopSingularValues(std::vector<double> eigenvalues, int keep) {
  std::sort(eigenvalues.begin(), eigenvalues.end(), std::greater<double>());
  std::vector<float> out;
  for (int i = 0; i < keep && i < static_cast<int>(eigenvalues.size()); ++i)
    out.push_back(static_cast<float>(std::sqrt(std::max(0.0, eigenvalues[i]))));
  return out;
}

std::vector<double> HostEigenvalues(const double* gram, int64_t side) {
  Eigen::Map<const Eigen::MatrixXd> g(gram, side, side);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(g, Eigen::EigenvaluesOnly);
  const auto& ev = solver.eigenvalues();
  return std::vector<double>(ev.data(), ev.data() + ev.size());
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

// Where one mode's spectrum comes from in the host copy.
struct ModePlan {
  int64_t side = 0;     // 0: not computed (over the cap)
  bool host_eigen = false;
  int64_t length = 0;   // doubles in the host copy: side*side (Gram) or side (eigenvalues)
};

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

    // Spectra, normalized by the Frobenius norm so they are scale-free and in [0, 1].
    std::vector<int64_t> dims = SignificantDims(t);
    std::vector<ModePlan> plans;
    if (dims.size() >= 2 && n <= o.spectra_max_numel) {
      at::Tensor y = x.reshape(dims) / l2.clamp_min(1e-300);
      // A matrix's two unfoldings are transposes with the same spectrum: compute one.
      const size_t modes = dims.size() == 2 ? 1 : dims.size();
      for (size_t k = 0; k < modes; ++k) {
        ModePlan plan;
        plan.side = std::min(dims[k], n / dims[k]);
        if (plan.side > o.spectra_max_side) {
          plan.side = 0;
        } else if (plan.side <= (t.is_cpu() ? kHostEigenSideCpu : kHostEigenSideGpu)) {
          plan.host_eigen = true;
          plan.length = plan.side * plan.side;
          parts.push_back(ModeGram(y, static_cast<int64_t>(k)).reshape({-1}));
        } else {
          plan.length = plan.side;
          parts.push_back(at::linalg_eigvalsh(ModeGram(y, static_cast<int64_t>(k))));
        }
        plans.push_back(plan);
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
    for (const auto& plan : plans) {
      std::vector<double> ev;
      if (plan.host_eigen)
        ev = HostEigenvalues(v + pos, plan.side);
      else
        ev.assign(v + pos, v + pos + plan.length);
      pos += static_cast<size_t>(plan.length);
      fp.spectra.push_back(TopSingularValues(std::move(ev), o.singular_values));
    }
    if (dims.size() == 2 && !fp.spectra.empty()) fp.spectra.push_back(fp.spectra.front());
  } catch (const std::exception& e) {
    std::string what = e.what();
    return MakeError(ErrorCode::kInternal, "fingerprint: " + what.substr(0, what.find('\n')));
  }
  return fp;
}

}  // namespace magneton::capture
