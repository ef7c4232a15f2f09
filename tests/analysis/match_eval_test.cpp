// Matching on the labeled evaluation set: real CPU recordings of six model
// pairs that compute the same thing two ways (tests/data/match, recorded by
// scripts/record_match_pairs.py), scored against their module structure over
// a sweep of tolerances, like the paper's Fig. 8 (docs/matching.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "analysis/match/region_match.h"
#include "core/store.h"
#include "match_checks.h"
#include "match_scoring.h"

namespace magneton::analysis {
namespace {

namespace fs = std::filesystem;

// The committed set; MAGNETON_MATCH_EVAL_DIR points elsewhere (recordings
// made on another machine by scripts/record_match_pairs.py --out DIR).
const fs::path kDir = std::getenv("MAGNETON_MATCH_EVAL_DIR") ? fs::path(std::getenv("MAGNETON_MATCH_EVAL_DIR"))
                                                             : fs::path(MAGNETON_TEST_DATA) / "match";
const double kTolerances[] = {1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 1.8e-2};

struct Pair {
  std::string name;
  Run a, b;
  std::vector<std::string> labels_a, labels_b;
};

// The label of an op: the innermost module window containing its start.
std::vector<std::string> LabelOps(const Run& run, const nlohmann::json& windows) {
  std::vector<std::string> labels(run.ops.size());
  std::vector<int64_t> width(run.ops.size(), INT64_MAX);
  for (const auto& w : windows) {
    const int64_t start = w.at("start_ns"), end = w.at("end_ns");
    for (const Op& op : run.ops)
      if (op.start_ns >= start && op.start_ns <= end && end - start < width[op.id]) {
        width[op.id] = end - start;
        labels[op.id] = w.at("name").get<std::string>();
      }
  }
  return labels;
}

Pair LoadPair(const std::string& name) {
  Pair p{name, {}, {}, {}, {}};
  const fs::path dir = kDir / name;
  std::ifstream in(dir / "labels.json");
  EXPECT_TRUE(in.good()) << dir / "labels.json";
  const nlohmann::json labels = nlohmann::json::parse(in);
  auto a = LoadRun((dir / labels.at("a").get<std::string>()).string());
  auto b = LoadRun((dir / labels.at("b").get<std::string>()).string());
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().message);
  EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error().message);
  if (!a.ok() || !b.ok()) return p;
  p.a = std::move(a.value());
  p.b = std::move(b.value());
  p.labels_a = LabelOps(p.a, labels.at("modules_a"));
  p.labels_b = LabelOps(p.b, labels.at("modules_b"));
  return p;
}

class MatchEval : public ::testing::Test {
 protected:
  // Every folder under tests/data/match with a labels.json is a pair.
  static void SetUpTestSuite() {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(kDir))
      if (fs::exists(entry.path() / "labels.json")) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    for (const auto& name : names) pairs_.push_back(LoadPair(name));
  }
  static std::vector<Pair> pairs_;
};
std::vector<Pair> MatchEval::pairs_;

// Prints precision / recall / F1 per pair and in total for each tolerance,
// and checks the default tolerance.
TEST_F(MatchEval, PrecisionRecallOverToleranceSweep) {
  ASSERT_GE(pairs_.size(), 6u);
  std::printf("\n%-26s", "tolerance");
  for (double t : kTolerances) std::printf(" %14.1e", t);
  std::printf("\n%-26s", "");
  for (size_t i = 0; i < std::size(kTolerances); ++i) std::printf("    P    R   F1");
  std::printf("\n");
  std::vector<testing::MatchScore> total(std::size(kTolerances));
  double default_f1_min = 1;
  for (const Pair& p : pairs_) {
    std::printf("%-26s", p.name.c_str());
    for (size_t i = 0; i < std::size(kTolerances); ++i) {
      const MatchResult m = MatchRuns(p.a, p.b, MatchOptions{kTolerances[i]});
      const testing::MatchScore s = testing::ScoreMatch(m, p.labels_a, p.labels_b);
      std::printf(" %4.2f %4.2f %4.2f", s.precision(), s.recall(), s.f1());
      total[i].regions += s.regions;
      total[i].correct += s.correct;
      total[i].labels += s.labels;
      total[i].recovered += s.recovered;
      if (kTolerances[i] == MatchOptions{}.tolerance) {
        default_f1_min = std::min(default_f1_min, s.f1());
        EXPECT_GT(s.labels, 0) << p.name;
        if (std::getenv("MAGNETON_MATCH_DEBUG")) testing::PrintMatch(m, p.a, p.b, p.labels_a, p.labels_b);
        for (const auto& missed : s.missed) std::printf("\n  %s missed %s", p.name.c_str(), missed.c_str());
      }
    }
    std::printf("\n");
  }
  std::printf("%-26s", "all pairs");
  for (const auto& s : total) std::printf(" %4.2f %4.2f %4.2f", s.precision(), s.recall(), s.f1());
  std::printf("\n");
  const size_t def =
      std::find(std::begin(kTolerances), std::end(kTolerances), MatchOptions{}.tolerance) - std::begin(kTolerances);
  ASSERT_LT(def, std::size(kTolerances));
  EXPECT_GE(total[def].f1(), 0.95);
  EXPECT_GE(default_f1_min, 0.9);
}

// Real recordings keep the structural invariants: each top-level op in
// exactly one region or unmatched, regions ordered, outputs within tolerance.
TEST_F(MatchEval, RegionsPartitionTheRunsInOrder) {
  for (const Pair& p : pairs_) {
    SCOPED_TRACE(p.name);
    const MatchResult m = MatchRuns(p.a, p.b);
    EXPECT_FALSE(m.regions.empty());
    EXPECT_FALSE(m.tensor_pairs.empty());
    testing::CheckWellFormed(m, p.a, p.b, MatchOptions{}.tolerance);
    // Both programs end in the same values: nothing is left unmatched.
    EXPECT_TRUE(m.unmatched_a.empty());
    EXPECT_TRUE(m.unmatched_b.empty());
  }
}

}  // namespace
}  // namespace magneton::analysis
