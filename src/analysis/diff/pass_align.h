// A recording pass (fingerprints on: values for matching, but slowed by the
// fingerprinting) and a measured pass (the program as it runs: time and
// energy) of the same program. The measured pass repeats the recording's step
// (step_align.h); this maps its work onto the recording's operators, so that
// costs come from the measured pass:
//  - a measured pass with operators (on a CPU, or `ops=True`): operator by
//    operator, by signature (name, input dtypes and shapes; by name alone
//    where the shapes change from step to step);
//  - a measured pass without operators (the default on a GPU): kernel by
//    kernel, by the device work of both passes in launch order (kernel name,
//    grid and block; copy kind and size), each recorded kernel carrying the
//    operator that launched it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/op_signature.h"  // the operator key shared by both passes
#include "core/run.h"
#include "core/status.h"

namespace magneton::analysis {

// A kernel or a copy (not a host wait, not the recorder's own work), in
// launch order: by CUPTI correlation id, which CUDA assigns per API call.
struct DeviceWork {
  bool kernel = true;
  int64_t id = 0;  // Run::kernels or Run::transfers index
};
std::vector<DeviceWork> DeviceWorkInLaunchOrder(const Run& run);
// Its token: "kernel name|grid|block" or "copy kind|bytes"; without shapes, the kernel's name
// without its digits (tile sizes a GEMM library picks by size) or the copy's kind.
std::string DeviceWorkKey(const Run& run, const DeviceWork& w, bool shapes = true);

struct PassAlignment {
  bool by_device_work = false;  // the measured pass has no operators
  bool by_names = false;        // aligned by names alone: the step's shapes change between iterations
  int64_t repeats = 0;          // repetitions of the recorded step found
  int64_t exact = 0;            // ...identical to it, item for item
  int64_t step_items = 0;       // items in the recorded step (ops, or kernels and copies)
  int64_t recording_steps = 1;  // iterations the recording holds; the step is one of them (step_align.h)
  // Operators: by recorded op id, the measured op of each repetition (kNone
  // where that repetition lacks it); by measured op, its repetition (-1: outside).
  std::vector<std::vector<int64_t>> measured_ops;
  std::vector<int32_t> op_rep;
  // By measured kernel and transfer: repetition (-1: outside every one, or
  // not device work) and the recorded op it belongs to (kNone: none).
  std::vector<int32_t> kernel_rep, transfer_rep;
  std::vector<int64_t> kernel_op, transfer_op;
  // Measured items inside repetitions that align with nothing recorded, and
  // those outside every repetition (set-up, warm-up, summary); the most
  // frequent unaligned names with their counts.
  int64_t unaligned = 0, outside = 0;
  int64_t aligned = 0;  // measured items aligned to a recorded one
  std::map<std::string, int64_t> unaligned_names;
};

// The measured items most often left unaligned, "name xN, ...", at most `n`.
std::string MostUnaligned(const PassAlignment& alignment, size_t n = 3);

// Where the measured pass repeats the step's operators (kernels) but not
// their shapes (a decoding loop over a growing sequence), or not all of them
// (more than 1% of the items in its repetitions align with nothing), aligns by
// names alone (`by_names`) if that aligns more. Fails, naming what differs, when the measured pass does
// not repeat the recording's step even so, or when a measured pass without operators meets a
// recording without kernels (recorded by an older Magneton).
// `region_of_op`, where given: by recorded op id (nested ops too), the
// matched region it lies in, or -1. Of a recording's iterations that can be
// the step, the one whose operators lie in the most regions is taken
// (step_align.h, `prefer`).
Result<PassAlignment> AlignPasses(const Run& recorded, const Run& measured,
                                  const std::vector<int32_t>* region_of_op = nullptr);

}  // namespace magneton::analysis
