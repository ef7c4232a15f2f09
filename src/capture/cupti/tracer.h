// The CUPTI tracer: one object that turns CUPTI activity records into Run rows.
// Used by the injection library (magneton record -- CMD) and by the torch
// recorder in-process (magneton.record(...)), so both write the same Run.
// CUPTI errors degrade capture (a Stat and one stderr line), never abort the host.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "capture/cupti/api_selection.h"
#include "capture/cupti/wait_sites.h"
#include "core/run.h"
#include "core/status.h"

namespace magneton {
class RunWriter;
}

namespace magneton::capture {

struct TracerOptions {
  bool kernels = true;
  bool transfers = true;     // memcpy, memset, synchronization
  ApiCalls api_calls = ApiCalls::kLaunches;  // which runtime/driver API calls become rows (api_selection.h)
  // kLaunches by exclusion: the API kinds enabled whole and every other call
  // disabled. Enabling the launch-like calls one by one records nothing when
  // tracing starts in a process whose CUDA context already exists (seen on
  // the H200 inside torch, 2026-12-03 and 2026-12-04); this form is CUPTI's
  // documented other way to the same selection.
  bool launches_by_exclusion = false;
  bool nvtx = true;          // NVTX push/pop and start/end ranges
  bool stacks = false;       // native call stacks at launch (libunwind)
  std::string only_ranges;   // record only inside NVTX ranges matching this prefix ("magneton:")

  // Added with the implementation (docs/tracing.md):
  // The run's device table, shared with the energy samplers (SampleBuffer::Attach):
  // GPUs are matched by uuid, else CUDA ordinal, and added when absent.
  // nullptr: the tracer adds no Device rows and a kernel's device is its CUDA ordinal.
  std::vector<Device>* devices = nullptr;
  // Held by the tracer's drain thread while it writes; pass the mutex you
  // hold when you use the same writer during the recording. nullptr: the
  // tracer is the writer's only user until Stop returns.
  std::mutex* writer_mutex = nullptr;
  // Detach CUPTI from the process when tracing stops (cuptiFinalize), as
  // torch.profiler does: attached CUPTI keeps slowing every CUDA call and
  // kernel after its kinds are disabled (docs/benchmarks.md). For recorders
  // that stop while the program goes on; the injection library stops at exit.
  bool detach_at_stop = false;
  bool start_paused = false;  // nothing is recorded until SetEnabled(true)
  int64_t delay_ns = 0;       // record from start + delay ...
  int64_t duration_ns = -1;   // ... for this long (-1: until Stop)
  std::string dump_dir;       // save raw activity records to <dir>/cupti-<pid>.bin (activity_dump.h)
  int64_t dump_max_bytes = 8 << 20;
  size_t buffer_bytes = 1 << 20;  // activity buffers handed to CUPTI (small: a full buffer reaches the file within ~0.5 s) ...
  size_t max_buffers = 256;       // ... at most this many at once; beyond, records are dropped and counted
  // Told of each call that can wait for the device, and asked for its stack
  // where no native stack was taken (wait_sites.h). nullptr: none.
  WaitSites* wait_sites = nullptr;
};

class CuptiTracer {
 public:
  // Subscribes to CUPTI. Fails (kUnavailable) when CUPTI cannot be loaded or a
  // CUPTI call fails; the caller goes on without kernel tracing.
  static Result<std::unique_ptr<CuptiTracer>> Start(RunWriter* writer, const TracerOptions& options);
  virtual ~CuptiTracer() = default;

  // Operator correlation: kernels launched between Push and Pop carry `op_id`.
  virtual void PushExternalId(uint64_t op_id) = 0;
  virtual void PopExternalId() = 0;
  // Pauses/resumes recording (magneton.start()/stop()).
  virtual void SetEnabled(bool enabled) = 0;
  // An instant on the run's clock, written as a zero-length Range (domain
  // "magneton") beside the NVTX ones: the program's step boundaries, which
  // give the host's period when no launch calls are recorded (any thread).
  virtual void Mark(std::string name, int64_t thread, int64_t t_ns) = 0;
  // Ends collection and detaches CUPTI from the process (cuptiFinalize)
  // while the program goes on: the rest of a measured pass runs at full
  // speed, its marks still recorded until Stop. Call after synchronizing the
  // device, so that the last kernels' records are complete.
  virtual Status StopTracing() = 0;
  // Flushes activity buffers into the writer; Stop also unsubscribes.
  virtual Status Flush() = 0;
  virtual Status Stop() = 0;

  // Added with the implementation: what was recorded so far (any thread).
  struct Counts {
    int64_t kernels = 0, transfers = 0, api_calls = 0, ranges = 0;
    int64_t dropped = 0;          // records CUPTI dropped for want of a buffer
    int64_t stacks = 0;           // distinct launch stacks
    bool disabled = false;        // a CUPTI error stopped the tracing
  };
  virtual Counts counts() const = 0;
};

}  // namespace magneton::capture
