// CPU-only runs compared by host time (docs/diff.md, "CPU-only runs"): whether
// a difference in speed between the two recordings is the machine's (load,
// clocks) and may be divided out, or could be the code's. Only regions whose
// code cannot differ can tell: the same operators on the same layouts,
// dispatched the same way on both sides (the same top-level calls into the
// framework). Their typical ratio is the machine's when they agree; a program
// with too few of them (eager against compiled, where every region is
// dispatched differently) is compared as measured.
#pragma once

#include <string>
#include <vector>

#include "analysis/diff/finding.h"
#include "analysis/diff/region_cost.h"
#include "analysis/match/region_match.h"
#include "core/run.h"

namespace magneton::analysis {

struct HostTimeJudgement {
  double ratio = 1;                  // b's host times are divided by this (1: compared as measured)
  int64_t controls = 0, slower = 0;  // regions whose code cannot differ; of them, slower on b
  std::string note;                  // what was judged and why (empty when there was nothing to say)
};

// `costs_a`/`costs_b`: the matched regions' costs, in match order.
HostTimeJudgement JudgeHostTime(const Run& a, const Run& b, const CostModel& ca, const CostModel& cb,
                                const MatchResult& match, const std::vector<SideCost>& costs_a,
                                const std::vector<SideCost>& costs_b);

// Runs on a device timeline: whether one side's host issued the same code
// more slowly throughout (machine load, clocks), not in a few places: in most
// regions whose code cannot differ (as above), the device waited longer for
// that side's launches. Its waits are then no cause where its code is the
// other's (root cause's "the host launches later" needs a difference of its
// own: a synchronization, or a place where the rest do not wait).
struct LaunchDelayJudgement {
  char slower = 0;  // 'a' or 'b': that side's host was slower throughout; 0: not told
  int64_t controls = 0, agreeing = 0;
  std::string note;
};

LaunchDelayJudgement JudgeLaunchDelays(const Run& a, const Run& b, const CostModel& ca, const CostModel& cb,
                                       const MatchResult& match, const std::vector<SideCost>& costs_a,
                                       const std::vector<SideCost>& costs_b);

}  // namespace magneton::analysis
