// The streaming RunWriter: incremental adds, late links, stats that add up,
// id order enforcement, and what it refuses.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/store.h"
#include "sample_run.h"
#include "test_files.h"

namespace magneton {
namespace {

using testing::TempDir;

// A writer with device 0 already added (kernels name it).
std::unique_ptr<RunWriter> MustCreate(const std::string& path, const RunInfo& info = {}) {
  auto w = RunWriter::Create(path, info);
  EXPECT_TRUE(w.ok()) << (w.ok() ? "" : w.error().message);
  if (!w.ok()) return nullptr;
  EXPECT_TRUE((*w)->Add(Device{0, "gpu", "Sample GPU", "GPU-1", 0, 1 << 30}).ok());
  return std::move(*w);
}

Kernel MakeKernel(int64_t id, const std::string& name) {
  Kernel k;
  k.id = id;
  k.name = name;
  k.start_ns = 100 * id;
  k.end_ns = 100 * id + 50;
  return k;
}

TEST(RunWriter, StreamsRowsAndLinksLate) {
  TempDir dir;
  RunInfo info;
  info.command = "python serve.py";
  info.start_ns = 10;
  auto w = MustCreate(dir / "run.mgt", info);
  ASSERT_TRUE(w);
  Op op;
  op.id = 0;
  op.name = "aten::mm";
  ASSERT_TRUE(w->Add(op).ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(w->Add(MakeKernel(i, i % 2 ? "gemm" : "gelu")).ok());
  ASSERT_TRUE(w->Add(Transfer{0, "HtoD", 64, 0, 1, 5, 9, 3, kNone, "pinned", "device", false}).ok());
  // CUPTI delivers kernels before the op they belong to is known.
  ASSERT_TRUE(w->LinkKernel(3, 0).ok());
  ASSERT_TRUE(w->LinkTransfer(0, 0).ok());
  ASSERT_TRUE(w->AddSeries(SensorSeries{0, 0, "power.usage", "W", "nvml", {1}, {90.0}}).ok());
  ASSERT_TRUE(w->AddSample(0, 2, 95.5).ok());
  ASSERT_TRUE(w->AddSample(0, 3, 99.25).ok());
  ASSERT_TRUE(w->Add(Stat{"cupti_records_dropped", "data_loss", 2, "overflow"}).ok());
  ASSERT_TRUE(w->Add(Stat{"cupti_records_dropped", "data_loss", 5, "overflow"}).ok());
  ASSERT_TRUE(w->SetConfig("allow_tf32", "False").ok());
  ASSERT_TRUE(w->SetConfig("allow_tf32", "True").ok());  // last value wins
  info.end_ns = 999;
  ASSERT_TRUE(w->SetInfo(info).ok());
  ASSERT_TRUE(w->Close().ok());

  auto run = LoadRun(dir / "run.mgt");
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_EQ(run->kernels.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(run->kernels[i].name, i % 2 ? "gemm" : "gelu");
    EXPECT_EQ(run->kernels[i].op, i == 3 ? 0 : kNone);
  }
  EXPECT_EQ(run->transfers.at(0).op, 0);
  ASSERT_EQ(run->series.size(), 1u);
  EXPECT_EQ(run->series[0].t_ns, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(run->series[0].value, (std::vector<double>{90.0, 95.5, 99.25}));
  ASSERT_EQ(run->stats.size(), 1u);
  EXPECT_EQ(run->stats[0].value, 7);
  EXPECT_EQ(run->config.at("allow_tf32"), "True");
  EXPECT_EQ(run->info.end_ns, 999);
  EXPECT_EQ(run->info.command, "python serve.py");
}

TEST(RunWriter, RefusesIdsOutOfOrder) {
  TempDir dir;
  auto w = MustCreate(dir / "run.mgt");
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->Add(MakeKernel(0, "a")).ok());
  Status st = w->Add(MakeKernel(2, "b"));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("kernel id 2 out of order (expected 1)"), std::string::npos) << st.message();
  EXPECT_TRUE(w->Add(MakeKernel(1, "b")).ok());
  EXPECT_FALSE(w->AddSample(0, 1, 1.0).ok());  // no series declared
  EXPECT_FALSE(w->LinkKernel(5, 0).ok());      // no such kernel
  ASSERT_TRUE(w->Close().ok());
  EXPECT_FALSE(w->Add(MakeKernel(2, "c")).ok());  // closed
  auto run = LoadRun(dir / "run.mgt");
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->kernels.size(), 2u);
}

TEST(RunWriter, FlushMakesRowsVisibleToReaders) {
  TempDir dir;
  auto w = MustCreate(dir / "run.mgt");
  ASSERT_TRUE(w);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(w->Add(MakeKernel(i, "k")).ok());
  ASSERT_TRUE(w->Flush().ok());
  ASSERT_TRUE(w->Add(MakeKernel(100, "uncommitted")).ok());
  // A reader sees the flushed rows while the writer is still open, and is
  // told the run is not closed.
  auto run = LoadRun(dir / "run.mgt");
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->kernels.size(), 100u);
  ASSERT_FALSE(run->stats.empty());
  EXPECT_EQ(run->stats.back().name, "store.incomplete");
  ASSERT_TRUE(w->Close().ok());
  run = LoadRun(dir / "run.mgt");
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->kernels.size(), 101u);
  EXPECT_TRUE(run->stats.empty());
}

TEST(RunWriter, DestructorClosesTheRun) {
  TempDir dir;
  {
    auto w = MustCreate(dir / "run.mgt");
    ASSERT_TRUE(w);
    ASSERT_TRUE(w->Add(MakeKernel(0, "k")).ok());
  }
  auto run = LoadRun(dir / "run.mgt");
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->kernels.size(), 1u);
  EXPECT_TRUE(run->stats.empty());
}

TEST(RunWriter, ForkedChildCannotTouchTheParentsRun) {
  TempDir dir;
  auto w = MustCreate(dir / "run.mgt");
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->Add(MakeKernel(0, "parent")).ok());
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child has the writer's memory but not its thread: every call is
    // refused, and destroying it must neither hang nor touch the file.
    Status add = w->Add(MakeKernel(1, "child"));
    Status close = w->Close();
    w.reset();
    bool ok = !add.ok() && add.message().find("forked") != std::string::npos && !close.ok();
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ASSERT_TRUE(w->Add(MakeKernel(1, "parent")).ok());
  ASSERT_TRUE(w->Close().ok());
  auto run = LoadRun(dir / "run.mgt");
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_EQ(run->kernels.size(), 2u);
  EXPECT_EQ(run->kernels[1].name, "parent");
}

TEST(RunWriter, CreateInMissingDirectoryNamesThePath) {
  TempDir dir;
  auto w = RunWriter::Create(dir / "no/such/dir/run.mgt", RunInfo{});
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find(dir / "no/such/dir/run.mgt"), std::string::npos) << w.error().message;
}

}  // namespace
}  // namespace magneton
