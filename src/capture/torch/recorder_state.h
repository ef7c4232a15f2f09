// Internal state of one recording, shared by the callbacks (op_callbacks.cpp)
// and the start/stop path (recorder.cpp).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/record_function.h>

#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture/torch/energy_capture.h"
#include "capture/torch/kernel_link.h"
#include "capture/torch/recorder.h"

namespace magneton::capture {

// Per operator (keyed by its interned name): schema text and which arguments
// it writes (so in-place ops on inference tensors, which have no version
// counter, still produce a new value).
struct OpSchemaInfo {
  std::string name;
  std::string schema;
  std::vector<bool> writes;
};

class RecorderState {
 public:
  explicit RecorderState(RecorderOptions o) : options(std::move(o)) {}

  RecorderOptions options;
  uint64_t generation = 0;
  std::unique_ptr<RunWriter> writer;
  std::unique_ptr<LaunchIndex> launches;  // the tracer writes through it
  std::unique_ptr<KernelCorrelation> kernels;
  std::unique_ptr<EnergyCapture> energy;
  std::atomic<bool> active{false};
  std::atomic<int64_t> callback_errors{0};  // exceptions caught in callbacks (a recorder bug)
  at::CallbackHandle callback = 0;

  PythonStacks stacks;

  // The run's device table, shared with the samplers and the CUPTI tracer
  // (which appends to it and writes while holding writer_mu).
  std::mutex writer_mu;
  std::vector<Device> devices;

  // Everything below is guarded by mu.
  std::mutex mu;
  std::vector<Op> ops;                       // name/schema of dispatcher ops filled at Stop from:
  std::vector<const OpSchemaInfo*> op_info;  // per op: its operator, or nullptr (autograd nodes)
  Dataflow dataflow;
  std::unordered_map<uint64_t, int64_t> forward_by_seq;  // SeqKey(thread, sequence nr) -> op
  std::deque<OpSchemaInfo> schema_store;                   // stable addresses
  std::unordered_map<const void*, OpSchemaInfo*> schemas;  // by the operator's interned name
  std::map<std::pair<int, int>, int32_t> device_ids;  // (device type, index) -> run device id
  // Storage identity: an id per StorageImpl seen. Holding a weak reference
  // keeps the StorageImpl object (not its memory) allocated, so its address
  // is not reused while we know it: a fresh allocation at a reused data
  // address is a new storage, not a stale value of the old one. Storages
  // found dead are forgotten (here and in the dataflow) now and then.
  struct StorageEntry {
    int64_t id;
    c10::weak_intrusive_ptr<c10::StorageImpl> ref;
  };
  std::unordered_map<const c10::StorageImpl*, StorageEntry> storage_ids;
  int64_t next_storage = 0;
  size_t sweep_at = 4096;
  std::map<std::string, std::string> config;
  std::map<std::string, std::string> info_extra;
  std::vector<Stat> stats;
  RecordSummary summary;
  // CUPTI names threads by pthread id; ops carry the kernel's thread id.
  std::unordered_map<int64_t, int64_t> thread_ids;

  // Under mu. Devices known at start are mapped by AddKnownDevices; any other
  // accelerator is added (and written) on first sight.
  int32_t DeviceId(const c10::Device& d);
  int64_t StorageId(const c10::Storage& s);  // under mu
  void ForgetDeadStorages();                  // under mu
  // Before recording starts: maps options.devices onto the table (by uuid,
  // as the samplers added them) and writes the ones not there yet.
  Status AddKnownDevices();
};

inline uint64_t SeqKey(uint64_t thread, int64_t sequence) {
  return (thread << 40) ^ static_cast<uint64_t>(sequence);
}

// Claims the process's one recording for `state` and, with options.ops,
// installs the global RecordFunction callbacks; RemoveCallbacks undoes both.
Status InstallCallbacks(const std::shared_ptr<RecorderState>& state);
void RemoveCallbacks(const std::shared_ptr<RecorderState>& state);

}  // namespace magneton::capture
