#include "analysis/diff/region_cost.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_set>

#include <fmt/core.h>
#include <fmt/format.h>

namespace magneton::analysis {

CostModel::CostModel(const Run& run, const energy::Attribution& attribution)
    : run_(run), attribution_(attribution), children_(run.ops.size()) {
  for (const auto& op : run.ops)
    if (op.parent >= 0 && op.parent < static_cast<int64_t>(run.ops.size()))
      children_[op.parent].push_back(op.id);
  for (const auto& m : run.replays)
    if (m.status == "ok" && m.op >= 0 && m.op < static_cast<int64_t>(run.ops.size()))
      replay_by_signature_.emplace(OpSignature(run, run.ops[m.op]), &m);
  // Whether an op or anything under it was replayed decides how it is costed.
  has_replay_below_.assign(run.ops.size(), 0);
  if (replay_by_signature_.empty()) return;
  std::vector<char> done(run.ops.size(), 0);
  std::function<char(int64_t)> below = [&](int64_t op) -> char {
    if (done[op]) return has_replay_below_[op];
    done[op] = 1;
    char r = replay_by_signature_.count(OpSignature(run, run.ops[op])) ? 1 : 0;
    for (auto c : children_[op]) r |= below(c);
    return has_replay_below_[op] = r;
  };
  for (const auto& op : run.ops) below(op.id);
}

void CostModel::UseMeasuredPass(const CostModel* measured, PassAlignment alignment) {
  measured_ = measured;
  alignment_ = std::move(alignment);
}

bool CostModel::energy_measured() const {
  return measured_ ? measured_->energy_measured() : attribution_.measured;
}

bool CostModel::has_kernels() const { return measured_ ? measured_->has_kernels() : !run_.kernels.empty(); }

std::vector<int64_t> CostModel::Subtree(int64_t op) const {
  std::vector<int64_t> out{op};
  for (size_t i = 0; i < out.size(); ++i)
    for (auto c : children_[out[i]]) out.push_back(c);
  std::sort(out.begin(), out.end());
  return out;
}

double CostModel::Seconds(int64_t op) const {
  if (measured_) {
    const auto& ms = alignment_.measured_ops[op];
    double sum = 0;
    for (auto m : ms) sum += measured_->Seconds(m);
    return ms.empty() ? 0 : sum / static_cast<double>(ms.size());
  }
  // On a device, the kernels' time is what costs energy; on a CPU-only run,
  // the operator's wall time is all there is.
  if (!has_kernels()) return (run_.ops[op].end_ns - run_.ops[op].start_ns) * 1e-9;
  if (op < static_cast<int64_t>(attribution_.op_gpu_ns.size()))
    return attribution_.op_gpu_ns[op] * 1e-9;
  double ns = 0;
  std::unordered_set<int64_t> sub;
  for (auto o : Subtree(op)) sub.insert(o);
  for (const auto& k : run_.kernels)
    if (sub.count(k.op)) ns += static_cast<double>(k.end_ns - k.start_ns);
  return ns * 1e-9;
}

double CostModel::AttributedJoules(int64_t op) const {
  if (op >= static_cast<int64_t>(attribution_.op_j.size())) return 0;
  double j = attribution_.op_j[op];
  return std::isnan(j) ? 0 : j;
}

// Without replays: the measured pass's average over its repetitions, else
// this run's attribution.
CostModel::OpCost CostModel::OwnCostOf(int64_t op) const {
  if (!measured_) return {AttributedJoules(op), Seconds(op), false};
  const auto& ms = alignment_.measured_ops[op];
  OpCost c{0, 0, false};
  for (auto m : ms) {
    auto mc = measured_->OwnCostOf(m);
    c.joules += mc.joules;
    c.seconds += mc.seconds;
  }
  if (!ms.empty()) {
    c.joules /= static_cast<double>(ms.size());
    c.seconds /= static_cast<double>(ms.size());
  }
  return c;
}

CostModel::OpCost CostModel::CostOf(int64_t op) const {
  if (auto it = replay_by_signature_.find(OpSignature(run_, run_.ops[op])); it != replay_by_signature_.end())
    return {it->second->joules_per_call, it->second->seconds_per_call, true};
  if (!has_replay_below_[op]) return OwnCostOf(op);
  // Some children were replayed: their replay cost, plus what the op costs
  // beyond its children by the other measurements.
  OpCost c{0, 0, false};
  OpCost own = OwnCostOf(op);
  for (auto ch : children_[op]) {
    auto cc = CostOf(ch);
    auto co = OwnCostOf(ch);
    c.joules += cc.joules;
    c.seconds += cc.seconds;
    c.replayed |= cc.replayed;
    own.joules -= co.joules;
    own.seconds -= co.seconds;
  }
  c.joules += std::max(0.0, own.joules);
  c.seconds += std::max(0.0, own.seconds);
  return c;
}

SideCost CostModel::Cost(const std::vector<int64_t>& ops) const {
  std::unordered_set<int64_t> in_set(ops.begin(), ops.end());
  auto nested = [&](int64_t op) {
    for (auto p = run_.ops[op].parent; p >= 0 && p < static_cast<int64_t>(run_.ops.size());
         p = run_.ops[p].parent)
      if (in_set.count(p)) return true;
    return false;
  };
  SideCost out;
  double joules = 0;
  bool any_replay = false, all_replay = true;
  for (auto op : ops) {
    if (op < 0 || op >= static_cast<int64_t>(run_.ops.size()) || nested(op)) continue;
    auto c = CostOf(op);
    joules += c.joules;
    out.seconds += c.seconds;
    any_replay |= c.replayed;
    all_replay &= c.replayed;
  }
  if (any_replay && all_replay) {
    out.source = CostSource::kReplay;
  } else if (!energy_measured()) {
    out.source = CostSource::kTime;  // replays alone cannot cost the rest of the set
  } else {
    out.source = any_replay ? CostSource::kMixed : CostSource::kAttributed;
  }
  if (out.source != CostSource::kTime) out.joules = joules;
  out.instances = {out.cost()};
  return out;
}

SideCost CostModel::WholeRun() const {
  if (measured_) {
    SideCost m = measured_->WholeRun();
    double k = static_cast<double>(std::max<int64_t>(1, alignment_.repeats));
    m.seconds /= k;
    if (!std::isnan(m.joules)) m.joules /= k;
    m.instances = {m.cost()};
    return m;
  }
  SideCost out;
  int64_t start = run_.info.start_ns, end = run_.info.end_ns;
  if (end <= start) {  // window not written: span what was recorded
    start = INT64_MAX;
    end = INT64_MIN;
    for (const auto& op : run_.ops) start = std::min(start, op.start_ns), end = std::max(end, op.end_ns);
    for (const auto& k : run_.kernels) start = std::min(start, k.start_ns), end = std::max(end, k.end_ns);
  }
  out.seconds = end > start ? (end - start) * 1e-9 : 0;
  if (energy_measured()) {
    double j = 0;
    for (const auto& d : attribution_.devices)
      if (!std::isnan(d.total_j)) j += d.total_j;
    out.joules = j;
    out.source = CostSource::kAttributed;
  }
  out.instances = {out.cost()};
  return out;
}

}  // namespace magneton::analysis
