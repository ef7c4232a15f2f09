// Kept apart from diff.cpp so the pure core links without the matcher and
// attribution (tests hand it a MatchResult and Attributions they build).
#include "analysis/diff/diff.h"

namespace magneton::analysis {

DiffReport DiffRuns(const Run& a, const Run& b, const DiffOptions& options) {
  MatchOptions match_options;
  match_options.tolerance = options.match_tolerance;
  MatchResult match = MatchRuns(a, b, match_options);
  return Diff(a, b, match, energy::Attribute(a), energy::Attribute(b), options);
}

}  // namespace magneton::analysis
