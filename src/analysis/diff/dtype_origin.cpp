#include "analysis/diff/dtype_origin.h"

#include <fmt/core.h>

#include <unordered_set>

#include "analysis/diff/call_site.h"

namespace magneton::analysis {
namespace {

const Tensor* TensorAt(const Run& run, int64_t id) {
  return id >= 0 && id < static_cast<int64_t>(run.tensors.size()) ? &run.tensors[id] : nullptr;
}

// The first input of `op` in `dtype`, or kNone.
int64_t InputOf(const Run& run, const Op& op, const std::string& dtype) {
  for (int64_t t : op.inputs)
    if (const Tensor* x = TensorAt(run, t); x && x->dtype == dtype) return t;
  return kNone;
}

}  // namespace

std::string DtypeOrigin(const RegionSide& side, const std::string& dtype) {
  const Run& run = *side.run;
  int64_t tensor = kNone;
  for (int64_t op : *side.ops)
    if (op >= 0 && op < static_cast<int64_t>(run.ops.size()) && (tensor = InputOf(run, run.ops[op], dtype)) != kNone)
      break;
  if (tensor == kNone) return "";
  const RunIndex& index = side.cost->index();
  std::unordered_set<int64_t> seen;
  while (seen.insert(tensor).second) {
    const int64_t producer = index.producer(tensor);
    if (producer == kNone)
      return fmt::format("the {} values were made before the step (parameters or data created in {}, a cast outside "
                         "the recorded step)",
                         dtype, dtype);
    const Op& op = run.ops[producer];
    const int64_t in = InputOf(run, op, dtype);
    if (in == kNone) {
      const std::string where = Describe(UserCallSite(run, op.stack));
      return fmt::format("the {} values come from {}{}", dtype, op.name, where.empty() ? "" : " at " + where);
    }
    tensor = in;
  }
  return "";
}

}  // namespace magneton::analysis
