// Where one iteration's energy goes (docs/diff.md, "Accounting"): the matched
// regions, the operators no region holds, the device idle between and around
// kernels, and device work no recorded operator accounts for add up to the
// iteration's energy on the device timeline. Without energy, the same split
// of its time. A finding's share of the run and the matched share are read
// against this total, so every percentage compares figures of one pass.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "analysis/diff/finding.h"
#include "analysis/diff/region_cost.h"

namespace magneton::analysis {

struct IterationAccount {
  bool available = false;  // a measured pass with repetitions on a timeline
  bool on_device = false;  // the timeline is the device's (else the host's: a CPU run)
  bool energy = false;     // the split is of joules (else seconds)
  int64_t periods = 0;     // repetitions averaged
  // Per iteration, in the report's unit: total = regions + unmatched + idle + unattributed.
  // regions and unmatched hold their work and the device's waits for it
  // (step_timeline.h); idle is the device's tail after the iteration's last item.
  double total = 0, regions = 0, unmatched = 0, idle = 0, unattributed = 0;
  double waiting = 0;  // of regions + unmatched + unattributed: the device waiting inside the iteration
  double seconds = 0, host_seconds = kUnmeasured, busy_seconds = 0, idle_seconds = 0;
  double run = kUnmeasured, outside = kUnmeasured;  // the whole measured run, and outside its repetitions
  double matched_share() const { return total > 0 ? regions / total : 0; }
  // The work in no region, by recorded op (per iteration, in the account's
  // unit, with its seconds) and by repetition: what the unmatched-work
  // finding names and tests for noise (unmatched_work.h).
  struct OpShare {
    double cost = 0, seconds = 0;
  };
  std::map<int64_t, OpShare> unmatched_by_op;
  std::vector<double> unmatched_reps;
  double unmatched_seconds = 0;
};

// in_region: by recorded op, whether a matched region holds it (nested ops
// included). energy: split joules (the report compares energy), else seconds.
IterationAccount AccountIteration(const CostModel& cost, const std::vector<char>& in_region, bool energy);

}  // namespace magneton::analysis
