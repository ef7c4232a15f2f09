// Differential energy debugging of two runs (paper §4.3, docs/diff.md):
// match the regions that compute the same values, cost each side, group the
// regions that repeat the same code, give each group a verdict and rank the
// waste by what switching to the lean side would save.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/diff/accounting.h"
#include "analysis/diff/finding.h"
#include "analysis/diff/iteration_timeline.h"
#include "analysis/diff/pass_align.h"
#include "analysis/diff/rules.h"
#include "analysis/diff/untraced.h"
#include "analysis/match/region_match.h"
#include "core/run.h"
#include "energy/attribution.h"

namespace magneton::analysis {

struct DiffOptions {
  double threshold = 0.10;          // waste: costly side spends >= this much more (fraction)
  double max_speedup = 0.01;        // ...and is not faster than the lean side by more than this
  double output_tolerance = 0.01;   // ...and outputs agree within this relative difference
  double match_tolerance = 1e-2;    // fingerprint tolerance handed to MatchRuns
  double min_share = 0.001;         // groups below this share of the run's cost are noise
  double significance = 2.0;        // mean log-ratio must exceed this many standard errors
  int64_t iterations = 0;           // 0: from RunInfo.extra["iterations"], else 1
  bool normalize_host_time = true;  // CPU-only runs: factor out a whole-machine speed difference
  // Energy whose window holds fewer sensor readings than this cannot tell
  // regions apart (NVML: one reading per ~100 ms); such a side compares by time.
  int64_t min_sensor_updates = 5;
  std::vector<Rule> rules;          // known inefficiency patterns (rules/*.json)
  // Each side's measured-pass steps that ran untraced (TakeUntracedSteps,
  // which the caller applies to the measured runs): reported beside the
  // traced ones, whose waits are trimmed to their pace (step_timeline.h).
  std::optional<UntracedSteps> untraced_a, untraced_b;
};

inline constexpr double kMinThreshold = 0.05;  // below this, measurement noise dominates

// What one run contributes to the report.
struct RunSummary {
  std::string path, command, host, label;
  bool energy_measured = false;  // an energy or power series was recorded
  bool has_replays = false;      // replay measurements were used for some ops
  bool has_kernels = false;      // device kernels were recorded
  double joules = kUnmeasured;   // whole-run energy (all devices)
  double seconds = 0;            // recording window
  int64_t iterations = 1;
  int64_t ops = 0, kernels = 0;             // ops: recorded operators (not NVTX-derived ones)
  std::vector<std::string> devices;         // "gpu NVIDIA H200", "cpu"
  std::vector<std::string> energy_methods;  // per device: how its energy was obtained
  int64_t measured_repeats = 0;             // >0: costs from a measured pass repeating the ops this often
  double ops_cost = 0;                      // all top-level operators together, in the report's unit
                                            // (run b's normalized by host_time_ratio, like its regions)
  IterationAccount account;                 // where an iteration's cost goes (accounting.h)
  std::optional<UntracedSteps> untraced;    // the measured pass's steps after tracing stopped (untraced.h)
  double cost() const { return std::isnan(joules) ? seconds : joules; }
};

// One matched region pair, for side-by-side views.
struct RegionPair {
  int64_t region = 0;                     // RegionMatch id
  int finding = -1;                       // index into DiffReport::findings
  std::vector<std::string> ops_a, ops_b;  // top-level op names
  SideCost a, b;
  double output_rel_diff = 0;
};

struct DiffReport {
  static constexpr int kSchemaVersion = 1;  // docs/json-schema.md
  RunSummary a, b;
  DiffOptions options;
  bool energy_measured = false;   // both sides: costs are joules; else seconds
  std::string cost_unit;          // "J" or "s"
  std::vector<Finding> findings;  // waste by saving, then trade-offs, then noise
  std::vector<RegionPair> regions;
  int64_t unmatched_ops_a = 0, unmatched_ops_b = 0;
  double matched_share_a = 0, matched_share_b = 0;  // of an iteration's cost, in regions
  double host_time_ratio = 1;                       // b's host times were divided by this (1: not normalized)
  bool host_time_only = false;      // costs are CPU wall times of operators (no energy, no kernels)
  bool matched_by_range = false;    // regions are NVTX range paths matched by name (range_regions.h)
  bool matched_by_kernels = false;  // regions are stretches of aligned kernel sequences (kernel_regions.h)
  std::vector<ConfigDelta> config;  // every key that differs between the snapshots
  std::vector<std::string> notes;   // what could not be measured, fallbacks taken
  SideTimelines timelines;          // one iteration of each side on its timeline (iteration_timeline.h)

  int waste_count() const;
  double total_saved_per_iteration() const;
};

// One side of a diff: the recorded run (values, for matching) and, when the
// recording pass was slowed by fingerprinting, a measured pass of the same
// program that the costs come from (pass_align.h).
struct DiffInput {
  const Run* run = nullptr;
  const energy::Attribution* energy = nullptr;
  const Run* measured = nullptr;  // optional
  const energy::Attribution* measured_energy = nullptr;
  // The measured pass already placed in repetitions and ops (a kernel-level
  // diff, kernel_regions.h: each run is its own measured pass); null: AlignPasses.
  const PassAlignment* alignment = nullptr;
};

// The pure core: runs, their match and their attribution in, report out.
// Fails only when a measured pass does not repeat its run's operators.
Result<DiffReport> Diff(const DiffInput& a, const DiffInput& b, const MatchResult& match,
                        const DiffOptions& options);
// Both sides without measured passes (cannot fail).
DiffReport Diff(const Run& a, const Run& b, const MatchResult& match, const energy::Attribution& energy_a,
                const energy::Attribution& energy_b, const DiffOptions& options);

// Matches (MatchRuns) and attributes (Attribute), then Diff. measured_a/b may be null.
// Runs with kernels and NVTX ranges but no operator values are matched by
// range name instead (range_regions.h); runs with kernels but neither values
// nor ranges in common, kernel by kernel (kernel_regions.h). A measured pass
// given with such a run is the one diffed.
Result<DiffReport> DiffRuns(const Run& a, const Run& b, const Run* measured_a, const Run* measured_b,
                            const DiffOptions& options);

}  // namespace magneton::analysis
