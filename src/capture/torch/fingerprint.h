// Layout-invariant fingerprints of tensor values (docs/fingerprints.md),
// computed with ATen on the tensor's own device. Takes any at::Tensor, so
// other frameworks can reuse it by handing their arrays over through DLPack.
#pragma once

#include <ATen/core/Tensor.h>

#include "core/run.h"
#include "core/status.h"

namespace magneton::capture {

struct FingerprintOptions {
  int quantiles = 33;                 // evenly spaced ranks of the sorted values, 0..1
  int spectrum_values = 6;            // Schatten norms kept per mode unfolding (k = 2 .. 1 + this)
  int64_t spectra_max_numel = 1 << 24;  // larger tensors get no spectra
  int64_t spectra_max_side = 4096;    // an unfolding whose smaller side exceeds this gets an empty spectrum
};

// Summarizes `t` (any dtype but complex; integers and bools are cast to
// float64). Fails with kUnsupported for undefined, sparse, quantized, complex
// or storage-less (meta/fake) tensors. Records no ops: RecordFunction is off
// and autograd is off while it runs.
Result<Fingerprint> ComputeFingerprint(const at::Tensor& t, const FingerprintOptions& options = {});

}  // namespace magneton::capture
