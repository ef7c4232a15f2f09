// `magneton top --by range` groups NVTX ranges; the program's step marks
// (`rec.step()`) are boundaries, not ranges.
#include "report/top.h"

#include <gtest/gtest.h>

namespace magneton::report {
namespace {

TEST(Top, StepMarksAreNoRanges) {
  magneton::Run run;
  run.info.start_ns = 0;
  run.info.end_ns = 10'000;
  run.ranges.push_back({0, "forward", "app", 1, 1'000, 4'000, kNone});
  run.ranges.push_back({1, kStepMark, kMagnetonDomain, 1, 4'500, 4'500, kNone});
  run.ranges.push_back({2, "forward", "app", 1, 5'000, 8'000, kNone});
  run.ranges.push_back({3, kStepMark, kMagnetonDomain, 1, 8'500, 8'500, kNone});
  TopTable t = BuildTop(run, energy::Attribution{}, TopBy::kRange);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0].name, "forward");
  EXPECT_EQ(t.rows[0].calls, 2);
  EXPECT_EQ(t.rows[0].wall_ns, 6'000);
}

}  // namespace
}  // namespace magneton::report
