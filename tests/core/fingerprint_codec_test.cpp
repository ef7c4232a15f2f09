#include "core/fingerprint_codec.h"

#include <gtest/gtest.h>

#include "sample_run.h"

namespace magneton {
namespace {

TEST(FingerprintCodec, RoundTripsExactly) {
  for (int spectra : {0, 1, 3}) {
    Fingerprint fp = testing::SampleFingerprint(5, spectra);
    auto got = DecodeFingerprint(EncodeFingerprint(fp));
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_TRUE(*got == fp) << spectra;
  }
  Fingerprint empty;
  auto got = DecodeFingerprint(EncodeFingerprint(empty));
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
}

TEST(FingerprintCodec, LayoutIsLittleEndianAndVersioned) {
  Fingerprint fp;
  fp.numel = 0x0102;
  fp.quantiles = {1.0f};
  std::string b = EncodeFingerprint(fp);
  ASSERT_EQ(b.size(), 1u + 8 + 48 + 4 + 4 + 4);
  EXPECT_EQ(b[0], 2);                       // encoding version: Schatten norms
  EXPECT_EQ(b[1], 0x02);                    // numel, low byte first
  EXPECT_EQ(b[2], 0x01);
  EXPECT_EQ(b[57], 1);                      // quantile count
  EXPECT_EQ(static_cast<uint8_t>(b[64]), 0x3f);  // 1.0f = 0x3f800000, high byte last
}

TEST(FingerprintCodec, VersionOneReadsAsSingularValues) {
  Fingerprint fp = testing::SampleFingerprint(3, 2);
  fp.spectra_kind = SpectraKind::kSingularValues;
  const std::string b = EncodeFingerprint(fp);
  EXPECT_EQ(b[0], 1);
  auto got = DecodeFingerprint(b);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->spectra_kind, SpectraKind::kSingularValues);
  EXPECT_TRUE(*got == fp);
}

TEST(FingerprintCodec, RejectsEveryTruncationAndTrailingBytes) {
  std::string b = EncodeFingerprint(testing::SampleFingerprint(2, 2));
  for (size_t n = 0; n < b.size(); ++n) EXPECT_FALSE(DecodeFingerprint(b.substr(0, n)).ok()) << n;
  auto trailing = DecodeFingerprint(b + "x");
  ASSERT_FALSE(trailing.ok());
  EXPECT_NE(trailing.error().message.find("1 trailing bytes"), std::string::npos);
}

TEST(FingerprintCodec, RejectsUnknownVersionAndHugeCounts) {
  std::string b = EncodeFingerprint(testing::SampleFingerprint(1, 1));
  std::string v3 = b;
  v3[0] = 3;
  auto got = DecodeFingerprint(v3);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().message.find("encoding version 3"), std::string::npos);
  // A quantile count of 2^32-1 must fail on length, not try to allocate 16 GiB.
  std::string huge = b;
  for (int i = 57; i < 61; ++i) huge[i] = '\xff';
  EXPECT_FALSE(DecodeFingerprint(huge).ok());
}

}  // namespace
}  // namespace magneton
