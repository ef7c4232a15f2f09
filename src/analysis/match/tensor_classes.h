// Equivalence classes of values across two runs, and the "crossing" hash
// that tells whether a cut splits both runs the same way (docs/matching.md,
// "Cut points").
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/match/match_side.h"

namespace magneton::analysis {

struct TensorClasses {
  // Per value of each side: its class, or -1 when it is no evidence (neither
  // an informative fingerprint nor a data scalar: docs/matching.md, "Data
  // scalars") or is not written by a core node. Values joined by an
  // equivalence (within tolerance) share a class; a value with no
  // equivalent on the other side has a class of its own.
  std::vector<int32_t> of_a, of_b;
  int64_t comparisons = 0;   // fingerprint comparisons made
  int64_t equivalences = 0;  // pairs found within tolerance
};

// Joins values that pass their input on unchanged (views, copies, casts)
// with that input on their own side, then finds the equivalents of side a's
// remaining values among side b's through a CandidateIndex, on `threads`
// threads; keeps at most `max_equivalents` per value (the nearest in
// relative execution position, which keeps repeated identical computations
// aligned) and joins them with union-find.
TensorClasses ClassifyValues(const MatchSide& a, const MatchSide& b, double tolerance, int max_equivalents,
                             int threads = 1);

// Per position p of `side`: a hash of the set of classes of the data values
// live across the cut after node p, i.e. written by a flow node at or before
// p and read by a core node after p. Two cuts whose hashes are equal split
// their runs with equivalent values crossing. Left out: masks, and values
// the forward pass saves for the backward pass once no forward op reads them
// any more (docs/matching.md, "Saved activations").
std::vector<uint64_t> CrossingHashes(const MatchSide& side, const std::vector<int32_t>& classes);

}  // namespace magneton::analysis
