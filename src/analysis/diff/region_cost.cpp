#include "analysis/diff/region_cost.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_set>

namespace magneton::analysis {

CostModel::CostModel(const Run& run, const energy::Attribution& attribution)
    : run_(run), attribution_(attribution), children_(run.ops.size()) {
  for (const auto& op : run.ops)
    if (op.parent >= 0 && op.parent < static_cast<int64_t>(run.ops.size()))
      children_[op.parent].push_back(op.id);
  for (const auto& m : run.replays)
    if (ReplayUsable(m) && m.op >= 0 && m.op < static_cast<int64_t>(run.ops.size()))
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
  if (time_only_) return false;
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

namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

CostModel::Launched CostModel::KernelsOf(const std::vector<int64_t>& ops) const {
  std::unordered_set<int64_t> in;
  for (auto op : ops)
    if (op >= 0 && op < static_cast<int64_t>(run_.ops.size()))
      for (auto o : Subtree(op)) in.insert(measured_ ? alignment_.measured_ops[o].front() : o);
  const Run& source = measured_ ? measured_->run_ : run_;
  Launched out{&source, {}};
  for (const auto& k : source.kernels)
    if (in.count(k.op)) out.kernels.push_back(&k);
  std::sort(out.kernels.begin(), out.kernels.end(),
            [](const Kernel* x, const Kernel* y) { return x->start_ns < y->start_ns; });
  return out;
}

double CostModel::Seconds(int64_t op) const {
  if (!measured_) return OwnSeconds(op);
  std::vector<double> reps;
  for (auto m : alignment_.measured_ops[op]) reps.push_back(measured_->OwnSeconds(m));
  return Median(std::move(reps));
}

double CostModel::OwnSeconds(int64_t op) const {
  // On a device, the kernels' time is what costs energy; on a CPU-only run,
  // the operator's wall time is all there is.
  if (run_.kernels.empty()) return (run_.ops[op].end_ns - run_.ops[op].start_ns) * 1e-9;
  if (op < static_cast<int64_t>(attribution_.op_gpu_ns.size())) return attribution_.op_gpu_ns[op] * 1e-9;
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

// Without replays: one repetition of the measured pass, else this run's own
// attribution and times.
CostModel::OpCost CostModel::OwnCostOf(int64_t op, int64_t rep) const {
  if (!measured_) return {AttributedJoules(op), OwnSeconds(op), false};
  int64_t m = alignment_.measured_ops[op][rep];
  return {measured_->AttributedJoules(m), measured_->OwnSeconds(m), false};
}

CostModel::OpCost CostModel::CostOf(int64_t op, int64_t rep) const {
  if (auto it = replay_by_signature_.find(OpSignature(run_, run_.ops[op])); it != replay_by_signature_.end()) {
    const ReplayMeasurement& m = *it->second;
    if (m.joules_per_call >= 0) return {m.joules_per_call, m.seconds_per_call, true};
    // Replayed without an energy sensor (joules_per_call < 0): its time stands
    // in where the run has no energy either; next to measured energy it cannot.
    if (!energy_measured()) return {kUnmeasured, m.seconds_per_call, true};
    return OwnCostOf(op, rep);
  }
  if (!has_replay_below_[op]) return OwnCostOf(op, rep);
  // Some children were replayed: their replay cost, plus what the op costs
  // beyond its children by the other measurements.
  OpCost c{0, 0, false};
  OpCost own = OwnCostOf(op, rep);
  for (auto ch : children_[op]) {
    auto cc = CostOf(ch, rep);
    auto co = OwnCostOf(ch, rep);
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
  std::vector<int64_t> top;
  for (auto op : ops)
    if (op >= 0 && op < static_cast<int64_t>(run_.ops.size()) && !nested(op)) top.push_back(op);
  const int64_t reps = measured_ ? std::max<int64_t>(1, alignment_.repeats) : 1;
  std::vector<double> joules(reps, 0), seconds(reps, 0);
  bool any_replay = false, all_replay = true, unknown_joules = false;
  for (int64_t r = 0; r < reps; ++r)
    for (auto op : top) {
      auto c = CostOf(op, r);
      joules[r] += c.joules;
      seconds[r] += c.seconds;
      any_replay |= c.replayed;
      all_replay &= c.replayed;
      unknown_joules |= std::isnan(c.joules);  // time-only replays
    }
  SideCost out;
  if (any_replay && all_replay) {
    out.source = CostSource::kReplay;
  } else if (!energy_measured()) {
    out.source = CostSource::kTime;  // replays alone cannot cost the rest of the set
  } else {
    out.source = any_replay ? CostSource::kMixed : CostSource::kAttributed;
  }
  const bool by_time = out.source == CostSource::kTime || unknown_joules;
  if (fastest_ && by_time) {
    out.seconds = *std::min_element(seconds.begin(), seconds.end());
    out.instances = {out.seconds};
    return out;
  }
  out.seconds = Median(seconds);
  if (!by_time) out.joules = Median(joules);
  out.instances = by_time ? seconds : joules;
  return out;
}

SideCost CostModel::WholeRun() const {
  if (measured_) {
    SideCost m = measured_->WholeRun();
    double k = static_cast<double>(std::max<int64_t>(1, alignment_.repeats));
    m.seconds /= k;
    // Time per repetition: the period from one repetition's first op to the
    // next's, which holds every wait and host gap of an iteration but not the
    // recorder's start and stop (tens of ms, a percent of a short pass).
    const auto& ops = measured_->run_.ops;
    if (!alignment_.measured_ops.empty() && alignment_.measured_ops[0].size() >= 2) {
      const auto& firsts = alignment_.measured_ops[0];  // the first recorded op in each repetition
      int64_t from = firsts.front(), to = firsts.back();
      if (from >= 0 && to < static_cast<int64_t>(ops.size()) && ops[to].start_ns > ops[from].start_ns)
        m.seconds = (ops[to].start_ns - ops[from].start_ns) * 1e-9 / static_cast<double>(firsts.size() - 1);
    }
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
