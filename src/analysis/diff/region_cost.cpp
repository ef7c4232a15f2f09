#include "analysis/diff/region_cost.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <unordered_set>
#include <utility>

namespace magneton::analysis {

CostModel::CostModel(const Run& run, const energy::Attribution& attribution)
    : run_(run), attribution_(attribution), index_(run) {
  MarkLaunches();
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
    for (auto c : index_.children(op)) r |= below(c);
    return has_replay_below_[op] = r;
  };
  for (const auto& op : run.ops) below(op.id);
}

void CostModel::UseMeasuredPass(const Run& measured, const energy::Attribution& energy, PassAlignment alignment,
                                double program_seconds) {
  measured_ = &measured;
  measured_energy_ = &energy;
  alignment_ = std::move(alignment);
  timeline_ = BuildStepTimeline(measured, energy, alignment_, program_seconds);
  if (alignment_.by_device_work) syncs_ = SyncSites(run_, measured, alignment_);
  TabulateMeasuredCosts();
  MarkLaunches();
}

void CostModel::MarkLaunches() {
  const auto n = static_cast<int64_t>(run_.ops.size());
  launches_.assign(static_cast<size_t>(n), 0);
  const auto& kernels = source_run().kernels;
  for (size_t k = 0; k < kernels.size(); ++k) {
    int64_t op = measured_ ? (alignment_.kernel_rep[k] == 0 ? alignment_.kernel_op[k] : kNone) : kernels[k].op;
    for (; op >= 0 && op < n && !launches_[op]; op = index_.parent(op)) launches_[op] = 1;
  }
}

bool CostModel::Launches(const std::vector<int64_t>& ops) const {
  for (auto op : ops)
    if (op >= 0 && op < static_cast<int64_t>(launches_.size()) && launches_[op]) return true;
  return false;
}

bool CostModel::energy_measured() const {
  if (time_only_) return false;
  return measured_ ? measured_energy_->measured : attribution_.measured;
}

bool CostModel::has_kernels() const { return !source_run().kernels.empty(); }

namespace {

// A long measured pass is costed from this many evenly spaced repetitions
// (each costs a row of doubles per recorded op); medians need no more.
constexpr int64_t kMaxCostedRepeats = 256;

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double Mean(std::vector<double> v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

// Per costed repetition, each recorded op's inclusive cost: the device work
// aligned to it and to the ops nested in it, or, aligned by operators on a run
// without kernels, its measured counterpart's wall time.
void CostModel::TabulateMeasuredCosts() {
  const int64_t reps = alignment_.repeats, n = static_cast<int64_t>(run_.ops.size());
  costed_.clear();
  const int64_t costed = std::min(reps, kMaxCostedRepeats);
  for (int64_t i = 0; i < costed; ++i) costed_.push_back(costed == reps ? i : i * reps / costed);
  std::vector<int64_t> slot(static_cast<size_t>(reps), -1);  // repetition -> costed index
  for (size_t i = 0; i < costed_.size(); ++i) slot[costed_[i]] = static_cast<int64_t>(i);
  rep_j_.assign(static_cast<size_t>(costed * n), 0.0);
  rep_s_.assign(static_cast<size_t>(costed * n), 0.0);
  rep_wait_s_.assign(static_cast<size_t>(costed * n), 0.0);
  const Run& m = *measured_;
  const energy::Attribution& e = *measured_energy_;
  if (m.kernels.empty() && !alignment_.by_device_work) {
    // The host's timeline: a top-level op's wait is the program's own code
    // that issues it (step_timeline.h).
    for (int64_t op = 0; op < n; ++op)
      for (int64_t c = 0; c < costed; ++c)
        if (int64_t mo = alignment_.measured_ops[op][costed_[c]]; mo != kNone) {
          const Wait w = mo < static_cast<int64_t>(timeline_.op_wait.size()) ? timeline_.op_wait[mo] : Wait{};
          const double j = mo < static_cast<int64_t>(e.op_j.size()) && !std::isnan(e.op_j[mo]) ? e.op_j[mo] : 0;
          rep_s_[c * n + op] = (m.ops[mo].end_ns - m.ops[mo].start_ns + w.ns) * 1e-9;
          rep_wait_s_[c * n + op] = w.ns * 1e-9;
          rep_j_[c * n + op] = j + (std::isnan(w.joules) ? 0 : w.joules);
        }
    return;
  }
  // An item costs its own run plus the device's wait for it (step_timeline.h).
  auto add = [&](int32_t rep, int64_t op, int64_t start, int64_t end, double j, const Wait& wait) {
    if (rep < 0 || op < 0 || op >= n || slot[rep] < 0) return;
    const size_t at = static_cast<size_t>(slot[rep] * n + op);
    rep_s_[at] += (end - start + wait.ns) * 1e-9;
    rep_wait_s_[at] += wait.ns * 1e-9;
    rep_j_[at] += (std::isnan(j) ? 0 : j) + (std::isnan(wait.joules) ? 0 : wait.joules);
  };
  for (size_t k = 0; k < m.kernels.size(); ++k)
    add(alignment_.kernel_rep[k], alignment_.kernel_op[k], m.kernels[k].start_ns, m.kernels[k].end_ns,
        k < e.kernel_j.size() ? e.kernel_j[k] : kUnmeasured, timeline_.kernel_wait[k]);
  for (size_t t = 0; t < m.transfers.size(); ++t)
    if (m.transfers[t].kind != "sync")  // a host wait: no device time of its own
      add(alignment_.transfer_rep[t], alignment_.transfer_op[t], m.transfers[t].start_ns, m.transfers[t].end_ns,
          t < e.transfer_j.size() ? e.transfer_j[t] : kUnmeasured, timeline_.transfer_wait[t]);
  // Inclusive: children start after their parent, so ids run parent first.
  for (int64_t c = 0; c < costed; ++c)
    for (int64_t op = n - 1; op >= 0; --op)
      if (int64_t p = index_.parent(op); p >= 0 && p < op) {
        rep_j_[c * n + p] += rep_j_[c * n + op];
        rep_s_[c * n + p] += rep_s_[c * n + op];
        rep_wait_s_[c * n + p] += rep_wait_s_[c * n + op];
      }
}

CostModel::Launched CostModel::KernelsOf(const std::vector<int64_t>& ops) const {
  const std::vector<int64_t> in = index_.Subtrees(ops);
  const auto& kernels = source_run().kernels;
  std::vector<std::pair<const Kernel*, int64_t>> ours;
  if (measured_) {
    for (size_t k = 0; k < kernels.size(); ++k) {
      const int64_t op = alignment_.kernel_op[k];
      if (alignment_.kernel_rep[k] == 0 && std::binary_search(in.begin(), in.end(), op))
        ours.emplace_back(&kernels[k], op);
    }
  } else {
    std::vector<int64_t> ks;
    for (auto op : in)
      for (auto k : index_.kernels(op)) ks.push_back(k);
    std::sort(ks.begin(), ks.end());  // row order, as the sort below has always been given them
    for (auto k : ks) ours.emplace_back(&kernels[k], kernels[k].op);
  }
  std::sort(ours.begin(), ours.end(), [](const auto& x, const auto& y) { return x.first->start_ns < y.first->start_ns; });
  Launched out{&source_run(), {}, {}};
  for (const auto& [k, op] : ours) {
    out.kernels.push_back(k);
    out.ops.push_back(op);
  }
  return out;
}

double CostModel::Seconds(int64_t op) const {
  if (!measured_) return OwnSeconds(op);
  std::vector<double> reps;
  const int64_t n = static_cast<int64_t>(run_.ops.size());
  for (int64_t c = 0; c < costed_repeats(); ++c) reps.push_back(rep_s_[c * n + op]);
  return alignment_.by_names ? Mean(std::move(reps)) : Median(std::move(reps));
}

double CostModel::OwnSeconds(int64_t op) const {
  // On a device, the kernels' time is what costs energy; on a CPU-only run,
  // the operator's wall time is all there is.
  if (run_.kernels.empty()) return (run_.ops[op].end_ns - run_.ops[op].start_ns) * 1e-9;
  if (op < static_cast<int64_t>(attribution_.op_gpu_ns.size())) return attribution_.op_gpu_ns[op] * 1e-9;
  double ns = 0;
  for (auto o : index_.Subtree(op))
    for (auto k : index_.kernels(o)) ns += static_cast<double>(run_.kernels[k].end_ns - run_.kernels[k].start_ns);
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
  const size_t at = static_cast<size_t>(rep * static_cast<int64_t>(run_.ops.size()) + op);
  return {rep_j_[at], rep_s_[at], false, rep_wait_s_[at]};
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
  for (auto ch : index_.children(op)) {
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
    for (auto p = index_.parent(op); p != kNone; p = index_.parent(p))
      if (in_set.count(p)) return true;
    return false;
  };
  std::vector<int64_t> top;
  for (auto op : ops)
    if (op >= 0 && op < static_cast<int64_t>(run_.ops.size()) && !nested(op)) top.push_back(op);
  const int64_t reps = std::max<int64_t>(1, costed_repeats());
  std::vector<double> joules(reps, 0), seconds(reps, 0), waits(reps, 0);
  bool any_replay = false, all_replay = true, unknown_joules = false;
  for (int64_t r = 0; r < reps; ++r)
    for (auto op : top) {
      auto c = CostOf(op, r);
      joules[r] += c.joules;
      seconds[r] += c.seconds;
      waits[r] += c.wait;
      any_replay |= c.replayed;
      all_replay &= c.replayed;
      unknown_joules |= std::isnan(c.joules);  // time-only replays
    }
  SideCost out;
  out.waits = std::move(waits);
  if (any_replay && all_replay) {
    out.source = CostSource::kReplay;
  } else if (!energy_measured()) {
    out.source = CostSource::kTime;  // replays alone cannot cost the rest of the set
  } else {
    out.source = any_replay ? CostSource::kMixed : CostSource::kAttributed;
  }
  const bool by_time = out.source == CostSource::kTime || unknown_joules;
  // Repetitions aligned by names differ in size (a decoding position each):
  // neither the fastest nor the median is the step, their mean is.
  const bool growing = measured_ && alignment_.by_names;
  if (fastest_ && by_time && !growing) {
    const auto fastest = std::min_element(seconds.begin(), seconds.end()) - seconds.begin();
    out.seconds = seconds[fastest];
    out.wait_seconds = out.waits[fastest];
    out.instances = {out.seconds};
    return out;
  }
  auto typical = growing ? Mean : Median;
  out.seconds = typical(seconds);
  out.wait_seconds = typical(out.waits);
  if (!by_time) out.joules = typical(joules);
  out.instances = by_time ? seconds : joules;
  return out;
}

SideCost CostModel::WholeRun() const {
  SideCost out;
  if (measured_) {
    out.seconds = timeline_.seconds();
    out.joules = energy_measured() ? timeline_.joules() : kUnmeasured;
    out.source = energy_measured() ? CostSource::kAttributed : CostSource::kTime;
    out.instances = {out.cost()};
    return out;
  }
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
