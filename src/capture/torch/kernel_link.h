// Linking GPU kernels to the op that launched them. With the CUPTI tracer in
// this process, each op's id is pushed as a CUPTI external correlation id
// around the op, so its kernels carry it. Kernels that arrive without one
// (launched outside any op's correlation scope, or external correlation
// unsupported) are linked by time window: the innermost op on the launching
// thread whose span contains the launch API call. Builds without the tracer
// (CPU-only) get a KernelCorrelation that reports itself unavailable.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "capture/cupti/wait_sites.h"
#include "core/run.h"
#include "core/status.h"
#include "core/store.h"

namespace magneton::capture {

// What linking by time needs of an op, by op id (the op rows themselves are
// streamed to the store and leave memory).
struct OpSpan {
  int64_t parent = kNone;
  int64_t thread = 0;
  int64_t start_ns = 0, end_ns = 0;
};

// A RunWriter that forwards every row to `inner` and remembers kernels, their
// op links and the API calls that launched them, for the time-window pass.
class LaunchIndex : public ForwardingRunWriter {
 public:
  explicit LaunchIndex(RunWriter* inner) : ForwardingRunWriter(inner) {}

  using ForwardingRunWriter::Add;
  Status Add(const Kernel& k) override;
  Status Add(const ApiCall& a) override;
  Status LinkKernel(int64_t kernel_id, int64_t op_id) override;
  // Close (the base's) leaves the real writer to the recorder.

  struct LinkCounts {
    int64_t kernels = 0;
    int64_t by_correlation = 0;  // external correlation id (op pushed around the launch)
    int64_t by_time = 0;         // time window on the launching thread
    int64_t recorder_work = 0;   // the recorder's own kernels (kRecorderWork)
  };
  // Whether kernels and launches are remembered for linking by time: only
  // while operators are recorded (a long measured pass without them would
  // pile them up for nothing).
  void set_remember(bool on) { remember_ = on; }

  // Links kernels that have no op yet; `ops` are the run's ops' spans (by id),
  // `thread_ids` maps CUPTI's thread ids (pthread ids) to the ids ops carry.
  // A kernel still without an op whose launch falls in one of `recorder_work`
  // (host spans of the recorder's own work, any thread) is the recorder's: a
  // solver inside a fingerprint may launch from a thread of its own.
  // Call after the tracer stopped.
  Result<LinkCounts> LinkByTime(const std::vector<OpSpan>& ops,
                                const std::unordered_map<int64_t, int64_t>& thread_ids,
                                std::vector<std::pair<int64_t, int64_t>> recorder_work = {});

 private:
  struct Launch {
    int64_t thread = 0;
    int64_t start_ns = 0;
  };
  bool remember_ = true;
  std::map<int64_t, int64_t> kernel_op_;                 // kernel id -> op (kNone)
  std::unordered_map<int64_t, int64_t> kernel_corr_;     // kernel id -> correlation
  std::unordered_map<int64_t, Launch> launches_;         // correlation -> API call
};

// The API call selection a recorder starts KernelCorrelation with
// (RecorderApiCalls, capture/cupti/api_selection.h): `ops` recorded in its
// measured phase, or a recording pass (`fingerprints`).
std::string DefaultApiCalls(bool ops, bool fingerprints);

class KernelCorrelation {
 public:
  // Starts the in-process CUPTI tracer writing kernels into `writer`; GPUs
  // are matched against the run's device table `devices`, which the tracer
  // may append to while holding `writer_mutex`. `api_calls`: which CUDA API
  // calls become rows, "all" (needed for external correlation), "launches"
  // or "none" (api_selection.h). kUnavailable when this build has no tracer
  // or CUPTI cannot start; kInvalidArgument for another `api_calls`.
  // `waits`: told of the calls that can wait for the device, and asked for
  // their stacks (nullptr: none).
  static Result<std::unique_ptr<KernelCorrelation>> Start(RunWriter* writer, std::vector<Device>* devices,
                                                          std::mutex* writer_mutex, std::string_view api_calls,
                                                          WaitSites* waits = nullptr);
  virtual ~KernelCorrelation() = default;
  virtual void Push(uint64_t op_id) = 0;  // on the op's thread, at op start
  virtual void Pop() = 0;                 // same thread, at op end
  virtual void SetEnabled(bool on) = 0;   // pauses and resumes collection (steps out of a schedule)
  virtual void Mark(std::string name, int64_t thread, int64_t t_ns) = 0;  // CuptiTracer::Mark
  virtual Status StopTracing() = 0;       // CuptiTracer::StopTracing: marks only from here on
  virtual Status Stop() = 0;              // flushes kernels into the writer
};

}  // namespace magneton::capture
