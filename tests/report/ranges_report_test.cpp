// The reports of a diff matched by NVTX range name (runs without operator
// values): the cublas-engine case recorded on the H200. The region label is
// the range path, and every report says that outputs were not compared.
#include <gtest/gtest.h>


#include "analysis/diff/diff.h"
#include "recorded_runs.h"
#include "report_fixture.h"
#include "report/html.h"
#include "report/json.h"
#include "report/table.h"

namespace magneton::report {
namespace {

const std::string kRuns = testing::GpuRuns();

TEST(ReportRanges, RangePathsLabelTheFindingsAndOutputsAreNotCompared) {
  LOAD_RECORDED_RUN(kRuns + "engine_fp32.mgt", a);
  LOAD_RECORDED_RUN(kRuns + "engine_tf32.mgt", b);
  auto r = analysis::DiffRuns(*a, *b, nullptr, nullptr, analysis::DiffOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_GT(r->waste_count(), 0);

  TableOptions t;
  t.path_a = "wasteful.mgt";
  t.path_b = "efficient.mgt";
  std::string table = RenderDiffTable(*r, t);
  EXPECT_NE(table.find("magneton.case/measured > engine/iteration > gemm_chain/layer0"), std::string::npos) << table;
  EXPECT_NE(table.find("outputs not compared"), std::string::npos);
  // b ran more iterations in its second: its extra ranges are counted, not compared.
  EXPECT_NE(table.find("unmatched NVTX ranges: a 0, b "), std::string::npos) << table;

  fixture::ExpectOutputsNotCompared(DiffToJson(*r, {"wasteful.mgt", "efficient.mgt"}), "nvtx_range");

  std::string html = RenderHtml(*r, *a, *b, {"wasteful.mgt", "efficient.mgt"});
  EXPECT_NE(html.find("outputs not compared"), std::string::npos);
  EXPECT_NE(html.find("<th>NVTX range in a</th>"), std::string::npos);
}

}  // namespace
}  // namespace magneton::report
