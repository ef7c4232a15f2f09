// Work in no matched region (unmatched_work.h): a result grown with torch.cat
// at every step, against the pieces gathered in a list and joined after the
// loop (scripts/record_fixture.py collect: real CPU runs, both passes in each
// file, from the third step).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analysis/diff/diff.h"
#include "recorded_diff.h"

namespace magneton::analysis {
namespace {

using recorded::Noted;

const Finding* Unmatched(const DiffReport& r) {
  for (const auto& f : r.findings)
    if (f.label.find("in no matched region") != std::string::npos) return &f;
  return nullptr;
}

TEST(DiffUnmatched, AResultGrownByConcatenationAtEveryStepIsWorkOutsideTheRegions) {
  auto r = recorded::DiffBothPasses("torch/collect_list.mgt", "torch/collect_cat.mgt");
  ASSERT_TRUE(r.ok()) << r.error().message;
  // The step's cat grows; the rest of it repeats exactly. Aligned by names, the cat
  // is part of every repetition, not left aligned with nothing.
  EXPECT_TRUE(Noted(*r, "run b: its step's shapes change"));
  EXPECT_FALSE(Noted(*r, "align with nothing recorded"));
  const Finding* f = Unmatched(*r);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->rank, 1);
  EXPECT_EQ(f->verdict, Verdict::kWaste) << f->why;
  EXPECT_EQ(f->costly, 'b');
  EXPECT_EQ(f->label.rfind("aten::cat in no matched region on b at record_fixture.py:", 0), 0u) << f->label;
  // Most of b's iteration: the copy of every row gathered so far (about 2 ms against a's 0.3 ms of its own).
  EXPECT_GT(f->saved_pct_of_run, 30);
  EXPECT_NEAR(f->saved_per_iteration, f->b.cost() - f->a.cost(), 1e-12);
  const Evidence& e = f->evidence.at(0);
  EXPECT_EQ(e.kind, EvidenceClass::kOperators);
  ASSERT_FALSE(e.only_b.empty());
  EXPECT_EQ(e.only_b.front().name, "aten::cat");
  ASSERT_EQ(e.params.size(), 1u);
  EXPECT_EQ(e.params[0].parameter, "in no matched region");
  ASSERT_EQ(f->rules.size(), 1u);
  EXPECT_EQ(f->rules[0].id, "growing-concatenation");
}

TEST(DiffUnmatched, APairOfOneProgramHasNoUnmatchedWorkFinding) {
  for (const char* name : {"collect_list.mgt", "collect_cat.mgt"}) {
    auto r = recorded::DiffBothPasses(std::string("torch/") + name, std::string("torch/") + name);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(Unmatched(*r), nullptr) << name;
  }
}

}  // namespace
}  // namespace magneton::analysis
