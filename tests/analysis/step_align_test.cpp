// Finding the recorded step in a measured stream (analysis/diff/step_align.h),
// on token sequences shaped like real programs: a step of layers, set-up and
// a summary around the loop, warm-up steps that differ, stray items.
#include <gtest/gtest.h>

#include <numeric>

#include "analysis/diff/step_align.h"

namespace magneton::analysis {
namespace {

using Seq = std::vector<int>;

// A transformer-like step: an embedding (1), `layers` identical layers of
// kernels 10..15, a head (2) and a loss (3).
Seq Step(int layers = 4) {
  Seq s{1};
  for (int l = 0; l < layers; ++l)
    for (int k = 10; k < 16; ++k) s.push_back(k);
  s.push_back(2);
  s.push_back(3);
  return s;
}

Seq Repeat(const Seq& step, int times, const Seq& before = {}, const Seq& after = {}) {
  Seq out = before;
  for (int i = 0; i < times; ++i) out.insert(out.end(), step.begin(), step.end());
  out.insert(out.end(), after.begin(), after.end());
  return out;
}

TEST(StepAlign, ExactRepetitionsAreFoundAndMappedItemByItem) {
  Seq step = Step();
  auto al = AlignSteps(step, Repeat(step, 5), "kernels");
  ASSERT_TRUE(al.ok()) << al.error().message;
  ASSERT_EQ(al->repetitions.size(), 5u);
  EXPECT_EQ(al->step_begin, 0);
  EXPECT_EQ(al->step_end, static_cast<int64_t>(step.size()));
  const int64_t n = static_cast<int64_t>(step.size());
  for (int64_t j = 0; j < 5 * n; ++j) {
    EXPECT_EQ(al->recorded_of[j], j % n);
    EXPECT_EQ(al->repetition_of[j], j / n);
  }
  for (const auto& r : al->repetitions) EXPECT_TRUE(r.exact);
}

TEST(StepAlign, WarmUpAndSummaryAroundTheLoopStayOutside) {
  Seq step = Step();
  Seq warm = step;  // the first step autotunes: other kernels in place of the layers
  for (auto& t : warm)
    if (t >= 10) t += 100;
  Seq measured = Repeat(step, 6, Seq{50, 51, 52}, Seq{60, 61});
  measured.insert(measured.begin() + 3, warm.begin(), warm.end());
  auto al = AlignSteps(step, measured, "kernels");
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->repetitions.size(), 6u);
  EXPECT_EQ(al->repetition_of[0], -1);  // set-up
  EXPECT_EQ(al->repetition_of[measured.size() - 1], -1);  // summary
  int64_t aligned = 0;
  for (auto r : al->recorded_of) aligned += r >= 0;
  EXPECT_EQ(aligned, 6 * static_cast<int64_t>(step.size()));
}

TEST(StepAlign, AWholeScriptRecordingFindsItsStepBetweenSetUpAndSummary) {
  // --iters 1 against --iters 8: the recording is set-up, one step, summary.
  Seq step = Step(3), setup{40, 41, 42, 43, 10, 11}, summary{60, 3, 61};
  Seq recorded = Repeat(step, 1, setup, summary), measured = Repeat(step, 8, setup, summary);
  auto al = AlignSteps(recorded, measured, "operators");
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->step_begin, static_cast<int64_t>(setup.size()));
  EXPECT_EQ(al->step_end, static_cast<int64_t>(setup.size() + step.size()));
  EXPECT_EQ(al->repetitions.size(), 8u);
  // Every measured step item maps into the recorded step, never into set-up or summary.
  EXPECT_EQ(al->repetition_of[measured.size() - 2], -1);  // the summary's own "3"
  for (size_t j = 0; j < measured.size(); ++j)
    if (al->recorded_of[j] >= 0) {
      EXPECT_GE(al->repetition_of[j], 0) << j;
      EXPECT_GE(al->recorded_of[j], al->step_begin) << j;
      EXPECT_LT(al->recorded_of[j], al->step_end) << j;
    }
}

TEST(StepAlign, AnItemOnlyOneSideHasIsToleratedAndLeftUnaligned) {
  Seq step = Step();
  Seq odd = step;
  odd.insert(odd.begin() + 7, 99);  // an allocator's memset in one repetition
  odd.erase(odd.begin() + 15);      // and a kernel it did not launch
  Seq measured = Repeat(step, 2);
  measured.insert(measured.end(), odd.begin(), odd.end());
  measured.insert(measured.end(), step.begin(), step.end());
  auto al = AlignSteps(step, measured, "kernels");
  ASSERT_TRUE(al.ok()) << al.error().message;
  ASSERT_EQ(al->repetitions.size(), 4u);
  EXPECT_FALSE(al->repetitions[2].exact);
  EXPECT_EQ(al->repetitions[2].matched, static_cast<int64_t>(step.size()) - 1);
  const int64_t stray = 2 * static_cast<int64_t>(step.size()) + 7;
  EXPECT_EQ(measured[stray], 99);
  EXPECT_EQ(al->recorded_of[stray], -1);
  EXPECT_EQ(al->repetition_of[stray], 2);
}

TEST(StepAlign, AnotherProgramIsRefusedSayingHowCloseItCame) {
  Seq step = Step();
  Seq other = Repeat(Seq{1, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79}, 3);
  auto al = AlignSteps(step, other, "kernels");
  ASSERT_FALSE(al.ok());
  EXPECT_NE(al.error().message.find("does not repeat the recorded step"), std::string::npos) << al.error().message;
  auto none = AlignSteps(step, Seq{80, 81, 82}, "kernels");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("shares no kernels"), std::string::npos) << none.error().message;
  EXPECT_FALSE(AlignSteps({}, step, "kernels").ok());
}

TEST(StepAlign, AStepOfIdenticalLayersIsNotTakenOneLayerOff) {
  // Three identical layers and a tail: the recorded step fits the measured
  // stream one layer off almost as well as where it belongs.
  Seq step;
  for (int l = 0; l < 3; ++l) step.insert(step.end(), {20, 21, 22, 22, 23, 21, 24, 25, 22, 26, 21});
  step.insert(step.end(), {27, 27, 30, 31, 32, 33});
  auto al = AlignSteps(step, Repeat(step, 27), "operators");
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->step_begin, 0);
  EXPECT_EQ(al->step_end, static_cast<int64_t>(step.size()));
  EXPECT_EQ(al->repetitions.size(), 27u);
  for (const auto& r : al->repetitions) EXPECT_TRUE(r.exact);
}

TEST(StepAlign, LongStepsAlignInLinearishTime) {
  // A 3,000-item step repeated 300 times with a stray item every tenth step.
  Seq step(3000);
  std::iota(step.begin(), step.end(), 1000);
  Seq measured;
  for (int i = 0; i < 300; ++i) {
    measured.insert(measured.end(), step.begin(), step.end());
    if (i % 10 == 0) measured.push_back(7);
  }
  auto al = AlignSteps(step, measured, "kernels");
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->repetitions.size(), 300u);
}

}  // namespace
}  // namespace magneton::analysis
