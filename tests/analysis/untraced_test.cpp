// The steps a measured pass ran after kernel tracing stopped: summarized from
// their marks and the energy counter, and cut from the run the timeline and
// the attribution read.
#include "analysis/diff/untraced.h"

#include <gtest/gtest.h>

namespace magneton::analysis {
namespace {

constexpr int64_t kMs = 1'000'000;

Range Mark(int64_t t) { return {0, kStepMark, kMagnetonDomain, 7, t, t, kNone}; }

// A GPU drawing 200 W for 3 s, its counter read every 10 ms; steps of 20 ms
// until tracing stops at 1.001 s, then of 10 ms; an NVTX range across the cut
// with a child after it.
Run TracedThenUntraced() {
  Run run;
  run.info.start_ns = 0;
  run.info.end_ns = 3000 * kMs;
  run.info.extra[kTracedUntilKey] = std::to_string(1001 * kMs);
  run.devices.push_back({0, "gpu", "Test GPU", "GPU-0", 0, 0});
  SensorSeries e{0, 0, "energy.total", "J", "nvml", {}, {}};
  for (int64_t t = 0; t <= 3000 * kMs; t += 10 * kMs) {
    e.t_ns.push_back(t);
    e.value.push_back(200.0 * t * 1e-9);
  }
  run.series.push_back(e);
  for (int64_t t = 100 * kMs; t <= 1000 * kMs; t += 20 * kMs) run.ranges.push_back(Mark(t));
  for (int64_t t = 1100 * kMs; t <= 2900 * kMs; t += 10 * kMs) run.ranges.push_back(Mark(t));
  run.ranges.push_back({0, "late child", "app", 7, 1500 * kMs, 1600 * kMs, kNone});
  run.ranges.push_back({0, "outer", "app", 7, 50 * kMs, 2000 * kMs, kNone});
  run.ranges[run.ranges.size() - 2].parent = static_cast<int64_t>(run.ranges.size() - 1);
  for (size_t i = 0; i < run.ranges.size(); ++i) run.ranges[i].id = static_cast<int64_t>(i);
  return run;
}

TEST(Untraced, StepsAfterTheCutGiveTimeAndEnergyPerStep) {
  magneton::Run run = TracedThenUntraced();
  auto u = TakeUntracedSteps(run);
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->steps, 180);
  EXPECT_NEAR(u->seconds, 0.010, 1e-9);
  EXPECT_NEAR(u->joules, 2.0, 1e-6);  // 200 W x 10 ms
}

TEST(Untraced, TheRunKeepsOnlyWhatCameBeforeTheCut) {
  magneton::Run run = TracedThenUntraced();
  ASSERT_TRUE(TakeUntracedSteps(run).has_value());
  EXPECT_EQ(run.info.end_ns, 1001 * kMs);
  EXPECT_FALSE(run.info.extra.count(kTracedUntilKey));
  ASSERT_EQ(run.ranges.size(), 47u);  // 46 traced marks and the range across the cut
  for (size_t i = 0; i < run.ranges.size(); ++i) {
    EXPECT_EQ(run.ranges[i].id, static_cast<int64_t>(i));
    EXPECT_LE(run.ranges[i].start_ns, 1001 * kMs);
  }
  EXPECT_EQ(run.ranges.back().name, "outer");
  // The counter keeps its first reading past the cut, so the traced stretch's end is bracketed.
  ASSERT_FALSE(run.series[0].t_ns.empty());
  EXPECT_EQ(run.series[0].t_ns.back(), 1010 * kMs);
  EXPECT_EQ(run.series[0].t_ns.size(), run.series[0].value.size());
}

TEST(Untraced, AnIdleHoldBeforeTheCutEndsTheWindowAndKeepsItsReadingsOnly) {
  magneton::Run run = TracedThenUntraced();
  run.info.extra[kIdleHeldKey] = std::to_string(700 * kMs) + " " + std::to_string(1000 * kMs);
  ASSERT_TRUE(TakeUntracedSteps(run).has_value());
  EXPECT_EQ(run.info.end_ns, 700 * kMs);  // the window ends where the hold began
  // Readings through the hold stay for the activity model; none past it, where
  // the untraced steps' busy time is unknown.
  EXPECT_EQ(run.series[0].t_ns.back(), 1000 * kMs);
}

TEST(Untraced, AChildAfterTheCutLeavesItsParentsIdRight) {
  magneton::Run run = TracedThenUntraced();
  run.ranges.push_back({0, "kept child", "app", 7, 60 * kMs, 70 * kMs, kNone});
  run.ranges.back().id = static_cast<int64_t>(run.ranges.size() - 1);
  run.ranges.back().parent = run.ranges.size() - 2;  // "outer"
  ASSERT_TRUE(TakeUntracedSteps(run).has_value());
  ASSERT_EQ(run.ranges.back().name, "kept child");
  EXPECT_EQ(run.ranges[run.ranges.back().parent].name, "outer");
}

TEST(Untraced, ARunTracedToItsEndIsLeftAsItIs) {
  magneton::Run run = TracedThenUntraced();
  run.info.extra.erase(kTracedUntilKey);
  const magneton::Run before = run;
  EXPECT_FALSE(TakeUntracedSteps(run).has_value());
  EXPECT_EQ(run.ranges, before.ranges);
  EXPECT_EQ(run.series, before.series);
}

TEST(Untraced, WithoutGpuEnergyOnlyTheTimeIsMeasured) {
  magneton::Run run = TracedThenUntraced();
  run.series.clear();
  auto u = TakeUntracedSteps(run);
  ASSERT_TRUE(u.has_value());
  EXPECT_NEAR(u->seconds, 0.010, 1e-9);
  EXPECT_TRUE(std::isnan(u->joules));
}

TEST(Untraced, AStretchUnderASecondGetsNoEnergy) {
  magneton::Run run = TracedThenUntraced();
  std::erase_if(run.ranges, [](const Range& r) { return r.start_ns > 1500 * kMs && IsStepMark(r); });
  for (size_t i = 0; i < run.ranges.size(); ++i) run.ranges[i].id = static_cast<int64_t>(i);
  run.ranges[run.ranges.size() - 2].parent = static_cast<int64_t>(run.ranges.size() - 1);
  auto u = TakeUntracedSteps(run);  // 1.1 to 1.5 s: 40 steps, 0.4 s
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->steps, 40);
  EXPECT_NEAR(u->seconds, 0.010, 1e-9);
  EXPECT_TRUE(std::isnan(u->joules));
}

TEST(Untraced, NoteWhenTheTracedStepsRanSlower) {
  UntracedSteps u{180, 0.010, 2.0};
  StepTimeline slow;
  slow.traced_seconds = 0.020;
  EXPECT_NE(UntracedNote('a', u, slow).find("+100%"), std::string::npos);
  EXPECT_NE(UntracedNote('a', u, slow).find("costed on the traced steps"), std::string::npos);
  StepTimeline close;
  close.traced_seconds = 0.0105;
  EXPECT_EQ(UntracedNote('a', u, close), "");
  EXPECT_EQ(UntracedNote('a', std::nullopt, slow), "");
  EXPECT_NE(UntracedNote('b', UntracedSteps{}, slow).find("fewer than two step marks"), std::string::npos);
  // Trimmed: what was taken off each gap is said.
  StepTimeline trimmed = slow;
  trimmed.tracer_delay_ns = 8000;
  const std::string note = UntracedNote('a', u, trimmed);
  EXPECT_NE(note.find("8 us was taken off each idle gap"), std::string::npos) << note;
}

}  // namespace
}  // namespace magneton::analysis
