// The statistics every fingerprint comparison walks (core/fingerprint_stats.h):
// their order, their scales, and scales that NaN and infinity cannot spoil.
#include "core/fingerprint_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace magneton {
namespace {

Fingerprint Make(double mean, double l2, std::vector<float> quantiles) {
  Fingerprint f;
  f.numel = 4;
  f.mean = mean;
  f.stddev = 1;
  f.min = -3;
  f.max = 5;
  f.l1 = 6;
  f.l2 = l2;
  f.quantiles = std::move(quantiles);
  return f;
}

std::vector<ComparedStatistic> All(const Fingerprint& a, const Fingerprint& b) {
  std::vector<ComparedStatistic> out;
  EXPECT_TRUE(ForEachStatistic(a, b, [&](const ComparedStatistic& s) {
    out.push_back(s);
    return true;
  }));
  return out;
}

TEST(FingerprintStats, EachStatisticWithItsScaleInOrder) {
  auto s = All(Make(0.5, 4, {-3, 1, 5}), Make(0.5, 6, {-3, 1, 7}));  // rms 2 and 3
  ASSERT_EQ(s.size(), 9u);
  EXPECT_EQ(s[0].label(), "rms");
  EXPECT_DOUBLE_EQ(s[0].a, 2);
  EXPECT_DOUBLE_EQ(s[0].scale, 3);  // the larger rms
  EXPECT_EQ(s[1].label(), "mean");
  EXPECT_DOUBLE_EQ(s[1].scale, 3);
  EXPECT_EQ(s[3].label(), "l1");
  EXPECT_DOUBLE_EQ(s[3].scale, 6);  // the larger l1
  EXPECT_EQ(s[5].label(), "max");
  EXPECT_DOUBLE_EQ(s[5].scale, 5);  // |value| beyond the rms
  EXPECT_EQ(s[8].label(), "quantile 2");
  EXPECT_DOUBLE_EQ(s[8].scale, 7);
  EXPECT_DOUBLE_EQ(s[7].scale, 3);  // quantile 1: the rms
}

TEST(FingerprintStats, QuantilesOnlyWhereBothHaveAsMany) {
  EXPECT_EQ(All(Make(0, 4, {1, 2}), Make(0, 4, {1, 2, 3})).size(), 6u);
}

TEST(FingerprintStats, ScalesFromFiniteValuesOnly) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  auto s = All(Make(nan, nan, {}), Make(0.5, 6, {}));
  EXPECT_TRUE(std::isnan(s[0].a));
  EXPECT_DOUBLE_EQ(s[0].scale, 3);  // b's rms: a's is NaN
  Fingerprint big = Make(0.5, 6, {});
  big.max = inf;
  EXPECT_DOUBLE_EQ(All(big, Make(0.5, 6, {}))[5].scale, 5);
}

TEST(FingerprintStats, StopsWhereTheVisitorSays) {
  int seen = 0;
  EXPECT_FALSE(ForEachStatistic(Make(0, 4, {1}), Make(0, 4, {1}), [&](const ComparedStatistic& s) {
    ++seen;
    return s.label() != "stddev";
  }));
  EXPECT_EQ(seen, 3);
}

}  // namespace
}  // namespace magneton
