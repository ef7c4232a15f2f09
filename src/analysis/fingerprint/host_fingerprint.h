// Fingerprint of values held in host memory, by the definition in
// docs/fingerprints.md (the torch recorder computes the same summary with
// ATen on the tensor's device). Serves converters from other tools, tests
// and benchmarks that build runs without a framework.
#pragma once

#include <cstdint>
#include <vector>

#include "core/run.h"

namespace magneton::analysis {

struct HostFingerprintOptions {
  int quantiles = 33;
  int spectrum_values = 6;
  int64_t spectra_max_numel = 1 << 24;
  int64_t spectra_max_side = 4096;
};

// `values` in row-major order of `shape` (numel must match).
Fingerprint HostFingerprint(const std::vector<float>& values, const std::vector<int64_t>& shape,
                            const HostFingerprintOptions& options = {});

}  // namespace magneton::analysis
