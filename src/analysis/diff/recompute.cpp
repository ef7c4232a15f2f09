#include "analysis/diff/recompute.h"

#include <algorithm>
#include <map>
#include <set>

#include "analysis/fingerprint/fingerprint_compare.h"

namespace magneton::analysis {
namespace {

// Recomputing runs the same kernels on the same inputs: the values agree to
// rounding at most (a GPU's atomics may reorder a reduction).
constexpr double kSameValues = 1e-6;

bool InPlace(const std::string& name) { return !name.empty() && name.back() == '_'; }

const Tensor* TensorOf(const Run& run, int64_t id) {
  return id >= 0 && id < static_cast<int64_t>(run.tensors.size()) ? &run.tensors[id] : nullptr;
}

// The start of the step an op ran in: the last step mark at or before it (0 without marks).
int64_t StepStart(const std::vector<int64_t>& marks, int64_t t) {
  auto it = std::upper_bound(marks.begin(), marks.end(), t);
  return it == marks.begin() ? 0 : *(it - 1);
}

bool SameValue(const Run& run, const Op& x, const Op& y) {
  for (auto ox : x.outputs) {
    const Tensor* tx = TensorOf(run, ox);
    if (!tx || !Informative(*tx)) continue;
    for (auto oy : y.outputs) {
      const Tensor* ty = TensorOf(run, oy);
      if (ty && ty != tx && Informative(*ty) && FingerprintsWithin(*tx, *ty, kSameValues)) return true;
    }
  }
  return false;
}

}  // namespace

Recomputed FindRecomputed(const RegionSide& side, const std::vector<int64_t>& ops,
                          const std::vector<std::string>& names) {
  Recomputed out;
  const Run& run = *side.run;
  const std::set<std::string> wanted(names.begin(), names.end());
  std::vector<int64_t> marks;
  for (const auto& r : run.ranges)
    if (IsStepMark(r)) marks.push_back(r.start_ns);
  std::sort(marks.begin(), marks.end());
  // The run's earlier ops of each wanted name, in id (launch) order.
  std::map<std::string, std::vector<const Op*>> by_name;
  for (const auto& op : run.ops)
    if (wanted.count(op.name) && !InPlace(op.name)) by_name[op.name].push_back(&op);
  for (auto id : ops) {
    const Op& x = run.ops[id];
    auto it = by_name.find(x.name);
    if (it == by_name.end()) continue;
    const int64_t step = StepStart(marks, x.start_ns);
    for (const Op* y : it->second) {
      if (y->id >= x.id) break;
      if (y->start_ns < step || !SameValue(run, x, *y)) continue;
      out.seconds += side.cost->Seconds(x.id);
      if (out.ops++ == 0) {
        out.first = x.id;
        out.original = y->id;
      }
      break;
    }
  }
  return out;
}

}  // namespace magneton::analysis
