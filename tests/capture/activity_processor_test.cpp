// Record processing: CUPTI activity records in, Run rows out, through a real
// run file (RunWriter -> LoadRun).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <fmt/core.h>

#include "records.h"

namespace magneton::testing {
namespace {

using capture::ProcessorOptions;

constexpr const char* kGemm = "_ZN7cutlass6KernelINS_4gemm6kernel4GemmIfEEEEvNT_6ParamsE";

TEST(ActivityProcessor, KernelBecomesKernelRowOnItsGpu) {
  TempDir dir;
  std::vector<Device> devices;
  ProcessorOptions o;
  o.devices = &devices;
  auto p = Process(dir, {DeviceRecord(0, "NVIDIA H200", 0x10, 141ull << 30), KernelRecord(kGemm, 0, 42, 1000, 5000)}, o);
  ASSERT_EQ(p.run.kernels.size(), 1u);
  const Kernel& k = p.run.kernels[0];
  EXPECT_EQ(k.name, "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<float> >(cutlass::gemm::kernel::Gemm<float>::Params)");
  EXPECT_EQ(k.start_ns, 1000);
  EXPECT_EQ(k.end_ns, 5000);
  EXPECT_EQ(k.stream, 7);
  EXPECT_EQ(k.grid[0], 108);
  EXPECT_EQ(k.grid[1], 2);
  EXPECT_EQ(k.block[0], 256);
  EXPECT_EQ(k.registers, 40);
  EXPECT_EQ(k.static_smem, 1024);
  EXPECT_EQ(k.dynamic_smem, 49152);
  EXPECT_EQ(k.correlation, 42);
  EXPECT_EQ(k.op, kNone);
  ASSERT_EQ(p.run.devices.size(), 1u);
  const Device& d = p.run.devices[0];
  EXPECT_EQ(d.kind, "gpu");
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.uuid, "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f");  // NVML's spelling
  EXPECT_EQ(d.memory_bytes, 141ll << 30);
  EXPECT_EQ(k.device, d.id);
  EXPECT_EQ(devices.size(), 1u);  // the shared table learned it too
}

TEST(ActivityProcessor, PlainCNamesStayAsTheyAre) {
  TempDir dir;
  auto p = Process(dir, {KernelRecord("triton_poi_fused_add_0", 0, 1, 10, 20)});
  ASSERT_EQ(p.run.kernels.size(), 1u);
  EXPECT_EQ(p.run.kernels[0].name, "triton_poi_fused_add_0");
}

TEST(ActivityProcessor, GpuAlreadyAddedBySamplersIsReusedByUuid) {
  TempDir dir;
  // The energy samplers came first: a host device, then the GPU with NVML's uuid.
  std::vector<Device> devices = {{0, "cpu", "host", "", 0, 0},
                                 {1, "gpu", "NVIDIA H200", "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f", 0, 0}};
  ProcessorOptions o;
  o.devices = &devices;
  auto p = Process(dir, {DeviceRecord(0, "NVIDIA H200", 0x10, 1), KernelRecord("k", 0, 1, 10, 20)}, o,
                   [&](RunWriter& w) {
                     for (const auto& d : devices) ASSERT_TRUE(w.Add(d).ok());
                   });
  EXPECT_EQ(p.run.devices.size(), 2u);
  ASSERT_EQ(p.run.kernels.size(), 1u);
  EXPECT_EQ(p.run.kernels[0].device, 1);
}

TEST(ActivityProcessor, UnknownOrdinalAddsADevice) {
  TempDir dir;
  std::vector<Device> devices = {{0, "gpu", "NVIDIA H200", "GPU-aaaa", 0, 0}};
  ProcessorOptions o;
  o.devices = &devices;
  auto p = Process(dir, {KernelRecord("a", 0, 1, 10, 20), KernelRecord("b", 1, 2, 10, 20)}, o, [&](RunWriter& w) {
    ASSERT_TRUE(w.Add(devices[0]).ok());
  });
  ASSERT_EQ(p.run.devices.size(), 2u);
  EXPECT_EQ(p.run.devices[1].ordinal, 1);
  EXPECT_EQ(p.run.kernels[0].device, 0);
  EXPECT_EQ(p.run.kernels[1].device, 1);
}

TEST(ActivityProcessor, WithoutADeviceTableTheOrdinalIsTheDevice) {
  TempDir dir;
  // The samplers wrote the GPUs in CUDA ordinal order; the tracer adds none.
  auto p = Process(dir, {KernelRecord("b", 3, 2, 10, 20)}, {}, [](RunWriter& w) {
    for (int32_t i = 0; i < 4; ++i) ASSERT_TRUE(w.Add(Device{i, "gpu", "GPU", "", i, 0}).ok());
  });
  EXPECT_EQ(p.run.devices.size(), 4u);
  ASSERT_EQ(p.run.kernels.size(), 1u);
  EXPECT_EQ(p.run.kernels[0].device, 3);
}

// Ops 0..2 exist in the run, as the torch recorder would write them.
void AddOps(RunWriter& w) {
  for (int i = 0; i < 3; ++i) {
    Op op;
    op.id = i;
    op.name = "aten::op" + std::to_string(i);
    ASSERT_TRUE(w.Add(op).ok());
  }
}

TEST(ActivityProcessor, ExternalCorrelationLinksKernelsToOpsEitherOrder) {
  TempDir dir;
  auto p = Process(dir,
                   {ExternalRecord(2, 10), KernelRecord("before", 0, 10, 10, 20),  // op id known first
                    KernelRecord("after", 0, 11, 30, 40), ExternalRecord(1, 11),     // op id arrives late
                    MemcpyRecord(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 64, 12, 50, 60), ExternalRecord(0, 12),
                    KernelRecord("none", 0, 13, 70, 80)},
                   {}, AddOps);
  ASSERT_EQ(p.run.kernels.size(), 3u);
  EXPECT_EQ(p.run.kernels[0].op, 2);
  EXPECT_EQ(p.run.kernels[1].op, 1);
  EXPECT_EQ(p.run.kernels[2].op, kNone);
  ASSERT_EQ(p.run.transfers.size(), 1u);
  EXPECT_EQ(p.run.transfers[0].op, 0);
  EXPECT_EQ(p.counts.linked, 3);
}

TEST(ActivityProcessor, OtherExternalKindsAreNotOps) {
  TempDir dir;
  auto e = Zeroed<CUpti_ActivityExternalCorrelation>();
  e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
  e.externalId = 1;
  e.correlationId = 5;
  auto p = Process(dir, {Raw(e), KernelRecord("k", 0, 5, 10, 20)}, {}, AddOps);
  ASSERT_EQ(p.run.kernels.size(), 1u);
  EXPECT_EQ(p.run.kernels[0].op, kNone);
}

// The fingerprints' kernels and copies: one row per unbroken stretch on a
// stream, ended by the program's work there; their API calls and waits go.
TEST(ActivityProcessor, TheRecordersOwnWorkIsOneRowPerStretchOnAStream) {
  TempDir dir;
  const auto recorder = static_cast<uint64_t>(kRecorderWork);
  const uint32_t launch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  auto p = Process(dir,
                   {ExternalRecord(recorder, 1), ApiRecord(true, launch, 5, 1, 5, 8), KernelRecord("abs", 0, 1, 10, 20),
                    ExternalRecord(recorder, 2), KernelRecord("sum", 0, 2, 25, 30),
                    KernelRecord("other stream", 0, 2, 26, 29, /*stream=*/9),
                    ExternalRecord(recorder, 3), MemcpyRecord(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 8, 3, 32, 35),
                    ExternalRecord(recorder, 4), SyncRecord(1, 4, 35, 36),
                    ExternalRecord(0, 10), ApiRecord(true, launch, 5, 10, 37, 39), KernelRecord("gemm", 0, 10, 40, 50),
                    ExternalRecord(recorder, 5), KernelRecord("abs", 0, 5, 60, 70)},
                   {}, AddOps);
  ASSERT_EQ(p.run.kernels.size(), 4u);
  std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> rows;  // stream, start, end, op
  for (const Kernel& k : p.run.kernels) {
    rows.emplace_back(k.stream, k.start_ns, k.end_ns, k.op);
    EXPECT_EQ(k.name == kRecorderWorkName, k.op == kRecorderWork) << k.name;
  }
  std::sort(rows.begin(), rows.end());
  using R = decltype(rows)::value_type;
  EXPECT_EQ(rows, (std::vector<R>{R{7, 10, 35, kRecorderWork}, R{7, 40, 50, 0}, R{7, 60, 70, kRecorderWork},
                                  R{9, 26, 29, kRecorderWork}}));
  EXPECT_TRUE(p.run.transfers.empty());
  ASSERT_EQ(p.run.api_calls.size(), 1u);
  EXPECT_EQ(p.run.api_calls[0].correlation, 10);
  ASSERT_NE(FindStat(p.run, "cupti_recorder_rows_folded"), nullptr);
  EXPECT_EQ(FindStat(p.run, "cupti_recorder_rows_folded")->value, 4);  // sum, the copy, the wait, the call
}

TEST(ActivityProcessor, CopiesSetsAndSyncsBecomeTransfers) {
  TempDir dir;
  std::vector<Device> devices;
  ProcessorOptions o;
  o.devices = &devices;
  auto p = Process(dir,
                   {ContextRecord(9, 1), MemcpyRecord(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 4096, 1, 10, 20),
                    MemsetRecord(512, 2, 30, 40), SyncRecord(9, 3, 50, 90)},
                   o);
  ASSERT_EQ(p.run.transfers.size(), 3u);
  EXPECT_EQ(p.run.transfers[0].kind, "DtoH");
  EXPECT_EQ(p.run.transfers[0].bytes, 4096);
  EXPECT_EQ(p.run.transfers[1].kind, "memset");
  EXPECT_EQ(p.run.transfers[1].bytes, 512);
  EXPECT_EQ(p.run.transfers[2].kind, "sync");
  EXPECT_EQ(p.run.transfers[2].correlation, 3);
  // The sync names context 9 only; CONTEXT said it is on ordinal 1.
  const Device& sync_device = p.run.devices[p.run.transfers[2].device];
  EXPECT_EQ(sync_device.ordinal, 1);
  EXPECT_NE(p.run.transfers[0].device, p.run.transfers[2].device);
}

TEST(ActivityProcessor, CopiesSayWhereTheyReadAndWriteAndWhetherTheHostWaited) {
  TempDir dir;
  std::vector<Device> devices;
  ProcessorOptions o;
  o.devices = &devices;
  auto p = Process(dir,
                   {MemcpyRecord(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096, 1, 10, 20, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
                                 CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0),
                    MemcpyRecord(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096, 2, 30, 40, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                                 CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC),
                    MemcpyRecord(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 64, 3, 50, 60, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED,
                                 CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN),
                    MemsetRecord(512, 4, 70, 80)},
                   o);
  ASSERT_EQ(p.run.transfers.size(), 4u);
  const auto& t = p.run.transfers;
  EXPECT_EQ(t[0].src_memory, "pageable");
  EXPECT_EQ(t[0].dst_memory, "device");
  EXPECT_TRUE(t[0].synchronous);
  EXPECT_EQ(t[1].src_memory, "pinned");
  EXPECT_FALSE(t[1].synchronous);
  EXPECT_EQ(t[2].src_memory, "managed");
  EXPECT_EQ(t[2].dst_memory, "");
  EXPECT_EQ(t[3].src_memory, "");
  EXPECT_FALSE(t[3].synchronous);
}

TEST(ActivityProcessor, ApiCallsAreNamedByTheResolver) {
  TempDir dir;
  ProcessorOptions o;
  int lookups = 0;
  o.api_name = [&](uint32_t domain, uint32_t cbid) -> std::string {
    ++lookups;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
      return "cudaLaunchKernel";
    return "";
  };
  auto p = Process(dir,
                   {ApiRecord(true, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 77, 5, 100, 110),
                    ApiRecord(true, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 77, 6, 120, 130),
                    ApiRecord(false, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 78, 7, 140, 150)},
                   o);
  ASSERT_EQ(p.run.api_calls.size(), 3u);
  EXPECT_EQ(p.run.api_calls[0].name, "cudaLaunchKernel");
  EXPECT_EQ(p.run.api_calls[0].domain, "runtime");
  EXPECT_EQ(p.run.api_calls[0].thread, 77);
  EXPECT_EQ(p.run.api_calls[0].correlation, 5);
  EXPECT_EQ(p.run.api_calls[2].domain, "driver");
  EXPECT_EQ(p.run.api_calls[2].name, fmt::format("driver cbid {}", int(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)));
  EXPECT_EQ(lookups, 2);  // once per callback id
}

// CUPTI's names for the callback ids these tests use (the live tracer asks libcupti).
ProcessorOptions Named() {
  ProcessorOptions o;
  o.api_name = [](uint32_t, uint32_t cbid) -> std::string {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020: return "cudaEventQuery_v3020";
      case CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020: return "cudaGetLastError_v3020";
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000: return "cudaLaunchKernel_v7000";
      default: return "";
    }
  };
  return o;
}

constexpr uint32_t kQuery = CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020;
constexpr uint32_t kLastError = CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020;
constexpr uint32_t kLaunch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;

// torch.cuda.Event.query() in a loop: cudaEventQuery, then cudaGetLastError to
// clear "not ready", 1000 times on thread 5, before its next launch.
std::vector<RawRecord> BusyWait(uint32_t thread, uint64_t t0, uint32_t correlation, int polls) {
  std::vector<RawRecord> out;
  for (int i = 0; i < polls; ++i, t0 += 10, correlation += 2) {
    out.push_back(ApiRecord(true, kQuery, thread, correlation, t0, t0 + 4));
    out.push_back(ApiRecord(true, kLastError, thread, correlation + 1, t0 + 5, t0 + 6));
  }
  return out;
}

TEST(ActivityProcessor, APollingLoopBecomesOneRowPerCallWithItsCount) {
  TempDir dir;
  auto records = BusyWait(5, 1000, 100, 1000);
  records.push_back(ApiRecord(true, kLaunch, 6, 90, 1500, 1510));     // another thread, meanwhile
  records.push_back(ApiRecord(true, kLaunch, 5, 5000, 20000, 20010));  // the polling thread moves on
  records.push_back(ApiRecord(true, kQuery, 5, 5001, 20020, 20024));   // and polls once more
  auto p = Process(dir, records, Named());
  ASSERT_EQ(p.run.api_calls.size(), 5u);
  std::map<std::string, std::vector<const ApiCall*>> by_name;
  for (const auto& a : p.run.api_calls) by_name[a.name].push_back(&a);
  ASSERT_EQ(by_name["cudaEventQuery_v3020"].size(), 2u);
  const ApiCall& loop = *by_name["cudaEventQuery_v3020"][0];
  EXPECT_EQ(loop.count, 1000);
  EXPECT_EQ(loop.thread, 5);
  EXPECT_EQ(loop.start_ns, 1000);          // the first poll's start...
  EXPECT_EQ(loop.end_ns, 1000 + 9990 + 4);  // ...to the last one's end
  EXPECT_EQ(loop.correlation, 100);
  EXPECT_EQ(by_name["cudaEventQuery_v3020"][1]->count, 1);  // a new stretch after the launch
  ASSERT_EQ(by_name["cudaGetLastError_v3020"].size(), 1u);
  EXPECT_EQ(by_name["cudaGetLastError_v3020"][0]->count, 1000);
  ASSERT_EQ(by_name["cudaLaunchKernel_v7000"].size(), 2u);
  for (const ApiCall* launch : by_name["cudaLaunchKernel_v7000"]) EXPECT_EQ(launch->count, 1);
  // The polls of thread 5 are written before its launch, which ended them.
  EXPECT_LT(loop.id, by_name["cudaLaunchKernel_v7000"][1]->id);
  EXPECT_EQ(p.counts.api_calls, 5);
  EXPECT_EQ(p.counts.api_calls_folded, 1998);
  ASSERT_NE(FindStat(p.run, "cupti_api_calls_folded"), nullptr);
  EXPECT_EQ(FindStat(p.run, "cupti_api_calls_folded")->value, 1998);
}

// CUPTI writes each call's synchronization record just before the call's own.
TEST(ActivityProcessor, APollingLoopsSyncRecordsBecomeOneRowSpanningThePolls) {
  TempDir dir;
  std::vector<RawRecord> records;
  for (const RawRecord& r : BusyWait(5, 1000, 100, 500)) {
    const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(r.get());
    if (api->cbid == kQuery) records.push_back(SyncRecord(1, api->correlationId, api->start + 1, api->end - 1));
    records.push_back(r);
  }
  constexpr uint32_t kStreamSync = CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020;
  records.push_back(ApiRecord(true, kLaunch, 5, 5000, 20000, 20010));  // the loop ends
  // A blocking wait, twice: each keeps its row.
  for (uint32_t c : {5001u, 5002u}) {
    records.push_back(SyncRecord(1, c, 20020 + c, 20030 + c));
    records.push_back(ApiRecord(true, kStreamSync, 5, c, 20015 + c, 20035 + c));
  }
  auto p = Process(dir, records, Named());
  std::vector<const Transfer*> syncs;
  for (const auto& t : p.run.transfers)
    if (t.kind == "sync") syncs.push_back(&t);
  ASSERT_EQ(syncs.size(), 3u);
  std::sort(syncs.begin(), syncs.end(), [](auto* x, auto* y) { return x->correlation < y->correlation; });
  EXPECT_EQ(syncs[0]->correlation, 100);  // the loop's row, linked to its folded call's row
  EXPECT_EQ(syncs[0]->start_ns, 1001);
  EXPECT_EQ(syncs[0]->end_ns, 1000 + 4990 + 3);  // the last poll's wait
  EXPECT_EQ(syncs[1]->correlation, 5001);
  EXPECT_EQ(syncs[2]->correlation, 5002);
  EXPECT_EQ(p.counts.syncs_folded, 499);
  ASSERT_NE(FindStat(p.run, "cupti_syncs_folded"), nullptr);
  EXPECT_EQ(FindStat(p.run, "cupti_syncs_folded")->value, 499);
}

TEST(ActivityProcessor, CallsOutsideAPollingLoopKeepARowEach) {
  TempDir dir;
  auto p = Process(dir,
                   {ApiRecord(true, kLastError, 5, 1, 10, 11), ApiRecord(true, kLastError, 5, 2, 12, 13),
                    ApiRecord(true, kLaunch, 5, 3, 14, 20), ApiRecord(true, kLaunch, 5, 4, 21, 30)},
                   Named());
  ASSERT_EQ(p.run.api_calls.size(), 4u);
  for (const auto& a : p.run.api_calls) EXPECT_EQ(a.count, 1) << a.name;
  EXPECT_EQ(FindStat(p.run, "cupti_api_calls_folded"), nullptr);
}

TEST(ActivityProcessor, APollingLoopIsWrittenAtTheEndOfEachBatch) {
  TempDir dir;
  auto writer = RunWriter::Create(dir / "run.mgt", RunInfo{});
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  capture::ActivityProcessor processor(writer->get(), Named());
  for (int batch = 0; batch < 2; ++batch) {
    for (const RawRecord& r : BusyWait(5, 1000 + batch * 100000, 100 + batch * 10000, 50))
      ASSERT_TRUE(processor.Process(r.get(), r.size).ok());
    ASSERT_TRUE(processor.EndBatch().ok());
  }
  ASSERT_TRUE(processor.Finish(1'000'000).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  auto run = LoadRun(dir / "run.mgt");
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_EQ(run->api_calls.size(), 4u);  // two names, once per batch: a loop never waits past a batch
  for (const auto& a : run->api_calls) EXPECT_EQ(a.count, 50) << a.name;
}

TEST(ActivityProcessor, LaunchStacksAttachToKernelsAndApiCalls) {
  TempDir dir;
  ProcessorOptions o;
  o.stack_of = [](uint32_t correlation) -> int64_t { return correlation == 5 ? 0 : kNone; };
  auto p = Process(dir, {ApiRecord(true, 211, 1, 5, 10, 20), KernelRecord("k", 0, 5, 30, 40), KernelRecord("j", 0, 6, 50, 60)},
                   o, [](RunWriter& w) {
                     ASSERT_TRUE(w.Add(Frame{0, "native", "launch", "", 0, "libx.so"}).ok());
                     ASSERT_TRUE(w.Add(Stack{0, {0}}).ok());
                   });
  EXPECT_EQ(p.run.api_calls[0].stack, 0);
  EXPECT_EQ(p.run.kernels[0].stack, 0);
  EXPECT_EQ(p.run.kernels[1].stack, kNone);
}

TEST(ActivityProcessor, NvtxMarkersBecomeNestedRanges) {
  TempDir dir;
  const uint32_t S = CUPTI_ACTIVITY_FLAG_MARKER_START, E = CUPTI_ACTIVITY_FLAG_MARKER_END,
                 I = CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;
  auto p = Process(dir, {MarkerRecord(S, 1, "magneton:step", 5, 100), MarkerRecord(S, 2, "aten::linear", 5, 110),
                         MarkerRecord(S, 3, "other thread", 6, 115), MarkerRecord(E, 2, nullptr, 5, 150),
                         MarkerRecord(I, 4, "tick", 5, 160), MarkerRecord(E, 1, nullptr, 5, 200),
                         MarkerRecord(E, 3, nullptr, 6, 300), MarkerRecord(S, 8, "load", 0, 400, "mydomain", false),
                         MarkerRecord(E, 8, nullptr, 0, 450, nullptr, false)});
  ASSERT_EQ(p.run.ranges.size(), 5u);
  // Children are written before their parents (post-order).
  std::map<std::string, Range> by;
  for (const Range& r : p.run.ranges) by[r.name] = r;
  EXPECT_EQ(by["aten::linear"].parent, by["magneton:step"].id);
  EXPECT_EQ(by["tick"].parent, by["magneton:step"].id);
  EXPECT_EQ(by["tick"].start_ns, 160);
  EXPECT_EQ(by["tick"].end_ns, 160);
  EXPECT_EQ(by["magneton:step"].parent, kNone);
  EXPECT_EQ(by["magneton:step"].start_ns, 100);
  EXPECT_EQ(by["magneton:step"].end_ns, 200);
  EXPECT_EQ(by["magneton:step"].thread, 5);
  EXPECT_EQ(by["other thread"].parent, kNone);
  EXPECT_EQ(by["other thread"].thread, 6);
  EXPECT_EQ(by["load"].domain, "mydomain");
  EXPECT_EQ(by["load"].parent, kNone);
  EXPECT_LT(by["aten::linear"].id, by["magneton:step"].id);
}

TEST(ActivityProcessor, UnmatchedAndUnclosedRangesAreCounted) {
  TempDir dir;
  const uint32_t S = CUPTI_ACTIVITY_FLAG_MARKER_START, E = CUPTI_ACTIVITY_FLAG_MARKER_END;
  auto p = Process(dir, {MarkerRecord(E, 1, nullptr, 5, 100), MarkerRecord(S, 2, "open", 5, 110)}, {}, [](RunWriter&) {},
                   /*end_ns=*/900);
  ASSERT_EQ(p.run.ranges.size(), 1u);
  EXPECT_EQ(p.run.ranges[0].end_ns, 900);  // closed where the recording stopped
  ASSERT_NE(FindStat(p.run, "nvtx_range_ends_unmatched"), nullptr);
  EXPECT_EQ(FindStat(p.run, "nvtx_range_ends_unmatched")->value, 1);
  ASSERT_NE(FindStat(p.run, "nvtx_ranges_open_at_stop"), nullptr);
}

TEST(ActivityProcessor, ShortRecordsAreCountedNotRead) {
  TempDir dir;
  RawRecord shortk = KernelRecord("k", 0, 1, 10, 20);
  shortk.size = sizeof(CUpti_ActivityKernel10) - 8;
  auto p = Process(dir, {shortk, KernelRecord("ok", 0, 2, 30, 40)});
  EXPECT_EQ(p.run.kernels.size(), 1u);
  EXPECT_EQ(p.counts.malformed, 1);
  ASSERT_NE(FindStat(p.run, "cupti_records_malformed"), nullptr);
  EXPECT_EQ(FindStat(p.run, "cupti_records_malformed")->severity, "data_loss");
}

TEST(ActivityProcessor, KindsItDoesNotReadAreIgnored) {
  TempDir dir;
  auto o = Zeroed<CUpti_ActivityOverhead3>();
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  auto p = Process(dir, {Raw(o)});
  EXPECT_EQ(p.counts.ignored, 1);
  EXPECT_EQ(p.counts.records, 1);
}

TEST(ActivityProcessor, DisabledCategoriesWriteNothing) {
  TempDir dir;
  ProcessorOptions o;
  o.kernels = o.transfers = o.api_calls = o.nvtx = false;
  auto p = Process(dir, {KernelRecord("k", 0, 1, 10, 20), MemsetRecord(8, 2, 30, 40), ApiRecord(true, 211, 1, 1, 5, 6),
                         MarkerRecord(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 1, "m", 1, 7)},
                   o);
  EXPECT_TRUE(p.run.kernels.empty());
  EXPECT_TRUE(p.run.transfers.empty());
  EXPECT_TRUE(p.run.api_calls.empty());
  EXPECT_TRUE(p.run.ranges.empty());
}

}  // namespace
}  // namespace magneton::testing
