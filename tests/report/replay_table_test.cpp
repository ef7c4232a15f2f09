// The replay table of `magneton top`: figures from Run::replays, energy
// above idle, and time-only replays (no sensor: joules_per_call < 0).
#include "report/replay_table.h"

#include <gtest/gtest.h>

namespace magneton::report {
namespace {

Run TwoReplays() {
  Run run;
  Op op;
  op.id = 0;
  op.name = "aten::addmm";
  run.ops.push_back(op);
  op.id = 1;
  op.name = "aten::gelu";
  run.ops.push_back(op);
  ReplayMeasurement a;
  a.id = 0;
  a.op = 1;
  a.key = "aten::gelu(float32[8x16])";
  a.calls = 1000;
  a.repeats = 3;
  a.seconds_per_call = 1e-4;
  a.joules_per_call = 0.05;
  a.idle_watts = 100;  // 100 W x 1e-4 s = 0.01 J of the 0.05 J is idle
  a.cv = 0.01;
  a.status = "ok";
  ReplayMeasurement b = a;
  b.id = 1;
  b.op = 0;
  b.key = "aten::addmm(float32[16],float32[8x16],float32[16x16])";
  b.joules_per_call = 0.2;
  b.status = "budget";
  run.replays = {a, b};
  return run;
}

TEST(ReplayTable, EmptyWithoutReplays) {
  EXPECT_EQ(RenderReplays(magneton::Run{}, 0), "");
  EXPECT_TRUE(ReplaysToJson(magneton::Run{}).empty());
}

TEST(ReplayTable, LargestEnergyFirstWithAboveIdle) {
  magneton::Run run = TwoReplays();
  auto j = ReplaysToJson(run);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["name"], "aten::addmm");
  EXPECT_EQ(j[0]["status"], "budget");
  EXPECT_EQ(j[1]["name"], "aten::gelu");
  EXPECT_NEAR(j[1]["above_idle_joules_per_call"].get<double>(), 0.04, 1e-12);
  EXPECT_EQ(j[1]["source"], "replay");
  std::string text = RenderReplays(run, 1);
  EXPECT_NE(text.find("figures from replay"), std::string::npos);
  EXPECT_NE(text.find("aten::addmm"), std::string::npos);
  EXPECT_EQ(text.find("aten::gelu"), std::string::npos);  // over the limit
  EXPECT_NE(text.find("1 more"), std::string::npos);
}

TEST(ReplayTable, HostRowsHaveNothingAboveIdle) {
  magneton::Run run = TwoReplays();
  // An op with no device work: idle power x its host time, status "host".
  run.replays[1].seconds_per_call = 3e-6;
  run.replays[1].joules_per_call = run.replays[1].idle_watts * run.replays[1].seconds_per_call;
  run.replays[1].status = "host";
  auto j = ReplaysToJson(run);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[1]["status"], "host");
  EXPECT_EQ(j[1]["above_idle_joules_per_call"].get<double>(), 0.0);
  EXPECT_NE(RenderReplays(run, 0).find("host"), std::string::npos);
}

TEST(ReplayTable, TimeOnlyReplaysSaySo) {
  magneton::Run run = TwoReplays();
  for (auto& m : run.replays) m.joules_per_call = -1;
  auto j = ReplaysToJson(run);
  EXPECT_TRUE(j[0]["joules_per_call"].is_null());
  EXPECT_TRUE(j[0]["above_idle_joules_per_call"].is_null());
  EXPECT_NE(RenderReplays(run, 0).find("energy unavailable"), std::string::npos);
}

}  // namespace
}  // namespace magneton::report
