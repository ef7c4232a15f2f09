// Linking GPU kernels to the op that launched them. With the CUPTI tracer in
// this process, each op's id is pushed as a CUPTI external correlation id
// around the op, so its kernels carry it. Builds without the tracer (CPU-only)
// get a KernelCorrelation that reports itself unavailable.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/run.h"
#include "core/status.h"

namespace magneton {
class RunWriter;
}

namespace magneton::capture {

class KernelCorrelation {
 public:
  // Starts the in-process CUPTI tracer writing kernels into `writer`; GPUs
  // are matched against the run's device table `devices`, which the tracer
  // may append to while holding `writer_mutex`. kUnavailable when this build
  // has no tracer or CUPTI cannot start.
  static Result<std::unique_ptr<KernelCorrelation>> Start(RunWriter* writer, std::vector<Device>* devices,
                                                          std::mutex* writer_mutex);
  virtual ~KernelCorrelation() = default;
  virtual void Push(uint64_t op_id) = 0;  // on the op's thread, at op start
  virtual void Pop() = 0;                 // same thread, at op end
  virtual Status Stop() = 0;              // flushes kernels into the writer
};

}  // namespace magneton::capture
