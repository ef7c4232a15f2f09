// Kept apart from diff.cpp so the pure core links without the matcher and
// attribution (tests hand it a MatchResult and Attributions they build).
#include "analysis/diff/diff.h"

#include <fmt/core.h>

#include <optional>

#include "analysis/diff/kernel_regions.h"
#include "analysis/diff/launch_calls.h"
#include "analysis/diff/range_regions.h"
#include "analysis/diff/same_cause.h"
#include "energy/paired_attribution.h"

namespace magneton::analysis {
namespace {

// Each side's attributions. The passes the costs come from (the measured
// passes when given) are attributed alike, so that the same kernels are
// costed by the same method on both sides (paired_attribution.h).
struct Attributed {
  energy::Attribution run_a, run_b, measured_a, measured_b;
  std::vector<std::string> notes;
};
Attributed AttributeSides(const Run& a, const Run& b, const Run* measured_a, const Run* measured_b) {
  Attributed out;
  energy::PairedAttribution paired = energy::AttributeAlike(measured_a ? *measured_a : a, measured_b ? *measured_b : b);
  (measured_a ? out.measured_a : out.run_a) = std::move(paired.a);
  (measured_b ? out.measured_b : out.run_b) = std::move(paired.b);
  if (measured_a) out.run_a = energy::Attribute(a);
  if (measured_b) out.run_b = energy::Attribute(b);
  out.notes = std::move(paired.notes);
  return out;
}

Result<DiffReport> DiffAttributed(const Run& a, const Run& b, const Run* measured_a, const Run* measured_b,
                                  const MatchResult& match, const DiffOptions& options) {
  Attributed e = AttributeSides(a, b, measured_a, measured_b);
  auto report = Diff(DiffInput{&a, &e.run_a, measured_a, &e.measured_a},
                     DiffInput{&b, &e.run_b, measured_b, &e.measured_b}, match, options);
  if (!report.ok()) return report;
  report->notes.insert(report->notes.end(), e.notes.begin(), e.notes.end());
  FoldSameCause(*report);
  return report;
}

// Runs with kernels and nothing to match them by: each run is diffed as the
// program ran, its own measured pass (kernel_regions.h); a measured pass
// given with it is that program.
Result<DiffReport> DiffKernels(const Run& a, const Run& b, const Run* measured_a, const Run* measured_b,
                               const DiffOptions& options, const std::string& why) {
  KernelRegions k = BuildKernelRegions(measured_a ? *measured_a : a, measured_b ? *measured_b : b, options.iterations);
  energy::PairedAttribution e = energy::AttributeAlike(k.a.run, k.b.run);
  DiffOptions o = options;
  if (!k.a.whole) o.iterations = 0;  // the step was found (with --iterations as a hint): costs are per repetition
  auto report = Diff(DiffInput{&k.a.run, &e.a, &k.a.run, &e.a, &k.a.alignment},
                     DiffInput{&k.b.run, &e.b, &k.b.run, &e.b, &k.b.alignment}, k.match, o);
  if (!report.ok()) return report;
  report->options.iterations = options.iterations;
  ExplainKernelFindings(k, options.rules, *report);
  // The recording passes, where given apart, show how each host launched its kernels.
  if (measured_a && measured_b)
    if (auto launches = LaunchCallEvidence(a, b))
      for (auto& f : report->findings)
        if (f.verdict == Verdict::kWaste && f.evidence_class() == EvidenceClass::kTimeline) f.evidence.push_back(*launches);
  FoldSameCause(*report);
  if (!why.empty()) k.notes.insert(k.notes.begin(), why);
  for (auto [side, measured] : {std::pair{'a', measured_a}, std::pair{'b', measured_b}})
    if (measured) k.notes.push_back(fmt::format("run {}: its kernels come from its measured pass", side));
  report->notes.insert(report->notes.begin(), k.notes.begin(), k.notes.end());
  report->notes.insert(report->notes.end(), e.notes.begin(), e.notes.end());
  return report;
}

// Runs without operator values: their NVTX ranges are the ops (range_regions.h).
Result<DiffReport> DiffRanges(const Run& a, const Run& b, const Run* measured_a, const Run* measured_b,
                              const DiffOptions& options) {
  RangeRun ra = WithRangeOps(a), rb = WithRangeOps(b);
  std::optional<RangeRun> ma, mb;
  if (measured_a) ma = WithRangeOps(*measured_a);
  if (measured_b) mb = WithRangeOps(*measured_b);
  MatchResult match = MatchRanges(ra.run, rb.run);
  if (match.regions.empty())
    return DiffKernels(a, b, measured_a, measured_b, options,
                       "the runs' NVTX ranges share no path that holds device work: compared kernel by kernel");
  auto report = DiffAttributed(ra.run, rb.run, ma ? &ma->run : nullptr, mb ? &mb->run : nullptr, match, options);
  if (!report.ok()) return report;
  if (options.iterations > 0) ra.iteration_range.clear(), rb.iteration_range.clear();  // the given count holds
  auto notes = RangeNotes(ra, rb, match);
  report->notes.insert(report->notes.begin(), notes.begin(), notes.end());
  return report;
}

// Of the program's kernels (not the recorder's own), more than half launched by no operator.
bool MostKernelsUnlinked(const Run& run) {
  int64_t program = 0, unlinked = 0;
  for (const auto& k : run.kernels) {
    if (k.op == kRecorderWork) continue;
    ++program;
    unlinked += k.op == kNone;
  }
  return !run.ops.empty() && 2 * unlinked > program;
}

}  // namespace

Result<DiffReport> DiffRuns(const Run& a, const Run& b, const Run* measured_a, const Run* measured_b,
                            const DiffOptions& options) {
  // A run of nothing (a script whose step loop was not found, a program that ran no GPU work
  // under `record --`): say so rather than what its absent passes would have needed.
  for (auto [side, run, measured] : {std::tuple{'a', &a, measured_a}, std::tuple{'b', &b, measured_b}})
    if (run->ops.empty() && run->kernels.empty() && run->transfers.empty() && run->ranges.empty() &&
        (!measured || (measured->ops.empty() && measured->kernels.empty())))
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("run {} holds no operators, kernels, copies or ranges: nothing was recorded "
                                   "(`{}`), so there is nothing to compare",
                                   side, run->info.command));
  if (MatchesByRanges(a, b)) return DiffRanges(a, b, measured_a, measured_b, options);
  if (MatchesByKernels(a, b)) return DiffKernels(a, b, measured_a, measured_b, options, "");
  MatchOptions match_options;
  match_options.tolerance = options.match_tolerance;
  MatchResult match = MatchRuns(a, b, match_options);
  // No value in common, and a side whose recording pass links most of its
  // kernels to no operator: it replays a CUDA graph (captured before the
  // recording, so no operator launches the graph's kernels) and its values
  // cannot meet the other's; its kernels still can.
  auto kernels = [](const Run& run, const Run* measured) { return !(measured ? *measured : run).kernels.empty(); };
  if (match.regions.empty() && kernels(a, measured_a) && kernels(b, measured_b))
    for (auto [side, run] : {std::pair{'a', &a}, std::pair{'b', &b}})
      if (MostKernelsUnlinked(*run))
        return DiffKernels(a, b, measured_a, measured_b, options,
                           fmt::format("no regions matched by values: run {}'s recording pass links most of its "
                                       "kernels to no operator (a CUDA graph replayed: its kernels were captured "
                                       "before the recording), so the runs are compared kernel by kernel",
                                       side));
  return DiffAttributed(a, b, measured_a, measured_b, match, options);
}

}  // namespace magneton::analysis
