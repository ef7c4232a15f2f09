// The longest chain of cut pairs that is increasing on both sides: a longest
// common subsequence over candidate pairs, computed as a longest increasing
// subsequence (Hunt-Szymanski), O(r log r) for r pairs.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace magneton::analysis {

// pairs: (i, j) candidates in any order, duplicates allowed. Returns a chain
// with i and j both strictly increasing, as long as possible; among equally
// long chains, the one found first by patience sorting.
std::vector<std::pair<int32_t, int32_t>> LongestMonotoneChain(std::vector<std::pair<int32_t, int32_t>> pairs);

}  // namespace magneton::analysis
