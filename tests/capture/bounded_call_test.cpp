// RunWithin: exit-time work that never holds the host up longer than its bound.
#include "capture/cupti/bounded_call.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace magneton::capture {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(RunWithin, WorkThatFinishesIsWaitedFor) {
  std::atomic<bool> ran{false};
  EXPECT_TRUE(RunWithin([&] { ran = true; }, 2000ms));
  EXPECT_TRUE(ran.load());
}

// The writer blocked for good (a join that never returns): the caller goes on at the bound.
TEST(RunWithin, BlockedWorkIsLeftBehindAtTheBound) {
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool open = false;
  };
  auto gate = std::make_shared<Gate>();
  auto t0 = Clock::now();
  bool done = RunWithin(
      [gate] {
        std::unique_lock<std::mutex> lock(gate->mu);
        gate->cv.wait(lock, [&] { return gate->open; });
      },
      200ms);
  auto waited = Clock::now() - t0;
  EXPECT_FALSE(done);
  EXPECT_GE(waited, 200ms);
  EXPECT_LT(waited, 1500ms);
  {
    std::lock_guard<std::mutex> lock(gate->mu);
    gate->open = true;  // let the left-behind thread end before the test binary does
  }
  gate->cv.notify_all();
}

TEST(RunWithin, AnExceptionStillCountsAsFinished) {
  EXPECT_TRUE(RunWithin([] { throw 1; }, 2000ms));
}

TEST(StopStage, RemembersTheLastStage) {
  NoteStopStage("joining the CUPTI drain thread");
  EXPECT_STREQ(StopStage(), "joining the CUPTI drain thread");
}

}  // namespace
}  // namespace magneton::capture
