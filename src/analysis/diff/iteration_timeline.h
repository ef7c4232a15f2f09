// One iteration of each side laid out on its timeline, for the HTML report's
// timeline (docs/report.md, "Timeline of one iteration"). The iteration is the
// measured pass's repetition of median length among the full periods
// (step_timeline.h); without a measured pass, the recorded run as a whole.
// Each item (a kernel or copy; a top-level operator on a run without device
// work) carries the matched region and the finding that hold it, so the
// report can colour and highlight them; beside them the device's idle
// stretches, its power over the iteration (from the attribution's energy
// curve), and the host's synchronizing calls inside it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/diff/finding.h"
#include "analysis/diff/region_cost.h"
#include "analysis/match/region_match.h"

namespace magneton::analysis {

struct DiffReport;

struct TimelineItem {
  int64_t start_ns = 0, end_ns = 0;  // from the iteration's start
  std::string name;                  // kernel, copy kind ("copy HtoD"), or operator
  std::string op;                    // the recorded operator it belongs to ("" when none)
  int32_t lane = 0;                  // index into IterationTimeline::lanes
  int64_t region = -1;               // index into DiffReport::regions (-1: no region holds it)
  int finding = -1;                  // index into DiffReport::findings (-1: no region holds it)
  bool recorder = false;             // the recorder's own work (fingerprints), not the program's
};

// A synchronizing call: the host waited for the device from start to end.
struct TimelineSync {
  int64_t start_ns = 0, end_ns = 0;  // from the iteration's start, clipped to it
  std::string name;
};

struct IterationTimeline {
  bool available = false;
  bool on_device = false;          // kernels and copies; else the host's top-level operators
  std::string what;                // which iteration this is, in words
  int64_t length_ns = 0, busy_ns = 0;
  double joules = kUnmeasured;     // the iteration's energy (NaN: unmeasured)
  std::vector<std::string> lanes;  // "gpu0 stream 7", "thread 1"
  std::vector<TimelineItem> items;                      // by start
  std::vector<std::pair<int64_t, int64_t>> idle;        // stretches with nothing running
  std::vector<TimelineSync> syncs;
  std::vector<int64_t> power_t_ns;  // power_w[i] holds from power_t_ns[i] to power_t_ns[i + 1]
  std::vector<double> power_w;      // of the devices that ran the iteration (empty: unmeasured)
  int64_t items_left_out = 0;       // past kMaxTimelineItems
};

struct SideTimelines {
  IterationTimeline a, b;
};

inline constexpr size_t kMaxTimelineItems = 20000;

// `recorded` is the run `cost` costs (its ops are the regions'); `report`
// has its regions and findings ranked (DiffReport::regions[i] is
// `match.regions[i]`); side_a picks the side of `match`.
IterationTimeline BuildIterationTimeline(const Run& recorded, const CostModel& cost, const MatchResult& match,
                                         bool side_a, const DiffReport& report);

}  // namespace magneton::analysis
