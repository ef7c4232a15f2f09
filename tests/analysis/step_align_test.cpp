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

TEST(StepAlign, ARecordingOfThreeIterationsTakesTheFirstLikeItsLastWhenTheFirstCreatesState) {
  // --steps 3 against --steps 20 of a script training with Adam: the first
  // step also creates the optimizer's state (items 70-79 after each layer's
  // update), so it is no repetition of the rest; a set-up call made three
  // times in a row (40) recurs as often as the step's items in the recording.
  Seq step = Step(3), first = step, setup{40, 40, 40, 41}, summary{60, 61};
  for (int i = 0; i < 3; ++i)
    for (int k = 70; k < 80; ++k) first.push_back(k);
  Seq recorded = setup, measured = setup;
  recorded.insert(recorded.end(), first.begin(), first.end());
  measured.insert(measured.end(), first.begin(), first.end());
  recorded = Repeat(step, 2, recorded, summary);
  measured = Repeat(step, 19, measured, summary);
  auto al = AlignSteps(recorded, measured, "operators");
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->recording_steps, 2);
  EXPECT_EQ(al->repetitions.size(), 19u);
  // The step is the first iteration like the recording's last, not its first.
  EXPECT_EQ(al->step_begin, static_cast<int64_t>(setup.size() + first.size()));
  EXPECT_EQ(al->step_end - al->step_begin, static_cast<int64_t>(step.size()));
  for (size_t i = 0; i + 1 < al->repetitions.size(); ++i) EXPECT_TRUE(al->repetitions[i].exact) << i;
  // A recording of one step is still taken whole (it explains the measured pass).
  auto one = AlignSteps(Repeat(step, 1, setup, summary), measured, "operators");
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->recording_steps, 1);
}

TEST(StepAlign, OfIdenticalRecordedIterationsTheFirstIsTheStep) {
  // --iters 3 of an inference loop on one batch: the same values three
  // times, which matching meets in the first iteration.
  Seq step = Step(3), setup{40, 41}, summary{60};
  auto al = AlignSteps(Repeat(step, 3, setup, summary), Repeat(step, 20, setup, summary), "operators");
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->recording_steps, 3);
  EXPECT_EQ(al->step_begin, static_cast<int64_t>(setup.size()));
  EXPECT_EQ(al->step_end, static_cast<int64_t>(setup.size() + step.size()));
  EXPECT_EQ(al->repetitions.size(), 20u);
}

TEST(StepAlign, OfIdenticalRecordedIterationsThePreferredIsTheStep) {
  // The same, where matching paired the values in the second iteration (the
  // first's one-time set-up crossed its dataflow, seen on a GPT-2 script's
  // first forward): the caller's preference picks it; a preference that ties
  // leaves the first.
  Seq step = Step(3), setup{40, 41}, summary{60};
  const auto len = static_cast<int64_t>(step.size()), second = static_cast<int64_t>(setup.size()) + len;
  auto prefer = [&](int64_t begin, int64_t) -> int64_t { return begin == second ? 12 : 1; };
  auto al = AlignSteps(Repeat(step, 3, setup, summary), Repeat(step, 20, setup, summary), "operators", false, prefer);
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->recording_steps, 3);
  EXPECT_EQ(al->step_begin, second);
  EXPECT_EQ(al->step_end, second + len);
  EXPECT_EQ(al->repetitions.size(), 20u);
  for (size_t m = 0; m < al->recorded_of.size(); ++m)  // measured items map into the second iteration
    if (al->recorded_of[m] >= 0) EXPECT_GE(al->recorded_of[m], second) << m;
  auto tie = AlignSteps(Repeat(step, 3, setup, summary), Repeat(step, 20, setup, summary), "operators", false,
                        [](int64_t, int64_t) -> int64_t { return 5; });
  ASSERT_TRUE(tie.ok());
  EXPECT_EQ(tie->step_begin, static_cast<int64_t>(setup.size()));
}

TEST(StepAlign, AScriptRecordedTwiceWithTheSameArgumentsIsComparedStepByStep) {
  // Both passes of a whole script with the same arguments: the recording
  // matches the measured pass once, as a whole, but its loop is the step
  // (set-up and summary are no part of an iteration).
  Seq step = Step(3), setup{40, 41, 42, 10, 11}, summary{60, 3, 61};
  Seq script = Repeat(step, 6, setup, summary);
  auto al = AlignSteps(script, script, "operators", /*whole_script=*/true);
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->recording_steps, 6);
  EXPECT_EQ(al->step_begin, static_cast<int64_t>(setup.size()));
  EXPECT_EQ(al->step_end, static_cast<int64_t>(setup.size() + step.size()));
  EXPECT_EQ(al->repetitions.size(), 6u);
  EXPECT_EQ(al->repetition_of[0], -1);  // set-up
  // A script with no loop of its own stays one step, though found once.
  Seq flat{40, 41, 42, 43, 44, 45, 46, 47};
  auto whole = AlignSteps(flat, flat, "operators", true);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(whole->step_end - whole->step_begin, static_cast<int64_t>(flat.size()));
  EXPECT_EQ(whole->repetitions.size(), 1u);
  // A bracketed step of identical layers measured once is that step, not a layer.
  Seq one = Step(4);
  auto bracketed = AlignSteps(one, one, "operators");
  ASSERT_TRUE(bracketed.ok()) << bracketed.error().message;
  EXPECT_EQ(bracketed->step_end - bracketed->step_begin, static_cast<int64_t>(one.size()));
  EXPECT_EQ(bracketed->repetitions.size(), 1u);
}

TEST(StepAlign, AFirstIterationWithALibrarysFirstCallSetUpIsStillTheStep) {
  // --iters 3 of an inference script whose attention library sets itself up
  // in its first call (a workspace memset, 90): the values are the same in
  // every iteration and matched in the first, so the first is the step, as
  // on a side whose first iteration has no such set-up.
  Seq step = Step(3), first = step, setup{40, 41}, summary{60};
  first.insert(first.begin() + 3, 90);
  Seq recorded = setup;
  recorded.insert(recorded.end(), first.begin(), first.end());
  recorded = Repeat(step, 2, recorded, summary);
  auto al = AlignSteps(recorded, Repeat(step, 20, setup, summary), "kernels and copies", true);
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->recording_steps, 3);
  EXPECT_EQ(al->step_begin, static_cast<int64_t>(setup.size()));
  EXPECT_EQ(al->step_end, static_cast<int64_t>(setup.size() + first.size()));
  EXPECT_EQ(al->repetitions.size(), 20u);
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

TEST(StepAlign, AStrayItemInsideTheRecordedStepKeepsItsLastItem) {
  // The recording pass's step holds one kernel no operator launched (a
  // library's, mid-step), which no measured step repeats: the step still
  // runs to its last item (a loss read back to the host), and every measured
  // item aligns.
  Seq step = Step();
  step.push_back(7);  // the copy of a scalar back to the host, last
  Seq recorded = step;
  recorded.insert(recorded.begin() + 9, 99);
  auto al = AlignSteps(recorded, Repeat(step, 5, Seq{50, 51}, Seq{60}), "kernels");
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->step_end, static_cast<int64_t>(recorded.size()));
  ASSERT_EQ(al->repetitions.size(), 5u);
  for (const auto& r : al->repetitions) EXPECT_EQ(r.matched, static_cast<int64_t>(step.size()));
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

// FindSteps: the step of a stream that has no recording of it.

TEST(FindSteps, TheLoopBetweenSetUpAndSummaryIsTheStep) {
  Seq step = Step(), setup{40, 41, 42, 43}, summary{60, 61};
  Seq stream = Repeat(step, 7, setup, summary);
  auto al = FindSteps(stream, 0, "kernels");
  ASSERT_TRUE(al.ok()) << al.error().message;
  const int64_t n = static_cast<int64_t>(step.size());
  EXPECT_EQ(al->step_end - al->step_begin, n);
  ASSERT_EQ(al->repetitions.size(), 7u);
  // The step starts where the loop does: at the embedding, not at whichever token found the period.
  EXPECT_EQ(al->repetitions.front().begin, 4);
  EXPECT_EQ(stream[al->step_begin], 1);
  for (size_t r = 0; r < 7; ++r) EXPECT_EQ(al->repetitions[r].begin, 4 + static_cast<int64_t>(r) * n);
  for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(al->repetition_of[j], -1);  // set-up
  EXPECT_EQ(al->repetition_of[stream.size() - 1], -1);                  // summary
  // recorded_of names stream positions inside the cut step.
  for (size_t j = 4; j < 4 + 7 * step.size(); ++j) {
    ASSERT_GE(al->recorded_of[j], al->step_begin);
    EXPECT_EQ(stream[al->recorded_of[j]], stream[j]);
  }
}

TEST(FindSteps, AStepOfIdenticalLayersIsNotCutIntoLayers) {
  // Twelve identical layers a step: layer tokens recur 12 times as often as
  // the step's own, but the step also holds the embedding, head and loss.
  Seq step = Step(12);
  auto al = FindSteps(Repeat(step, 5, Seq{40}), 0, "kernels");
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->step_end - al->step_begin, static_cast<int64_t>(step.size()));
  EXPECT_EQ(al->repetitions.size(), 5u);
}

TEST(FindSteps, AWarmUpStepThatDiffersStaysOutsideOrCountsAsInexact) {
  Seq step = Step(), warm = step;
  for (auto& t : warm)
    if (t == 12 || t == 13) t += 100;  // autotuning: other GEMMs in the first step
  Seq stream = Repeat(step, 6, Seq{40, 41});
  stream.insert(stream.begin() + 2, warm.begin(), warm.end());
  auto al = FindSteps(stream, 0, "kernels");
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->step_end - al->step_begin, static_cast<int64_t>(step.size()));
  int64_t exact = 0;
  for (const auto& r : al->repetitions) exact += r.exact;
  EXPECT_EQ(exact, 6);
  // Every exact repetition starts at the embedding.
  for (const auto& r : al->repetitions) {
    if (!r.exact) continue;
    EXPECT_EQ(stream[r.begin], 1) << r.begin;
  }
  // The warm-up's other GEMMs align with nothing in the step.
  for (int64_t j = 2; j < 2 + static_cast<int64_t>(warm.size()); ++j) {
    if (stream[j] < 100) continue;
    EXPECT_EQ(al->recorded_of[j], -1) << j;
  }
}

TEST(FindSteps, ACopyNowAndThenIsAStrayItem) {
  // A copy after some steps, at no fixed interval (a checkpoint when a loss improves).
  Seq step = Step(2), stream;
  for (int i = 0; i < 10; ++i) {
    stream.insert(stream.end(), step.begin(), step.end());
    if (i == 1 || i == 4 || i == 5 || i == 9) stream.push_back(77);
  }
  auto al = FindSteps(stream, 0, "kernels");
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->step_end - al->step_begin, static_cast<int64_t>(step.size()));
  EXPECT_EQ(al->repetitions.size(), 10u);
  for (size_t j = 0; j < stream.size(); ++j) {
    if (stream[j] != 77) continue;
    EXPECT_EQ(al->recorded_of[j], -1);
  }
}

TEST(FindSteps, AStepThatAlternatesIsTwoStepsLong) {
  // Gradient accumulation: the optimizer (90..95) runs after every second
  // step. A longer period wins when it aligns at least one more item per
  // repetition: here six.
  Seq fwd = Step(2), opt{90, 91, 92, 93, 94, 95}, stream;
  for (int i = 0; i < 10; ++i) {
    stream.insert(stream.end(), fwd.begin(), fwd.end());
    if (i % 2 == 1) stream.insert(stream.end(), opt.begin(), opt.end());
  }
  auto al = FindSteps(stream, 0, "kernels");
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->step_end - al->step_begin, static_cast<int64_t>(2 * fwd.size() + opt.size()));
  EXPECT_EQ(al->repetitions.size(), 5u);
  for (size_t j = 0; j < stream.size(); ++j) EXPECT_GE(al->recorded_of[j], 0) << j;
}

TEST(FindSteps, TheUsersIterationCountPicksThePeriod) {
  // Nothing but identical layers: the stream itself cannot tell a step of
  // four layers from one layer. --iterations 3 can.
  Seq layer{10, 11, 12, 13, 14, 15};
  Seq stream = Repeat(layer, 12);
  auto free = FindSteps(stream, 0, "kernels");
  ASSERT_TRUE(free.ok());
  EXPECT_EQ(free->repetitions.size(), 12u);  // the shortest period
  auto told = FindSteps(stream, 3, "kernels");
  ASSERT_TRUE(told.ok()) << told.error().message;
  EXPECT_EQ(told->repetitions.size(), 3u);
  EXPECT_EQ(told->step_end - told->step_begin, 4 * static_cast<int64_t>(layer.size()));
}

TEST(FindSteps, AStreamWithoutRepetitionIsRefused) {
  Seq once(40);
  std::iota(once.begin(), once.end(), 100);
  auto al = FindSteps(once, 0, "kernels");
  ASSERT_FALSE(al.ok());
  EXPECT_NE(al.error().message.find("no step repeats"), std::string::npos) << al.error().message;
  EXPECT_FALSE(FindSteps({}, 0, "kernels").ok());
}

TEST(FindSteps, CommonSubsequencePairsTheSharedItemsInOrder) {
  Seq a{1, 2, 3, 4, 5}, b{1, 9, 3, 4, 8, 5};
  auto pairs = CommonSubsequence(a, b);
  std::vector<std::pair<int64_t, int64_t>> want{{0, 0}, {2, 2}, {3, 3}, {4, 5}};
  EXPECT_EQ(pairs, want);
}

}  // namespace
}  // namespace magneton::analysis
