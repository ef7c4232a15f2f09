// Walking a completed activity buffer with libcupti's own iterator, which
// needs no GPU: records packed as CUPTI packs them must come out one by one,
// each with its own size, and reach the run file.
#include <gtest/gtest.h>

#include <cstring>

#include <cupti_activity.h>

#include "capture/cupti/activity_buffer.h"
#include "records.h"

namespace magneton::testing {
namespace {

using capture::ForEachRecord;

constexpr const char* kGemm = "_ZN7cutlass6KernelINS_4gemm6kernel4GemmIfEEEEvNT_6ParamsE";

// The records back to back in one 8-byte aligned buffer, as CUPTI hands it over.
std::vector<uint64_t> Pack(const std::vector<RawRecord>& records, size_t* valid) {
  std::vector<uint64_t> words;
  for (const RawRecord& r : records) words.insert(words.end(), r.words.begin(), r.words.end());
  *valid = words.size() * sizeof(uint64_t);
  return words;
}

std::vector<RawRecord> SomeRecords() {
  return {DeviceRecord(0, "NVIDIA H200", 0x10, 141ull << 30), KernelRecord(kGemm, 0, 42, 1000, 5000),
          MemcpyRecord(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096, 43, 5000, 6000),
          KernelRecord(kGemm, 0, 44, 6000, 9000)};
}

TEST(ActivityBuffer, YieldsEveryRecordWithItsSize) {
  const std::vector<RawRecord> records = SomeRecords();
  size_t valid = 0;
  std::vector<uint64_t> buffer = Pack(records, &valid);
  std::vector<std::pair<CUpti_ActivityKind, size_t>> seen;
  Status st = ForEachRecord(reinterpret_cast<uint8_t*>(buffer.data()), valid, &cuptiActivityGetNextRecord,
                            [&](const CUpti_Activity* r, size_t size) {
                              seen.emplace_back(r->kind, size);
                              return Status::Ok();
                            });
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(seen.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(seen[i].first, records[i].get()->kind) << i;
    EXPECT_EQ(seen[i].second, records[i].words.size() * sizeof(uint64_t)) << i;
  }
}

TEST(ActivityBuffer, RecordsReachTheRunFile) {
  size_t valid = 0;
  std::vector<uint64_t> buffer = Pack(SomeRecords(), &valid);
  std::vector<RawRecord> walked;
  ASSERT_TRUE(ForEachRecord(reinterpret_cast<uint8_t*>(buffer.data()), valid, &cuptiActivityGetNextRecord,
                            [&](const CUpti_Activity* r, size_t size) {
                              RawRecord raw;
                              raw.size = size;
                              raw.words.resize((size + 7) / 8);
                              std::memcpy(raw.words.data(), r, size);
                              walked.push_back(std::move(raw));
                              return Status::Ok();
                            })
                  .ok());
  TempDir dir;
  std::vector<Device> devices;
  capture::ProcessorOptions o;
  o.devices = &devices;
  auto p = Process(dir, walked, o);
  ASSERT_EQ(p.run.kernels.size(), 2u);
  EXPECT_EQ(p.run.kernels[1].correlation, 44);
  EXPECT_EQ(p.run.transfers.size(), 1u);
}

TEST(ActivityBuffer, EmptyBufferCallsNothing) {
  uint64_t word = 0;
  int calls = 0;
  Status st = ForEachRecord(reinterpret_cast<uint8_t*>(&word), 0, &cuptiActivityGetNextRecord,
                            [&](const CUpti_Activity*, size_t) {
                              ++calls;
                              return Status::Ok();
                            });
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(calls, 0);
}

// An iterator that never moves on (what a caller passing null each time gets
// from CUPTI): an error, not a drain thread spinning for good.
CUptiResult StuckIterator(uint8_t* buffer, size_t, CUpti_Activity** record) {
  *record = reinterpret_cast<CUpti_Activity*>(buffer);
  return CUPTI_SUCCESS;
}

TEST(ActivityBuffer, IteratorThatDoesNotAdvanceIsAnError) {
  size_t valid = 0;
  std::vector<uint64_t> buffer = Pack(SomeRecords(), &valid);
  int calls = 0;
  Status st = ForEachRecord(reinterpret_cast<uint8_t*>(buffer.data()), valid, &StuckIterator,
                            [&](const CUpti_Activity*, size_t) {
                              ++calls;
                              return Status::Ok();
                            });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("does not advance"), std::string::npos) << st.message();
  EXPECT_EQ(calls, 0);
}

TEST(ActivityBuffer, StopsAtTheCallbacksFirstError) {
  size_t valid = 0;
  std::vector<uint64_t> buffer = Pack(SomeRecords(), &valid);
  int calls = 0;
  Status st = ForEachRecord(reinterpret_cast<uint8_t*>(buffer.data()), valid, &cuptiActivityGetNextRecord,
                            [&](const CUpti_Activity*, size_t) {
                              return ++calls == 2 ? Status(MakeError(ErrorCode::kIo, "disk full")) : Status::Ok();
                            });
  EXPECT_EQ(st.message(), "disk full");
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace magneton::testing
