// Shared report phrases.
#include "report/format.h"

#include <gtest/gtest.h>

#include <cmath>

namespace magneton::report {
namespace {

TEST(Format, UntracedStepsComparedOnBothSides) {
  analysis::UntracedSteps a{105, 0.01135, 5.39}, b{161, 0.00946, 4.06};
  const std::string energy = CompareUntraced(a, b);
  EXPECT_NE(energy.find("-24.7% energy per step"), std::string::npos) << energy;
  EXPECT_NE(energy.find("-16.7% time"), std::string::npos) << energy;
  b.joules = NAN;  // a side without GPU energy: time alone
  EXPECT_EQ(CompareUntraced(a, b).find("energy"), std::string::npos);
  EXPECT_EQ(CompareUntraced(a, std::nullopt), "");
  EXPECT_EQ(CompareUntraced(analysis::UntracedSteps{}, b), "");
}

}  // namespace
}  // namespace magneton::report
