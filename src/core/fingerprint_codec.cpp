#include "core/fingerprint_codec.h"

#include <bit>

#include <fmt/core.h>

namespace magneton {
namespace {

// Byte-wise little-endian so files move between hosts unchanged.
void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void PutF32(std::string& out, float v) { PutU32(out, std::bit_cast<uint32_t>(v)); }
void PutF64(std::string& out, double v) { PutU64(out, std::bit_cast<uint64_t>(v)); }
void PutFloats(std::string& out, const std::vector<float>& v) {
  PutU32(out, static_cast<uint32_t>(v.size()));
  for (float x : v) PutF32(out, x);
}

class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  size_t left() const { return b_.size() - pos_; }
  bool U8(uint8_t* v) {
    if (left() < 1) return false;
    *v = static_cast<uint8_t>(b_[pos_++]);
    return true;
  }
  bool U32(uint32_t* v) {
    if (left() < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) *v |= uint32_t(static_cast<uint8_t>(b_[pos_++])) << (8 * i);
    return true;
  }
  bool U64(uint64_t* v) {
    if (left() < 8) return false;
    *v = 0;
    for (int i = 0; i < 8; ++i) *v |= uint64_t(static_cast<uint8_t>(b_[pos_++])) << (8 * i);
    return true;
  }
  bool F64(double* v) {
    uint64_t u;
    if (!U64(&u)) return false;
    *v = std::bit_cast<double>(u);
    return true;
  }
  // A count-prefixed float array; the count is checked against the bytes
  // left before allocating, so a corrupt count cannot demand huge memory.
  bool Floats(std::vector<float>* v) {
    uint32_t n;
    if (!U32(&n) || left() / 4 < n) return false;
    v->resize(n);
    for (auto& x : *v) {
      uint32_t u = 0;
      U32(&u);  // cannot fail: the count was checked against the bytes left
      x = std::bit_cast<float>(u);
    }
    return true;
  }

 private:
  std::string_view b_;
  size_t pos_ = 0;
};

}  // namespace

std::string EncodeFingerprint(const Fingerprint& fp) {
  std::string out;
  size_t floats = fp.quantiles.size();
  for (const auto& s : fp.spectra) floats += s.size() + 1;
  out.reserve(1 + 8 + 6 * 8 + 8 + 4 * floats);
  out.push_back(static_cast<char>(fp.spectra_kind));
  PutU64(out, static_cast<uint64_t>(fp.numel));
  for (double d : {fp.mean, fp.stddev, fp.min, fp.max, fp.l1, fp.l2}) PutF64(out, d);
  PutFloats(out, fp.quantiles);
  PutU32(out, static_cast<uint32_t>(fp.spectra.size()));
  for (const auto& s : fp.spectra) PutFloats(out, s);
  return out;
}

Result<Fingerprint> DecodeFingerprint(std::string_view bytes) {
  auto bad = [](std::string what) { return MakeError(ErrorCode::kCorrupt, "bad fingerprint: " + what); };
  Reader r(bytes);
  uint8_t version;
  if (!r.U8(&version)) return bad("empty");
  if (version < 1 || version > kFingerprintEncoding)
    return bad(fmt::format("encoding version {} (this build reads 1 to {})", version, kFingerprintEncoding));
  Fingerprint fp;
  fp.spectra_kind = static_cast<SpectraKind>(version);
  uint64_t numel;
  if (!r.U64(&numel) || !r.F64(&fp.mean) || !r.F64(&fp.stddev) || !r.F64(&fp.min) || !r.F64(&fp.max) ||
      !r.F64(&fp.l1) || !r.F64(&fp.l2))
    return bad("truncated header");
  fp.numel = static_cast<int64_t>(numel);
  if (fp.numel < 0) return bad("negative numel");
  if (!r.Floats(&fp.quantiles)) return bad("truncated quantiles");
  uint32_t nspectra;
  // Each spectrum takes at least its 4-byte count.
  if (!r.U32(&nspectra) || r.left() / 4 < nspectra) return bad("truncated spectra");
  fp.spectra.resize(nspectra);
  for (auto& s : fp.spectra)
    if (!r.Floats(&s)) return bad("truncated spectrum");
  if (r.left() != 0) return bad(fmt::format("{} trailing bytes", r.left()));
  return fp;
}

}  // namespace magneton
