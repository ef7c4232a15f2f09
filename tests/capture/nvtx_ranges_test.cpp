// RangeBuilder: NVTX start/end markers paired into ranges with dense ids.
#include <gtest/gtest.h>

#include "capture/cupti/nvtx_ranges.h"

namespace magneton::capture {
namespace {

TEST(RangeBuilder, NothingIsReadyWhileTheOutermostRangeIsOpen) {
  RangeBuilder b;
  b.Start(1, "outer", "", 7, 100, true);
  b.Start(2, "inner", "", 7, 110, true);
  b.End(2, 120);
  EXPECT_TRUE(b.TakeReady().empty());
  b.End(1, 200);
  auto ready = b.TakeReady();
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_EQ(ready[0].name, "inner");
  EXPECT_EQ(ready[0].id, 0);
  EXPECT_EQ(ready[0].parent, 1);
  EXPECT_EQ(ready[1].name, "outer");
  EXPECT_EQ(ready[1].id, 1);
  EXPECT_EQ(ready[1].parent, kNone);
  EXPECT_EQ(b.open(), 0);
}

TEST(RangeBuilder, IdsStayDenseAcrossSubtrees) {
  RangeBuilder b(10);  // ranges written by someone else come first
  for (uint32_t step = 0; step < 3; ++step) {
    b.Start(100 + step * 10, "step", "", 1, step * 100, true);
    b.Start(101 + step * 10, "fwd", "", 1, step * 100 + 1, true);
    b.Start(102 + step * 10, "mm", "", 1, step * 100 + 2, true);
    b.End(102 + step * 10, step * 100 + 3);
    b.End(101 + step * 10, step * 100 + 4);
    b.End(100 + step * 10, step * 100 + 5);
  }
  auto ready = b.TakeReady();
  ASSERT_EQ(ready.size(), 9u);
  for (size_t i = 0; i < ready.size(); ++i) EXPECT_EQ(ready[i].id, static_cast<int64_t>(10 + i));
  EXPECT_EQ(ready[0].parent, ready[1].id);  // mm in fwd
  EXPECT_EQ(ready[1].parent, ready[2].id);  // fwd in step
}

TEST(RangeBuilder, ThreadsNestSeparately) {
  RangeBuilder b;
  b.Start(1, "a", "", 1, 0, true);
  b.Start(2, "b", "", 2, 1, true);  // another thread: not a child of a
  b.End(1, 5);
  auto ready = b.TakeReady();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].name, "a");
  b.End(2, 6);
  ready = b.TakeReady();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].parent, kNone);
}

TEST(RangeBuilder, StartEndRangesDoNotNest) {
  RangeBuilder b;
  b.Start(1, "push", "", 1, 0, true);
  b.Start(2, "start/end", "", 1, 1, false);
  b.End(2, 2);
  auto ready = b.TakeReady();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].parent, kNone);
}

TEST(RangeBuilder, ParentEndingFirstStillGivesTheChildItsParent) {
  RangeBuilder b;
  b.Start(1, "parent", "", 1, 0, true);
  b.Start(2, "child", "", 1, 1, true);
  b.End(1, 5);  // out of order
  auto first = b.TakeReady();
  ASSERT_EQ(first.size(), 1u);
  b.End(2, 6);
  auto second = b.TakeReady();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].parent, first[0].id);
  EXPECT_GT(second[0].id, first[0].id);
}

TEST(RangeBuilder, CloseAllEndsOpenRangesInnermostFirst) {
  RangeBuilder b;
  b.Start(1, "outer", "", 1, 0, true);
  b.Start(2, "inner", "", 1, 10, true);
  b.CloseAll(99);
  auto ready = b.TakeReady();
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_EQ(ready[0].name, "inner");
  EXPECT_EQ(ready[0].parent, ready[1].id);
  EXPECT_EQ(ready[1].end_ns, 99);
  EXPECT_EQ(b.closed_at_stop(), 2);
}

TEST(RangeBuilder, EndWithoutStartIsCounted) {
  RangeBuilder b;
  b.End(42, 1);
  EXPECT_EQ(b.unmatched_ends(), 1);
  EXPECT_TRUE(b.TakeReady().empty());
}

}  // namespace
}  // namespace magneton::capture
