// An operator's signature: its name and its inputs' dtypes and shapes,
// "aten::addmm(float32[8],float32[4x16],float32[16x8])". Replays are keyed by
// it when captured (capture/torch), found again by it for an op of a run
// (the diff's costs, python/magneton/op_replay.py through magneton._torch),
// and passes are aligned by it; so it is defined here once.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/run.h"

namespace magneton {

// One input's part: "float32[4x16]".
std::string SignatureInput(std::string_view dtype, std::span<const int64_t> shape);

// name(input,...); a null input (not a tensor of the run) is "?".
std::string OpSignature(std::string_view name, const std::vector<const Tensor*>& inputs);

// The op's signature over its input tensors in `run`.
std::string OpSignature(const Run& run, const Op& op);

}  // namespace magneton
