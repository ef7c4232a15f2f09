// Rules files: parsing, errors that name the file, matching (docs/diff.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "analysis/diff/rules.h"
#include "analysis/diff/sync_sites.h"

namespace magneton::analysis {
namespace {

TEST(DiffRules, ShippedRulesParse) {
  auto rules = LoadRulesDir(std::string(MAGNETON_TEST_DATA) + "/../../rules");
  ASSERT_TRUE(rules.ok()) << rules.error().message;
  EXPECT_GE(rules->size(), 10u);
  std::set<std::string> ids;
  for (const auto& r : *rules) {
    EXPECT_TRUE(ids.insert(r.id).second) << "duplicate rule id " << r.id;
    EXPECT_FALSE(r.recommendation.empty());
  }
}

TEST(DiffRules, ErrorsNameTheFileAndTheProblem) {
  auto bad_json = ParseRules("{ not json", "x.json");
  ASSERT_FALSE(bad_json.ok());
  EXPECT_EQ(bad_json.error().message, "x.json: not valid JSON");
  auto no_list = ParseRules(R"({"rule": []})", "y.json");
  ASSERT_FALSE(no_list.ok());
  EXPECT_NE(no_list.error().message.find("y.json"), std::string::npos);
  auto missing = ParseRules(R"({"rules": [{"id": "r1", "title": "t"}]})", "z.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("'recommendation'"), std::string::npos) << missing.error().message;
  auto bad_re = ParseRules(
      R"({"rules": [{"id": "r1", "title": "t", "recommendation": "x", "ops": ["(unclosed"]}]})", "w.json");
  ASSERT_FALSE(bad_re.ok());
  EXPECT_NE(bad_re.error().message.find("w.json rule 'r1': bad pattern '(unclosed'"), std::string::npos)
      << bad_re.error().message;
  auto bad_class = ParseRules(
      R"({"rules": [{"id": "r", "title": "t", "recommendation": "x", "evidence": ["ops"]}]})", "v.json");
  ASSERT_FALSE(bad_class.ok());
  EXPECT_NE(bad_class.error().message.find("unknown evidence class 'ops'"), std::string::npos);
  auto missing_dir = LoadRulesDir("/nonexistent/rules");
  ASSERT_FALSE(missing_dir.ok());
  EXPECT_EQ(missing_dir.error().code, ErrorCode::kNotFound);
}

TEST(DiffRules, LoadsEveryJsonFileOfADirectoryInNameOrder) {
  auto dir = std::filesystem::temp_directory_path() / "magneton_rules_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "b.json") << R"({"rules": [{"id": "second", "title": "t", "recommendation": "r"}]})";
  std::ofstream(dir / "a.json") << R"({"rules": [{"id": "first", "title": "t", "recommendation": "r"}]})";
  std::ofstream(dir / "notes.txt") << "not a rules file";
  auto rules = LoadRulesDir(dir.string());
  ASSERT_TRUE(rules.ok()) << rules.error().message;
  ASSERT_EQ(rules->size(), 2u);
  EXPECT_EQ((*rules)[0].id, "first");
  EXPECT_EQ((*rules)[1].id, "second");
  std::filesystem::remove_all(dir);
}

TEST(DiffRules, AllConditionsMustHoldAndConfigFillsTheTemplate) {
  auto rules = ParseRules(R"({"rules": [{
      "id": "tf32", "title": "t", "evidence": ["kernels"], "ops": ["^aten::addmm$"],
      "config": ["allow_tf32"],
      "recommendation": "{key}: {costly_value} -> {lean_value}"}]})",
                          "t.json");
  ASSERT_TRUE(rules.ok()) << rules.error().message;
  RuleSubject s;
  s.evidence = EvidenceClass::kKernels;
  s.ops = {"aten::addmm"};
  s.costly = 'b';
  s.config = {{"torch.backends.cuda.matmul.allow_tf32", "True", "False"}, {"other", "1", "2"}};
  auto m = MatchRules(*rules, s);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].hit.recommendation, "torch.backends.cuda.matmul.allow_tf32: False -> True");
  ASSERT_EQ(m[0].steering.size(), 1u);

  RuleSubject wrong_class = s;
  wrong_class.evidence = EvidenceClass::kOperators;
  EXPECT_TRUE(MatchRules(*rules, wrong_class).empty());
  RuleSubject no_key = s;
  no_key.config = {{"other", "1", "2"}};
  EXPECT_TRUE(MatchRules(*rules, no_key).empty());
  auto extra = ParseRules(R"({"rules": [{"id": "copy", "title": "t", "recommendation": "r",
      "costly_ops": ["copy_"], "lean_adds_nothing": true}]})",
                          "c.json");
  ASSERT_TRUE(extra.ok()) << extra.error().message;
  RuleSubject copies;
  copies.costly_ops = {"aten::copy_"};
  EXPECT_EQ(MatchRules(*extra, copies).size(), 1u);
  copies.lean_ops = {"aten::mm"};  // the lean side does something else instead: not a pure extra copy
  EXPECT_TRUE(MatchRules(*extra, copies).empty());
  RuleSubject no_op = s;
  no_op.ops = {"aten::addmm_backward"};  // the pattern is anchored in the rule
  EXPECT_TRUE(MatchRules(*rules, no_op).empty());
}

// Shipped rules seen on real pairs: Transformers' Trainer with adamw_torch
// against adamw_torch_fused (H100, 2026-12-07), whose foreach AdamW also reads
// its step counters from host memory, which is no copy.
TEST(DiffRules, AFusedOptimizerIsNamedAndPageableMemoryOnlyForCopies) {
  auto rules = LoadRulesDir(std::string(MAGNETON_TEST_DATA) + "/../../rules");
  ASSERT_TRUE(rules.ok()) << rules.error().message;
  auto ids = [&](const RuleSubject& s) {
    std::vector<std::string> out;
    for (const auto& m : MatchRules(*rules, s)) out.push_back(m.hit.id);
    return out;
  };
  RuleSubject adam;
  adam.evidence = EvidenceClass::kOperators;
  adam.costly = 'a';
  adam.costly_ops = {"aten::_foreach_lerp_", "aten::_foreach_mul_", "aten::_foreach_addcdiv_"};
  adam.lean_ops = {"aten::_fused_adamw_"};
  EXPECT_EQ(ids(adam), std::vector<std::string>{"optimizer-not-fused"});
  adam.lean_ops = {"aten::_foreach_add_"};  // no fused step on the leaner side: another cause
  EXPECT_TRUE(ids(adam).empty());
  // One parameter at a time against foreach (seen on a CPU training script, AdamW's default there).
  RuleSubject single;
  single.evidence = EvidenceClass::kOperators;
  single.costly = 'a';
  single.costly_ops = {"aten::div", "aten::copy_"};
  single.lean_ops = {"aten::_foreach_mul_", "aten::_foreach_sqrt", "aten::_foreach_add_", "aten::_foreach_div_"};
  EXPECT_EQ(ids(single), std::vector<std::string>{"optimizer-per-parameter"});
  single.costly_ops = {"aten::copy_"};  // a copy alone is no optimizer's
  EXPECT_TRUE(ids(single).empty());
  single.lean_ops = {"aten::_fused_adamw_"};  // against a fused step: the fused rule's
  single.costly_ops = {"aten::lerp_", "aten::addcdiv_"};
  EXPECT_EQ(ids(single), std::vector<std::string>{"optimizer-not-fused"});
  RuleSubject args;
  args.evidence = EvidenceClass::kArguments;
  args.costly = 'a';
  args.costly_params = {"aten::_foreach_add_ input 0 memory=pageable"};
  EXPECT_TRUE(ids(args).empty());
  args.costly_params = {"aten::copy_ input 1 memory=pageable"};
  EXPECT_EQ(ids(args), std::vector<std::string>{"pageable-host-memory"});
  // A surplus of copies is an extra copy; gradient clipping (seen on a CPU training script, its
  // _foreach_norm with a copy among its operators) is not.
  RuleSubject copies;
  copies.evidence = EvidenceClass::kOperators;
  copies.costly = 'b';
  copies.costly_ops = {"aten::copy_", "aten::empty_like"};
  EXPECT_EQ(ids(copies), std::vector<std::string>{"extra-copy"});
  copies.costly_ops = {"aten::_foreach_norm", "aten::linalg_vector_norm", "aten::mul_", "aten::copy_"};
  EXPECT_TRUE(ids(copies).empty());
}

// The shipped timeline rules on the parameters timeline evidence carries:
// each names one cause, and only on the side that costs more.
TEST(DiffRules, TimelineRulesNameTheCauseOnTheCostlierSide) {
  auto rules = LoadRulesDir(std::string(MAGNETON_TEST_DATA) + "/../../rules");
  ASSERT_TRUE(rules.ok()) << rules.error().message;
  auto fired = [&](const std::map<std::string, double>& a, const std::map<std::string, double>& b, char costly,
                   const std::string& cause) {
    RuleSubject s;
    s.evidence = EvidenceClass::kTimeline;
    s.costly = costly;
    for (const auto& d : TimelineParams(a, b, costly, cause)) {
      s.params.push_back(d.subject + " " + d.parameter);
      s.costly_params.push_back(d.subject + " " + d.parameter + "=" + (costly == 'a' ? d.value_a : d.value_b));
    }
    std::vector<std::string> ids;
    for (const auto& m : MatchRules(*rules, s)) ids.push_back(m.hit.id);
    return ids;
  };
  using Ids = std::vector<std::string>;
  const std::map<std::string, double> none;
  EXPECT_EQ(fired({{"cudaStreamSynchronize in aten::item at train.py:41 (step)", 1}}, none, 'a', kCauseSyncs),
            Ids{"scalar-read-per-step"});
  EXPECT_EQ(fired(none, {{"cudaStreamSynchronize in aten::_local_scalar_dense at train.py:41 (step)", 2}}, 'b',
                  kCauseSyncs),
            Ids{"scalar-read-per-step"});
  EXPECT_EQ(fired({{"cudaDeviceSynchronize before aten::linear at model.py:12 (forward)", 4}}, none, 'a', kCauseSyncs),
            Ids{"explicit-synchronize"});
  EXPECT_EQ(fired({{"cudaDeviceSynchronize at hooks.py:9 (sync_hook)", 4}}, none, 'a', kCauseSyncs),
            Ids{"explicit-synchronize"});
  EXPECT_EQ(fired({{"cudaMemcpy in aten::_to_copy at train.py:30 (step)", 2}}, none, 'a', kCauseSyncs),
            Ids{"blocking-copy-in-step"});
  EXPECT_EQ(fired(none, none, 'b', kCauseLateLaunch), Ids{"launch-bound-step"});
  EXPECT_EQ(fired(none, none, 'a', kCauseHostCode), Ids{"host-code-between-operators"});
  // The lean side synchronizes more: its calls are not why the other costs more.
  EXPECT_TRUE(fired({{"cudaStreamSynchronize in aten::item at train.py:41 (step)", 1}}, none, 'b', "").empty());
  // a reads a scalar 3 times a step, b synchronizes the device twice to a's once: only the reads are a's.
  EXPECT_EQ(fired({{"cudaStreamSynchronize in aten::item at train.py:41 (step)", 3}, {"cudaDeviceSynchronize", 1}},
                  {{"cudaDeviceSynchronize", 2}}, 'a', kCauseSyncs),
            Ids{"scalar-read-per-step"});
}

}  // namespace
}  // namespace magneton::analysis
