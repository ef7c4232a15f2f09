// Run files of every schema minor of this major keep loading. Each minor has
// a file, tests/data/versions/run-1.<minor>.mgt, holding FixtureRun() as
// that minor wrote it; it must read as FixtureRun() with the columns added
// after its minor at their defaults (tables.h, Since). FixtureRun() is frozen:
// a new minor sets its new columns here, then
//   MAGNETON_WRITE_FIXTURE=1 build/tests/core_tests --gtest_filter='StoreVersions.*'
//   sqlite3 tests/data/versions/run-1.<minor>.mgt 'PRAGMA page_size=512; VACUUM'
// writes its file (small pages keep it under 20 kB), to commit. Older files
// are never rewritten. (1.0 and 1.1 were made from the 1.2 file by dropping
// the later columns in sqlite3, recreating the views that name them.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/core.h>

#include "core/store.h"
#include "core/tables.h"

namespace magneton {
namespace {

std::string FixturePath(int minor) {
  return fmt::format("{}/versions/run-{}.{}.mgt", MAGNETON_TEST_DATA, kSchemaMajor, minor);
}

// A row or two per table, every column away from its default.
Run FixtureRun() {
  Run run;
  run.info = RunInfo{"python step.py", "fixture-host", "CLOCK_MONOTONIC", "0.1.0", 77, 1000, 9000,
                     {{"framework", "torch 2.11.0"}}};
  run.devices = {Device{0, "gpu", "Fixture GPU", "GPU-fixture", 1, int64_t{80} << 30}};
  run.frames = {Frame{0, "python", "forward", "model.py", 42, ""},
                Frame{1, "native", "at::addmm", "", 0, "libtorch_cuda.so"}};
  run.stacks = {Stack{0, {1, 0}}};
  // Frozen with the fixture files, whose fingerprints are of encoding 1.
  Fingerprint fp{64, 0.5, 1.25, -2, 3, 40, 9, {-2, 0.5, 3}, {{4, 2}}, SpectraKind::kSingularValues};
  run.tensors = {Tensor{0, 0x7f00, 0, 0, {8, 16}, {16, 1}, "float32", 0, "device", fp},
                 Tensor{1, 0x7f80, 2, 1, {}, {}, "bfloat16", kHostDevice, "pinned", std::nullopt}};
  run.ops = {Op{0, kNone, "aten::addmm", "aten::addmm(Tensor self) -> Tensor", "torch", 100, kNone, 7, 1100, 1900,
                0, 0, {1}, {0}, "beta=1, alpha=0.5"},
             Op{1, 0, "aten::mm", "", "torch", 101, 0, 7, 1200, 1800, kNone, 0, {0, 1}, {}, "out=None"}};
  run.kernels = {Kernel{0, "sm90_gemm", 0, 7, 1300, 1500, {132, 2, 1}, {128, 1, 1}, 168, 1024, 4096, 5000, 1, 0}};
  run.transfers = {Transfer{0, "HtoD", 4096, 0, 7, 1010, 1090, 4000, 0, "pageable", "device", true}};
  run.api_calls = {ApiCall{0, "cudaLaunchKernel", "runtime", 7, 1250, 1260, 5000, 0, 1},
                   ApiCall{1, "cudaEventQuery", "runtime", 7, 1300, 1400, 5001, kNone, 300}};
  run.ranges = {Range{0, "train_step", "nvtx", 7, 1000, 2000, kNone}};
  run.series = {SensorSeries{0, 0, "energy.total", "J", "nvml", {1000, 2000}, {10, 10.25}}};
  run.replays = {ReplayMeasurement{0, 0, "aten::addmm[8x16]", 0, 200, 5, 1.5e-4, 0.04, 80, 0.01, "ok"}};
  run.config = {{"CUDA_VISIBLE_DEVICES", "0"}};
  run.stats = {Stat{"cupti_records_dropped", "data_loss", 3, "activity buffer overflowed"}};
  return run;
}

// Members of columns newer than `minor` back to their defaults, as a file of
// `minor` reads.
template <class T>
void AsOfMinor(const T& table, std::vector<typename T::Row>* rows, int minor) {
  for (auto& row : *rows)
    tables::ForEachColumn(table, [&](const auto& c) {
      if (c.since > minor) c.Of(row) = c.Of(typename T::Row{});
    });
}

Run FixtureRunAsOf(int minor) {
  Run run = FixtureRun();
  AsOfMinor(tables::kDevices, &run.devices, minor);
  AsOfMinor(tables::kOps, &run.ops, minor);
  AsOfMinor(tables::kTensors, &run.tensors, minor);
  AsOfMinor(tables::kKernels, &run.kernels, minor);
  AsOfMinor(tables::kTransfers, &run.transfers, minor);
  AsOfMinor(tables::kApiCalls, &run.api_calls, minor);
  AsOfMinor(tables::kRanges, &run.ranges, minor);
  AsOfMinor(tables::kFrames, &run.frames, minor);
  AsOfMinor(tables::kSeries, &run.series, minor);
  AsOfMinor(tables::kReplays, &run.replays, minor);
  return run;
}

template <class T>
void ExpectRows(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i] == want[i]) << what << " row " << i;
}

TEST(StoreVersions, WriteTodaysFixtureWhenAsked) {
  if (!std::getenv("MAGNETON_WRITE_FIXTURE")) GTEST_SKIP() << "MAGNETON_WRITE_FIXTURE unset";
  ASSERT_TRUE(SaveRun(FixtureRun(), FixturePath(kSchemaMinor), /*overwrite=*/true).ok());
}

TEST(StoreVersions, TodaysMinorHasAFixture) {
  // A new minor commits its file, so every later build reads it.
  EXPECT_TRUE(std::filesystem::exists(FixturePath(kSchemaMinor))) << FixturePath(kSchemaMinor);
}

TEST(StoreVersions, EveryMinorsFileReads) {
  for (int minor = 0; minor <= kSchemaMinor; ++minor) {
    const std::string path = FixturePath(minor);
    SCOPED_TRACE(path);
    auto h = ReadHeader(path);
    ASSERT_TRUE(h.ok()) << h.error().message;
    EXPECT_EQ(h->schema_minor, minor);
    auto got = LoadRun(path);
    ASSERT_TRUE(got.ok()) << got.error().message;
    const magneton::Run want = FixtureRunAsOf(minor);
    EXPECT_TRUE(got->info == want.info);
    ExpectRows(got->devices, want.devices, "devices");
    ExpectRows(got->ops, want.ops, "ops");
    ExpectRows(got->tensors, want.tensors, "tensors");
    ExpectRows(got->kernels, want.kernels, "kernels");
    ExpectRows(got->transfers, want.transfers, "transfers");
    ExpectRows(got->api_calls, want.api_calls, "api_calls");
    ExpectRows(got->ranges, want.ranges, "ranges");
    ExpectRows(got->frames, want.frames, "frames");
    ExpectRows(got->stacks, want.stacks, "stacks");
    ExpectRows(got->series, want.series, "series");
    ExpectRows(got->replays, want.replays, "replays");
    ExpectRows(got->stats, want.stats, "stats");
    EXPECT_EQ(got->config, want.config);
  }
}

}  // namespace
}  // namespace magneton
