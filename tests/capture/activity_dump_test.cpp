// Activity dumps: raw records saved by the tracer (MAGNETON_CUPTI_DUMP) and
// replayed through the processor; committed dumps from real runs live in
// tests/data/cupti/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "capture/cupti/activity_dump.h"
#include "records.h"

namespace magneton::testing {
namespace {

using capture::ActivityDump;
using capture::DumpWriter;
using capture::LoadDump;

std::string WriteDump(const TempDir& dir, const std::vector<RawRecord>& records, uint64_t max = 1 << 20) {
  std::string path = dir / "cupti-1.bin";
  auto w = DumpWriter::Create(path, max);
  EXPECT_TRUE(w.ok()) << w.error().message;
  for (const auto& r : records) EXPECT_TRUE((*w)->Write(r.get(), r.size).ok());
  EXPECT_TRUE((*w)->WriteApiName(CUPTI_CB_DOMAIN_RUNTIME_API, 211, "cudaLaunchKernel").ok());
  EXPECT_TRUE((*w)->Close().ok());
  return path;
}

// The dump's records as the live path would see them, one aligned copy each.
std::vector<RawRecord> RecordsOf(const ActivityDump& dump) {
  std::vector<RawRecord> out;
  for (size_t i = 0; i < dump.entries.size(); ++i) {
    RawRecord r;
    r.size = dump.size(i);
    r.words.resize((r.size + 7) / 8);
    std::memcpy(r.words.data(), dump.record(i), r.size);
    out.push_back(std::move(r));
  }
  return out;
}

TEST(ActivityDump, RoundTripKeepsRecordsAndNames) {
  TempDir dir;
  std::string gemm = "_Z4gemmPf";  // the dump must not keep pointers to this buffer
  auto path = WriteDump(dir, {KernelRecord(gemm.c_str(), 0, 3, 100, 200), ApiRecord(true, 211, 9, 3, 90, 95),
                              MarkerRecord(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, "step", 9, 80, "dom"),
                              MarkerRecord(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, nullptr, 9, 300)});
  gemm.assign(gemm.size(), 'x');
  auto dump = LoadDump(path);
  ASSERT_TRUE(dump.ok()) << dump.error().message;
  ASSERT_EQ(dump->entries.size(), 4u);
  EXPECT_EQ(dump->cupti_version, static_cast<uint32_t>(CUPTI_API_VERSION));
  auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(dump->record(0));
  EXPECT_EQ(dump->size(0), sizeof(CUpti_ActivityKernel10));
  EXPECT_STREQ(k->name, "_Z4gemmPf");
  EXPECT_EQ(k->start, 100u);
  EXPECT_EQ(k->correlationId, 3u);
  auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(dump->record(2));
  EXPECT_STREQ(m->name, "step");
  EXPECT_STREQ(m->domain, "dom");
  auto* end = reinterpret_cast<const CUpti_ActivityMarker2*>(dump->record(3));
  EXPECT_EQ(end->name, nullptr);
  EXPECT_EQ(dump->ApiName(CUPTI_CB_DOMAIN_RUNTIME_API, 211), "cudaLaunchKernel");
  EXPECT_EQ(dump->ApiName(CUPTI_CB_DOMAIN_DRIVER_API, 211), "");
}

TEST(ActivityDump, StopsAtItsSizeCap) {
  TempDir dir;
  std::vector<RawRecord> many(100, KernelRecord("k", 0, 1, 1, 2));
  auto path = WriteDump(dir, many, 4096);
  EXPECT_LE(std::filesystem::file_size(path), 4096u + 64);
  auto dump = LoadDump(path);
  ASSERT_TRUE(dump.ok()) << dump.error().message;
  EXPECT_GT(dump->entries.size(), 5u);
  EXPECT_LT(dump->entries.size(), 100u);
}

TEST(ActivityDump, NeverOverwrites) {
  TempDir dir;
  WriteDump(dir, {});
  auto again = DumpWriter::Create(dir / "cupti-1.bin", 1000);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("cupti-1.bin"), std::string::npos);
}

TEST(ActivityDump, BadFilesGetOneClearError) {
  TempDir dir;
  auto missing = LoadDump(dir / "none.bin");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);

  WriteBytes(dir / "junk.bin", "not a dump at all");
  auto junk = LoadDump(dir / "junk.bin");
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.error().message.find("not a CUPTI activity dump"), std::string::npos);

  std::string good = ReadBytes(WriteDump(dir, {KernelRecord("k", 0, 1, 1, 2)}));
  WriteBytes(dir / "cut.bin", good.substr(0, good.size() - 10));
  auto cut = LoadDump(dir / "cut.bin");
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().message.find("truncated"), std::string::npos);

  std::string other = good;
  uint32_t v12 = 120000;
  std::memcpy(other.data() + 12, &v12, 4);  // the writer's CUPTI version
  WriteBytes(dir / "cuda12.bin", other);
  auto old = LoadDump(dir / "cuda12.bin");
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().code, ErrorCode::kUnsupported);
}

TEST(ActivityDump, ReplaysIntoTheSameRunAsLiveRecords) {
  TempDir dir;
  std::vector<RawRecord> records = {DeviceRecord(0, "NVIDIA H200", 1, 1 << 30), ApiRecord(true, 211, 9, 3, 90, 95),
                                    KernelRecord("_Z4gemmPf", 0, 3, 100, 200)};
  auto live = Process(dir, records);
  auto dump = LoadDump(WriteDump(dir, records));
  ASSERT_TRUE(dump.ok());
  std::vector<RawRecord> replayed = RecordsOf(*dump);
  TempDir dir2;
  capture::ProcessorOptions o;
  o.api_name = [&](uint32_t d, uint32_t c) { return dump->ApiName(d, c); };
  auto again = Process(dir2, replayed, o);
  EXPECT_EQ(again.run.kernels, live.run.kernels);
  ASSERT_EQ(again.run.api_calls.size(), 1u);
  EXPECT_EQ(again.run.api_calls[0].name, "cudaLaunchKernel");
}

// Dumps recorded on the H200 by scripts/gpu/cupti.sh (torch GPT-2 forward).
TEST(ActivityDump, RecordedFixturesReplay) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(std::string(MAGNETON_TEST_DATA) + "/cupti", ec))
    if (e.path().extension() == ".bin") files.push_back(e.path().string());
  if (files.empty()) GTEST_SKIP() << "no recorded dumps in tests/data/cupti yet (scripts/gpu/cupti.sh makes them)";
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    auto dump = LoadDump(file);
    ASSERT_TRUE(dump.ok()) << dump.error().message;
    std::vector<RawRecord> records = RecordsOf(*dump);
    TempDir dir;
    std::vector<Device> devices;
    capture::ProcessorOptions o;
    o.devices = &devices;
    o.api_name = [&](uint32_t d, uint32_t c) { return dump->ApiName(d, c); };
    auto p = Process(dir, records, o);
    EXPECT_EQ(p.counts.malformed, 0);
    ASSERT_FALSE(p.run.kernels.empty());
    ASSERT_FALSE(p.run.devices.empty());
    // A dump cut at its size cap can lack the DEVICE record (cupti-jax.bin):
    // the buffer holding it can come back after the cap was reached.
    bool has_device_record = false;
    for (size_t i = 0; i < dump->entries.size(); ++i)
      has_device_record |= dump->record(i)->kind == CUPTI_ACTIVITY_KIND_DEVICE;
    if (has_device_record) {
      EXPECT_FALSE(p.run.devices[0].name.empty());
    }
    std::map<int64_t, const ApiCall*> api;
    for (const auto& a : p.run.api_calls) api[a.correlation] = &a;
    int64_t launched_by_api = 0;
    for (const Kernel& k : p.run.kernels) {
      EXPECT_FALSE(k.name.empty());
      EXPECT_LE(k.start_ns, k.end_ns);
      EXPECT_GT(k.block[0], 0);
      EXPECT_GE(k.device, 0);
      EXPECT_LT(k.device, static_cast<int32_t>(p.run.devices.size()));
      auto it = api.find(k.correlation);
      // Same clock: a kernel starts after the API call that launched it.
      if (it != api.end()) {
        ++launched_by_api;
        EXPECT_LE(it->second->start_ns, k.start_ns) << k.name;
      }
    }
    EXPECT_GT(launched_by_api, static_cast<int64_t>(p.run.kernels.size()) / 2);
    for (const auto& a : p.run.api_calls) EXPECT_EQ(a.name.find("cbid"), std::string::npos) << a.name;
  }
}

}  // namespace
}  // namespace magneton::testing
