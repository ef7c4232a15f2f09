// The --json output against its documented schema (docs/json-schema.md):
// every field emitted is documented there and every documented field is emitted.
#include "report/json.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "analysis/diff/regression.h"
#include "report_fixture.h"

namespace magneton::report {
namespace {

using nlohmann::json;

void Paths(const json& j, const std::string& prefix, std::set<std::string>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      std::string p = prefix.empty() ? it.key() : prefix + "." + it.key();
      out.insert(p);
      Paths(it.value(), p, out);
    }
  } else if (j.is_array()) {
    for (const auto& e : j) Paths(e, prefix + "[]", out);
  }
}

// The docs describe repeated objects once, by type: CallSite, NamedCount, Cost, Run.
std::string Normalize(std::string p) {
  static const std::pair<std::regex, const char*> kTypes[] = {
      {std::regex(R"(^check:(.*)$)"), "check.$1"},
      {std::regex(R"(^.*\.call_site\.(\w+)$)"), "CallSite.$1"},
      {std::regex(R"(^findings\[\]\.evidence\[\]\.divergence\.(a|b|common)\.(\w+)$)"), "CallSite.$2"},
      {std::regex(R"(^findings\[\]\.evidence\[\]\.(only_a|only_b|all_a|all_b)\[\]\.(\w+)$)"),
       "NamedCount.$2"},
      {std::regex(R"(^(findings|regions)\[\]\.(a|b)\.(\w+)$)"), "Cost.$3"},
      {std::regex(R"(^runs\.(a|b)\.per_iteration\.(\w+)$)"), "Account.$2"},
      {std::regex(R"(^runs\.(a|b)\.untraced\.(\w+)$)"), "Run.untraced.$2"},
      {std::regex(R"(^runs\.(a|b)\.(\w+)$)"), "Run.$2"}};
  for (const auto& [re, to] : kTypes) p = std::regex_replace(p, re, to);
  return p;
}

std::set<std::string> DocumentedPaths() {
  std::ifstream in(std::string(MAGNETON_TEST_DATA) + "/../../docs/json-schema.md");
  EXPECT_TRUE(in) << "docs/json-schema.md missing";
  std::set<std::string> out;
  std::regex row(R"(^\| `([^`]+)` \|)");
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, row)) out.insert(m[1]);
  return out;
}

// A report with every kind of content: operators, kernels and launch evidence,
// rules, config keys, noise.
std::vector<json> RichDocuments() {
  std::vector<json> docs;
  RunPaths paths{"a.mgt", "b.mgt"};
  auto tf32 = fixture::Tf32Report();
  docs.push_back(DiffToJson(tf32.report, paths));
  fixture::Pair conv = fixture::Conv1DPair(4, 2, 1.3, 1.0);
  analysis::DiffOptions o;
  o.rules = fixture::ShippedRules();
  auto r = analysis::Diff(conv.a.b.run, conv.b.b.run, conv.match, conv.a.Energy(), conv.b.Energy(), o);
  docs.push_back(DiffToJson(r, paths));
  fixture::Pair launch = fixture::LaunchPair(4, 1.3);
  docs.push_back(DiffToJson(
      analysis::Diff(launch.a.b.run, launch.b.b.run, launch.match, launch.a.Energy(), launch.b.Energy(), o),
      paths));
  {  // with measured passes: every run has its per-iteration account
    auto one = [](const std::string&) { return 1.0; };
    magneton::Run ma = fixture::MeasuredPass(conv.a.b.run, 3, one), mb = fixture::MeasuredPass(conv.b.b.run, 3, one);
    energy::Attribution ea = conv.a.Energy(), eb = conv.b.Energy();
    energy::Attribution mea = fixture::AttributionFor(ma, std::vector<double>(ma.kernels.size(), 0.5));
    energy::Attribution meb = fixture::AttributionFor(mb, std::vector<double>(mb.kernels.size(), 0.6));
    auto measured = analysis::Diff(analysis::DiffInput{&conv.a.b.run, &ea, &ma, &mea},
                                   analysis::DiffInput{&conv.b.b.run, &eb, &mb, &meb}, conv.match, o);
    EXPECT_TRUE(measured.ok());
    if (measured.ok()) {
      measured->a.untraced = analysis::UntracedSteps{180, 0.010, 2.0};  // a pass with untraced steps
      docs.push_back(DiffToJson(*measured, paths));
    }
  }
  fixture::Pair noise = fixture::Conv1DPair(2, 1, 1.01, 1.0);
  docs.push_back(DiffToJson(
      analysis::Diff(noise.a.b.run, noise.b.b.run, noise.match, noise.a.Energy(), noise.b.Energy(), o),
      paths));
  o.threshold = 0.05;
  auto regress = analysis::Diff(conv.a.b.run, conv.b.b.run, conv.match, conv.a.Energy(), conv.b.Energy(), o);
  docs.push_back(CheckToJson(regress, analysis::FindRegressions(regress, 0.05), paths));
  return docs;
}

TEST(ReportJson, EveryFieldIsDocumentedAndEveryDocumentedFieldAppears) {
  std::set<std::string> emitted;
  for (const auto& d : RichDocuments()) {
    std::set<std::string> p;
    Paths(d, "", p);
    bool check = d["tool"] == "magneton check";
    for (const auto& x : p)
      if (!check || x.rfind("diff.", 0) != 0) emitted.insert(Normalize(check ? "check:" + x : x));
  }
  if (getenv("MAGNETON_PRINT_JSON_PATHS"))  // to update the docs after a schema change
    for (const auto& p : emitted) printf("%s\n", p.c_str());
  std::set<std::string> documented = DocumentedPaths();
  ASSERT_GT(documented.size(), 50u);
  for (const auto& p : emitted) EXPECT_TRUE(documented.count(p)) << "not in docs/json-schema.md: " << p;
  for (const auto& p : documented) EXPECT_TRUE(emitted.count(p)) << "documented but never emitted: " << p;
}

TEST(ReportJson, ValuesAndTypes) {
  auto c = fixture::Tf32Report();
  json j = DiffToJson(c.report, {"fp32.mgt", "tf32.mgt"});
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["unit"], "J");
  EXPECT_EQ(j["runs"]["a"]["path"], "fp32.mgt");
  const json& f = j["findings"][0];
  EXPECT_EQ(f["verdict"], "waste");
  EXPECT_EQ(f["rank"], 1);
  EXPECT_EQ(f["costly"], "a");
  EXPECT_EQ(f["evidence_class"], "kernels");
  EXPECT_EQ(f["evidence"][0]["kind"], "kernels");
  EXPECT_EQ(f["evidence"][0]["config"][0]["key"], "torch.backends.cuda.matmul.allow_tf32");
  EXPECT_EQ(f["evidence"][0]["divergence"]["a"]["kind"], "native");
  EXPECT_TRUE(f["a"]["joules"].is_number());
  EXPECT_EQ(j["summary"]["waste"], 1);
  // Round trip: the text parses back to the same document.
  EXPECT_EQ(json::parse(j.dump()), j);
}

TEST(ReportJson, UnmeasuredEnergyIsNullNotNaN) {
  auto c = fixture::Tf32Report(/*measured=*/false);
  json j = DiffToJson(c.report, {"a", "b"});
  EXPECT_EQ(j["unit"], "s");
  EXPECT_FALSE(j["energy_measured"].get<bool>());
  EXPECT_TRUE(j["runs"]["a"]["joules"].is_null());
  EXPECT_TRUE(j["findings"][0]["a"]["joules"].is_null());
  EXPECT_EQ(j["findings"][0]["a"]["source"], "time");
  EXPECT_EQ(j.dump().find("NaN"), std::string::npos);
}

}  // namespace
}  // namespace magneton::report
