// Host-side waste (host_cpu.h): the same device work, one side's process
// keeping a CPU busy. The procfs series are shaped as the sampler writes them:
// a cumulative process CPU time, one per busy thread, and the CPU-time energy
// estimate, each reading stored when it changed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "analysis/diff/diff.h"
#include "analysis/diff/host_cpu.h"
#include "diff_fixture.h"

namespace magneton::analysis {
namespace {

using fixture::Conv1DPair;
using fixture::Pair;
using fixture::AddProcfs;

void AddSync(Run& run, const std::string& name, int n) {
  for (int i = 0; i < n; ++i) {
    ApiCall c;
    c.id = static_cast<int64_t>(run.api_calls.size());
    c.name = name;
    c.domain = "runtime";
    c.start_ns = c.end_ns = run.info.start_ns + (i + 1) * 1000;
    run.api_calls.push_back(c);
  }
}

DiffReport DiffPair(const Pair& p, DiffOptions o = {}) {
  return Diff(p.a.b.run, p.b.b.run, p.match, p.a.Energy(), p.b.Energy(), o);
}

const Finding* HostFinding(const DiffReport& r) {
  for (const auto& f : r.findings)
    if (f.evidence_class() == EvidenceClass::kHost) return &f;
  return nullptr;
}

TEST(DiffHostCpu, SpinningSideIsWasteFromCpuTimeWhileGpuEnergyIsEqual) {
  Pair p = Conv1DPair(4, 1, 1.0, 1.0);  // identical device work and energy
  AddProcfs(p.a.b.run, 0.99);           // a polls the GPU: a core busy all the time
  AddProcfs(p.b.b.run, 0.02);           // b sleeps in a blocking wait
  AddSync(p.b.b.run, "cudaEventSynchronize", 1);
  DiffOptions o;
  Rule rule;
  rule.id = "host-busy-wait";
  rule.title = "A thread polls the device";
  rule.recommendation = "Block instead of polling.";
  rule.evidence = {EvidenceClass::kHost};
  o.rules = {rule};
  DiffReport r = DiffPair(p, o);
  const Finding* f = HostFinding(r);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->verdict, Verdict::kWaste) << f->why;
  EXPECT_EQ(f->costly, 'a');
  EXPECT_EQ(f->rank, 1);  // the only waste: the regions themselves are equal
  EXPECT_TRUE(f->regions.empty());
  double wall = (p.a.b.run.info.end_ns - p.a.b.run.info.start_ns) * 1e-9;
  EXPECT_NEAR(f->a.seconds, 0.99 * wall, 1e-9);
  EXPECT_NEAR(f->b.seconds, 0.02 * wall, 1e-9);
  EXPECT_EQ(f->a.source, CostSource::kEstimate);  // no RAPL: CPU time x 5 W per core
  EXPECT_NEAR(f->a.joules - f->b.joules, 5.0 * 0.97 * wall, 1e-9);
  EXPECT_NE(f->label.find("pt_main_thread (tid 4242)"), std::string::npos) << f->label;
  ASSERT_EQ(f->evidence.size(), 1u);
  EXPECT_TRUE(f->evidence[0].all_a.empty());
  ASSERT_EQ(f->evidence[0].all_b.size(), 1u);
  EXPECT_EQ(f->evidence[0].all_b[0].name, "cudaEventSynchronize");
  ASSERT_EQ(f->rules.size(), 1u);
  EXPECT_EQ(f->rules[0].id, "host-busy-wait");
}

// The process's CPU time read every tenth of the window, the cores busy
// alternating between `low` and `high` from one reading to the next.
void AddJitteredProcfs(Run& run, double low, double high) {
  AddProcfs(run, 0);
  SensorSeries& s = run.series[run.series.size() - 3];  // cpu.time
  ASSERT_EQ(s.sensor, "cpu.time");
  double v = s.value[0];
  for (size_t i = 1; i < s.t_ns.size(); ++i) {
    v += (i % 2 ? low : high) * (s.t_ns[i] - s.t_ns[i - 1]) * 1e-9;
    s.value[i] = v;
  }
}

TEST(DiffHostCpu, ADifferenceInsideTheReadingsSpreadIsNoise) {
  // 15% more CPU time on a on average (1.15 against 1.0 cores), but a's
  // readings move between 0.6 and 1.7 cores and b's between 0.5 and 1.5:
  // nothing stands out of the spread.
  Pair p = Conv1DPair(4, 1, 1.0, 1.0);
  AddJitteredProcfs(p.a.b.run, 0.6, 1.7);
  AddJitteredProcfs(p.b.b.run, 0.5, 1.5);
  HostCpuUse a = MeasureHostCpu(p.a.b.run, 1), b = MeasureHostCpu(p.b.b.run, 1);
  ASSERT_EQ(a.cpu_s_samples.size(), 10u);
  EXPECT_GT(a.cpu_s, 1.1 * b.cpu_s);
  EXPECT_EQ(HostFinding(DiffPair(p)), nullptr);
  // The same means with steady readings stand out: a finding.
  Pair q = Conv1DPair(4, 1, 1.0, 1.0);
  AddProcfs(q.a.b.run, 1.15);
  AddProcfs(q.b.b.run, 1.0);
  EXPECT_NE(HostFinding(DiffPair(q)), nullptr);
}

// Readings too few to show their spread: no finding however far apart the
// means are (an A/A pair of 0.06 s runs differed by 26% in CPU time).
TEST(DiffHostCpu, TooFewReadingsToJudgeTheNoiseAreNoFinding) {
  auto keep_readings = [](magneton::Run& run, size_t n) {
    for (auto& series : run.series) {
      series.t_ns.resize(n);
      series.value.resize(n);
    }
  };
  Pair p = Conv1DPair(4, 1, 1.0, 1.0);
  AddProcfs(p.a.b.run, 0.99);
  AddProcfs(p.b.b.run, 0.02);
  EXPECT_NE(HostFinding(DiffPair(p)), nullptr);  // 10 intervals a side: a finding
  keep_readings(p.b.b.run, 5);                   // 4 intervals on b
  HostCpuUse b = MeasureHostCpu(p.b.b.run, 1, p.b.b.run.info.start_ns, p.b.b.run.series[0].t_ns.back());
  EXPECT_EQ(b.cpu_s_samples.size(), 4u);
  EXPECT_EQ(HostFinding(DiffPair(p)), nullptr);
}

// A whole script's set-up (imports, building the model) keeps a core busy
// before its steps; per step, only the steps' stretch counts (an A/A pair of
// whole-script recordings on the H200 was a host "waste" of 89% against 86%).
TEST(DiffHostCpu, OnlyTheStepsStretchIsPerStep) {
  Pair p = Conv1DPair(4, 1, 1.0, 1.0);
  magneton::Run& run = p.a.b.run;
  AddProcfs(run, 0.3);
  const int64_t from = run.info.start_ns, to = run.info.end_ns, setup_end = from + (to - from) / 2;
  for (auto& series : run.series)  // a core busy through the first half: 0.7 s of CPU per second more
    for (size_t i = 0; i < series.t_ns.size(); ++i)
      series.value[i] += 0.7 * (std::min(series.t_ns[i], setup_end) - from) * 1e-9 * (series.sensor == "energy.estimate" ? 5 : 1);
  const double loop_s = (to - setup_end) * 1e-9;
  HostCpuUse steps = MeasureHostCpu(run, 10, setup_end, to), whole = MeasureHostCpu(run, 10);
  EXPECT_NEAR(steps.wall_s, loop_s / 10, 1e-12);
  EXPECT_NEAR(steps.cpu_s, 0.3 * loop_s / 10, 1e-9);
  EXPECT_GT(whole.cpu_s, 1.5 * steps.cpu_s);
}

TEST(DiffHostCpu, MagnetonsOwnThreadsAreLeftOut) {
  Pair p = Conv1DPair(4, 1, 1.0, 1.0);
  AddProcfs(p.a.b.run, 0.02);
  AddProcfs(p.b.b.run, 0.02);
  // a's NVML sampler thread reads the energy counter (milliseconds a read): busy, but not the program.
  magneton::Run& a = p.a.b.run;
  SensorSeries own = a.series[1];
  own.id = static_cast<int64_t>(a.series.size());
  own.sensor = "cpu.time.thread.4250.mgt-nvml";
  for (auto& v : own.value) v *= 15;  // 0.3 of a core
  for (size_t i = 0; i < own.value.size(); ++i) {
    a.series[0].value[i] += own.value[i];
    a.series[2].value[i] += 5.0 * own.value[i];  // the sampler's estimate: the process's CPU time x 5 W
  }
  a.series.push_back(own);
  HostCpuUse use = MeasureHostCpu(a, 1);
  double wall = (a.info.end_ns - a.info.start_ns) * 1e-9;
  EXPECT_NEAR(use.own_s, 0.98 * 0.02 * 15 * wall, 1e-9);
  EXPECT_NEAR(use.cpu_s, 0.02 * wall, 1e-9);
  EXPECT_NEAR(use.estimate_j, 5.0 * use.cpu_s, 1e-9);  // the program's CPU energy, not the recorder's
  EXPECT_EQ(use.busiest_thread, "pt_main_thread (tid 4242)");
  EXPECT_EQ(HostFinding(DiffPair(p)), nullptr);  // without leaving it out: 16x b's CPU time
}

TEST(DiffHostCpu, SmallOrBelowThresholdDifferencesMakeNoFinding) {
  Pair p = Conv1DPair(4, 1, 1.0, 1.0);
  AddProcfs(p.a.b.run, 0.06);  // 3x the CPU time, but 0.04 of a core: bookkeeping
  AddProcfs(p.b.b.run, 0.02);
  EXPECT_EQ(HostFinding(DiffPair(p)), nullptr);
  Pair q = Conv1DPair(4, 1, 1.0, 1.0);
  AddProcfs(q.a.b.run, 1.05);  // 5% more than b: under the 10% threshold
  AddProcfs(q.b.b.run, 1.00);
  EXPECT_EQ(HostFinding(DiffPair(q)), nullptr);
}

TEST(DiffHostCpu, SlowerKernelsKeepingTheHostWaitingAreNotHostWaste) {
  // b's kernels take twice as long (TF32 off, say), and its thread spins on them
  // under CUDA's default wait: its CPU time follows the device time.
  Pair p = Conv1DPair(4, 1, 2.0, 2.0);
  AddProcfs(p.a.b.run, 0.40);
  AddProcfs(p.b.b.run, 0.95);
  EXPECT_GT(MeasureHostCpu(p.b.b.run, 1).device_s, 1.5 * MeasureHostCpu(p.a.b.run, 1).device_s);
  EXPECT_EQ(HostFinding(DiffPair(p)), nullptr);
}

TEST(DiffHostCpu, NeedsCpuTimeOnBothSidesAndAgreeingOutputs) {
  Pair p = Conv1DPair(4, 1, 1.0, 1.0);
  AddProcfs(p.a.b.run, 0.99);  // b has no procfs series
  EXPECT_EQ(HostFinding(DiffPair(p)), nullptr);
  Pair q = Conv1DPair(4, 1, 1.0, 1.0);
  AddProcfs(q.a.b.run, 0.99);
  AddProcfs(q.b.b.run, 0.02);
  for (auto& region : q.match.regions) region.output_rel_diff = 0.5;  // not the same work
  EXPECT_EQ(HostFinding(DiffPair(q)), nullptr);
}

TEST(DiffHostCpu, SpinningThatBuysSpeedIsATradeOff) {
  Pair p = Conv1DPair(4, 1, 1.0, 1.0);
  AddProcfs(p.a.b.run, 0.99);
  AddProcfs(p.b.b.run, 0.02);
  p.b.b.run.info.end_ns += (p.b.b.run.info.end_ns - p.b.b.run.info.start_ns) / 10;  // b 10% slower
  DiffReport r = DiffPair(p);
  const Finding* f = HostFinding(r);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->verdict, Verdict::kTradeOff) << f->why;
  EXPECT_EQ(f->costly, 'a');
}

TEST(DiffHostCpu, RaplEnergyOnBothSidesIsUsedInsteadOfTheEstimate) {
  magneton::Run run;
  run.info.start_ns = 0;
  run.info.end_ns = 2'000'000'000;
  AddProcfs(run, 0.5);
  run.devices.push_back({1, "cpu", "package 0", "", 0, 0});
  run.series.push_back({9, 1, "energy.total", "J", "rapl", {0, 1'000'000'000, 2'000'000'000}, {100, 140, 180}});
  HostCpuUse use = MeasureHostCpu(run, 2);
  EXPECT_NEAR(use.rapl_j, 40.0, 1e-6);  // 80 J over the window, 2 repetitions
  EXPECT_NEAR(use.cpu_s, 0.5, 1e-9);
  EXPECT_NEAR(use.wall_s, 1.0, 1e-9);
  EXPECT_NEAR(use.estimate_j, 2.5, 1e-9);  // 1 s of CPU x 5 W, 2 repetitions
  magneton::Run estimate_only = run;
  estimate_only.series.pop_back();  // no package energy: only the estimate
  EXPECT_TRUE(std::isnan(MeasureHostCpu(estimate_only, 2).rapl_j));
}

}  // namespace
}  // namespace magneton::analysis
