// Hand-built CUPTI activity records for tests, laid out exactly as CUPTI
// lays them out in its buffers, and a helper that runs records through the
// ActivityProcessor into a real run file and loads it back.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../core/test_files.h"
#include "capture/cupti/activity_processor.h"
#include "core/store.h"

namespace magneton::testing {

// One record's bytes, 8-byte aligned like a CUPTI buffer.
struct RawRecord {
  std::vector<uint64_t> words;
  size_t size = 0;
  const CUpti_Activity* get() const { return reinterpret_cast<const CUpti_Activity*>(words.data()); }
};

template <class T>
RawRecord Raw(const T& r) {
  RawRecord raw;
  raw.size = sizeof(T);
  raw.words.resize((sizeof(T) + 7) / 8);
  std::memcpy(raw.words.data(), &r, sizeof(T));
  return raw;
}

template <class T>
T Zeroed() {
  T r;
  std::memset(&r, 0, sizeof(r));
  return r;
}

inline RawRecord KernelRecord(const char* name, uint32_t device, uint32_t correlation, uint64_t start, uint64_t end,
                              uint32_t stream = 7) {
  auto k = Zeroed<CUpti_ActivityKernel10>();
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = name;
  k.deviceId = device;
  k.contextId = 1;
  k.streamId = stream;
  k.correlationId = correlation;
  k.start = start;
  k.end = end;
  k.gridX = 108, k.gridY = 2, k.gridZ = 1;
  k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 40;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 49152;
  return Raw(k);
}

inline RawRecord MemcpyRecord(uint8_t copy_kind, uint64_t bytes, uint32_t correlation, uint64_t start, uint64_t end,
                              uint8_t src_kind = CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN,
                              uint8_t dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN,
                              uint8_t flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) {
  auto m = Zeroed<CUpti_ActivityMemcpy6>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = copy_kind;
  m.srcKind = src_kind;
  m.dstKind = dst_kind;
  m.flags = flags;
  m.bytes = bytes;
  m.deviceId = 0;
  m.contextId = 1;
  m.streamId = 7;
  m.correlationId = correlation;
  m.start = start;
  m.end = end;
  return Raw(m);
}

inline RawRecord MemsetRecord(uint64_t bytes, uint32_t correlation, uint64_t start, uint64_t end) {
  auto m = Zeroed<CUpti_ActivityMemset4>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.bytes = bytes;
  m.deviceId = 0;
  m.contextId = 1;
  m.streamId = 7;
  m.correlationId = correlation;
  m.start = start;
  m.end = end;
  return Raw(m);
}

inline RawRecord SyncRecord(uint32_t context, uint32_t correlation, uint64_t start, uint64_t end) {
  auto s = Zeroed<CUpti_ActivitySynchronization2>();
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.contextId = context;
  s.streamId = 7;
  s.correlationId = correlation;
  s.start = start;
  s.end = end;
  return Raw(s);
}

inline RawRecord ContextRecord(uint32_t context, uint32_t device) {
  auto c = Zeroed<CUpti_ActivityContext3>();
  c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  c.contextId = context;
  c.deviceId = device;
  return Raw(c);
}

inline RawRecord ApiRecord(bool runtime, uint32_t cbid, uint32_t thread, uint32_t correlation, uint64_t start,
                           uint64_t end) {
  auto a = Zeroed<CUpti_ActivityAPI>();
  a.kind = runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
  a.cbid = cbid;
  a.processId = 100;
  a.threadId = thread;
  a.correlationId = correlation;
  a.start = start;
  a.end = end;
  return Raw(a);
}

inline RawRecord ExternalRecord(uint64_t op, uint32_t correlation) {
  auto e = Zeroed<CUpti_ActivityExternalCorrelation>();
  e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  e.externalKind = capture::kOpCorrelationKind;
  e.externalId = op;
  e.correlationId = correlation;
  return Raw(e);
}

// flags: CUPTI_ACTIVITY_FLAG_MARKER_START / _END / _INSTANTANEOUS.
inline RawRecord MarkerRecord(uint32_t flags, uint32_t id, const char* name, uint32_t thread, uint64_t t,
                              const char* domain = nullptr, bool per_thread = true) {
  auto m = Zeroed<CUpti_ActivityMarker2>();
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = static_cast<CUpti_ActivityFlag>(flags);
  m.timestamp = t;
  m.id = id;
  m.objectKind = per_thread ? CUPTI_ACTIVITY_OBJECT_THREAD : CUPTI_ACTIVITY_OBJECT_PROCESS;
  m.objectId.pt.processId = 100;
  m.objectId.pt.threadId = thread;
  m.name = name;
  m.domain = domain;
  return Raw(m);
}

inline RawRecord DeviceRecord(uint32_t ordinal, const char* name, unsigned char uuid_first_byte, uint64_t memory) {
  auto d = Zeroed<CUpti_ActivityDevice5>();
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = ordinal;
  d.name = name;
  for (int i = 0; i < 16; ++i) d.uuid.bytes[i] = static_cast<char>(uuid_first_byte + i);
  d.globalMemorySize = memory;
  return Raw(d);
}

// Writes `records` through an ActivityProcessor into dir/name and loads the run.
// `prepare` may add rows first (ops, devices) through the writer.
struct Processed {
  Run run;
  capture::ProcessorCounts counts;
  std::string path;
};

template <class Prepare>
Processed Process(const TempDir& dir, const std::vector<RawRecord>& records, capture::ProcessorOptions options,
                  Prepare prepare, int64_t end_ns = 1'000'000) {
  Processed out;
  out.path = dir / "run.mgt";
  RunInfo info;
  info.pid = 100;
  info.start_ns = 0;
  info.end_ns = end_ns;
  auto writer = RunWriter::Create(out.path, info);
  EXPECT_TRUE(writer.ok()) << writer.error().message;
  if (!writer.ok()) return out;
  prepare(**writer);
  capture::ActivityProcessor processor(writer->get(), std::move(options));
  for (const RawRecord& r : records) {
    Status st = processor.Process(r.get(), r.size);
    EXPECT_TRUE(st.ok()) << st.message();
  }
  EXPECT_TRUE(processor.Finish(end_ns).ok());
  out.counts = processor.counts();
  EXPECT_TRUE((*writer)->Close().ok());
  auto run = LoadRun(out.path);
  EXPECT_TRUE(run.ok()) << run.error().message;
  if (run.ok()) out.run = std::move(run.value());
  return out;
}

inline Processed Process(const TempDir& dir, const std::vector<RawRecord>& records,
                         capture::ProcessorOptions options = {}) {
  return Process(dir, records, std::move(options), [](RunWriter&) {});
}

inline const Stat* FindStat(const Run& run, const std::string& name) {
  for (const Stat& s : run.stats)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace magneton::testing
