// The torch recorder: RecordFunction callbacks that turn every ATen operator
// call (forward and autograd backward) into Op rows with dataflow edges,
// optional fingerprints, Python stacks and kernel links. Rows go to the run
// store as they complete, from a thread of the recorder's own (row_stream.cpp),
// so memory is bounded by what is still running and a killed recording keeps
// all but about its last second.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture/torch/dataflow.h"
#include "capture/torch/fingerprint.h"
#include "capture/torch/python_stacks.h"
#include "core/run.h"
#include "core/status.h"
#include "core/store.h"

namespace magneton::capture {

// What a recording does until the next switch (a step schedule switches at
// step boundaries, docs/recording.md "Steps"): nothing but the samplers; the
// recording pass (operators, fingerprints, kernels linked to them); the
// measured pass (kernels, copies and API calls, and operators only with
// RecorderOptions::ops, which a machine without kernel tracing needs).
enum class RecordPhase { kPaused, kRecording, kMeasured };

struct RecorderOptions {
  std::string path;
  bool overwrite = false;
  bool fingerprints = false;   // the recording pass; off for the measured pass
  // One Op row per ATen call (RecordFunction callbacks). Off: the measured
  // pass as the program runs, with kernels, copies and API calls from CUPTI
  // and no per-operator work at all (docs/recording.md).
  bool ops = true;
  RecordPhase first_phase = RecordPhase::kMeasured;  // kRecording when fingerprints, unless kPaused
  bool stacks = true;          // Python stacks of top-level ops
  bool kernels = true;         // CUPTI tracer in-process, when this build has it; in a recording pass
                               // the fingerprints' own kernels are marked kRecorderWork
  std::string energy = "none"; // "none", "nvml", "auto" (every sampler the machine offers)
  FingerprintOptions fingerprint;
  RunInfo info;
  // Accelerators known at start (from Python): kind "gpu", ordinal, name, uuid, memory.
  std::vector<Device> devices;
};

// What a recording produced; returned by Stop.
struct RecordSummary {
  int64_t ops = 0, tensors = 0, frames = 0, stacks = 0;
  int64_t graph_inputs = 0;          // tensors read before any recorded op wrote them
  int64_t aliased_inputs = 0;        // inputs matching no produced value, linked to their storage's last writer
  int64_t aliased_inputs_unlinked = 0;  // ...whose writer's row was already written: the edge is lost
  int64_t fingerprints = 0, fingerprint_failures = 0;
  int64_t skipped_tensors = 0;       // tensors with no usable layout (nested, symbolic)
  bool kernel_tracer = false;        // CUPTI external correlation was active
  int64_t kernels = 0;
  int64_t kernels_by_correlation = 0;  // linked through the op id pushed around the launch
  int64_t kernels_by_time = 0;         // linked by time window on the launching thread
  int64_t recorder_kernels = 0;        // launched by the fingerprinting (kRecorderWork)
  int64_t energy_series = 0;
  int64_t store_waits = 0;             // top-level op ends that waited for the store (kMaxHeldOps)
};

class RecorderState;  // recorder.cpp

class Recorder {
 public:
  // Opens the run file and installs the callbacks. One recording at a time
  // per process: a second Start fails with kInvalidArgument.
  static Result<std::unique_ptr<Recorder>> Start(const RecorderOptions& options);
  ~Recorder();  // stops (and writes) if Stop was not called

  // Switches what is recorded, at a step boundary (RecordPhase). The first
  // switch from the recording pass to the measured one is noted in RunInfo
  // (extra "measured_from_ns"): the diff splits such a file into its passes.
  Status SetPhase(RecordPhase phase);
  // The end of one of the program's steps: a step mark on the run's clock
  // (kStepMark), where kernels are traced; nothing else.
  void MarkStep();
  // Ends kernel tracing and detaches CUPTI for the rest of the recording
  // (CuptiTracer::StopTracing): its steps run as the program does, with
  // their marks and energy readings only. Noted in RunInfo (extra
  // kTracedUntilKey); nothing to do without a tracer. An error is a Stat.
  // With `idle_hold_ns`, first holds the device idle that long (HoldIdle).
  void StopKernelTracing(int64_t idle_hold_ns = 0);

  void SetConfig(const std::string& key, const std::string& value);
  void SetInfoExtra(const std::string& key, const std::string& value);
  // Removes the callbacks and writes every buffered row; idempotent. With
  // `idle_hold_ns`, the run's window ends now and the device is held idle
  // that long before the samplers stop (HoldIdle).
  Result<RecordSummary> Stop(int64_t idle_hold_ns = 0);
  // Operator rows in memory, not yet written (rows leave memory as they are written).
  int64_t RowsHeld();
  // Counting operator calls without recording them, and the count so far.
  void SetOpCounting(bool on);
  static int64_t CountedOps();

 private:
  explicit Recorder(std::shared_ptr<RecorderState> state) : state_(std::move(state)) {}
  // Waits `ns` with the samplers and the kernel trace on, the caller having
  // synchronized the device, and notes the stretch (kIdleHeldKey). A steady
  // program's busy fraction never varies, so its counter intervals alone
  // cannot separate the idle level from the busy one; these can.
  void HoldIdle(int64_t ns);
  std::shared_ptr<RecorderState> state_;
  std::optional<RecordSummary> stopped_;
};

// Monotonic nanoseconds (RunInfo::clock_domain).
int64_t MonotonicNs();

}  // namespace magneton::capture
