// The CUPTI tracer: one object that turns CUPTI activity records into Run rows.
// Used by the injection library (magneton record -- CMD) and by the torch
// recorder in-process (magneton.record(...)), so both write the same Run.
// CUPTI errors degrade capture (a Stat and one stderr line), never abort the host.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"

namespace magneton {
class RunWriter;
}

namespace magneton::capture {

struct TracerOptions {
  bool kernels = true;
  bool transfers = true;     // memcpy, memset, synchronization
  bool api_calls = true;     // runtime + driver API with correlation ids
  bool nvtx = true;          // NVTX push/pop and start/end ranges
  bool stacks = false;       // native call stacks at launch (libunwind)
  std::string only_ranges;   // record only inside NVTX ranges matching this prefix ("magneton:")
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
  // Flushes activity buffers into the writer; Stop also unsubscribes.
  virtual Status Flush() = 0;
  virtual Status Stop() = 0;
};

}  // namespace magneton::capture
