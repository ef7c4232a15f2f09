// Scores a MatchResult against ground-truth labels (docs/matching.md,
// "Evaluation"). Each graph node (top-level op) of each run carries the name
// of the program part it belongs to (a module, say), or "" for don't-care.
//
//  - A region is correct when the labels on its A side equal the labels on
//    its B side, as sets. Finer than the labels (half a module on each side)
//    and coarser (two whole modules on each side) are both correct; layer 3
//    against layer 4 is not. precision = correct / regions with labels.
//  - A label present in both runs is recovered when more than half of its
//    nodes on each side lie in correct regions that hold no other label.
//    recall = recovered / labels present in both runs.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/match/region_match.h"
#include "core/run.h"

namespace magneton::testing {

struct MatchScore {
  int regions = 0, correct = 0;
  int labels = 0, recovered = 0;
  std::vector<std::string> missed;  // labels not recovered
  double precision() const { return regions ? double(correct) / regions : 1.0; }
  double recall() const { return labels ? double(recovered) / labels : 1.0; }
  double f1() const {
    const double p = precision(), r = recall();
    return p + r > 0 ? 2 * p * r / (p + r) : 0.0;
  }
};

// labels_a[op id] / labels_b[op id]: label of each op ("" = don't care).
inline MatchScore ScoreMatch(const analysis::MatchResult& m, const std::vector<std::string>& labels_a,
                             const std::vector<std::string>& labels_b) {
  MatchScore s;
  auto label_set = [](const std::vector<int64_t>& ops, const std::vector<std::string>& labels) {
    std::set<std::string> out;
    for (int64_t op : ops)
      if (op >= 0 && op < static_cast<int64_t>(labels.size()) && !labels[op].empty()) out.insert(labels[op]);
    return out;
  };
  // Nodes per label, and how many of them sit in a pure correct region.
  std::map<std::string, std::pair<int, int>> count_a, count_b;  // label -> (pure, total)
  auto total = [](const std::vector<int64_t>& ops, const std::vector<std::string>& labels, auto& count) {
    for (int64_t op : ops)
      if (!labels[op].empty()) ++count[labels[op]].second;
  };
  for (const auto& r : m.regions) {
    total(r.ops_a, labels_a, count_a);
    total(r.ops_b, labels_b, count_b);
    const auto la = label_set(r.ops_a, labels_a), lb = label_set(r.ops_b, labels_b);
    if (la.empty() && lb.empty()) continue;
    ++s.regions;
    if (la != lb) continue;
    ++s.correct;
    if (la.size() != 1) continue;
    for (int64_t op : r.ops_a)
      if (!labels_a[op].empty()) ++count_a[labels_a[op]].first;
    for (int64_t op : r.ops_b)
      if (!labels_b[op].empty()) ++count_b[labels_b[op]].first;
  }
  total(m.unmatched_a, labels_a, count_a);
  total(m.unmatched_b, labels_b, count_b);
  for (const auto& [label, ca] : count_a) {
    auto it = count_b.find(label);
    if (it == count_b.end()) continue;
    ++s.labels;
    const auto& cb = it->second;
    if (2 * ca.first > ca.second && 2 * cb.first > cb.second)
      ++s.recovered;
    else
      s.missed.push_back(label);
  }
  return s;
}

// Prints regions as "labels: op names | op names" (for failing tests).
inline void PrintMatch(const analysis::MatchResult& m, const Run& a, const Run& b,
                       const std::vector<std::string>& labels_a, const std::vector<std::string>& labels_b) {
  auto side = [](const std::vector<int64_t>& ops, const Run& run, const std::vector<std::string>& labels) {
    std::string out;
    for (int64_t op : ops) out += run.ops[op].name + "[" + labels[op] + "] ";
    return out;
  };
  for (const auto& r : m.regions)
    std::printf("region %lld d%d diff %.2g\n  A: %s\n  B: %s\n", static_cast<long long>(r.id), r.depth,
                r.output_rel_diff, side(r.ops_a, a, labels_a).c_str(), side(r.ops_b, b, labels_b).c_str());
  std::printf("unmatched\n  A: %s\n  B: %s\n", side(m.unmatched_a, a, labels_a).c_str(),
              side(m.unmatched_b, b, labels_b).c_str());
}

}  // namespace magneton::testing
