// Launch stacks: captured on the calling thread, interned, symbolized later.
#include <gtest/gtest.h>

#include <thread>

#include "capture/cupti/stack_table.h"
#include "records.h"

namespace magneton::testing {
namespace {

using capture::CaptureStack;
using capture::StackTable;

__attribute__((noinline)) int CaptureHere(uintptr_t* ips) { return CaptureStack(ips, 64); }

TEST(StackTable, SameCallSiteInternsOnce) {
  StackTable table;
  uintptr_t s[2][64];
  int n[2];
  volatile int count = 2;  // a bound the compiler cannot see, so the loop is not unrolled into two call sites
  for (int i = 0; i < count; ++i) n[i] = CaptureHere(s[i]);
  // Two captures from one loop line differ only if the unwinder is broken.
  ASSERT_GT(n[0], 2);
  EXPECT_EQ(table.Intern(s[0], n[0]), table.Intern(s[1], n[1]));
  uintptr_t c[64];
  int nc = CaptureStack(c, 64);  // another call site
  EXPECT_NE(table.Intern(c, nc), table.Intern(s[0], n[0]));
  EXPECT_EQ(table.interned(), 2);
}

TEST(StackTable, InternIsSafeFromManyThreads) {
  StackTable table;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      uintptr_t ips[64];
      for (int i = 0; i < 200; ++i) table.Intern(ips, CaptureHere(ips));
    });
  for (auto& t : threads) t.join();
  // One call site, but each thread's stack bottom differs: at most one per thread.
  EXPECT_GE(table.interned(), 1);
  EXPECT_LE(table.interned(), 4);
}

TEST(StackTable, WritesFramesAndStacksOnceEach) {
  TempDir dir;
  auto writer = RunWriter::Create(dir / "s.mgt", RunInfo{});
  ASSERT_TRUE(writer.ok());
  // Leading frames from the test binary itself are dropped, like the tracer's own.
  StackTable table({"libnothing"});
  uintptr_t ips[64];
  int n = CaptureHere(ips);
  uint32_t first = table.Intern(ips, n);
  EXPECT_EQ(table.RunId(first), kNone);  // not written yet
  ASSERT_TRUE(table.WriteNew(writer->get()).ok());
  EXPECT_EQ(table.RunId(first), 0);
  ASSERT_TRUE(table.WriteNew(writer->get()).ok());  // nothing new
  ASSERT_TRUE((*writer)->Close().ok());
  auto run = LoadRun(dir / "s.mgt");
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_EQ(run->stacks.size(), 1u);
  EXPECT_EQ(run->stacks[0].frames.size(), static_cast<size_t>(n));
  bool libc = false;
  for (const Frame& f : run->frames) {
    EXPECT_EQ(f.kind, "native");
    EXPECT_FALSE(f.function.empty());
    libc |= f.module.find("libc.so") != std::string::npos;
  }
  EXPECT_TRUE(libc) << "the outermost frames (__libc_start_main) come from libc";
}

TEST(StackTable, SkipsTheTracersOwnInnermostFrames) {
  TempDir dir;
  auto writer = RunWriter::Create(dir / "s.mgt", RunInfo{});
  ASSERT_TRUE(writer.ok());
  uintptr_t ips[64];
  int n = CaptureHere(ips);
  StackTable all, skipped({"capture_tests"});
  all.Intern(ips, n);
  skipped.Intern(ips, n);
  ASSERT_TRUE(all.WriteNew(writer->get()).ok());
  auto writer2 = RunWriter::Create(dir / "t.mgt", RunInfo{});
  ASSERT_TRUE(skipped.WriteNew(writer2->get()).ok());
  EXPECT_LT(skipped.frames_written(), all.frames_written());
  ASSERT_TRUE((*writer)->Close().ok());
  ASSERT_TRUE((*writer2)->Close().ok());
}

}  // namespace
}  // namespace magneton::testing
