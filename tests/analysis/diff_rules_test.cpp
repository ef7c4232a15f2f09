// Rules files: parsing, errors that name the file, matching (docs/diff.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "analysis/diff/rules.h"

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

}  // namespace
}  // namespace magneton::analysis
