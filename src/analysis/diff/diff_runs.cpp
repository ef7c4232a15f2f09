// Kept apart from diff.cpp so the pure core links without the matcher and
// attribution (tests hand it a MatchResult and Attributions they build).
#include "analysis/diff/diff.h"

#include <fmt/core.h>

#include <optional>

#include "analysis/diff/kernel_regions.h"
#include "analysis/diff/range_regions.h"

namespace magneton::analysis {
namespace {

// Runs with kernels and nothing to match them by: each run is diffed as the
// program ran, its own measured pass (kernel_regions.h); a measured pass
// given with it is that program.
Result<DiffReport> DiffKernels(const Run& a, const Run& b, const Run* measured_a, const Run* measured_b,
                               const DiffOptions& options, const std::string& why) {
  KernelRegions k = BuildKernelRegions(measured_a ? *measured_a : a, measured_b ? *measured_b : b, options.iterations);
  energy::Attribution ea = energy::Attribute(k.a.run), eb = energy::Attribute(k.b.run);
  DiffOptions o = options;
  if (!k.a.whole) o.iterations = 0;  // the step was found (with --iterations as a hint): costs are per repetition
  auto report = Diff(DiffInput{&k.a.run, &ea, &k.a.run, &ea, &k.a.alignment},
                     DiffInput{&k.b.run, &eb, &k.b.run, &eb, &k.b.alignment}, k.match, o);
  if (!report.ok()) return report;
  report->options.iterations = options.iterations;
  ExplainKernelFindings(k, *report);
  if (!why.empty()) k.notes.insert(k.notes.begin(), why);
  for (auto [side, measured] : {std::pair{'a', measured_a}, std::pair{'b', measured_b}})
    if (measured) k.notes.push_back(fmt::format("run {}: its kernels come from its measured pass", side));
  report->notes.insert(report->notes.begin(), k.notes.begin(), k.notes.end());
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
  energy::Attribution ea = energy::Attribute(ra.run), eb = energy::Attribute(rb.run);
  energy::Attribution mea, meb;
  if (ma) mea = energy::Attribute(ma->run);
  if (mb) meb = energy::Attribute(mb->run);
  auto report = Diff(DiffInput{&ra.run, &ea, ma ? &ma->run : nullptr, &mea},
                     DiffInput{&rb.run, &eb, mb ? &mb->run : nullptr, &meb}, match, options);
  if (!report.ok()) return report;
  if (options.iterations > 0) ra.iteration_range.clear(), rb.iteration_range.clear();  // the given count holds
  auto notes = RangeNotes(ra, rb, match);
  report->notes.insert(report->notes.begin(), notes.begin(), notes.end());
  return report;
}

}  // namespace

Result<DiffReport> DiffRuns(const Run& a, const Run& b, const Run* measured_a, const Run* measured_b,
                            const DiffOptions& options) {
  if (MatchesByRanges(a, b)) return DiffRanges(a, b, measured_a, measured_b, options);
  if (MatchesByKernels(a, b)) return DiffKernels(a, b, measured_a, measured_b, options, "");
  MatchOptions match_options;
  match_options.tolerance = options.match_tolerance;
  MatchResult match = MatchRuns(a, b, match_options);
  energy::Attribution ea = energy::Attribute(a), eb = energy::Attribute(b);
  energy::Attribution mea, meb;
  if (measured_a) mea = energy::Attribute(*measured_a);
  if (measured_b) meb = energy::Attribute(*measured_b);
  return Diff(DiffInput{&a, &ea, measured_a, &mea}, DiffInput{&b, &eb, measured_b, &meb}, match, options);
}

}  // namespace magneton::analysis
