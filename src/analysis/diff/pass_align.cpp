#include "analysis/diff/pass_align.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <unordered_map>

namespace magneton::analysis {

std::string OpSignature(const Run& run, const Op& op) {
  std::string s = op.name + "(";
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    auto t = op.inputs[i];
    if (i) s += ",";
    if (t < 0 || t >= static_cast<int64_t>(run.tensors.size())) {
      s += "?";
      continue;
    }
    const auto& tensor = run.tensors[t];
    s += fmt::format("{}[{}]", tensor.dtype, fmt::join(tensor.shape, "x"));
  }
  return s + ")";
}

Result<PassAlignment> AlignPasses(const Run& recorded, const Run& measured) {
  // Ops as small integers so the scan compares ints, not strings.
  std::unordered_map<std::string, int> token_of;
  auto tokens = [&](const Run& run) {
    std::vector<int> out;
    out.reserve(run.ops.size());
    for (const auto& op : run.ops)
      out.push_back(token_of.emplace(OpSignature(run, op), static_cast<int>(token_of.size())).first->second);
    return out;
  };
  std::vector<int> rec = tokens(recorded), mea = tokens(measured);
  const size_t n = rec.size();
  PassAlignment out;
  out.measured_ops.resize(n);
  if (n == 0) return out;
  size_t best_prefix = 0, best_at = 0;
  for (size_t p = 0; p + n <= mea.size();) {
    size_t k = 0;
    while (k < n && mea[p + k] == rec[k]) ++k;
    if (k == n) {
      for (size_t i = 0; i < n; ++i) out.measured_ops[i].push_back(static_cast<int64_t>(p + i));
      ++out.repeats;
      p += n;
    } else {
      if (k > best_prefix) best_prefix = k, best_at = p;
      ++p;
    }
  }
  if (out.repeats > 0) return out;
  std::string got = best_at + best_prefix < mea.size() ? measured.ops[best_at + best_prefix].name : "the end";
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("the measured pass does not repeat the recorded operators ({} recorded, {} "
                               "measured; the closest repetition differs at recorded op {}: {} vs {})",
                               n, mea.size(), best_prefix, recorded.ops[best_prefix].name, got));
}

}  // namespace magneton::analysis
