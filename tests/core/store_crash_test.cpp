// A recording process killed with SIGKILL loses at most its last second:
// a child writes kernel rows continuously and reports its progress through a
// pipe; the parent kills it after ~2.5 s and loads what reached the file.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/store.h"
#include "test_files.h"

namespace magneton {
namespace {

struct Progress {
  int64_t t_ns;     // CLOCK_MONOTONIC (steady_clock), shared by both processes
  int64_t written;  // kernels added so far
};

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr int kBurst = 200;

// The child: never returns. With `grouped`, each burst is one commit group.
[[noreturn]] void WriteUntilKilled(const std::string& path, int progress_fd, bool grouped) {
  RunInfo info;
  info.command = "crash test writer";
  auto w = RunWriter::Create(path, info);
  if (!w.ok()) _exit(3);
  int64_t id = 0;
  while (true) {
    // Bursts of 200 rows every millisecond, ~10^5 rows/s: steady, not a flood.
    // A group spreads its burst over ~20 ms, so that the writer thread takes
    // rows from the middle of one group after another.
    std::optional<CommitGroup> group;
    if (grouped) group.emplace(**w);
    for (int i = 0; i < kBurst; ++i, ++id) {
      if (grouped && i % 10 == 9) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      Kernel k;
      k.id = id;
      k.name = id % 2 ? "gemm" : "gelu";
      k.start_ns = id;
      k.end_ns = id + 1;
      if (!(*w)->Add(k).ok()) _exit(4);
    }
    group.reset();
    Progress p{NowNs(), id};
    if (write(progress_fd, &p, sizeof p) != sizeof p) _exit(5);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

struct Killed {
  std::vector<Progress> log;  // what the child reported written, and when
  int64_t kill_ns = 0;
};

// Runs a writing child for ~2.5 s and kills it with SIGKILL.
Killed WriteAndKill(const std::string& path, bool grouped) {
  Killed out;
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t child = fork();
  EXPECT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    WriteUntilKilled(path, fds[1], grouped);
  }
  close(fds[1]);

  std::vector<Progress>& log = out.log;
  auto drain = [&](int timeout_ms) {
    pollfd pfd{fds[0], POLLIN, 0};
    while (poll(&pfd, 1, timeout_ms) > 0) {
      Progress p;
      if (read(fds[0], &p, sizeof p) != sizeof p) break;
      log.push_back(p);
      timeout_ms = 0;
    }
  };
  const int64_t start = NowNs();
  while (NowNs() - start < 2'500'000'000) drain(10);
  out.kill_ns = NowNs();
  EXPECT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status)) << "writer exited early with " << WEXITSTATUS(status);
  drain(0);
  close(fds[0]);
  return out;
}

TEST(StoreCrash, KilledWriterLosesAtMostItsLastSecond) {
  testing::TempDir dir;
  const std::string path = dir / "killed.mgt";
  const auto [log, kill_ns] = WriteAndKill(path, false);
  ASSERT_FALSE(log.empty());

  std::string before = testing::ReadBytes(path);
  auto run = LoadRun(path);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(testing::ReadBytes(path), before) << "loading modified the killed run's file";

  // Everything reported written more than a second (plus scheduling slack on
  // a busy 2-core machine) before the kill must be in the file.
  int64_t must_have = 0;
  for (const auto& p : log)
    if (p.t_ns <= kill_ns - 1'250'000'000) must_have = p.written;
  const int64_t loaded = static_cast<int64_t>(run->kernels.size());
  EXPECT_GT(must_have, 0);
  EXPECT_GE(loaded, must_have);
  EXPECT_LE(loaded, log.back().written + 200);
  for (int64_t i = 0; i < loaded; ++i) ASSERT_EQ(run->kernels[i].name, i % 2 ? "gemm" : "gelu") << i;
  EXPECT_EQ(run->info.command, "crash test writer");
  ASSERT_FALSE(run->stats.empty());
  EXPECT_EQ(run->stats.back().name, "store.incomplete");
  std::cout << "[ info ] wrote " << log.back().written << " kernels, loaded " << loaded
            << " after SIGKILL (required >= " << must_have << ")\n";
}

TEST(StoreCrash, AKilledWriterKeepsCommitGroupsWholeOrNotAtAll) {
  testing::TempDir dir;
  const std::string path = dir / "groups.mgt";
  const auto [log, kill_ns] = WriteAndKill(path, true);
  ASSERT_FALSE(log.empty());
  auto run = LoadRun(path);
  ASSERT_TRUE(run.ok()) << run.error().message;
  const int64_t loaded = static_cast<int64_t>(run->kernels.size());
  EXPECT_EQ(loaded % kBurst, 0) << loaded;
  // Groups still commit as they end: all but about the last second is there.
  int64_t must_have = 0;
  for (const auto& p : log)
    if (p.t_ns <= kill_ns - 1'250'000'000) must_have = p.written;
  EXPECT_GT(must_have, 0);
  EXPECT_GE(loaded, must_have);
}

}  // namespace
}  // namespace magneton
