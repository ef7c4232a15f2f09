// The diff on real recordings: tiny GPT-2 blocks recorded on the CPU with the
// torch recorder (tests/data/diff/record.sh), a recording pass with
// fingerprints and a measured pass each. Matching and attribution are the
// real ones (DiffRuns).
#include <gtest/gtest.h>

#include "analysis/diff/call_site.h"
#include "analysis/diff/diff.h"
#include "analysis/diff/root_cause.h"
#include "analysis/diff/rules.h"
#include "analysis/match/region_match.h"
#include "core/store.h"

namespace magneton::analysis {
namespace {

const std::string kData = std::string(MAGNETON_TEST_DATA) + "/diff/";

struct Recorded {
  Run run, measured;
};

Recorded Load(const std::string& stem) {
  auto r = LoadRun(kData + stem + ".mgt");
  auto m = LoadRun(kData + stem + "-measured.mgt");
  EXPECT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(m.ok()) << m.error().message;
  return {r.ok() ? std::move(*r) : Run{}, m.ok() ? std::move(*m) : Run{}};
}

DiffReport DiffRecorded(const Recorded& a, const Recorded& b) {
  DiffOptions o;
  auto rules = LoadRulesDir(std::string(MAGNETON_TEST_DATA) + "/../../rules");
  if (rules.ok()) o.rules = *rules;
  auto r = DiffRuns(a.run, b.run, &a.measured, &b.measured, o);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? std::move(*r) : DiffReport{};
}

std::vector<std::string> Names(const std::vector<NamedCount>& v) {
  std::vector<std::string> out;
  for (const auto& n : v) out.push_back(n.name);
  return out;
}

TEST(DiffRecorded, EightOperatorGeluIsWasteAgainstTheFusedOne) {
  DiffReport r = DiffRecorded(Load("gelu_new"), Load("gelu_fused"));
  EXPECT_FALSE(r.energy_measured);  // CPU: time stands in
  EXPECT_EQ(r.a.measured_repeats, 3);
  ASSERT_EQ(r.waste_count(), 1);
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.verdict, Verdict::kWaste);
  EXPECT_EQ(f.costly, 'a');
  EXPECT_EQ(f.regions.size(), 2u);  // one per layer
  EXPECT_GT(f.cost_delta_pct, 50);
  EXPECT_LT(f.output_rel_diff, 1e-3);
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kOperators);
  const Evidence& e = f.evidence[0];
  auto a_only = Names(e.only_a), b_only = Names(e.only_b);
  EXPECT_NE(std::find(a_only.begin(), a_only.end(), "aten::tanh"), a_only.end());
  EXPECT_NE(std::find(a_only.begin(), a_only.end(), "aten::pow"), a_only.end());
  EXPECT_EQ(b_only, std::vector<std::string>{"aten::gelu"});
  // Call sites in transformers' activations.py: NewGELUActivation vs GELUTanh.
  EXPECT_NE(e.only_a[0].call_site.file.find("transformers/activations.py"), std::string::npos);
  EXPECT_NE(e.only_a[0].call_site.function.find("NewGELUActivation"), std::string::npos);
  EXPECT_NE(e.only_b[0].call_site.function.find("GELUTanh"), std::string::npos);
  EXPECT_GT(e.divergence.depth, 0);
  ASSERT_FALSE(f.rules.empty());
  EXPECT_EQ(f.rules[0].id, "unfused-gelu");
}

TEST(DiffRecorded, TwoRecordingsOfOneProgramHaveNoWaste) {
  DiffReport r = DiffRecorded(Load("gelu_new"), Load("gelu_new_again"));
  EXPECT_GT(r.regions.size(), 20u);
  EXPECT_EQ(r.waste_count(), 0);
  for (const auto& f : r.findings) EXPECT_NE(f.verdict, Verdict::kTradeOff) << f.label << ": " << f.why;
  EXPECT_TRUE(r.config.empty());
}

TEST(DiffRecorded, Conv1DRegionsShowAddmmAgainstMmPlusAddWithCallSites) {
  Recorded a = Load("addmm"), b = Load("mm_add");
  MatchResult m = MatchRuns(a.run, b.run);
  energy::Attribution ea = energy::Attribute(a.run), eb = energy::Attribute(b.run);
  CostModel ca(a.run, ea), cb(b.run, eb);
  int conv_regions = 0;
  for (const auto& region : m.regions) {
    RegionSide sa{&a.run, &ca, &region.ops_a}, sb{&b.run, &cb, &region.ops_b};
    RootCause rc = FindRootCause(sa, sb, 'b', {}, {});
    const Evidence& e = rc.evidence[0];
    auto a_only = Names(e.only_a), b_only = Names(e.only_b);
    if (std::find(a_only.begin(), a_only.end(), "aten::addmm") == a_only.end()) continue;
    ++conv_regions;
    EXPECT_EQ(e.kind, EvidenceClass::kOperators);
    EXPECT_NE(std::find(b_only.begin(), b_only.end(), "aten::mm"), b_only.end());
    EXPECT_NE(std::find(b_only.begin(), b_only.end(), "aten::add"), b_only.end());
    for (const auto& n : e.only_a) {
      if (n.name == "aten::addmm") {
        EXPECT_NE(n.call_site.file.find("transformers/pytorch_utils.py"), std::string::npos);
        EXPECT_EQ(Describe(n.call_site).rfind("pytorch_utils.py:", 0), 0u) << Describe(n.call_site);
      }
    }
    for (const auto& n : e.only_b) {
      if (n.name != "aten::mm") continue;
      EXPECT_NE(n.call_site.file.find("magneton/demo/gpt2_blocks.py"), std::string::npos);
    }
  }
  // Four Conv1Ds per block (attention in and out, MLP in and out), two blocks.
  EXPECT_EQ(conv_regions, 8);
}

TEST(DiffRecorded, AMeasuredPassOfAnotherProgramIsRefused) {
  Recorded a = Load("gelu_new"), b = Load("gelu_fused");
  auto r = DiffRuns(a.run, b.run, &b.measured, nullptr, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("measured pass of run a"), std::string::npos) << r.error().message;
}

TEST(DiffRecorded, AMeasuredPassOnOneSideOnlyIsRefusedNamingTheOther) {
  // Set against a measured pass, a recording pass's fingerprinting reads as a
  // machine hundreds of times slower, or as waste on the wrong side.
  Recorded a = Load("gelu_new"), b = Load("gelu_fused");
  auto r = DiffRuns(a.run, b.run, &a.measured, nullptr, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("run b was recorded with fingerprints and has no measured pass", 0), 0u)
      << r.error().message;
  EXPECT_TRUE(DiffRuns(a.run, b.run, &a.measured, &b.measured, {}).ok());
}

}  // namespace
}  // namespace magneton::analysis
