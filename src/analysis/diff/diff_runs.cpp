// Kept apart from diff.cpp so the pure core links without the matcher and
// attribution (tests hand it a MatchResult and Attributions they build).
#include "analysis/diff/diff.h"

namespace magneton::analysis {

Result<DiffReport> DiffRuns(const Run& a, const Run& b, const Run* measured_a, const Run* measured_b,
                            const DiffOptions& options) {
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
