// A versioned, portable binary encoding of Fingerprint, stored in
// tensors.fingerprint (docs/run-format.md, "Fingerprint encoding").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/run.h"
#include "core/status.h"

namespace magneton {

// Encoding versions. Both have one layout; the version says what the spectra
// hold: 1 leading singular values, 2 Schatten norms (the SpectraKind's value).
// A decoder refuses versions it does not know rather than guess at the layout.
inline constexpr uint8_t kFingerprintEncoding = 2;

// Little-endian bytes: version u8 (from fp.spectra_kind), numel i64, mean stddev min max l1 l2 f64,
// quantile count u32 + f32 each, spectrum count u32 + per spectrum (count u32
// + f32 each).
std::string EncodeFingerprint(const Fingerprint& fp);

// Strict inverse of EncodeFingerprint: every count must fit the bytes and no
// bytes may be left over. The error message names the problem, not the file.
Result<Fingerprint> DecodeFingerprint(std::string_view bytes);

}  // namespace magneton
