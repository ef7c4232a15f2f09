#include "analysis/match/cut_chain.h"

#include <algorithm>

namespace magneton::analysis {

std::vector<std::pair<int32_t, int32_t>> LongestMonotoneChain(std::vector<std::pair<int32_t, int32_t>> pairs) {
  // i ascending, j descending within one i: then a strictly increasing run of
  // j never takes two pairs of the same i.
  std::sort(pairs.begin(), pairs.end(),
            [](const auto& x, const auto& y) { return x.first != y.first ? x.first < y.first : x.second > y.second; });
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  std::vector<int32_t> tails;  // tails[k]: pair index ending the best chain of length k+1
  std::vector<int32_t> prev(pairs.size(), -1);
  for (int32_t p = 0; p < static_cast<int32_t>(pairs.size()); ++p) {
    const int32_t j = pairs[p].second;
    auto it = std::lower_bound(tails.begin(), tails.end(), j,
                               [&](int32_t t, int32_t value) { return pairs[t].second < value; });
    if (it != tails.begin()) prev[p] = *(it - 1);
    if (it == tails.end())
      tails.push_back(p);
    else
      *it = p;
  }
  std::vector<std::pair<int32_t, int32_t>> chain(tails.size());
  for (int32_t p = tails.empty() ? -1 : tails.back(), k = static_cast<int32_t>(tails.size()) - 1; p >= 0;
       p = prev[p], --k)
    chain[k] = pairs[p];
  return chain;
}

}  // namespace magneton::analysis
