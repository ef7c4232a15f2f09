// RecordingGate: user pause/resume, the --delay/--duration window, --only-ranges.
#include <gtest/gtest.h>

#include "capture/cupti/recording_gate.h"

namespace magneton::capture {
namespace {

using Config = RecordingGate::Config;

TEST(RecordingGate, OnFromTheStartByDefault) {
  RecordingGate g(Config{});
  EXPECT_TRUE(g.active());
  EXPECT_FALSE(g.Tick(1'000'000'000));
  EXPECT_TRUE(g.active());
}

TEST(RecordingGate, StartPausedWaitsForTheUser) {
  Config c;
  c.start_paused = true;
  RecordingGate g(c);
  EXPECT_FALSE(g.active());
  EXPECT_TRUE(g.SetUser(true));
  EXPECT_TRUE(g.active());
  EXPECT_TRUE(g.SetUser(false));
  EXPECT_FALSE(g.SetUser(false));
}

TEST(RecordingGate, DelayAndDurationOpenAndCloseTheWindowOnce) {
  Config c;
  c.start_ns = 1000;
  c.delay_ns = 500;
  c.duration_ns = 200;
  RecordingGate g(c);
  EXPECT_FALSE(g.active());
  EXPECT_EQ(g.next_deadline(), 1500);
  EXPECT_FALSE(g.Tick(1499));
  EXPECT_TRUE(g.Tick(1500));
  EXPECT_TRUE(g.active());
  EXPECT_EQ(g.next_deadline(), 1700);
  EXPECT_TRUE(g.Tick(1700));
  EXPECT_FALSE(g.active());
  EXPECT_TRUE(g.finished());
  EXPECT_FALSE(g.Tick(1600));  // time does not reopen it
  EXPECT_FALSE(g.SetUser(true));
}

TEST(RecordingGate, OnlyRangesFollowsTheDepth) {
  Config c;
  c.only_ranges = true;
  RecordingGate g(c);
  EXPECT_FALSE(g.active());
  EXPECT_TRUE(g.EnterRange());
  EXPECT_FALSE(g.EnterRange());  // nested or another thread: still on
  EXPECT_FALSE(g.ExitRange());
  EXPECT_TRUE(g.ExitRange());
  EXPECT_FALSE(g.ExitRange());  // a pop from before tracing began
  EXPECT_EQ(g.range_depth(), 0);
}

TEST(RecordingGate, AllConditionsMustHold) {
  Config c;
  c.only_ranges = true;
  RecordingGate g(c);
  g.EnterRange();
  EXPECT_TRUE(g.active());
  EXPECT_TRUE(g.SetUser(false));
  EXPECT_FALSE(g.ExitRange());
  EXPECT_FALSE(g.EnterRange());
  EXPECT_TRUE(g.SetUser(true));
}

}  // namespace
}  // namespace magneton::capture
