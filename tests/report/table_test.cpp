// The terminal table: what it shows, colors only when asked.
#include "report/table.h"

#include <gtest/gtest.h>

#include "analysis/diff/regression.h"
#include "report/format.h"
#include "report_fixture.h"

namespace magneton::report {
namespace {

TEST(ReportFormat, UnitsAndPercentages) {
  EXPECT_EQ(FormatJoules(1.234), "1.23 J");
  EXPECT_EQ(FormatJoules(0.0456), "45.6 mJ");
  EXPECT_EQ(FormatJoules(12345), "12.3 kJ");
  EXPECT_EQ(FormatJoules(NAN), "-");
  EXPECT_EQ(FormatSeconds(78e-6), "78.0 us");
  EXPECT_EQ(FormatSeconds(0), "0 s");
  EXPECT_EQ(FormatPct(12.34, true), "+12.3%");
  EXPECT_EQ(FormatPct(INFINITY, true), "+inf");
  EXPECT_EQ(Shorten("abcdefghij", 6), "abc...");
  EXPECT_NEAR(ChangePct(2.0, 2.5), 25.0, 1e-12);
}

TEST(ReportTable, ShowsTheFindingItsEvidenceAndTheFix) {
  auto c = fixture::Tf32Report();
  TableOptions o;
  o.path_a = "fp32.mgt";
  o.path_b = "tf32.mgt";
  std::string t = RenderDiffTable(c.report, o);
  EXPECT_EQ(t.find("\033["), std::string::npos) << "no colors unless asked";
  EXPECT_NE(t.find("a = fp32.mgt"), std::string::npos);
  EXPECT_NE(t.find("waste"), std::string::npos);
  EXPECT_NE(t.find("[kernels]"), std::string::npos);
  EXPECT_NE(t.find("config torch.backends.cuda.matmul.allow_tf32: a=False b=True"), std::string::npos) << t;
  EXPECT_NE(t.find("call paths part after 5 frames"), std::string::npos) << t;
  EXPECT_NE(t.find("fix TF32 is off for float32 matmuls"), std::string::npos) << t;
  EXPECT_NE(t.find("1 waste finding"), std::string::npos) << t;
  TableOptions colored = o;
  colored.color = true;
  EXPECT_NE(RenderDiffTable(c.report, colored).find("\033[31m"), std::string::npos);
}

TEST(ReportTable, NoiseIsCountedAndListedOnRequest) {
  fixture::Pair p = fixture::Conv1DPair(4, 2, 1.03, 1.0);
  auto r = analysis::Diff(p.a.b.run, p.b.b.run, p.match, p.a.Energy(), p.b.Energy(), {});
  std::string t = RenderDiffTable(r, {});
  EXPECT_NE(t.find("1 region group within noise"), std::string::npos) << t;
  EXPECT_NE(t.find("no waste found at the 10% threshold"), std::string::npos) << t;
  // The near miss is named, with why it was not flagged.
  EXPECT_NE(t.find("largest: "), std::string::npos) << t;
  EXPECT_NE(t.find("costlier; 3.0% apart in energy, under the 10% threshold"), std::string::npos) << t;
  TableOptions all;
  all.show_noise = true;
  EXPECT_NE(RenderDiffTable(r, all).find("under the 10% threshold"), std::string::npos);
}

TEST(ReportTable, CheckListsRegressionsOrSaysOk) {
  fixture::Pair p = fixture::Conv1DPair(6, 2, 1.15, 1.0);
  analysis::DiffOptions o;
  o.threshold = 0.05;
  auto r = analysis::Diff(p.a.b.run, p.b.b.run, p.match, p.a.Energy(), p.b.Energy(), o);
  auto c = analysis::FindRegressions(r, 0.05);
  std::string t = RenderCheckTable(r, c, {});
  EXPECT_NE(t.find("REGRESSED: 2 items over 5.0%"), std::string::npos) << t;
  EXPECT_NE(t.find("whole run"), std::string::npos);
  o.threshold = 0.5;
  auto loose = analysis::Diff(p.a.b.run, p.b.b.run, p.match, p.a.Energy(), p.b.Energy(), o);
  auto ok = analysis::FindRegressions(loose, 0.50);
  EXPECT_FALSE(ok.regressed());
  EXPECT_NE(RenderCheckTable(loose, ok, {}).find("OK: nothing regressed more than 50.0%"), std::string::npos);
}

}  // namespace
}  // namespace magneton::report
