// The reports of a kernel-level diff (runs with nothing to match but their
// kernels, analysis/diff/kernel_regions.h): a segment of the aligned steps
// labels each finding, and every report says that outputs were not compared
// and how the regions were matched.
#include <gtest/gtest.h>

#include "../analysis/kernel_program.h"
#include "analysis/diff/diff.h"
#include "report/html.h"
#include "report/json.h"
#include "report/table.h"
#include "report_fixture.h"

namespace magneton::report {
namespace {

TEST(ReportKernels, SegmentsLabelTheFindingsAndOutputsAreNotCompared) {
  fixture::Variant tf32;
  tf32.gemm = fixture::kTf32Gemm;
  tf32.gemm_ns = 10'000;
  magneton::Run a = fixture::Program("prog --tf32 off", {}, 6), b = fixture::Program("prog --tf32 on", tf32, 6);
  auto r = analysis::DiffRuns(a, b, nullptr, nullptr, analysis::DiffOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->waste_count(), 1);

  TableOptions t;
  t.path_a = "a.mgt";
  t.path_b = "b.mgt";
  std::string table = RenderDiffTable(*r, t);
  EXPECT_NE(table.find("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_sta... (a) vs"), std::string::npos)
      << table;
  EXPECT_NE(table.find("matched by kernel sequence"), std::string::npos);
  EXPECT_NE(table.find("outputs not compared: the runs hold no values; matched by kernel sequence"), std::string::npos);
  EXPECT_NE(table.find("unmatched kernels: a 0, b 0"), std::string::npos) << table;

  auto j = DiffToJson(*r, {"a.mgt", "b.mgt"});
  fixture::ExpectOutputsNotCompared(j, "kernels");
  EXPECT_EQ(j["runs"]["a"]["measured_repeats"], 6);  // the warm-up step autotunes: not a repetition

  std::string html = RenderHtml(*r, a, b, {"a.mgt", "b.mgt"});
  EXPECT_NE(html.find("outputs not compared (matched by kernel sequence)"), std::string::npos);
}

}  // namespace
}  // namespace magneton::report
