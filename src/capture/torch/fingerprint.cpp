#include "capture/torch/fingerprint.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>

#include <algorithm>

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

// Leading singular values of the mode-k unfolding of `y`, through the Gram
// matrix of its smaller side (float64, symmetric eigenvalues). Returns an
// undefined tensor when the smaller side exceeds the cap.
at::Tensor ModeSpectrum(const at::Tensor& y, int64_t mode, const FingerprintOptions& o) {
  const int64_t rows = y.size(mode);
  const int64_t cols = y.numel() / rows;
  const int64_t side = std::min(rows, cols);
  if (side > o.spectra_max_side) return {};
  at::Tensor m = y.movedim(mode, 0).reshape({rows, cols});
  at::Tensor gram = rows <= cols ? at::mm(m, m.t()) : at::mm(m.t(), m);
  at::Tensor eig = at::linalg_eigvalsh(gram);  // ascending
  const int64_t keep = std::min<int64_t>(o.singular_values, side);
  return eig.narrow(0, side - keep, keep).flip({0}).clamp_min(0).sqrt();
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
    at::Tensor sorted = std::get<0>(x.sort());
    const int64_t n = fp.numel;
    std::vector<int64_t> ranks(o.quantiles);
    for (int k = 0; k < o.quantiles; ++k)
      ranks[k] = o.quantiles == 1 ? 0 : (k * (n - 1) + (o.quantiles - 1) / 2) / (o.quantiles - 1);
    at::Tensor idx = at::tensor(ranks, at::TensorOptions().dtype(at::kLong)).to(x.device());
    std::vector<at::Tensor> parts = {
        at::stack({x.mean(), x.std(/*dim=*/c10::nullopt, /*correction=*/0, /*keepdim=*/false),
                   sorted[0], sorted[n - 1], x.abs().sum(), l2}),
        sorted.index_select(0, idx)};

    // Spectra, normalized by the Frobenius norm so they are scale-free and in [0, 1].
    std::vector<int64_t> dims = SignificantDims(t);
    std::vector<int64_t> lengths;
    if (dims.size() >= 2 && n <= o.spectra_max_numel) {
      at::Tensor y = x.reshape(dims) / l2.clamp_min(1e-300);
      at::Tensor first;
      for (size_t k = 0; k < dims.size(); ++k) {
        // A matrix's two unfoldings are transposes: same singular values.
        at::Tensor s = (dims.size() == 2 && k == 1) ? first : ModeSpectrum(y, static_cast<int64_t>(k), o);
        if (k == 0) first = s;
        lengths.push_back(s.defined() ? s.numel() : 0);
        if (s.defined()) parts.push_back(s);
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
    for (int64_t len : lengths) {
      fp.spectra.emplace_back(v + pos, v + pos + len);
      pos += static_cast<size_t>(len);
    }
  } catch (const std::exception& e) {
    std::string what = e.what();
    return MakeError(ErrorCode::kInternal, "fingerprint: " + what.substr(0, what.find('\n')));
  }
  return fp;
}

}  // namespace magneton::capture
