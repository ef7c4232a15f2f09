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
      replay_by_signature_.emplace(Signature(run.ops[m.op]), &m);
  // Whether an op or anything under it was replayed decides how it is costed.
  has_replay_below_.assign(run.ops.size(), 0);
  if (replay_by_signature_.empty()) return;
  std::vector<char> done(run.ops.size(), 0);
  std::function<char(int64_t)> below = [&](int64_t op) -> char {
    if (done[op]) return has_replay_below_[op];
    done[op] = 1;
    char r = replay_by_signature_.count(Signature(run.ops[op])) ? 1 : 0;
    for (auto c : children_[op]) r |= below(c);
    return has_replay_below_[op] = r;
  };
  for (const auto& op : run.ops) below(op.id);
}

std::string CostModel::Signature(const Op& op) const {
  std::string s = op.name + "(";
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    auto t = op.inputs[i];
    if (i) s += ",";
    if (t < 0 || t >= static_cast<int64_t>(run_.tensors.size())) {
      s += "?";
      continue;
    }
    const auto& tensor = run_.tensors[t];
    s += fmt::format("{}[{}]", tensor.dtype, fmt::join(tensor.shape, "x"));
  }
  return s + ")";
}

std::vector<int64_t> CostModel::Subtree(int64_t op) const {
  std::vector<int64_t> out{op};
  for (size_t i = 0; i < out.size(); ++i)
    for (auto c : children_[out[i]]) out.push_back(c);
  std::sort(out.begin(), out.end());
  return out;
}

double CostModel::Seconds(int64_t op) const {
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

CostModel::OpCost CostModel::CostOf(int64_t op) const {
  if (auto it = replay_by_signature_.find(Signature(run_.ops[op])); it != replay_by_signature_.end())
    return {it->second->joules_per_call, it->second->seconds_per_call, true};
  if (!has_replay_below_[op]) return {AttributedJoules(op), Seconds(op), false};
  // Some children were replayed: their replay cost, plus what attribution
  // gives the op beyond its children.
  OpCost c{0, 0, false};
  double child_j = 0, child_s = 0;
  for (auto ch : children_[op]) {
    auto cc = CostOf(ch);
    c.joules += cc.joules;
    c.seconds += cc.seconds;
    c.replayed |= cc.replayed;
    child_j += AttributedJoules(ch);
    child_s += Seconds(ch);
  }
  c.joules += std::max(0.0, AttributedJoules(op) - child_j);
  c.seconds += std::max(0.0, Seconds(op) - child_s);
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
