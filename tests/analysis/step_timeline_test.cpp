// The measured pass's iterations (step_timeline.h) on a host timeline built
// by hand: which windows the per-iteration figures average.
#include "analysis/diff/step_timeline.h"

#include <gtest/gtest.h>

namespace magneton::analysis {
namespace {

constexpr int64_t kMs = 1'000'000;

// 8 repetitions of a step of two 1 ms operators, back to back; `foreign[r]`
// operators outside every repetition (1 ms each) run after repetition r.
struct Timeline {
  Run run;
  PassAlignment al;
  explicit Timeline(const std::vector<int>& foreign) {
    al.repeats = 8;
    int64_t t = 0;
    auto op = [&](int32_t rep) {
      Op o;
      o.id = static_cast<int64_t>(run.ops.size());
      o.name = rep < 0 ? "aten::eval_work" : "aten::step_work";
      o.start_ns = t;
      o.end_ns = t += kMs;
      run.ops.push_back(o);
      al.op_rep.push_back(rep);
    };
    op(-1);  // set-up before the first step
    for (int32_t r = 0; r < 8; ++r) {
      op(r), op(r);
      for (int k = 0; k < foreign[r]; ++k) op(-1);
    }
    run.info.start_ns = 0;
    run.info.end_ns = t;
  }
  StepTimeline Build() const { return BuildStepTimeline(run, energy::Attribution{}, al); }
};

TEST(StepTimeline, IterationsThatAlsoRanOtherWorkAreLeftOutOfTheMeans) {
  // An evaluation of 30 operators after steps 2 and 5: those two iterations
  // span 32 ms, the others 2 ms.
  StepTimeline tl = Timeline({0, 0, 30, 0, 0, 30, 0, 0}).Build();
  ASSERT_EQ(tl.steps.size(), 8u);
  EXPECT_EQ(tl.foreign_windows, 2);
  EXPECT_EQ(tl.foreign_items, 60);
  EXPECT_FALSE(tl.full_period(2));
  EXPECT_FALSE(tl.full_period(5));
  EXPECT_FALSE(tl.full_period(7));  // the last window ends with its last item
  EXPECT_TRUE(tl.full_period(0));
  EXPECT_NEAR(tl.seconds(), 2e-3, 1e-9);
  EXPECT_NEAR(tl.tail_seconds(), 0, 1e-9);
}

TEST(StepTimeline, OtherWorkInMostIterationsIsPartOfTheStep) {
  // Something outside the recorded step after every other iteration or more
  // (a logging call each step): it is the step's own, and counted.
  StepTimeline tl = Timeline({1, 1, 0, 1, 1, 0, 1, 0}).Build();
  EXPECT_EQ(tl.foreign_windows, 0);
  for (size_t i = 0; i + 1 < tl.steps.size(); ++i) EXPECT_TRUE(tl.full_period(i)) << i;
  EXPECT_NEAR(tl.seconds(), (5 * 3e-3 + 2 * 2e-3) / 7, 1e-9);
}

}  // namespace
}  // namespace magneton::analysis
