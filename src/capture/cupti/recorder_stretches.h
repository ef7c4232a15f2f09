// The recorder's own device work (the fingerprints of a recording pass,
// kRecorderWork) is thousands of small kernels and copies per recorded step:
// 99% of a recording pass's rows on pageable-copy's H100 run (104k of 105k
// kernels, 51k of 51k copies), none of them the program's. Each unbroken
// stretch of it on one stream is kept as a single kernel row named
// kRecorderWorkName that spans it, so that the device's busy time and energy
// there still go to the recorder, not to the program or to idle.
//
// Threading: the ActivityProcessor's.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/run.h"

namespace magneton::capture {

class RecorderStretches {
 public:
  // One kernel or copy of the recorder's on (device, stream).
  void Add(int32_t device, int64_t stream, int64_t start_ns, int64_t end_ns);
  // The stretch on (device, stream), if one is open: the program's work there
  // ends it. Its row has no id yet.
  std::vector<Kernel> End(int32_t device, int64_t stream);
  // Every open stretch (end of a batch, end of the recording).
  std::vector<Kernel> EndAll();
  // Kernels and copies folded into rows so far, less the rows written.
  int64_t folded() const { return folded_; }

 private:
  std::map<std::pair<int32_t, int64_t>, Kernel> open_;
  int64_t folded_ = 0;
};

}  // namespace magneton::capture
