#include "analysis/diff/accounting.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>

#include "analysis/diff/root_cause.h"

namespace magneton::analysis {

IterationAccount AccountIteration(const CostModel& cost, const std::vector<char>& in_region, bool energy) {
  IterationAccount out;
  const PassAlignment* al = cost.alignment();
  const StepTimeline& tl = cost.timeline();
  if (!al || tl.steps.empty()) return out;
  out.available = true;
  out.on_device = tl.on_device;
  out.energy = energy;
  std::unordered_set<int32_t> full;  // the repetitions averaged
  for (size_t i = 0; i < tl.steps.size(); ++i)
    if (tl.full_period(i)) full.insert(tl.steps[i].rep);
  out.periods = static_cast<int64_t>(full.size());

  // Each item of a full period goes to its operator's category: joules from
  // the attribution, or device seconds.
  const Run& run = cost.source_run();
  const energy::Attribution& e = cost.source_energy();
  double region = 0, unmatched = 0, stray = 0;
  double waiting = 0;
  std::map<int32_t, double> unmatched_by_rep;
  constexpr int64_t kInRegion = -2;  // time of no op in a region that counts with them
  // value: in the account's unit; seconds: the item's own time.
  auto add = [&](int32_t rep, int64_t op, double value, double seconds, const Wait* wait) {
    if (!full.count(rep) || std::isnan(value)) return;
    const double w = !wait ? 0 : energy ? (std::isnan(wait->joules) ? 0 : wait->joules) : wait->ns * 1e-9;
    waiting += w;
    if (op == kInRegion) region += value + w;
    else if (op < 0 || op >= static_cast<int64_t>(in_region.size())) stray += value + w;
    else if (in_region[op]) region += value + w;
    else {
      unmatched += value + w;
      unmatched_by_rep[rep] += value + w;
      auto& share = out.unmatched_by_op[op];
      share.cost += value + w;
      share.seconds += seconds + (wait ? wait->ns * 1e-9 : 0);
    }
  };
  auto span_s = [](const auto& item) { return (item.end_ns - item.start_ns) * 1e-9; };
  if (tl.on_device) {
    for (size_t k = 0; k < run.kernels.size(); ++k)
      add(al->kernel_rep[k], al->kernel_op[k], energy ? e.kernel_j[k] : span_s(run.kernels[k]),
          span_s(run.kernels[k]), &tl.kernel_wait[k]);
    for (size_t t = 0; t < run.transfers.size(); ++t)
      if (run.transfers[t].kind != "sync")
        add(al->transfer_rep[t], al->transfer_op[t], energy ? e.transfer_j[t] : span_s(run.transfers[t]),
            span_s(run.transfers[t]), &tl.transfer_wait[t]);
  } else {
    // A CPU run: top-level measured ops, each standing for its recorded op.
    // A scope in no region that holds ops in regions (autograd's
    // evaluate_function and the backward node inside it, a user's
    // record_function) is split: its children count on their own; its time
    // outside them counts with them when they all lie in regions (the engine's
    // glue around a matched backward node), else in no region.
    const RunIndex& index = cost.index();
    const int64_t n_ops = std::min<int64_t>(static_cast<int64_t>(al->measured_ops.size()),
                                            static_cast<int64_t>(in_region.size()));
    std::vector<char> holds_region(in_region.begin(), in_region.begin() + n_ops);
    for (int64_t op : index.deepest_first())
      if (op < n_ops && holds_region[op] && index.parent(op) >= 0 && index.parent(op) < n_ops)
        holds_region[index.parent(op)] = 1;
    auto measured = [&](int64_t op, size_t r) { return r < al->measured_ops[op].size() ? al->measured_ops[op][r] : kNone; };
    auto seconds = [&](int64_t op, size_t r) {
      const int64_t m = measured(op, r);
      return m == kNone ? 0.0 : span_s(run.ops[m]);
    };
    auto value = [&](int64_t op, size_t r) {
      const int64_t m = measured(op, r);
      if (m == kNone || !energy) return seconds(op, r);
      return m < static_cast<int64_t>(e.op_j.size()) ? e.op_j[m] : kUnmeasured;
    };
    // Counts op's time (and a top-level op's wait); true when all of it went to regions.
    auto count = [&](auto&& self, int64_t op, size_t r, const Wait* wait) -> bool {
      double v = value(op, r), s = seconds(op, r);
      bool all_in = in_region[op];
      if (!in_region[op] && holds_region[op]) {
        all_in = true;
        for (int64_t c : index.children(op)) {
          // A view or allocation inside it (aten::linear's aten::t) is its glue too.
          if (c >= n_ops || (!holds_region[c] && IsMetadataOp(run.ops[c].name))) continue;
          v -= value(c, r);
          s -= seconds(c, r);
          all_in &= self(self, c, r, nullptr);
        }
        v = std::max(v, 0.0);
        s = std::max(s, 0.0);
      }
      add(static_cast<int32_t>(r), all_in ? kInRegion : op, v, s, wait);
      return all_in;
    };
    for (int64_t op = 0; op < n_ops; ++op) {
      if (index.parent(op) != kNone) continue;
      for (size_t r = 0; r < al->measured_ops[op].size(); ++r)
        if (const int64_t m = measured(op, r); m != kNone)
          count(count, op, r, m < static_cast<int64_t>(tl.op_wait.size()) ? &tl.op_wait[m] : nullptr);
    }
  }
  const double n = std::max<double>(1, static_cast<double>(out.periods));
  region /= n, unmatched /= n, stray /= n, waiting /= n;
  for (auto& [op, share] : out.unmatched_by_op) {
    share.cost /= n;
    share.seconds /= n;
    out.unmatched_seconds += share.seconds;
  }
  for (int32_t rep : full) out.unmatched_reps.push_back(unmatched_by_rep[rep]);  // 0 where none
  out.waiting = waiting;
  out.seconds = tl.seconds();
  out.host_seconds = tl.host_seconds();
  out.busy_seconds = tl.busy_seconds();
  out.idle_seconds = tl.idle_seconds();
  // Idle is what no item waited for: the tail after an iteration's last item
  // (on a CPU run, the host's time after its last operator).
  if (energy) {
    out.total = tl.joules();
    out.idle = tl.tail_joules();
    out.run = tl.run_j;
    out.outside = tl.outside_joules();
  } else {
    // Kernels on several streams overlap: their seconds are scaled to the
    // time the iteration's items hold (busy, plus the waits).
    double items = region + unmatched + stray;
    double held = out.busy_seconds + waiting;
    double scale = items > 0 ? held / items : 0;
    region *= scale, unmatched *= scale, stray *= scale;
    for (auto& [op, share] : out.unmatched_by_op) share.cost *= scale;
    for (double& r : out.unmatched_reps) r *= scale;
    out.total = out.seconds;
    out.idle = tl.tail_seconds();
    out.run = tl.run_s;
    out.outside = kUnmeasured;
  }
  out.regions = region;
  out.unmatched = unmatched;
  // What the device did in the iteration that no recorded operator accounts
  // for (unaligned kernels, work straddling the windows' edges).
  out.unattributed = out.total - region - unmatched - out.idle;
  // The parts' rounding is not a share of its own (it printed as "-0.00 ns (-0.0%)").
  if (std::fabs(out.unattributed) < 1e-12 * std::fabs(out.total)) out.unattributed = 0;
  return out;
}

}  // namespace magneton::analysis
