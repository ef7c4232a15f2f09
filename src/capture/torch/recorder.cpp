#include "capture/torch/recorder.h"

#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include "capture/torch/recorder_state.h"
#include "core/stats_registry.h"

namespace magneton::capture {

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

namespace {

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return {};
  return buf;
}

// Writes a table of rows, keeping the first error.
template <class Rows>
void WriteAll(RunWriter& w, const Rows& rows, Status* first) {
  for (const auto& r : rows) {
    Status s = w.Add(r);
    if (!s.ok() && first->ok()) *first = s;
  }
}

void Keep(Status s, Status* first) {
  if (!s.ok() && first->ok()) *first = std::move(s);
}

// Which CUDA API calls the tracer records (DefaultApiCalls, kernel_link.h).
// A measured pass records only the calls that can make the host wait: a
// launch row per kernel cost ~10% on launch-bound loops (docs/benchmarks.md),
// and the host's period per step comes from the step marks instead. A
// recording pass keeps the launches (with the waits alone its kernels were
// linked to no operator, the fingerprints' own included: H100, 2026-12-05).
// MAGNETON_TORCH_API=all|launches|waits|none overrides.
std::string ApiCallsFor(const RecorderOptions& o) {
  const char* env = std::getenv("MAGNETON_TORCH_API");
  if (env && *env) return env;
  return DefaultApiCalls(o.ops, o.fingerprints);
}

// CUPTI is touched only here, inside record(), never at import. Any failure
// (another subscriber such as kineto, no CUPTI) leaves the run without
// kernels, with a Stat saying why. MAGNETON_TORCH_KERNELS=0 keeps CUPTI out
// of the process altogether. With ops, kernels reach their op through the
// op id pushed around it (LaunchIndex links the rest by time); without ops
// they go straight to the file.
void StartKernelTracing(RecorderState& st) {
  const char* env = std::getenv("MAGNETON_TORCH_KERNELS");
  if (env && std::string(env) == "0") {
    st.stats.push_back(MakeStat(stats::kKernelTracingUnavailable, 1, "MAGNETON_TORCH_KERNELS=0"));
    return;
  }
  RunWriter* target = st.writer.get();
  if (st.options.ops) {
    st.launches = std::make_unique<LaunchIndex>(st.writer.get());
    target = st.launches.get();
  }
  Result<std::unique_ptr<KernelCorrelation>> kernels = MakeError(ErrorCode::kUnavailable, "kernel tracing failed");
  try {
    kernels = KernelCorrelation::Start(target, &st.devices, &st.writer_mu, ApiCallsFor(st.options),
                                       st.options.stacks ? &st.wait_sites : nullptr);
  } catch (const std::exception& e) {
    kernels = MakeError(ErrorCode::kUnavailable, std::string("kernel tracing: ") + e.what());
  }
  if (kernels.ok()) {
    st.kernels = std::move(kernels.value());
    st.summary.kernel_tracer = true;
  } else {
    st.launches.reset();
    st.stats.push_back(MakeStat(stats::kKernelTracingUnavailable, 1, kernels.error().message));
  }
}

}  // namespace

Result<std::unique_ptr<Recorder>> Recorder::Start(const RecorderOptions& options) {
  static std::atomic<uint64_t> generations{0};
  auto st = std::make_shared<RecorderState>(options);
  st->generation = ++generations;
  RunInfo& info = st->options.info;
  info.pid = getpid();
  info.start_ns = MonotonicNs();
  info.magneton_version = MAGNETON_VERSION;
  if (info.host.empty()) info.host = HostName();

  // Refuse a second recording before touching any file.
  MAGNETON_RETURN_IF_ERROR(ClaimRecording(st));
  auto fail = [&](Error e) -> Result<std::unique_ptr<Recorder>> {
    ReleaseRecording(st);
    return e;
  };
  auto writer = RunWriter::Create(options.path, info, options.overwrite);
  if (!writer.ok()) return fail(writer.error());
  st->writer = std::move(writer.value());

  // Energy first: its GPUs (with uuids) head the device table that the
  // recorder's tensors and the tracer's kernels then match.
  auto energy = EnergyCapture::Start(options.energy, st->writer.get(), &st->devices, &st->stats);
  Status devices = energy.ok() ? st->AddKnownDevices() : energy.status();
  if (!devices.ok()) {
    (void)st->writer->Close();
    return fail(devices.error());
  }
  st->energy = std::move(energy.value());

  bool has_gpu = false;
  for (const auto& d : options.devices) has_gpu |= d.kind == "gpu";
  if (options.kernels && has_gpu) StartKernelTracing(*st);
  StartFlushing(*st);
  auto recorder = std::unique_ptr<Recorder>(new Recorder(std::move(st)));
  Status first = recorder->SetPhase(options.first_phase);
  if (!first.ok()) return first.error();
  return recorder;
}

Recorder::~Recorder() {
  if (!stopped_) (void)Stop();
}

// Configuration and metadata go to the store at once, so a killed recording keeps them.
void Recorder::SetConfig(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(state_->writer_mu);
  Status st = state_->writer->SetConfig(key, value);
  if (!st.ok()) state_->callback_errors.fetch_add(1);
}

void Recorder::SetInfoExtra(const std::string& key, const std::string& value) {
  RunInfo info;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->info_extra[key] = value;
    info = state_->options.info;
    for (const auto& [k, v] : state_->info_extra) info.extra[k] = v;
  }
  std::lock_guard<std::mutex> lock(state_->writer_mu);
  Status st = state_->writer->SetInfo(info);
  if (!st.ok()) state_->callback_errors.fetch_add(1);
}

Status Recorder::SetPhase(RecordPhase phase) {
  RecorderState& st = *state_;
  if (phase == RecordPhase::kRecording && !st.options.fingerprints)
    return MakeError(ErrorCode::kInvalidArgument, "a recording pass needs a recorder started with fingerprints");
  int64_t measured_from = 0;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (st.phase == RecordPhase::kRecording && phase == RecordPhase::kMeasured && st.measured_from_ns == 0)
      measured_from = st.measured_from_ns = MonotonicNs();
    st.phase = phase;
  }
  const bool ops = phase == RecordPhase::kRecording || (phase == RecordPhase::kMeasured && st.options.ops);
  st.fingerprinting.store(phase == RecordPhase::kRecording);
  SetOpCallbacks(st, ops);
  if (st.launches) st.launches->set_remember(ops);
  if (st.kernels) st.kernels->SetEnabled(phase != RecordPhase::kPaused);
  // Where the program waits is the recording pass's to say (sync_sites.h):
  // the measured pass runs without a profile function.
  if (st.kernels && st.options.stacks && !st.wait_sites.Watch(phase == RecordPhase::kRecording)) {
    std::lock_guard<std::mutex> lock(st.mu);
    st.stats.push_back(MakeStat(stats::kStacksUnavailable, 1,
                                "another Python profiler is set: waits for the device get no Python stack"));
  }
  if (measured_from) SetInfoExtra("measured_from_ns", std::to_string(measured_from));
  return Status::Ok();
}

void Recorder::MarkStep() {
  if (state_->kernels) state_->kernels->Mark(kStepMark, static_cast<int64_t>(gettid()), MonotonicNs());
}

void Recorder::HoldIdle(int64_t ns) {
  if (ns <= 0) return;
  const int64_t from = MonotonicNs();
  std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
  SetInfoExtra(kIdleHeldKey, std::to_string(from) + " " + std::to_string(MonotonicNs()));
}

void Recorder::StopKernelTracing(int64_t idle_hold_ns) {
  RecorderState& st = *state_;
  if (!st.kernels) return;
  HoldIdle(idle_hold_ns);
  // Tracing ends either way, so the cut is noted either way; an error (the
  // tracer's first, maybe from an earlier drain) is a stat beside it.
  if (Status stopped = st.kernels->StopTracing(); !stopped.ok()) {
    std::lock_guard<std::mutex> lock(st.mu);
    st.stats.push_back(MakeStat(stats::kKernelTracingFailed, 1, stopped.message()));
  }
  SetInfoExtra(kTracedUntilKey, std::to_string(MonotonicNs()));
}

void Recorder::SetOpCounting(bool on) { capture::SetOpCounting(*state_, on); }

int64_t Recorder::CountedOps() { return capture::CountedOps(); }

int64_t Recorder::RowsHeld() {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->ops.size() - state_->ops.written();
}

namespace {

// Links the kernels held for linking to their ops (kernel_link.h), under
// state.mu; counts what stays unlinked.
void LinkKernels(RecorderState& st) {
  std::lock_guard<std::mutex> lock(st.mu);
  std::vector<std::pair<int64_t, int64_t>> work;
  {
    std::lock_guard<std::mutex> work_lock(st.work_mu);
    work.swap(st.recorder_work);
  }
  auto linked = st.launches->LinkByTime(st.spans, st.thread_ids, std::move(work));
  if (!linked.ok()) {
    st.stats.push_back(MakeStat(stats::kKernelLinkingFailed, 1, linked.error().message));
    return;
  }
  st.summary.kernels = linked->kernels;
  st.summary.kernels_by_correlation = linked->by_correlation;
  st.summary.kernels_by_time = linked->by_time;
  st.summary.recorder_kernels = linked->recorder_work;
  AddCount(&st.stats, stats::kRecorderKernels, linked->recorder_work);
  // An unlinked kernel's energy belongs to no operator: the diff cannot see it.
  if (int64_t lost = linked->kernels - linked->by_correlation - linked->by_time - linked->recorder_work; lost > 0)
    st.stats.push_back(MakeStat(stats::kKernelsNotLinked, lost,
                                std::to_string(lost) + " of " + std::to_string(linked->kernels) +
                                    " kernels are linked to no operator (no external correlation record and "
                                    "no launch inside an operator)"));
}

// Under state.mu: the summary's final counts, and the stats of what was counted.
void Summarize(RecorderState& st) {
  RecordSummary& sum = st.summary;
  sum.ops = st.ops.size();
  sum.tensors = st.dataflow.rows();
  sum.frames = st.stacks.frame_count();
  sum.stacks = st.stacks.stack_count();
  sum.aliased_inputs = st.dataflow.aliased_inputs();
  sum.graph_inputs = st.dataflow.graph_inputs();
  sum.energy_series = st.energy->series_count();
  AddCount(&st.stats, stats::kDataflowAliasedInputs, sum.aliased_inputs);
  AddCount(&st.stats, stats::kDataflowAliasedInputsUnlinked, sum.aliased_inputs_unlinked);
  AddCount(&st.stats, stats::kFingerprintFailures, sum.fingerprint_failures);
  AddCount(&st.stats, stats::kTensorsWithoutLayout, sum.skipped_tensors);
  AddCount(&st.stats, stats::kRecorderStoreWaits, sum.store_waits);
  AddCount(&st.stats, stats::kRecorderCallbackErrors, st.callback_errors.load());
}

}  // namespace

Result<RecordSummary> Recorder::Stop(int64_t idle_hold_ns) {
  if (stopped_) return *stopped_;
  RecorderState& st = *state_;
  st.wait_sites.Watch(false);
  ReleaseRecording(state_);
  StopFlushing(st);
  const int64_t end = MonotonicNs();
  HoldIdle(idle_hold_ns);  // after the window's end, with the kernel trace still on
  Status first;
  if (st.kernels) {
    // A tracer that fails to flush loses kernels, not the run: the ops and
    // tensors are still written, and a Stat says what is missing.
    Status stopped = st.kernels->Stop();  // kernels reach the writer now
    if (!stopped.ok()) st.stats.push_back(MakeStat(stats::kKernelTracingFailed, 1, stopped.message()));
  }
  if (st.launches) LinkKernels(st);
  Keep(FlushRows(st, true, end), &first);

  std::lock_guard<std::mutex> lock(st.mu);
  Summarize(st);
  std::lock_guard<std::mutex> writer(st.writer_mu);
  RunWriter& w = *st.writer;
  WriteAll(w, st.stats, &first);
  Keep(st.energy->Stop(&w), &first);

  RunInfo info = st.options.info;
  info.end_ns = end;
  for (const auto& [k, v] : st.info_extra) info.extra[k] = v;
  Keep(w.SetInfo(info), &first);
  Keep(w.Close(), &first);
  stopped_ = st.summary;
  if (!first.ok()) return first.error();
  return st.summary;
}

}  // namespace magneton::capture
