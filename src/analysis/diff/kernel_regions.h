// Regions of runs that hold kernels but nothing to match them by: no operator
// values, and no NVTX ranges the two runs share (any CUDA program recorded
// whole by `magneton record`; docs/diff.md, "Runs without operators:
// kernels").
//
// Each run's repeated step is found in its stream of kernels and copies by
// periodicity (FindSteps). The two steps are aligned item by item (kernel
// name, grid and block; copy kind and size), and the aligned steps are cut
// into segments: stretches both sides share, and places where they differ
// (other kernels at the same place; kernels or copies only one side launches,
// joined with the shared item that follows them, so that the extra work is
// weighed against what it serves). A shared stretch is also cut where either
// device waits noticeably for its next item, so that a wait (a
// synchronization, a launch-bound stretch) is costed with the kernels it
// delays. Each segment is one op on each side (framework "kernels"), named by
// what it holds, so that repeated layers' segments group into one finding.
//
// No recording pass exists: each run is its own measured pass, and its
// repetitions give every segment's cost per iteration, the device's waits
// included (step_timeline.h), and the per-iteration accounting.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/diff/diff.h"
#include "analysis/diff/pass_align.h"
#include "analysis/match/region_match.h"
#include "core/run.h"

namespace magneton::analysis {

// Op::framework of a segment.
inline constexpr const char* kSegmentFramework = "kernels";

// Both runs hold kernels, and neither holds values to match by.
bool MatchesByKernels(const Run& a, const Run& b);

// One place of the aligned steps: the step positions of each side it holds.
struct Segment {
  std::vector<int64_t> a, b;  // offsets into each side's step, in order
  bool shared = false;        // the same items on both sides
  std::vector<std::string> copies_a, copies_b;  // the copies and memsets it holds ("copy HtoD 4 B")
};

// A run as the diff sees it: the segments as its ops, and its device work
// placed in repetitions and segments (the alignment Diff costs it with).
struct KernelSide {
  Run run;
  PassAlignment alignment;
  bool whole = false;  // no repeated step found: the run is one iteration
  // Synchronizing calls per iteration (host waits: CUPTI synchronization
  // records), by API call name, and by the segment they precede.
  std::map<std::string, double> syncs;
  std::vector<std::map<std::string, double>> syncs_before;  // by segment
  std::vector<double> blocked_before;  // by segment: the host's time in those calls, seconds per iteration
  // By segment: the calls whose wait its items still follow (WaitsAfterSyncs), share of iterations.
  std::vector<std::map<std::string, double>> after_syncs;
};

struct KernelRegions {
  KernelSide a, b;
  std::vector<Segment> segments;  // segment i is op i of both runs
  MatchResult match;              // segment i of a with segment i of b; by_kernels
  std::vector<std::string> notes;
};

// `iterations` > 0: the user's --iterations, the repetition count to prefer.
// Runs without a repeated step, on either side, are compared whole.
KernelRegions BuildKernelRegions(const Run& a, const Run& b, int64_t iterations);

// What only the segments tell: copies one side makes and the other does not
// (root cause compares kernels), the synchronizing calls before a finding's
// kernels (or, where they do not explain its wait, a later launch) with the
// rules they match, and that outputs were not compared.
void ExplainKernelFindings(const KernelRegions& k, const std::vector<Rule>& rules, DiffReport& report);

}  // namespace magneton::analysis
