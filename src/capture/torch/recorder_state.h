// Internal state of one recording, shared by the callbacks (op_callbacks.cpp),
// the row streaming (row_stream.cpp) and the start/stop path (recorder.cpp).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/record_function.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "capture/torch/aten_values.h"
#include "capture/torch/energy_capture.h"
#include "capture/torch/kernel_link.h"
#include "capture/torch/op_observer.h"
#include "capture/torch/python_wait_sites.h"
#include "capture/torch/recorder.h"

namespace magneton::capture {

// Per operator (keyed by its interned name): schema text and which arguments
// it writes (so in-place ops on inference tensors, which have no version
// counter, still produce a new value).
struct OpSchemaInfo {
  struct Arg {
    std::string name;
    IntArg meaning = IntArg::kInt;
  };
  std::string name;
  std::string schema;
  std::vector<bool> writes;
  std::vector<Arg> args;  // for Op::args
};

// Op rows from the first one not yet written: ids [written(), size()).
// A deque, so rows of the past leave memory and references to the others stay valid.
class OpRows {
 public:
  struct Entry {
    Op op;                                // name/schema of dispatcher ops filled when written, from:
    const OpSchemaInfo* info = nullptr;   // its operator, or nullptr (autograd nodes)
    int64_t first_new_tensor = 0;         // tensor rows made before the op started
  };
  int64_t size() const { return written_ + static_cast<int64_t>(rows_.size()); }
  int64_t written() const { return written_; }
  bool held(int64_t id) const { return id >= written_ && id < size(); }
  Entry& at(int64_t id) { return rows_[static_cast<size_t>(id - written_)]; }
  void push(Entry e) { rows_.push_back(std::move(e)); }
  Entry take() {
    Entry e = std::move(rows_.front());
    rows_.pop_front();
    ++written_;
    return e;
  }
  bool empty() const { return rows_.empty(); }

 private:
  std::deque<Entry> rows_;
  int64_t written_ = 0;
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
  std::atomic<bool> active{false};         // the op callbacks record
  std::atomic<bool> fingerprinting{false};  // ...and fingerprint (the recording pass)
  RecordPhase phase = RecordPhase::kPaused;          // under mu
  int64_t measured_from_ns = 0;                      // when the first measured phase began
  // The thread that streams complete rows and sensor readings to the store
  // every kFlushEveryNs (row_stream.cpp), until StopFlushing.
  std::thread flusher;
  std::mutex flush_mu;
  std::condition_variable flush_wake;  // the flusher waits on it
  std::condition_variable flushed;     // a program thread waits on it (WaitForFlush)
  bool flushing = false;               // StartFlushing ran
  bool flush_stop = false;
  bool flush_now = false;              // flush without waiting out the period
  uint64_t flush_rounds = 0;           // FlushRows calls done
  std::atomic<int64_t> callback_errors{0};  // exceptions caught in callbacks (a recorder bug)
  OpObserver observer;
  at::CallbackHandle counting = 0;

  PythonStacks stacks;
  PythonWaitSites wait_sites{&stacks};  // the recording pass's waits, by their Python stack

  // The run's device table, shared with the samplers and the CUPTI tracer
  // (which appends to it and writes while holding writer_mu).
  std::mutex writer_mu;
  std::vector<Device> devices;

  // Everything below is guarded by mu.
  std::mutex mu;
  OpRows ops;                   // the rows not yet written (row_stream.cpp)
  std::set<int64_t> open_ops;   // started, not yet ended
  std::vector<OpSpan> spans;    // every op's span, for linking kernels by time (only with `launches`)
  Dataflow dataflow;
  std::unordered_map<uint64_t, int64_t> forward_by_seq;  // SeqKey(thread, sequence nr) -> op
  std::deque<OpSchemaInfo> schema_store;                   // stable addresses
  std::unordered_map<const void*, OpSchemaInfo*> schemas;  // by the operator's interned name
  std::map<std::pair<int, int>, int32_t> device_ids;  // (device type, index) -> run device id
  // Storage identity: an id per StorageImpl seen. Holding a weak reference
  // keeps the StorageImpl object (not its memory) allocated, so its address
  // is not reused while we know it: a fresh allocation at a reused data
  // address is a new storage, not a stale value of the old one. Storages
  // found dead are forgotten (here and in the dataflow) whenever the map has
  // doubled since the last sweep, from a small floor: each dead StorageImpl
  // held among the program's freed blocks keeps the allocator from reusing
  // them (a measured pass of an attention model grew its heap by every
  // step's activations, 128 MB a step, until the machine paged).
  struct StorageEntry {
    int64_t id;
    c10::weak_intrusive_ptr<c10::StorageImpl> ref;
  };
  std::unordered_map<const c10::StorageImpl*, StorageEntry> storage_ids;
  int64_t next_storage = 0;
  static constexpr size_t kSweepFloor = 64;
  size_t sweep_at = kSweepFloor;
  std::map<std::string, std::string> info_extra;
  std::vector<Stat> stats;
  RecordSummary summary;
  // CUPTI names threads by pthread id; ops carry the kernel's thread id.
  std::unordered_map<int64_t, int64_t> thread_ids;

  // When the recorder computed fingerprints (RecorderWorkScope), on any
  // thread: a library may launch their kernels from a thread of its own,
  // outside the scope's correlation id. Guarded by work_mu, not mu (a scope
  // may end with mu held).
  std::mutex work_mu;
  std::vector<std::pair<int64_t, int64_t>> recorder_work;

  // Under mu. Devices known at start are mapped by AddKnownDevices; any other
  // accelerator is added (and written) on first sight.
  int32_t DeviceId(const c10::Device& d);
  int64_t StorageId(const c10::Storage& s);  // under mu
  void ForgetDeadStorages();                  // under mu
  // Before recording starts: maps options.devices onto the table (by uuid,
  // as the samplers added them) and writes the ones not there yet.
  Status AddKnownDevices();
};

// Writes the rows that are complete (every op up to the first one still
// running whose tensors are written too; the tensors no running op may still
// fingerprint) and the sensor readings so far, and frees them; `all`:
// everything, at stop. Takes mu, then writer_mu, never both at once. The
// flusher thread calls it every kFlushEveryNs, so a killed recording loses
// about a second (the store commits every half second).
inline constexpr int64_t kFlushEveryNs = 250'000'000;

// Op rows a recording may hold before a program thread, at the end of its
// top-level op, waits for one flush: the store writes rows slower than a
// launch-bound program can make them on a loaded machine, and memory must not
// follow the backlog (waits are counted in RecordSummary::store_waits).
inline constexpr int64_t kMaxHeldOps = 20'000;

// Wakes the flusher and waits until it has flushed once more.
void WaitForFlush(RecorderState& st);
Status FlushRows(RecorderState& st, bool all, int64_t stop_ns = 0);
void StartFlushing(RecorderState& st);
void StopFlushing(RecorderState& st);

inline uint64_t SeqKey(uint64_t thread, int64_t sequence) {
  return (thread << 40) ^ static_cast<uint64_t>(sequence);
}

// Claims the process's one recording for `state` (a second one fails);
// ReleaseRecording removes the callbacks and gives the claim back.
Status ClaimRecording(const std::shared_ptr<RecorderState>& state);
void ReleaseRecording(const std::shared_ptr<RecorderState>& state);
// Installs or removes the global RecordFunction callbacks of a claimed
// recording (per phase: a measured pass without operators has none at all).
void SetOpCallbacks(RecorderState& state, bool on);
// A callback that only counts operator calls (no inputs, nothing recorded):
// how a whole script's loop is told from its set-up (python/magneton/script_steps.py).
void SetOpCounting(RecorderState& state, bool on);
int64_t CountedOps();  // operator calls counted in this process so far

}  // namespace magneton::capture
