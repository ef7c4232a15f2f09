// A file of both passes split into the recording pass and the measured pass
// (pass_split.h), at the recorder's notes of when each began and ended.
#include <gtest/gtest.h>

#include "analysis/diff/pass_split.h"

namespace magneton::analysis {
namespace {

// Two ops of the recording pass with a kernel each (t = 10, 20), then the
// program's own call in flight (t = 30), then two measured kernels (t = 40, 50).
Run BothPasses() {
  Run run;
  run.info.start_ns = 1;
  run.info.end_ns = 100;
  for (int64_t i = 0; i < 2; ++i) {
    Op op;
    op.id = i;
    op.name = "jax:dot_general";
    op.start_ns = 10 * (i + 1);
    op.end_ns = op.start_ns + 5;
    run.ops.push_back(op);
  }
  for (int64_t t : {10, 20, 30, 40, 50}) {
    Kernel k;
    k.id = static_cast<int64_t>(run.kernels.size());
    k.name = "gemm";
    k.start_ns = t;
    k.end_ns = t + 5;
    k.op = t <= 20 ? t / 10 - 1 : kNone;
    run.kernels.push_back(k);
  }
  run.info.extra["measured_from_ns"] = "35";
  return run;
}

TEST(PassSplit, TheMeasuredPassBeginsWhereTheRecorderSwitched) {
  auto s = SplitAtMeasuredPass(BothPasses());
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->recorded.kernels.size(), 3u);  // the call in flight counts with the recording
  EXPECT_EQ(s->measured.kernels.size(), 2u);
  EXPECT_EQ(s->recorded.kernels[1].op, 1);
  EXPECT_TRUE(s->measured.ops.empty());
}

TEST(PassSplit, WorkBetweenTheRecordingsEndAndTheMeasuredPassIsInNeither) {
  magneton::Run run = BothPasses();
  run.info.extra["recorded_until_ns"] = "28";
  auto s = SplitAtMeasuredPass(run);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->recorded.kernels.size(), 2u);
  EXPECT_EQ(s->recorded.kernels[0].op, 0);
  EXPECT_EQ(s->recorded.kernels[1].op, 1);
  EXPECT_EQ(s->recorded.ops.size(), 2u);
  EXPECT_EQ(s->measured.kernels.size(), 2u);
  EXPECT_EQ(s->measured.kernels[0].start_ns, 40);
  EXPECT_EQ(s->recorded.info.extra.count("recorded_until_ns"), 0u);
  // A note after the measured pass's start is not believed.
  run.info.extra["recorded_until_ns"] = "60";
  EXPECT_EQ(SplitAtMeasuredPass(run)->recorded.kernels.size(), 3u);
}

}  // namespace
}  // namespace magneton::analysis
