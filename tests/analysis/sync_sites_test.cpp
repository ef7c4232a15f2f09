// Which device waits follow a synchronizing call (sync_sites.h,
// WaitsAfterSyncs), on programs built with kernel_program.h.
#include "analysis/diff/sync_sites.h"

#include <gtest/gtest.h>

#include "analysis/diff/pass_align.h"
#include "kernel_program.h"

namespace magneton::analysis {
namespace {

// The host queues long kernels far ahead of the device, then reads a value
// back (cudaStreamSynchronize: it blocks until the device drains). After it,
// `slow` kernels launched slower than the device runs them (60 us a launch,
// 20 us kernels: the device waits ~40 us before each), then `fast` ones the
// host launches well ahead of them (4 us a launch, 40 us kernels: back to
// back), then `late` slow ones again.
magneton::Run AfterARead(int slow, int fast, int late) {
  fixture::KernelProgram p("prog");
  for (int i = 0; i < 20; ++i) p.Kernel("queued", 40'000);
  p.Copy("DtoH", 4, 1'500);
  p.Sync(0);
  auto run = [&](int n, int64_t launch_ns, int64_t kernel_ns) {
    p.launch_ns = launch_ns;
    for (int i = 0; i < n; ++i) p.Kernel("k", kernel_ns);
  };
  run(slow, 60'000, 20'000);
  run(fast, 4'000, 40'000);
  run(late, 60'000, 20'000);
  return p.Done();
}

int Counted(const std::vector<int>& after, size_t from, size_t to) {
  int n = 0;
  for (size_t j = from; j < to && j < after.size(); ++j) n += after[j] >= 0;
  return n;
}

TEST(SyncSites, WaitsAfterACallAreItsUntilTheHostRunsAheadAgain) {
  // The host blocked in the read for the 20 queued kernels, ~780 us. The 30
  // slow launches after it leave the device waiting ~40 us each (~1.2 ms in
  // all, more than it blocked): the host never got ahead again, so each wait
  // is the call's. Then the device runs 40 fast kernels back to back (1.6 ms,
  // longer than the host blocked): the host is ahead again, and the slow
  // launches after that are the program's own.
  const magneton::Run run = AfterARead(30, 40, 10);
  const auto work = DeviceWorkInLaunchOrder(run);
  const auto calls = SyncCalls(run);
  ASSERT_EQ(calls.size(), 1u);
  ASSERT_GT(calls[0].blocked_seconds(), 700e-6);
  const auto after = WaitsAfterSyncs(run, work, calls);
  ASSERT_EQ(after.size(), work.size());
  const size_t read = 21;  // 20 queued kernels and the copy
  EXPECT_EQ(Counted(after, 0, read), 0);
  // The first item after the call is its own place, not a wait after it.
  EXPECT_EQ(Counted(after, read, read + 30), 29);
  EXPECT_EQ(Counted(after, read + 30, work.size()), 0);
}

}  // namespace
}  // namespace magneton::analysis
