// Every table of the run store survives a write and a load unchanged.
#include <gtest/gtest.h>

#include "core/store.h"
#include "sample_run.h"
#include "test_files.h"

namespace magneton {
namespace {

using testing::MakeSampleRun;
using testing::TempDir;

// Compares element by element so a failure names the table and the row.
template <class T>
void ExpectRows(const std::vector<T>& got, const std::vector<T>& want, const char* table) {
  ASSERT_EQ(got.size(), want.size()) << table;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i] == want[i]) << table << " row " << i;
}

TEST(StoreRoundTrip, EveryTableComesBackEqual) {
  TempDir dir;
  magneton::Run run = MakeSampleRun();
  ASSERT_TRUE(SaveRun(run, dir / "run.mgt").ok());
  auto loaded = LoadRun(dir / "run.mgt");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const magneton::Run& got = *loaded;

  EXPECT_TRUE(got.info == run.info);
  ExpectRows(got.devices, run.devices, "devices");
  ExpectRows(got.ops, run.ops, "ops");
  ExpectRows(got.tensors, run.tensors, "tensors");
  ExpectRows(got.kernels, run.kernels, "kernels");
  ExpectRows(got.transfers, run.transfers, "transfers");
  ExpectRows(got.api_calls, run.api_calls, "api_calls");
  ExpectRows(got.ranges, run.ranges, "ranges");
  ExpectRows(got.frames, run.frames, "frames");
  ExpectRows(got.stacks, run.stacks, "stacks");
  ExpectRows(got.series, run.series, "series");
  ExpectRows(got.replays, run.replays, "replays");
  ExpectRows(got.stats, run.stats, "stats");
  EXPECT_EQ(got.config, run.config);
}

TEST(StoreRoundTrip, DataflowAndFingerprintsAreKept) {
  TempDir dir;
  magneton::Run run = MakeSampleRun(8, 4);
  ASSERT_TRUE(SaveRun(run, dir / "run.mgt").ok());
  auto got = LoadRun(dir / "run.mgt");
  ASSERT_TRUE(got.ok()) << got.error().message;
  // Op 3 (i % 4 == 3) has two outputs; op i reads tensors 2i and 2i+1.
  EXPECT_EQ(got->ops[3].inputs, (std::vector<int64_t>{6, 7}));
  EXPECT_EQ(got->ops[3].outputs, (std::vector<int64_t>{8, 9}));
  int with_fp = 0, with_spectra = 0;
  for (size_t i = 0; i < got->tensors.size(); ++i) {
    const Tensor& t = got->tensors[i];
    EXPECT_EQ(t.id, static_cast<int64_t>(i));
    EXPECT_EQ(t.fingerprint.has_value(), i % 3 != 2) << i;
    if (!t.fingerprint) continue;
    ++with_fp;
    with_spectra += !t.fingerprint->spectra.empty();
    EXPECT_EQ(t.fingerprint->quantiles.size(), 9u);
    EXPECT_EQ(t.fingerprint->spectra.size(), i % 3);
  }
  EXPECT_GT(with_fp, 0);
  EXPECT_GT(with_spectra, 0);
  // A scalar tensor has an empty shape, not a missing one.
  EXPECT_TRUE(got->tensors[3].shape.empty());
  EXPECT_EQ(got->tensors[0].shape, (std::vector<int64_t>{8, 16, 4}));
}

TEST(StoreRoundTrip, EmptyRunLoads) {
  TempDir dir;
  magneton::Run run;
  run.info.command = "true";
  ASSERT_TRUE(SaveRun(run, dir / "empty.mgt").ok());
  auto got = LoadRun(dir / "empty.mgt");
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->info.command, "true");
  EXPECT_TRUE(got->kernels.empty());
  EXPECT_TRUE(got->stats.empty());  // closed properly: no store.incomplete
}

TEST(StoreRoundTrip, ReadHeaderGivesVersionAndInfo) {
  TempDir dir;
  magneton::Run run = MakeSampleRun();
  ASSERT_TRUE(SaveRun(run, dir / "run.mgt").ok());
  auto h = ReadHeader(dir / "run.mgt");
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->schema_major, kSchemaMajor);
  EXPECT_EQ(h->schema_minor, kSchemaMinor);
  EXPECT_TRUE(h->info == run.info);
}

TEST(StoreRoundTrip, FinishedRunIsOneFile) {
  TempDir dir;
  ASSERT_TRUE(SaveRun(MakeSampleRun(), dir / "run.mgt").ok());
  EXPECT_TRUE(std::filesystem::exists(dir / "run.mgt"));
  EXPECT_FALSE(std::filesystem::exists(dir / "run.mgt-wal"));
  EXPECT_FALSE(std::filesystem::exists(dir / "run.mgt-shm"));
}

TEST(StoreRoundTrip, SaveRefusesToOverwriteUnlessAsked) {
  TempDir dir;
  ASSERT_TRUE(SaveRun(MakeSampleRun(), dir / "run.mgt").ok());
  std::string before = testing::ReadBytes(dir / "run.mgt");
  Status st = SaveRun(magneton::Run{}, dir / "run.mgt");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find(dir / "run.mgt"), std::string::npos) << st.message();
  EXPECT_EQ(testing::ReadBytes(dir / "run.mgt"), before);

  ASSERT_TRUE(SaveRun(magneton::Run{}, dir / "run.mgt", /*overwrite=*/true).ok());
  auto got = LoadRun(dir / "run.mgt");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->kernels.empty());
}

TEST(StoreRoundTrip, AppendReplaysContinuesIds) {
  TempDir dir;
  magneton::Run run = MakeSampleRun();
  ASSERT_TRUE(SaveRun(run, dir / "run.mgt").ok());
  ReplayMeasurement extra{};
  extra.id = 77;  // ignored: appended rows get the next dense ids
  extra.op = 2;
  extra.key = "aten::add[8x16x8]";
  extra.device = 1;
  extra.calls = 500;
  extra.repeats = 4;
  extra.joules_per_call = 0.5;
  extra.status = "ok";
  ASSERT_TRUE(AppendReplays(dir / "run.mgt", {extra, extra}).ok());
  auto got = LoadRun(dir / "run.mgt");
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->replays.size(), run.replays.size() + 2);
  for (size_t i = 0; i < run.replays.size(); ++i) EXPECT_TRUE(got->replays[i] == run.replays[i]);
  for (size_t i = run.replays.size(); i < got->replays.size(); ++i) {
    EXPECT_EQ(got->replays[i].id, static_cast<int64_t>(i));
    EXPECT_EQ(got->replays[i].key, extra.key);
    EXPECT_EQ(got->replays[i].joules_per_call, 0.5);
  }
  ExpectRows(got->kernels, run.kernels, "kernels");
}

TEST(StoreRoundTrip, AppendReplaysToMissingFileNamesIt) {
  TempDir dir;
  Status st = AppendReplays(dir / "nope.mgt", {ReplayMeasurement{}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(st.message(), dir / "nope.mgt" + ": no such file");
  EXPECT_FALSE(std::filesystem::exists(dir / "nope.mgt"));
}

}  // namespace
}  // namespace magneton
