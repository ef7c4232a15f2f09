// A recording pass (fingerprints on: values for matching, but slowed by the
// fingerprinting) and a measured pass (fingerprints off: time and energy as
// the program really runs) of the same program. The measured pass repeats the
// recorded operators once or more; this maps each recorded op to the ops at
// the same position in every repetition, so costs come from the measured pass.
#pragma once

#include <cstdint>
#include <vector>

#include "core/run.h"
#include "core/status.h"

namespace magneton::analysis {

struct PassAlignment {
  std::vector<std::vector<int64_t>> measured_ops;  // by recorded op id: the measured op ids
  int64_t repeats = 0;                             // repetitions of the recorded ops found
};

// Operator key shared by both passes: name and input dtypes and shapes.
std::string OpSignature(const Run& run, const Op& op);

// Finds the recorded op sequence (in id order, nested ops included) in the
// measured pass, as many times as it occurs without overlap. Fails naming the
// first op that differs when it does not occur at all.
Result<PassAlignment> AlignPasses(const Run& recorded, const Run& measured);

}  // namespace magneton::analysis
