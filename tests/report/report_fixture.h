// Diff reports of the fixture runs (tests/analysis/diff_fixture.h), with the
// shipped rules, for the report tests.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "../analysis/diff_fixture.h"
#include "analysis/diff/diff.h"
#include "analysis/diff/rules.h"

namespace magneton::fixture {

inline std::vector<analysis::Rule> ShippedRules() {
  auto rules = analysis::LoadRulesDir(std::string(MAGNETON_TEST_DATA) + "/../../rules");
  return rules.ok() ? *rules : std::vector<analysis::Rule>{};
}

// A power series (W) over the run, changing every 100 ms like NVML's, and the
// energy counter (J) integrating it.
inline void AddPower(Run& run, double watts) {
  SensorSeries p{static_cast<int64_t>(run.series.size()), 0, "power.instant", "W", "nvml", {}, {}};
  SensorSeries e{p.id + 1, 0, "energy.total", "J", "nvml", {}, {}};
  double joules = 1000;
  for (int64_t t = run.info.start_ns, i = 0; t <= run.info.end_ns + 100'000'000; t += 100'000'000, ++i) {
    double w = watts + 40 * (i % 3);
    p.t_ns.push_back(t);
    p.value.push_back(w);
    e.t_ns.push_back(t);
    e.value.push_back(joules);
    joules += w * 0.1;
  }
  run.series.push_back(p);
  run.series.push_back(e);
}

// The JSON of a diff whose regions were matched without values (NVTX ranges,
// kernels): how, and that no finding or region compared outputs.
inline void ExpectOutputsNotCompared(const nlohmann::json& j, const std::string& matched_by) {
  EXPECT_EQ(j["summary"]["matched_by"], matched_by);
  const auto& top = j["findings"][0];
  EXPECT_EQ(top["verdict"], "waste");
  EXPECT_EQ(top["evidence_class"], "kernels");
  EXPECT_EQ(top["outputs_compared"], false);
  EXPECT_TRUE(top["output_rel_diff"].is_null());
  EXPECT_TRUE(j["regions"][0]["output_rel_diff"].is_null());
  EXPECT_EQ(j["runs"]["a"]["ops"], 0);
}

struct ReportCase {
  Pair pair;
  analysis::DiffReport report;
};

// The TF32 pair (one kernel-class waste finding) plus the Conv1D regions'
// noise, with power on side a only.
inline ReportCase Tf32Report(bool measured = true) {
  ReportCase c{Tf32Pair(6, 1.4, 1.3), {}};
  AddPower(c.pair.a.b.run, 300);
  analysis::DiffOptions o;
  o.rules = ShippedRules();
  c.report = analysis::Diff(c.pair.a.b.run, c.pair.b.b.run, c.pair.match, c.pair.a.Energy(measured),
                            c.pair.b.Energy(measured), o);
  return c;
}

}  // namespace magneton::fixture
