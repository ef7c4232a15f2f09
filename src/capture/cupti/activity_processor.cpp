#include "capture/cupti/activity_processor.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/core.h>

#include "capture/cupti/api_selection.h"
#include "capture/cupti/demangle.h"
#include "core/stats_registry.h"
#include "core/store.h"

namespace magneton::capture {
namespace {

// Correlations older than this many batches are forgotten (a batch is one
// drain of the completed buffers, a fraction of a second).
constexpr int64_t kCorrelationBatches = 16;

const char* CopyKind(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "memcpy";
  }
}

// Tensor/Transfer memory kinds (run.h); "" where CUPTI does not know.
std::string MemoryKind(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return std::string(kMemoryPageable);
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return std::string(kMemoryPinned);
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return std::string(kMemoryDevice);
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return std::string(kMemoryManaged);
    default: return "";
  }
}

// The fields a memcpy and a peer copy record share (the device is mapped by the caller).
template <class Record>
Transfer CopyRow(const Record& r, std::string kind) {
  Transfer t;
  t.kind = std::move(kind);
  t.src_memory = MemoryKind(r.srcKind);
  t.dst_memory = MemoryKind(r.dstKind);
  t.synchronous = !(r.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
  t.bytes = static_cast<int64_t>(r.bytes);
  t.stream = r.streamId;
  t.start_ns = static_cast<int64_t>(r.start);
  t.end_ns = static_cast<int64_t>(r.end);
  return t;
}

// NVML spells GPU uuids "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"; match it.
std::string UuidString(const CUuuid& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    s += fmt::format("{:02x}", b[i]);
  }
  return s;
}

template <class T>
const T* As(const CUpti_Activity* r, size_t size) {
  return size >= sizeof(T) ? reinterpret_cast<const T*>(r) : nullptr;
}

}  // namespace

ActivityProcessor::ActivityProcessor(RunWriter* writer, ProcessorOptions options)
    : writer_(writer), options_(std::move(options)) {}

Status ActivityProcessor::Process(const CUpti_Activity* r, size_t size) {
  ++counts_.records;
  if (size < sizeof(CUpti_ActivityKind)) {
    ++counts_.malformed;
    return Status::Ok();
  }
  // Each case: the record's structure, or count it malformed when it is too short.
#define MAGNETON_RECORD(T, call)        \
  if (const T* p = As<T>(r, size)) {    \
    return call;                        \
  }                                     \
  ++counts_.malformed;                  \
  return Status::Ok();

  switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      MAGNETON_RECORD(CUpti_ActivityKernel10, OnKernel(*p))
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      MAGNETON_RECORD(CUpti_ActivityMemcpy6, OnMemcpy(*p))
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      MAGNETON_RECORD(CUpti_ActivityMemcpyPtoP4, OnPeer(*p))
    case CUPTI_ACTIVITY_KIND_MEMSET:
      MAGNETON_RECORD(CUpti_ActivityMemset4, OnMemset(*p))
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      MAGNETON_RECORD(CUpti_ActivitySynchronization2, OnSync(*p))
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      MAGNETON_RECORD(CUpti_ActivityAPI, OnApi(*p, "runtime"))
    case CUPTI_ACTIVITY_KIND_DRIVER:
      MAGNETON_RECORD(CUpti_ActivityAPI, OnApi(*p, "driver"))
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      MAGNETON_RECORD(CUpti_ActivityExternalCorrelation, OnExternal(*p))
    case CUPTI_ACTIVITY_KIND_DEVICE:
      MAGNETON_RECORD(CUpti_ActivityDevice5, OnDevice(*p))
    case CUPTI_ACTIVITY_KIND_MARKER:
      MAGNETON_RECORD(CUpti_ActivityMarker2, (OnMarker(*p), Status::Ok()))
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      MAGNETON_RECORD(CUpti_ActivityContext3, (context_device_[p->contextId] = p->deviceId, Status::Ok()))
    default:
      ++counts_.ignored;
      return Status::Ok();
  }
#undef MAGNETON_RECORD
}

Result<int32_t> ActivityProcessor::DeviceId(uint32_t ordinal) {
  if (!options_.devices) return static_cast<int32_t>(ordinal);
  if (auto it = device_ids_.find(ordinal); it != device_ids_.end()) return it->second;
  auto info = device_info_.find(ordinal);
  std::vector<magneton::Device>& table = *options_.devices;
  for (const auto& d : table) {
    if (d.kind != "gpu") continue;
    bool same = info != device_info_.end() && !info->second.uuid.empty() && !d.uuid.empty()
                    ? d.uuid == info->second.uuid
                    : d.ordinal == static_cast<int32_t>(ordinal);
    if (same) return device_ids_[ordinal] = d.id;
  }
  magneton::Device d;
  d.id = static_cast<int32_t>(table.size());
  d.kind = "gpu";
  d.ordinal = static_cast<int32_t>(ordinal);
  if (info != device_info_.end()) {
    d.name = info->second.name;
    d.uuid = info->second.uuid;
    d.memory_bytes = info->second.memory_bytes;
  }
  MAGNETON_RETURN_IF_ERROR(writer_->Add(d));
  table.push_back(d);
  return device_ids_[ordinal] = d.id;
}

Status ActivityProcessor::OnDevice(const CUpti_ActivityDevice5& r) {
  DeviceInfo& info = device_info_[r.id];
  info.name = r.name ? r.name : "";
  info.uuid = UuidString(r.uuid);
  info.memory_bytes = static_cast<int64_t>(r.globalMemorySize);
  return DeviceId(r.id).status();
}

const std::string& ActivityProcessor::KernelName(const char* mangled) {
  static const std::string kUnknown = "<unknown kernel>";
  if (!mangled) return kUnknown;
  auto it = names_.find(mangled);
  // The pointer is CUPTI's; check the text too in case a freed name's memory was reused.
  if (it != names_.end() && it->second.first == mangled) return it->second.second;
  auto& slot = names_[mangled];
  slot = {mangled, Demangle(mangled)};
  return slot.second;
}

int64_t ActivityProcessor::OpOf(uint32_t correlation) const {
  auto it = ops_by_correlation_.find(correlation);
  return it == ops_by_correlation_.end() ? kNone : it->second.value;
}

int64_t ActivityProcessor::StackOf(uint32_t correlation) const {
  return options_.stack_of ? options_.stack_of(correlation) : kNone;
}

Status ActivityProcessor::OnKernel(const CUpti_ActivityKernel10& r) {
  if (!options_.kernels) return Status::Ok();
  auto device = DeviceId(r.deviceId);
  if (!device.ok()) return device.error();
  magneton::Kernel k;
  k.name = KernelName(r.name);
  k.device = *device;
  k.stream = r.streamId;
  k.start_ns = static_cast<int64_t>(r.start);
  k.end_ns = static_cast<int64_t>(r.end);
  k.grid[0] = r.gridX, k.grid[1] = r.gridY, k.grid[2] = r.gridZ;
  k.block[0] = r.blockX, k.block[1] = r.blockY, k.block[2] = r.blockZ;
  k.registers = r.registersPerThread;
  k.static_smem = r.staticSharedMemory;
  k.dynamic_smem = r.dynamicSharedMemory;
  k.correlation = r.correlationId;
  k.op = OpOf(r.correlationId);
  k.stack = StackOf(r.correlationId);
  context_device_.try_emplace(r.contextId, r.deviceId);
  if (k.op == kRecorderWork) {
    recorder_.Add(k.device, k.stream, k.start_ns, k.end_ns);
    return Status::Ok();
  }
  MAGNETON_RETURN_IF_ERROR(WriteKernels(recorder_.End(k.device, k.stream)));
  MAGNETON_RETURN_IF_ERROR(WriteKernel(k));
  if (k.op == kNone) unlinked_kernels_.emplace(r.correlationId, Stamped{k.id, batch_});
  else ++counts_.linked;
  return Status::Ok();
}

Status ActivityProcessor::WriteKernel(Kernel& k) {
  k.id = next_kernel_;
  MAGNETON_RETURN_IF_ERROR(writer_->Add(k));
  ++next_kernel_;
  ++counts_.kernels;
  return Status::Ok();
}

Status ActivityProcessor::WriteKernels(std::vector<Kernel> stretches) {
  for (Kernel& k : stretches) MAGNETON_RETURN_IF_ERROR(WriteKernel(k));
  return Status::Ok();
}

Status ActivityProcessor::AddTransfer(Transfer t, uint32_t correlation) {
  if (!options_.transfers) return Status::Ok();
  t.correlation = correlation;
  t.op = OpOf(correlation);
  const bool sync = t.kind == "sync";
  if (t.op == kRecorderWork) {
    if (sync) ++recorder_waits_;  // the recorder's own wait: not the program's
    else recorder_.Add(t.device, t.stream, t.start_ns, t.end_ns);
    return Status::Ok();
  }
  if (!sync) MAGNETON_RETURN_IF_ERROR(WriteKernels(recorder_.End(t.device, t.stream)));
  t.id = next_transfer_;
  MAGNETON_RETURN_IF_ERROR(writer_->Add(t));
  ++next_transfer_;
  ++counts_.transfers;
  if (t.op == kNone) unlinked_transfers_.emplace(correlation, Stamped{t.id, batch_});
  else ++counts_.linked;
  return Status::Ok();
}

Status ActivityProcessor::OnMemcpy(const CUpti_ActivityMemcpy6& r) {
  if (!options_.transfers) return Status::Ok();
  auto device = DeviceId(r.deviceId);
  if (!device.ok()) return device.error();
  context_device_.try_emplace(r.contextId, r.deviceId);
  Transfer t = CopyRow(r, CopyKind(r.copyKind));
  t.device = *device;
  return AddTransfer(std::move(t), r.correlationId);
}

Status ActivityProcessor::OnPeer(const CUpti_ActivityMemcpyPtoP4& r) {
  if (!options_.transfers) return Status::Ok();
  auto device = DeviceId(r.deviceId);
  if (!device.ok()) return device.error();
  Transfer t = CopyRow(r, "PtoP");
  t.device = *device;
  return AddTransfer(std::move(t), r.correlationId);
}

Status ActivityProcessor::OnMemset(const CUpti_ActivityMemset4& r) {
  if (!options_.transfers) return Status::Ok();
  auto device = DeviceId(r.deviceId);
  if (!device.ok()) return device.error();
  context_device_.try_emplace(r.contextId, r.deviceId);
  Transfer t;
  t.kind = "memset";
  t.bytes = static_cast<int64_t>(r.bytes);
  t.device = *device;
  t.stream = r.streamId;
  t.start_ns = static_cast<int64_t>(r.start);
  t.end_ns = static_cast<int64_t>(r.end);
  return AddTransfer(std::move(t), r.correlationId);
}

Status ActivityProcessor::OnSync(const CUpti_ActivitySynchronization2& r) {
  if (!options_.transfers) return Status::Ok();
  // A sync record names only its context; its device comes from the context.
  auto ctx = context_device_.find(r.contextId);
  auto device = DeviceId(ctx != context_device_.end() ? ctx->second : 0);
  if (!device.ok()) return device.error();
  Transfer t;
  t.kind = "sync";  // the store's kind for host-side waits; attribution gives them no energy
  t.device = *device;
  t.stream = r.type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE ? -1 : static_cast<int64_t>(r.streamId);
  t.start_ns = static_cast<int64_t>(r.start);
  t.end_ns = static_cast<int64_t>(r.end);
  if (!options_.api_calls) return AddTransfer(std::move(t), r.correlationId);
  held_syncs_.insert_or_assign(r.correlationId, std::move(t));
  return Status::Ok();
}

Status ActivityProcessor::FlushHeldSyncs() {
  std::vector<std::pair<uint32_t, Transfer>> held(std::make_move_iterator(held_syncs_.begin()),
                                                  std::make_move_iterator(held_syncs_.end()));
  held_syncs_.clear();
  std::sort(held.begin(), held.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& [correlation, t] : held) MAGNETON_RETURN_IF_ERROR(AddTransfer(std::move(t), correlation));
  return Status::Ok();
}

Status ActivityProcessor::OnApi(const CUpti_ActivityAPI& r, const char* domain) {
  if (!options_.api_calls) return Status::Ok();
  const uint32_t dom = r.kind == CUPTI_ACTIVITY_KIND_DRIVER ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  auto [it, added] = api_names_.try_emplace({dom, static_cast<uint32_t>(r.cbid)});
  ApiName& kind = it->second;
  if (added) {
    if (options_.api_name) kind.name = options_.api_name(dom, r.cbid);
    if (kind.name.empty()) kind.name = fmt::format("{} cbid {}", domain, static_cast<uint32_t>(r.cbid));
    kind.polling = IsPollingApi(kind.name);
    kind.launch_like = IsLaunchLikeApi(kind.name);
  }
  if (OpOf(r.correlationId) == kRecorderWork) {
    ++recorder_calls_;  // its device work stands in a stretch row
    return Status::Ok();
  }
  std::optional<Transfer> sync;  // the call's synchronization record, if it made one
  if (auto held = held_syncs_.extract(r.correlationId)) sync = std::move(held.mapped());
  const int64_t thread = r.threadId;
  auto stretch = polling_.find(thread);
  if (stretch != polling_.end() && kind.launch_like && !kind.polling) {
    MAGNETON_RETURN_IF_ERROR(EndPolling(thread));  // the thread moves on: its polls come first
    stretch = polling_.end();
  }
  if (stretch != polling_.end()) {
    for (ApiCall& same : stretch->second)
      if (same.name == kind.name && same.domain == domain) {
        same.end_ns = static_cast<int64_t>(r.end);
        ++same.count;
        ++counts_.api_calls_folded;
        if (sync) {
          auto [row, added] = stretch_syncs_.try_emplace(static_cast<uint32_t>(same.correlation), *sync);
          if (!added) {
            row->second.end_ns = std::max(row->second.end_ns, sync->end_ns);
            ++counts_.syncs_folded;
          }
        }
        return Status::Ok();
      }
  }
  ApiCall a;
  a.name = kind.name;
  a.domain = domain;
  a.thread = thread;
  a.start_ns = static_cast<int64_t>(r.start);
  a.end_ns = static_cast<int64_t>(r.end);
  a.correlation = r.correlationId;
  a.stack = StackOf(r.correlationId);
  if (stretch == polling_.end() && !kind.polling) {
    MAGNETON_RETURN_IF_ERROR(WriteApi(std::move(a)));
    return sync ? AddTransfer(std::move(*sync), r.correlationId) : Status::Ok();
  }
  if (sync) stretch_syncs_.insert_or_assign(r.correlationId, std::move(*sync));
  polling_[thread].push_back(std::move(a));  // opens a stretch, or a new call inside one
  return Status::Ok();
}

Status ActivityProcessor::WriteApi(ApiCall a) {
  a.id = next_api_;
  MAGNETON_RETURN_IF_ERROR(writer_->Add(a));
  ++next_api_;
  ++counts_.api_calls;
  return Status::Ok();
}

Status ActivityProcessor::EndPolling(int64_t thread) {
  auto node = polling_.extract(thread);
  if (node.empty()) return Status::Ok();
  for (ApiCall& a : node.mapped()) {
    const auto correlation = static_cast<uint32_t>(a.correlation);
    MAGNETON_RETURN_IF_ERROR(WriteApi(std::move(a)));
    if (auto sync = stretch_syncs_.extract(correlation))
      MAGNETON_RETURN_IF_ERROR(AddTransfer(std::move(sync.mapped()), correlation));
  }
  return Status::Ok();
}

Status ActivityProcessor::OnExternal(const CUpti_ActivityExternalCorrelation& r) {
  if (r.externalKind != kOpCorrelationKind) return Status::Ok();
  const int64_t op = static_cast<int64_t>(r.externalId);
  ops_by_correlation_[r.correlationId] = Stamped{op, batch_};
  // Rows that arrived before their op id: link them now.
  auto [k0, k1] = unlinked_kernels_.equal_range(r.correlationId);
  for (auto it = k0; it != k1; ++it) {
    MAGNETON_RETURN_IF_ERROR(writer_->LinkKernel(it->second.value, op));
    ++counts_.linked;
  }
  unlinked_kernels_.erase(k0, k1);
  auto [t0, t1] = unlinked_transfers_.equal_range(r.correlationId);
  for (auto it = t0; it != t1; ++it) {
    MAGNETON_RETURN_IF_ERROR(writer_->LinkTransfer(it->second.value, op));
    ++counts_.linked;
  }
  unlinked_transfers_.erase(t0, t1);
  return Status::Ok();
}

void ActivityProcessor::OnMarker(const CUpti_ActivityMarker2& r) {
  if (!options_.nvtx) return;
  const bool per_thread = r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD;
  const int64_t thread = per_thread ? static_cast<int64_t>(r.objectId.pt.threadId) : 0;
  const int64_t t = static_cast<int64_t>(r.timestamp);
  const uint32_t flags = static_cast<uint32_t>(r.flags);
  if (flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    ranges_.Start(r.id, r.name ? r.name : "", r.domain ? r.domain : "", thread, t, per_thread);
  } else if (flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    ranges_.End(r.id, t);
  } else if (flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
    ranges_.Instant(r.name ? r.name : "", r.domain ? r.domain : "", thread, t, per_thread);
  }
}

void ActivityProcessor::AddMark(ProcessorMark m) {
  ranges_.Instant(std::move(m.name), kMagnetonDomain, m.thread, m.t_ns, /*nests=*/false);
}

Status ActivityProcessor::EndBatch() {
  while (!polling_.empty()) MAGNETON_RETURN_IF_ERROR(EndPolling(polling_.begin()->first));
  MAGNETON_RETURN_IF_ERROR(FlushHeldSyncs());
  MAGNETON_RETURN_IF_ERROR(WriteKernels(recorder_.EndAll()));
  for (const Range& r : ranges_.TakeReady()) {
    MAGNETON_RETURN_IF_ERROR(writer_->Add(r));
    ++counts_.ranges;
  }
  ++batch_;
  auto stale = [&](const Stamped& s) { return batch_ - s.batch > kCorrelationBatches; };
  if (batch_ % kCorrelationBatches == 0) {
    std::erase_if(ops_by_correlation_, [&](const auto& e) { return stale(e.second); });
    std::erase_if(unlinked_kernels_, [&](const auto& e) { return stale(e.second); });
    std::erase_if(unlinked_transfers_, [&](const auto& e) { return stale(e.second); });
  }
  return Status::Ok();
}

Status ActivityProcessor::Finish(int64_t end_ns) {
  ranges_.CloseAll(end_ns);
  MAGNETON_RETURN_IF_ERROR(EndBatch());
  if (counts_.malformed)
    MAGNETON_RETURN_IF_ERROR(writer_->Add(MakeStat(stats::kCuptiRecordsMalformed, counts_.malformed)));
  if (counts_.api_calls_folded)
    MAGNETON_RETURN_IF_ERROR(writer_->Add(MakeStat(stats::kCuptiApiCallsFolded, counts_.api_calls_folded)));
  if (counts_.syncs_folded)
    MAGNETON_RETURN_IF_ERROR(writer_->Add(MakeStat(stats::kCuptiSyncsFolded, counts_.syncs_folded)));
  if (const int64_t folded = recorder_.folded() + recorder_waits_ + recorder_calls_)
    MAGNETON_RETURN_IF_ERROR(writer_->Add(MakeStat(stats::kCuptiRecorderRowsFolded, folded)));
  if (ranges_.unmatched_ends())
    MAGNETON_RETURN_IF_ERROR(writer_->Add(MakeStat(stats::kNvtxRangeEndsUnmatched, ranges_.unmatched_ends())));
  if (ranges_.closed_at_stop())
    MAGNETON_RETURN_IF_ERROR(writer_->Add(MakeStat(stats::kNvtxRangesOpenAtStop, ranges_.closed_at_stop())));
  return Status::Ok();
}

}  // namespace magneton::capture
