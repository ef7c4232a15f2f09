#include "core/op_signature.h"

#include <fmt/core.h>
#include <fmt/format.h>

namespace magneton {

std::string SignatureInput(std::string_view dtype, std::span<const int64_t> shape) {
  return fmt::format("{}[{}]", dtype, fmt::join(shape, "x"));
}

std::string OpSignature(std::string_view name, const std::vector<const Tensor*>& inputs) {
  std::string s = std::string(name) + "(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i) s += ",";
    s += inputs[i] ? SignatureInput(inputs[i]->dtype, inputs[i]->shape) : "?";
  }
  return s + ")";
}

std::string OpSignature(const Run& run, const Op& op) {
  std::vector<const Tensor*> inputs;
  inputs.reserve(op.inputs.size());
  for (auto t : op.inputs)
    inputs.push_back(t >= 0 && t < static_cast<int64_t>(run.tensors.size()) ? &run.tensors[t] : nullptr);
  return OpSignature(op.name, inputs);
}

}  // namespace magneton
