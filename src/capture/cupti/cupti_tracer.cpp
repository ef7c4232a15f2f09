// CuptiTracer over libcupti: activity buffers, collection on/off, draining
// records into the RunWriter on a thread of its own.
//
// CUPTI's buffer callbacks carry no user pointer, so one tracer per process
// is reachable through g_active; Start refuses a second one.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <thread>

#include <fmt/core.h>

#include "capture/cupti/activity_buffer.h"
#include "capture/cupti/activity_dump.h"
#include "capture/cupti/activity_processor.h"
#include "capture/cupti/bounded_call.h"
#include "capture/cupti/buffer_pool.h"
#include "capture/cupti/cupti_util.h"
#include "capture/cupti/launch_callbacks.h"
#include "capture/cupti/recording_gate.h"
#include "capture/cupti/stack_table.h"
#include "capture/cupti/tracer.h"
#include "core/stats_registry.h"
#include "core/store.h"
#include "core/thread_name.h"
#include "energy/clock.h"

namespace magneton::capture {
namespace {

using std::chrono::milliseconds;

class Tracer;
std::atomic<Tracer*> g_active{nullptr};

constexpr milliseconds kDrainEvery{250};
// CUPTI's own worker hands back finished buffers this often
// (cuptiActivityFlushPeriod), so the drain thread needs no CUPTI call of its
// own and cannot wait inside CUPTI while the program runs.
constexpr uint32_t kCuptiFlushPeriodMs = 500;
// Launch stacks are kept 2-4 s by correlation id: a kernel's record can come
// well after its launch when the GPU queue is deep.
constexpr int kAgeStacksEveryDrains = 8;

// Whether this process's CUPTI has Magneton's clock (under g_active: one
// Init at a time). A detach (cuptiFinalize) forgets it.
bool timestamps_registered = false;

// A selection of API calls, switched call by call (SetSelectedApis).
bool Selective(ApiCalls a) { return a == ApiCalls::kLaunches || a == ApiCalls::kWaits; }

// Kinds turned on and off with recording; DEVICE, CONTEXT and MARKER stay on
// so devices are known and NVTX ranges are whole.
std::vector<CUpti_ActivityKind> WorkKinds(const TracerOptions& o) {
  std::vector<CUpti_ActivityKind> kinds;
  if (o.kernels) kinds.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (o.transfers)
    for (auto k : {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
                   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION})
      kinds.push_back(k);
  if (o.api_calls == ApiCalls::kAll || (Selective(o.api_calls) && o.launches_by_exclusion))
    for (auto k : {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER}) kinds.push_back(k);
  if (o.kernels || o.transfers) kinds.push_back(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  return kinds;
}

std::string KindName(CUpti_ActivityKind k) { return fmt::format("activity kind {}", static_cast<int>(k)); }

class Tracer final : public CuptiTracer {
 public:
  Tracer(RunWriter* writer, const TracerOptions& options)
      : writer_(writer),
        options_(options),
        writer_mu_(options.writer_mutex ? options.writer_mutex : &own_writer_mu_),
        pool_(options.buffer_bytes, options.max_buffers),
        gate_(RecordingGate::Config{options.start_paused, !options.only_ranges.empty(), energy::NowNs(),
                                    options.delay_ns, options.duration_ns}),
        processor_(writer, MakeProcessorOptions()) {}

  ~Tracer() override { (void)Stop(); }

  Status Init();

  // Operator callbacks of any thread call these; Detach waits for the calls
  // in flight before it tears CUPTI down under them.
  void PushExternalId(uint64_t op_id) override {
    InFlight call(in_flight_);
    if (!disabled_.load() && !detached_.load()) (void)cuptiActivityPushExternalCorrelationId(kOpCorrelationKind, op_id);
  }
  void PopExternalId() override {
    InFlight call(in_flight_);
    uint64_t last = 0;
    if (!disabled_.load() && !detached_.load()) (void)cuptiActivityPopExternalCorrelationId(kOpCorrelationKind, &last);
  }
  void SetEnabled(bool enabled) override {
    std::lock_guard<std::mutex> lock(gate_mu_);
    if (gate_.SetUser(enabled)) ApplyGate();
  }
  void Mark(std::string name, int64_t thread, int64_t t_ns) override {
    std::lock_guard<std::mutex> lock(completed_mu_);
    marks_.push_back({std::move(name), thread, t_ns});
  }
  Status StopTracing() override;
  Status Flush() override;
  Status Stop() override;
  Counts counts() const override;
  void Abandon() {
    abandoned_ = true;
    (void)Stop();
  }

  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI BufferCompleted(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size, size_t valid);

 private:
  ProcessorOptions MakeProcessorOptions();
  std::string ApiName(uint32_t domain, uint32_t cbid);
  void OnRange(bool enter) {
    std::lock_guard<std::mutex> lock(gate_mu_);
    if (enter ? gate_.EnterRange() : gate_.ExitRange()) ApplyGate();
  }
  void ApplyGate();  // gate_mu_ held
  Status SetCollection(bool on);
  Status SetSelectedApis(bool on);
  void Disable(const std::string& why);
  void DrainLoop();
  Status DrainOnce();
  Status ProcessBuffer(uint8_t* buffer, size_t valid);
  Status WriteStats();

  RunWriter* writer_;
  TracerOptions options_;
  std::mutex own_writer_mu_;
  std::mutex* writer_mu_;
  BufferPool pool_;

  std::mutex completed_mu_;
  std::condition_variable wake_;
  std::vector<std::pair<uint8_t*, size_t>> completed_;
  std::vector<ProcessorMark> marks_;  // Mark()s since the last drain
  bool stopping_ = false;
  std::thread thread_;
  std::atomic<int64_t> dropped_{0};
  int64_t dropped_written_ = 0, refused_written_ = 0;

  std::mutex gate_mu_;
  RecordingGate gate_;
  bool collecting_ = false;
  // ApiCalls::kLaunches and kWaits: the callback ids turned on and off with collection.
  std::vector<CUpti_CallbackId> runtime_apis_, driver_apis_;
  std::atomic<bool> disabled_{false};
  struct InFlight {
    explicit InFlight(std::atomic<int>& n) : n(n) { n.fetch_add(1); }
    ~InFlight() { n.fetch_sub(1); }
    std::atomic<int>& n;
  };
  std::atomic<int> in_flight_{0};  // PushExternalId/PopExternalId calls inside CUPTI now
  std::atomic<bool> detached_{false};  // CUPTI finalized: no CUPTI call any more (it would attach again)
  void EndCollection();
  void Detach();

  std::mutex drain_mu_;  // one drain at a time: the thread, Flush, Stop
  int64_t drains_ = 0;
  std::unique_ptr<StackTable> stacks_;
  std::unique_ptr<LaunchCallbacks> callbacks_;
  std::unique_ptr<DumpWriter> dump_;
  ActivityProcessor processor_;
  std::mutex stats_mu_;
  std::vector<Stat> pending_stats_;
  std::atomic<bool> stopped_{false};
  bool owns_cupti_ = false;  // Init took g_active; only then may Stop touch CUPTI
  bool abandoned_ = false;   // Start failed: write nothing more
  Status first_error_;
  mutable std::mutex counts_mu_;
  Counts counts_;  // snapshot after each drain
};

ProcessorOptions Tracer::MakeProcessorOptions() {
  ProcessorOptions p;
  p.kernels = options_.kernels;
  p.transfers = options_.transfers;
  p.api_calls = options_.api_calls != ApiCalls::kNone;
  p.nvtx = options_.nvtx;
  p.devices = options_.devices;
  p.api_name = [this](uint32_t domain, uint32_t cbid) { return ApiName(domain, cbid); };
  p.stack_of = [this](uint32_t correlation) -> int64_t {
    if (callbacks_ && stacks_)
      if (auto index = callbacks_->StackIndex(correlation)) return stacks_->RunId(*index);
    if (options_.wait_sites) return std::max<int64_t>(kNone, options_.wait_sites->StackOf(correlation));
    return kNone;
  };
  return p;
}

std::string Tracer::ApiName(uint32_t domain, uint32_t cbid) {
  const char* name = nullptr;
  std::string s;
  if (cuptiGetCallbackName(static_cast<CUpti_CallbackDomain>(domain), cbid, &name) == CUPTI_SUCCESS && name) s = name;
  if (dump_) (void)dump_->WriteApiName(domain, cbid, s);
  return s;
}

Status Tracer::Init() {
  Tracer* expected = nullptr;
  if (!g_active.compare_exchange_strong(expected, this))
    return MakeError(ErrorCode::kUnavailable, "kernel tracing: another CUPTI tracer is already active in this process");
  owns_cupti_ = true;
  // Under --only-ranges collection is switched on and off from inside CUPTI's
  // NVTX callbacks; there the per-API selection of `launches`
  // (cuptiActivityEnableRuntimeApi) recorded no API rows on the H200
  // (2026-12-04) while whole API kinds did. Without launch records kernels
  // cannot be placed in the range that launched them, so record every call.
  if (!options_.only_ranges.empty() && Selective(options_.api_calls)) {
    options_.api_calls = ApiCalls::kAll;
    pending_stats_.push_back(MakeStat(stats::kApiLaunchesRecordedAsAll, 1));
  }
  // Timestamps on the run's clock (set before any kind is enabled: CUPTI's
  // rule) and the buffer callbacks, at every start. They are process-wide and
  // the last client's win: torch.profiler (Kineto) registers its own, and a
  // recording made after it in the same process got no record at all
  // (measured_pass.py on the H200, 2026-12-05). A second start in a process
  // finds its kinds still enabled by an earlier client; where CUPTI then
  // refuses the timestamp callback, the one registered before stays.
  if (Status st = CuptiStatus(cuptiActivityRegisterTimestampCallback(&energy::MagnetonClockNs),
                              "cuptiActivityRegisterTimestampCallback");
      st.ok()) {
    timestamps_registered = true;
  } else if (!timestamps_registered) {
    return st;
  } else {
    pending_stats_.push_back(MakeStat(stats::kCuptiClockKept, 1, st.message()));
  }
  MAGNETON_RETURN_IF_ERROR(CuptiStatus(
      cuptiActivityRegisterCallbacks(&Tracer::BufferRequested, &Tracer::BufferCompleted),
      "cuptiActivityRegisterCallbacks"));
  if (Status st = CuptiStatus(cuptiActivityFlushPeriod(kCuptiFlushPeriodMs), "cuptiActivityFlushPeriod"); !st.ok())
    pending_stats_.push_back(MakeStat(stats::kCuptiFlushPeriodUnavailable, 1,
                                      st.message() + "; records reach the file when a buffer fills and at stop"));
  if (!options_.dump_dir.empty()) {
    auto dump = DumpWriter::Create(fmt::format("{}/cupti-{}.bin", options_.dump_dir, getpid()),
                                   static_cast<uint64_t>(options_.dump_max_bytes));
    if (dump.ok()) dump_ = std::move(dump.value());
    else pending_stats_.push_back(MakeStat(stats::kCuptiDumpFailed, 1, dump.error().message));
  }
  // Information records: without them devices have no names and syncs no device.
  for (auto kind : {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT}) {
    Status st = CuptiStatus(cuptiActivityEnable(kind), "cuptiActivityEnable");
    if (!st.ok()) pending_stats_.push_back(MakeStat(stats::kCuptiKindUnavailable, 1, KindName(kind) + ": " + st.message()));
  }
  if (options_.nvtx) {
    Status st = CuptiStatus(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER), "cuptiActivityEnable(MARKER)");
    if (!st.ok()) pending_stats_.push_back(MakeStat(stats::kNvtxUnavailable, 1, st.message()));
  }
  if (options_.stacks || options_.wait_sites || !options_.only_ranges.empty()) {
    if (options_.stacks) stacks_ = std::make_unique<StackTable>(std::vector<std::string>{"libmagneton_cupti", "libcupti", "libcuda."});
    callbacks_ = std::make_unique<LaunchCallbacks>(stacks_.get(), options_.wait_sites, options_.only_ranges,
                                                   [this](bool enter) { OnRange(enter); });
    Status st = callbacks_->Subscribe();
    if (!st.ok()) {
      callbacks_.reset();
      // Without NVTX callbacks --only-ranges cannot be honoured: record nothing rather than everything.
      if (!options_.only_ranges.empty()) return st;
      stacks_.reset();
      pending_stats_.push_back(MakeStat(stats::kStacksUnavailable, 1, st.message()));
    }
  }
  {
    std::lock_guard<std::mutex> lock(gate_mu_);
    if (gate_.active()) MAGNETON_RETURN_IF_ERROR(SetCollection(true));
  }
  thread_ = std::thread([this] {
    NameThisThread("cupti-drain");
    DrainLoop();
  });
  return Status::Ok();
}

Status Tracer::SetCollection(bool on) {
  for (auto kind : WorkKinds(options_)) {
    CUptiResult r = on ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind);
    // Peer copies and synchronization records are extras; their absence is not fatal.
    if (r != CUPTI_SUCCESS && (kind == CUPTI_ACTIVITY_KIND_MEMCPY2 || kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) {
      std::lock_guard<std::mutex> lock(stats_mu_);
      pending_stats_.push_back(MakeStat(stats::kCuptiKindUnavailable, 1, KindName(kind) + ": " + CuptiResultText(r)));
      continue;
    }
    MAGNETON_RETURN_IF_ERROR(CuptiStatus(r, on ? "cuptiActivityEnable" : "cuptiActivityDisable"));
  }
  if (Selective(options_.api_calls)) MAGNETON_RETURN_IF_ERROR(SetSelectedApis(on));
  collecting_ = on;
  return Status::Ok();
}

// kLaunches, kWaits: the selected calls switched with collection; by
// exclusion, the other calls switched off after the kinds were enabled whole
// (and nothing to do when collection stops: the kinds go off whole).
Status Tracer::SetSelectedApis(bool on) {
  const bool exclude = options_.launches_by_exclusion;
  if (exclude && !on) return Status::Ok();
  if (runtime_apis_.empty() && driver_apis_.empty()) {
    runtime_apis_ = SelectedApis(CUPTI_CB_DOMAIN_RUNTIME_API, options_.api_calls, !exclude);
    driver_apis_ = SelectedApis(CUPTI_CB_DOMAIN_DRIVER_API, options_.api_calls, !exclude);
  }
  const uint8_t enable = exclude ? 0 : on;
  for (CUpti_CallbackId id : runtime_apis_)
    MAGNETON_RETURN_IF_ERROR(CuptiStatus(cuptiActivityEnableRuntimeApi(id, enable), "cuptiActivityEnableRuntimeApi"));
  for (CUpti_CallbackId id : driver_apis_)
    MAGNETON_RETURN_IF_ERROR(CuptiStatus(cuptiActivityEnableDriverApi(id, enable), "cuptiActivityEnableDriverApi"));
  return Status::Ok();
}

void Tracer::ApplyGate() {
  if (disabled_.load() || detached_.load() || gate_.active() == collecting_) return;
  Status st = SetCollection(gate_.active());
  if (!st.ok()) Disable(st.message());
}

void Tracer::Disable(const std::string& why) {
  if (disabled_.exchange(true)) return;
  // One line, on stderr, and the host program goes on untouched.
  std::fprintf(stderr, "magneton: kernel tracing stopped in process %d: %s\n", static_cast<int>(getpid()), why.c_str());
  if (!detached_.load()) {
    for (auto kind : WorkKinds(options_)) (void)cuptiActivityDisable(kind);
    if (Selective(options_.api_calls)) (void)SetSelectedApis(false);
  }
  collecting_ = false;
  std::lock_guard<std::mutex> lock(stats_mu_);
  pending_stats_.push_back(MakeStat(stats::kCuptiTracingDisabled, 1, why));
}

void CUPTIAPI Tracer::BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  Tracer* t = g_active.load();
  *max_records = 0;
  *buffer = t ? t->pool_.Acquire() : nullptr;
  *size = *buffer ? t->pool_.buffer_bytes() : 0;
  // Running low: wake the drain thread rather than wait for its timer.
  if (t && t->pool_.outstanding() * 2 > t->options_.max_buffers) t->wake_.notify_one();
}

void CUPTIAPI Tracer::BufferCompleted(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  Tracer* t = g_active.load();
  if (!t) {
    std::free(buffer);  // a buffer left with CUPTI by a tracer that has stopped
    return;
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
    t->dropped_.fetch_add(static_cast<int64_t>(dropped));
  std::lock_guard<std::mutex> lock(t->completed_mu_);
  t->completed_.push_back({buffer, valid});
}

void Tracer::DrainLoop() {
  for (;;) {
    NoteDrainStage("waiting for buffers");
    // Wake for the next drain, or sooner when the --delay/--duration window opens or closes.
    auto wait = std::chrono::duration_cast<std::chrono::nanoseconds>(kDrainEvery);
    {
      std::lock_guard<std::mutex> g(gate_mu_);
      auto until = std::chrono::nanoseconds(gate_.next_deadline() - energy::NowNs());
      if (until.count() >= 0 && until < wait) wait = until + milliseconds(1);
    }
    {
      // Never hold completed_mu_ while taking gate_mu_: CUPTI may complete a
      // buffer from inside an enable/disable made under gate_mu_.
      std::unique_lock<std::mutex> lock(completed_mu_);
      if (stopping_) break;
      wake_.wait_for(lock, wait);
      if (stopping_) break;
    }
    {
      NoteDrainStage("opening or closing the --delay/--duration window");
      std::lock_guard<std::mutex> g(gate_mu_);
      if (gate_.Tick(energy::NowNs())) ApplyGate();
    }
    NoteDrainStage("writing records");
    Status st = DrainOnce();
    if (!st.ok()) Disable(st.message());
  }
}

Status Tracer::ProcessBuffer(uint8_t* buffer, size_t valid) {
  return ForEachRecord(buffer, valid, &cuptiActivityGetNextRecord, [this](const CUpti_Activity* record, size_t size) {
    if (dump_ && !dump_->full()) (void)dump_->Write(record, size);
    return processor_.Process(record, size);
  });
}

Status Tracer::DrainOnce() {
  std::lock_guard<std::mutex> drain(drain_mu_);
  std::vector<std::pair<uint8_t*, size_t>> batch;
  std::vector<ProcessorMark> marks;
  {
    std::lock_guard<std::mutex> lock(completed_mu_);
    batch.swap(completed_);
    marks.swap(marks_);
  }
  std::lock_guard<std::mutex> writer(*writer_mu_);
  Status st = stacks_ ? stacks_->WriteNew(writer_) : Status::Ok();
  for (auto& [buffer, valid] : batch) {
    // After a write error keep returning buffers to the pool, but stop writing.
    if (st.ok() && first_error_.ok()) st = ProcessBuffer(buffer, valid);
    pool_.Release(buffer);
  }
  for (auto& m : marks) processor_.AddMark(std::move(m));
  if (st.ok()) st = processor_.EndBatch();
  if (callbacks_ && ++drains_ % kAgeStacksEveryDrains == 0) callbacks_->Age();
  if (st.ok()) st = WriteStats();
  if (!st.ok() && first_error_.ok()) first_error_ = st;
  const ProcessorCounts& p = processor_.counts();
  std::lock_guard<std::mutex> lock(counts_mu_);
  counts_.kernels = p.kernels;
  counts_.transfers = p.transfers;
  counts_.api_calls = p.api_calls;
  counts_.ranges = p.ranges;
  return st;
}

Status Tracer::WriteStats() {
  int64_t dropped = dropped_.load();
  if (dropped > dropped_written_) {
    MAGNETON_RETURN_IF_ERROR(writer_->Add(MakeStat(stats::kCuptiRecordsDropped, dropped - dropped_written_)));
    dropped_written_ = dropped;
  }
  int64_t refused = pool_.refused();
  if (refused > refused_written_) {
    MAGNETON_RETURN_IF_ERROR(writer_->Add(MakeStat(stats::kCuptiBuffersRefused, refused - refused_written_)));
    refused_written_ = refused;
  }
  std::vector<Stat> stats;
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats.swap(pending_stats_);
  }
  for (const Stat& s : stats) MAGNETON_RETURN_IF_ERROR(writer_->Add(s));
  return Status::Ok();
}

Status Tracer::Flush() {
  if (stopped_.load()) return Status::Ok();
  if (detached_.load()) return DrainOnce();
  (void)cuptiActivityFlushAll(0);
  return DrainOnce();
}

// After the forced flush and the last drain (the caller synchronized the
// device): nothing of CUPTI's is left to lose.
void Tracer::Detach() {
  NoteStopStage("detaching CUPTI (cuptiFinalize)");
  detached_.store(true);
  while (in_flight_.load() > 0) std::this_thread::yield();
  if (Status st = CuptiStatus(cuptiFinalize(), "cuptiFinalize"); !st.ok()) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    pending_stats_.push_back(MakeStat(stats::kCuptiDetachFailed, 1, st.message()));
    return;
  }
  timestamps_registered = false;
}

// Collection off; everything CUPTI still holds, finished or not, handed to
// the buffers; no more callbacks.
void Tracer::EndCollection() {
  NoteStopStage("disabling CUPTI activity kinds");
  {
    std::lock_guard<std::mutex> lock(gate_mu_);
    for (auto kind : WorkKinds(options_)) (void)cuptiActivityDisable(kind);
    collecting_ = false;
  }
  (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MARKER);
  NoteStopStage("cuptiActivityFlushAll(FORCED)");
  (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  NoteStopStage("unsubscribing CUPTI callbacks");
  if (callbacks_) callbacks_->Unsubscribe();
}

Status Tracer::StopTracing() {
  if (stopped_.load() || !owns_cupti_ || detached_.load()) return first_error_;
  EndCollection();
  Detach();
  wake_.notify_one();  // the drain thread writes what the flush handed back
  return first_error_;
}

Status Tracer::Stop() {
  if (stopped_.exchange(true)) return first_error_;
  if (!owns_cupti_) return first_error_;
  {
    std::lock_guard<std::mutex> lock(completed_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  NoteStopStage("joining the CUPTI drain thread");
  if (thread_.joinable()) thread_.join();
  if (!detached_.load()) EndCollection();
  NoteStopStage("writing the last CUPTI records");
  if (abandoned_) {
    // Start failed: hand the buffers back without writing to the caller's run.
    std::lock_guard<std::mutex> lock(completed_mu_);
    for (auto& b : completed_) pool_.Release(b.first);
    completed_.clear();
    Tracer* self = this;
    g_active.compare_exchange_strong(self, nullptr);
    return first_error_;
  }
  Status st = DrainOnce();
  if (options_.detach_at_stop && !detached_.load()) Detach();
  {
    std::lock_guard<std::mutex> writer(*writer_mu_);
    if (st.ok() && first_error_.ok()) st = processor_.Finish(energy::NowNs());
    if (st.ok()) st = WriteStats();
  }
  if (dump_) (void)dump_->Close();
  Tracer* self = this;
  g_active.compare_exchange_strong(self, nullptr);
  if (!st.ok() && first_error_.ok()) first_error_ = st;
  return first_error_;
}

CuptiTracer::Counts Tracer::counts() const {
  std::lock_guard<std::mutex> lock(counts_mu_);
  Counts c = counts_;
  c.dropped = dropped_.load();
  c.stacks = stacks_ ? stacks_->interned() : 0;
  c.disabled = disabled_.load();
  return c;
}

}  // namespace

Result<std::unique_ptr<CuptiTracer>> CuptiTracer::Start(RunWriter* writer, const TracerOptions& options) {
  if (!writer) return MakeError(ErrorCode::kInvalidArgument, "kernel tracing: no run writer");
  auto tracer = std::make_unique<Tracer>(writer, options);
  Status st = tracer->Init();
  if (!st.ok()) {
    tracer->Abandon();
    return MakeError(ErrorCode::kUnavailable, "kernel tracing unavailable: " + st.message());
  }
  return std::unique_ptr<CuptiTracer>(std::move(tracer));
}

}  // namespace magneton::capture
