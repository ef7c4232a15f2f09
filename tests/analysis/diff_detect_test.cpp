// Detection: costs per region, grouping, verdicts and ranking (docs/diff.md).
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/diff/diff.h"
#include "analysis/diff/regression.h"
#include "analysis/diff/verdict.h"
#include "diff_fixture.h"

namespace magneton::analysis {
namespace {

using fixture::Conv1DPair;
using fixture::Pair;
using fixture::Tf32Pair;

DiffReport DiffPair(const Pair& p, DiffOptions o = {}, bool measured = true) {
  return Diff(p.a.b.run, p.b.b.run, p.match, p.a.Energy(measured), p.b.Energy(measured), o);
}

const Finding* FirstNonNoise(const DiffReport& r) {
  for (const auto& f : r.findings)
    if (f.verdict != Verdict::kNoise) return &f;
  return nullptr;
}

// A replay row for the first op named op_name (whose first input has `shape`, when given).
void AddReplay(Run& run, const std::string& op_name, double joules, double seconds, const std::string& status = "ok",
               const std::vector<int64_t>& shape = {}, double idle_watts = 0) {
  for (const auto& op : run.ops)
    if (op.name == op_name && (shape.empty() || run.tensors[op.inputs[0]].shape == shape)) {
      ReplayMeasurement m;
      m.id = static_cast<int64_t>(run.replays.size());
      m.op = op.id;
      m.key = op_name;
      m.calls = 200;
      m.repeats = 3;
      m.seconds_per_call = seconds;
      m.joules_per_call = joules;
      m.idle_watts = idle_watts;
      m.status = status;
      run.replays.push_back(m);
      return;
    }
  ADD_FAILURE() << "no op " << op_name;
}

TEST(DiffDetect, RepeatedRegionsOfOneCallSiteBecomeOneWasteFinding) {
  // 12 layers x 2 iterations of Conv1D; b spends 20% more energy in the same time.
  Pair p = Conv1DPair(12, 2, 1.20, 1.0);
  DiffReport r = DiffPair(p);
  ASSERT_EQ(r.findings.size(), 1u);
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.verdict, Verdict::kWaste) << f.why;
  EXPECT_EQ(f.rank, 1);
  EXPECT_EQ(f.costly, 'b');
  EXPECT_EQ(f.regions.size(), 24u);
  EXPECT_NEAR(f.cost_delta_pct, 20.0, 0.01);
  EXPECT_EQ(f.a.source, CostSource::kAttributed);
  // 24 regions x 0.5 J x 20% = 2.4 J over 2 iterations.
  EXPECT_NEAR(f.saved_per_iteration, 1.2, 1e-9);
  EXPECT_NEAR(f.saved_pct_of_run, 2.4 / (24 * 0.6 + 5.0) * 100, 1e-6);
  EXPECT_EQ(r.cost_unit, "J");
  EXPECT_TRUE(r.energy_measured);
  EXPECT_EQ(r.waste_count(), 1);
  EXPECT_NEAR(r.matched_share_a, 24 * 0.5 / (24 * 0.5 + 5.0), 1e-9);
  EXPECT_NE(f.label.find("aten::addmm"), std::string::npos) << f.label;
  EXPECT_NE(f.label.find("aten::mm + aten::add"), std::string::npos) << f.label;
  EXPECT_NE(f.label.find("gpt2_blocks.py:41"), std::string::npos) << f.label;  // the costly side's line
  EXPECT_EQ(r.regions.size(), 24u);
  EXPECT_EQ(r.regions[0].finding, 0);
}

TEST(DiffDetect, ThresholdDecidesBetweenWasteAndNoise) {
  Pair p = Conv1DPair(4, 3, 1.07, 1.0);
  EXPECT_EQ(DiffPair(p).findings[0].verdict, Verdict::kNoise);  // 7% < 10%
  DiffOptions o;
  o.threshold = 0.05;
  EXPECT_EQ(DiffPair(p, o).findings[0].verdict, Verdict::kWaste);
  EXPECT_NE(DiffPair(p).findings[0].why.find("under the 10% threshold"), std::string::npos);
}

TEST(DiffDetect, FasterCostlierSideIsATradeOff) {
  // b spends 20% more energy but finishes 10% sooner: paying energy for speed.
  Pair p = Conv1DPair(4, 2, 1.20, 0.90);
  DiffReport r = DiffPair(p);
  const Finding* f = FirstNonNoise(r);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->verdict, Verdict::kTradeOff);
  EXPECT_LT(f->time_delta_pct, -1.0);
  EXPECT_NE(f->why.find("faster"), std::string::npos) << f->why;
  // ...but 0.5% faster is within the 1% allowance: still waste.
  Pair q = Conv1DPair(4, 2, 1.20, 0.995);
  EXPECT_EQ(DiffPair(q).findings[0].verdict, Verdict::kWaste);
}

TEST(DiffDetect, OutputsThatDisagreeMakeATradeOff) {
  Pair p = Conv1DPair(4, 2, 1.30, 1.0);
  p.match.regions[2].output_rel_diff = 0.04;  // one instance computes something else by 4%
  DiffReport r = DiffPair(p);
  const Finding* f = FirstNonNoise(r);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->verdict, Verdict::kTradeOff);
  EXPECT_NEAR(f->output_rel_diff, 0.04, 1e-12);
  EXPECT_NE(f->why.find("outputs differ"), std::string::npos) << f->why;
}

TEST(DiffDetect, InconsistentInstancesAreNoise) {
  // Alternating +60% / -20% per instance: the total is 20% apart, yet no
  // instance agrees with the next on which side is costlier.
  Pair p = Conv1DPair(6, 1, 1.20, 1.0);
  auto& kj = p.b.kernel_j;  // b has two kernels per region: gemm, add
  for (size_t r = 0; r < 6; ++r) {
    double scale = r % 2 == 0 ? 1.6 / 1.2 : 0.8 / 1.2;
    kj[2 * r] *= scale;
    kj[2 * r + 1] *= scale;
  }
  DiffReport r = DiffPair(p);
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.verdict, Verdict::kNoise);
  EXPECT_NE(f.why.find("not consistent"), std::string::npos) << f.why;
  EXPECT_GT(f.noise_pct, 30);
}

// A region the lean side does for free (its ops launch nothing: a view against
// a copy) has no ratio, but its instances still say whether the extra cost is real.
Finding FreeOnB(std::vector<double> a_instances) {
  Finding f;
  f.costly = 'a';
  f.a.source = f.b.source = CostSource::kAttributed;
  f.a.joules = 0;
  for (double x : a_instances) f.a.joules += x / static_cast<double>(a_instances.size());
  f.a.seconds = 1e-3;
  f.b.joules = 0;
  f.b.seconds = 0;
  f.a.instances = std::move(a_instances);
  f.b.instances.assign(f.a.instances.size(), 0.0);
  return f;
}

TEST(DiffDetect, ARegionTheLeanSideDoesForFreeIsStillTestedForConsistency) {
  Finding steady = FreeOnB({0.10, 0.11, 0.09, 0.10, 0.10, 0.12});
  Judge(steady, 1.0, DiffOptions{}, /*energy=*/true);
  EXPECT_EQ(steady.verdict, Verdict::kWaste) << steady.why;
  EXPECT_EQ(steady.why.find("inf"), std::string::npos) << steady.why;
  EXPECT_NE(steady.why.find("where b costs nothing measurable"), std::string::npos) << steady.why;
  EXPECT_LT(steady.noise_pct, 20);
  // The extra cost shows in one repetition only: not consistent, so noise.
  Finding once = FreeOnB({0.6, 0.0, 0.0, 0.0, 0.0, 0.0});
  Judge(once, 1.0, DiffOptions{}, /*energy=*/true);
  EXPECT_EQ(once.verdict, Verdict::kNoise) << once.why;
  EXPECT_NE(once.why.find("not consistent over 6 instances"), std::string::npos) << once.why;
}

TEST(DiffDetect, AGroupOfSeveralRegionsHasOneInstancePerRegion) {
  // The first region's repetitions (a measured pass) would pair up across the
  // sides, and swamp the other regions in the consistency test.
  SideCost total, one;
  one.joules = 1.0;
  one.instances = {0.9, 1.0, 1.1};  // three repetitions of the first region
  AddInstance(total, one, 0);
  EXPECT_EQ(total.instances, (std::vector<double>{0.9, 1.0, 1.1}));  // one region: its repetitions
  SideCost second;
  second.joules = 4.0;
  second.instances = {4.0, 4.0};
  AddInstance(total, second, 1);
  EXPECT_EQ(total.instances, (std::vector<double>{1.0, 4.0}));
  EXPECT_DOUBLE_EQ(total.joules, 5.0);
}

TEST(DiffDetect, TinyGroupsAreNoise) {
  Pair p = Conv1DPair(2, 1, 1.50, 1.0);
  DiffOptions o;
  o.min_share = 0.5;  // the regions are ~15% of the run
  DiffReport r = DiffPair(p, o);
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.verdict, Verdict::kNoise);
  EXPECT_NE(f.why.find("too small"), std::string::npos) << f.why;
}

TEST(DiffDetect, WithoutEnergyTimeStandsInAndTheReportSaysSo) {
  Pair p = Conv1DPair(4, 2, 1.0, 1.25);  // b 25% slower; no energy series anywhere
  DiffReport r = DiffPair(p, {}, /*measured=*/false);
  EXPECT_FALSE(r.energy_measured);
  EXPECT_EQ(r.cost_unit, "s");
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("energy unmeasured"), std::string::npos);
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.verdict, Verdict::kWaste) << f.why;
  EXPECT_EQ(f.a.source, CostSource::kTime);
  EXPECT_TRUE(std::isnan(f.a.joules));
  EXPECT_NEAR(f.cost_delta_pct, 25, 0.01);
  EXPECT_NE(f.why.find("energy unmeasured"), std::string::npos);
  EXPECT_TRUE(std::isnan(r.a.joules));
}

TEST(DiffDetect, OneUnmeasuredSideComparesTimeOnBoth) {
  Pair p = Conv1DPair(4, 2, 1.20, 1.0);
  DiffReport r = Diff(p.a.b.run, p.b.b.run, p.match, p.a.Energy(true), p.b.Energy(false), {});
  EXPECT_FALSE(r.energy_measured);
  EXPECT_NE(r.notes[0].find("measured in run a only"), std::string::npos) << r.notes[0];
  EXPECT_EQ(r.findings[0].verdict, Verdict::kNoise);  // same time
}

// A window of 2 NVML readings (~0.2 s) cannot split energy between regions:
// the 20% energy difference at equal time is not reported as waste.
TEST(DiffDetect, EnergyFromTooFewSensorReadingsComparesByTime) {
  Pair p = Conv1DPair(4, 2, 1.20, 1.0);
  energy::Attribution short_b = p.b.Energy(true);
  short_b.devices[0].sensor_updates = 2;
  DiffReport r = Diff(p.a.b.run, p.b.b.run, p.match, p.a.Energy(true), short_b, {});
  EXPECT_FALSE(r.energy_measured);
  EXPECT_EQ(r.cost_unit, "s");
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("run b: its energy rests on 2 sensor readings"), std::string::npos) << r.notes[0];
  EXPECT_EQ(r.findings[0].verdict, Verdict::kNoise);
  // Enough readings: the same pair is waste in energy.
  short_b.devices[0].sensor_updates = 5;
  EXPECT_EQ(Diff(p.a.b.run, p.b.b.run, p.match, p.a.Energy(true), short_b, {}).findings[0].verdict,
            Verdict::kWaste);
}

TEST(DiffDetect, ReplayMeasurementsReplaceAttributedEnergy) {
  Pair p = Conv1DPair(4, 2, 1.0, 1.0);  // attribution sees no difference
  // A replay of a's addmm says it costs 0.8 J per call; b's mm and add 0.3 + 0.1.
  AddReplay(p.a.b.run, "aten::addmm", 0.8, 1e-3);
  AddReplay(p.b.b.run, "aten::mm", 0.3, 0.8e-3);
  AddReplay(p.b.b.run, "aten::add", 0.1, 0.2e-3);
  DiffReport r = DiffPair(p);
  EXPECT_TRUE(r.a.has_replays);
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.costly, 'a');
  EXPECT_EQ(f.verdict, Verdict::kWaste) << f.why;
  EXPECT_EQ(f.a.source, CostSource::kMixed);  // views are costed by attribution
  EXPECT_NEAR(f.a.joules, 8 * 0.8, 1e-9);
  EXPECT_NEAR(f.b.joules, 8 * 0.4, 1e-9);
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.find("replay") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(DiffDetect, HostReplaysOfOpsWithNoDeviceWorkAreUsed) {
  Pair p = Conv1DPair(4, 2, 1.0, 1.0);
  // a's addmm replayed (0.8 J per call) and its views, which launch no device
  // work: status "host", idle power x their host time. Rows that did not
  // converge ("noisy") are not used.
  magneton::Run& a = p.a.b.run;
  AddReplay(a, "aten::addmm", 0.8, 1e-3, "ok", {2304}, 100);
  AddReplay(a, "aten::view", 100 * 2e-6, 2e-6, "host", {8, 1024, 768}, 100);
  AddReplay(a, "aten::view", 0.5, 2e-6, "noisy", {8192, 2304}, 100);
  AddReplay(p.b.b.run, "aten::mm", 0.3, 0.8e-3, "ok", {8192, 768}, 100);
  AddReplay(p.b.b.run, "aten::add", 0.1, 0.2e-3, "ok", {8192, 2304}, 100);
  DiffReport r = DiffPair(p);
  ASSERT_FALSE(r.findings.empty());
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.a.source, CostSource::kMixed);  // the second view by attribution: its replay is noisy
  // 8 regions: addmm and the first view from replay, plus the second view's attributed share.
  EXPECT_GT(f.a.joules, 8 * (0.8 + 2e-4) - 1e-9);
  EXPECT_LT(f.a.joules, 8 * (0.8 + 0.5));
  AddReplay(a, "aten::view", 100 * 3e-6, 3e-6, "host", {8192, 2304}, 100);
  a.replays.erase(a.replays.begin() + 2);  // the noisy one
  DiffReport all = DiffPair(p);
  EXPECT_EQ(all.findings[0].a.source, CostSource::kReplay);  // every op of a's regions replayed
  EXPECT_NEAR(all.findings[0].a.joules, 8 * (0.8 + 2e-4 + 3e-4), 1e-9);
}

TEST(DiffDetect, TimeOnlyReplaysCostByTimeAndNeverMixWithEnergy) {
  Pair p = Conv1DPair(4, 2, 1.20, 1.0);
  DiffReport base = DiffPair(p);
  // Replays made without an energy sensor (joules_per_call < 0), of every op.
  for (auto* run : {&p.a.b.run, &p.b.b.run})
    for (const auto& op : run->ops) {
      ReplayMeasurement m;
      m.id = static_cast<int64_t>(run->replays.size());
      m.op = op.id;
      m.key = op.name;
      m.calls = 100;
      m.repeats = 3;
      m.seconds_per_call = 1e-3;
      m.joules_per_call = -1;
      m.status = "ok";
      run->replays.push_back(m);
    }
  // With measured energy they are not used: the costs are the attributed ones.
  DiffReport r = DiffPair(p);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].a.source, base.findings[0].a.source);
  EXPECT_NE(r.findings[0].a.source, CostSource::kReplay);
  EXPECT_NEAR(r.findings[0].a.joules, base.findings[0].a.joules, 1e-12);
  // Without energy they are the cost (time), and the source says replay.
  DiffReport t = Diff(p.a.b.run, p.b.b.run, p.match, p.a.Energy(false), p.b.Energy(false), {});
  ASSERT_FALSE(t.findings.empty());
  EXPECT_EQ(t.findings[0].a.source, CostSource::kReplay);
  EXPECT_TRUE(std::isnan(t.findings[0].a.joules));
  EXPECT_GT(t.findings[0].a.seconds, 0);
  for (double x : t.findings[0].a.instances) EXPECT_FALSE(std::isnan(x));
}

TEST(DiffDetect, IterationsOptionOverridesTheRunInfo) {
  Pair p = Conv1DPair(4, 2, 1.20, 1.0);
  DiffOptions o;
  o.iterations = 8;
  DiffReport r = DiffPair(p, o);
  const Finding& f = r.findings[0];
  EXPECT_NEAR(f.saved_per_iteration, 8 * 0.5 * 0.2 / 8, 1e-9);
}

TEST(DiffDetect, NoRegionsSaysHowToGetThem) {
  Pair p = Conv1DPair(2, 1, 1.2, 1.0);
  p.match = {};
  DiffReport r = DiffPair(p);
  EXPECT_TRUE(r.findings.empty());
  bool hint = false;
  for (const auto& n : r.notes) hint |= n.find("fingerprints=True") != std::string::npos;
  EXPECT_TRUE(hint);
}

TEST(DiffDetect, FindingsRankByJoulesSaved) {
  // Regions 4..7 move to another call site (another module) and waste 3x more.
  Pair p = Conv1DPair(8, 1, 1.20, 1.0);
  for (fixture::Side* side : {&p.a, &p.b}) {
    int64_t site = side->b.Frame("python", "forward", "/work/model/mlp.py", 7);
    int64_t stack = side->PyStack({site});
    const auto& regions = p.match.regions;
    for (size_t r = 4; r < regions.size(); ++r)
      for (auto op : side == &p.a ? regions[r].ops_a : regions[r].ops_b) side->b.run.ops[op].stack = stack;
  }
  for (size_t k = 8; k < p.b.kernel_j.size(); ++k) p.b.kernel_j[k] *= 1.5;  // b: 2 kernels per region
  DiffReport r = DiffPair(p);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].rank, 1);
  EXPECT_EQ(r.findings[1].rank, 2);
  EXPECT_GT(r.findings[0].saved_per_iteration, r.findings[1].saved_per_iteration);
  EXPECT_NE(r.findings[0].label.find("mlp.py:7"), std::string::npos) << r.findings[0].label;
  EXPECT_EQ(r.findings[0].regions, (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(r.regions[0].finding, 1);  // regions point at their finding after sorting
  EXPECT_EQ(r.regions[7].finding, 0);
}

TEST(DiffDetect, ConfigDiffListsEveryDifferingKey) {
  Pair p = Tf32Pair(2, 1.3, 1.2);
  p.b.b.run.config["only.in.b"] = "1";
  DiffReport r = DiffPair(p);
  ASSERT_EQ(r.config.size(), 3u);
  EXPECT_EQ(r.config[0].key, "only.in.b");
  EXPECT_EQ(r.config[0].value_a, "<unset>");
  EXPECT_EQ(r.config[1].key, "torch.backends.cuda.matmul.allow_tf32");
  EXPECT_EQ(r.config[1].value_a, "False");
  EXPECT_EQ(r.config[1].value_b, "True");
}

// CPU-only runs (no kernels, no energy): host wall times of ops.
Pair HostOnly(Pair p, double b_slowdown) {
  for (auto* side : {&p.a, &p.b}) side->b.run.kernels.clear(), side->kernel_j.clear();
  for (auto& op : p.b.b.run.ops)
    op.end_ns = op.start_ns + static_cast<int64_t>((op.end_ns - op.start_ns) * b_slowdown);
  return p;
}

TEST(DiffDetect, SameCodeOnTheHostIsNoiseHoweverSlower) {
  Pair p = fixture::LaunchPair(6, 1.0);
  for (auto& t : p.b.b.run.tensors) t.strides = {1024, 1};  // same layouts too
  DiffOptions o;
  o.normalize_host_time = false;
  DiffReport r = DiffPair(HostOnly(p, 1.3), o, false);
  const Finding& f = r.findings.at(0);
  EXPECT_EQ(f.verdict, Verdict::kNoise);
  EXPECT_NE(f.why.find("machine noise, not the code"), std::string::npos) << f.why;
  // A differing key that the rules know to matter here: then it stays a finding.
  p.a.b.run.config["torch.num_threads"] = "16";
  p.b.b.run.config["torch.num_threads"] = "2";
  p.b.b.run.config["version.numpy"] = "2.1";  // differs, but explains nothing
  auto rules = LoadRulesDir(std::string(MAGNETON_TEST_DATA) + "/../../rules");
  ASSERT_TRUE(rules.ok());
  DiffReport unexplained = DiffPair(HostOnly(p, 1.3), o, false);
  EXPECT_EQ(unexplained.findings.at(0).verdict, Verdict::kNoise);  // no rules loaded
  o.rules = *rules;
  DiffReport r2 = DiffPair(HostOnly(p, 1.3), o, false);
  const Finding& f2 = r2.findings.at(0);
  EXPECT_EQ(f2.verdict, Verdict::kWaste) << f2.why;
  ASSERT_EQ(f2.evidence.at(0).config.size(), 1u);
  EXPECT_EQ(f2.evidence[0].config[0].key, "torch.num_threads");
  EXPECT_EQ(f2.rules.at(0).id, "cpu-threads");
}

TEST(DiffDetect, HostTimesAreNormalizedByTheRatioOfRegionsWhoseCodeCannotDiffer) {
  // b ran on a busier machine: every region, the same code on both sides, took twice as long.
  Pair same = fixture::LaunchPair(6, 1.0);
  for (auto& t : same.b.b.run.tensors) t.strides = {1024, 1};
  Pair p = HostOnly(same, 2.0);
  DiffReport r = DiffPair(p, {}, false);
  EXPECT_NEAR(r.host_time_ratio, 2.0, 0.01);
  bool noted = false;
  for (const auto& n : r.notes)
    noted |= n.find("in the 6 matched regions that run the same operators on the same layouts, called the same way, "
                    "on both sides, run b ran 2.00x as long as run a (6 of them slower)") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_NEAR(r.findings.at(0).cost_delta_pct, 0, 0.1);
  EXPECT_EQ(r.findings.at(0).verdict, Verdict::kNoise);
  DiffOptions absolute;
  absolute.normalize_host_time = false;
  DiffReport raw = DiffPair(p, absolute, false);
  EXPECT_EQ(raw.host_time_ratio, 1.0);
  EXPECT_NEAR(raw.findings.at(0).cost_delta_pct, 100, 0.1);
}

TEST(DiffDetect, AUniformSlowdownOfCodeThatDiffersIsNotNormalized) {
  // The same slowdown, but b feeds each GELU a transposed input: its code
  // differs, so the gap may be the code's, and nothing tells the machine's.
  Pair p = HostOnly(fixture::LaunchPair(6, 1.0), 2.0);
  DiffReport r = DiffPair(p, {}, false);
  EXPECT_EQ(r.host_time_ratio, 1.0);
  bool noted = false;
  for (const auto& n : r.notes)
    noted |= n.find("compared as measured (b ran 2.00x as long as a in the typical matched region): only 0 of 6") !=
             std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_NEAR(r.findings.at(0).cost_delta_pct, 100, 0.1);
  EXPECT_EQ(r.findings.at(0).verdict, Verdict::kWaste);
  EXPECT_EQ(r.findings.at(0).evidence_class(), EvidenceClass::kLaunch);
}

TEST(DiffDetect, HostTimesOfDifferentFrameworksAreNotNormalized) {
  // The same slowdown, but b is a JAX program: its host times are its own, not the machine's.
  Pair p = HostOnly(fixture::LaunchPair(6, 1.0), 2.0);
  for (auto& op : p.b.b.run.ops) op.framework = "jax";
  DiffReport r = DiffPair(p, {}, false);
  EXPECT_EQ(r.host_time_ratio, 1.0);
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.find("different frameworks") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_NEAR(r.findings.at(0).cost_delta_pct, 100, 0.1);
}

TEST(DiffCheck, RegressionGateListsWhatGotCostlier) {
  Pair p = Conv1DPair(6, 2, 1.15, 1.0);  // b (new) 15% costlier in these regions
  DiffOptions o;
  o.threshold = 0.05;
  DiffReport r = DiffPair(p, o);
  RegressionReport c = FindRegressions(r, 0.05);
  ASSERT_TRUE(c.regressed());
  // The whole run grew 0.9 J on 11 J: +8% > 5%, listed first.
  EXPECT_EQ(c.regressions[0].label, "whole run");
  EXPECT_GT(c.whole_pct, 5);
  ASSERT_EQ(c.regressions.size(), 2u);
  EXPECT_NEAR(c.regressions[1].pct, 15, 0.01);
  EXPECT_NE(c.regressions[1].finding, nullptr);

  // The other way round (new is leaner): nothing regressed.
  DiffReport back = Diff(
      p.b.b.run, p.a.b.run,
      [&] {
        MatchResult m = p.match;
        for (auto& reg : m.regions) std::swap(reg.ops_a, reg.ops_b);
        return m;
      }(),
      p.b.Energy(), p.a.Energy(), o);
  EXPECT_FALSE(FindRegressions(back, 0.05).regressed());
}

}  // namespace
TEST(DiffDetect, KernelsLinkedToNoOperatorAreNoted) {
  Pair p = Conv1DPair(4, 2, 1.0, 1.0);
  auto noted = [](const DiffReport& r, const std::string& what) {
    for (const auto& n : r.notes)
      if (n.find(what) != std::string::npos) return true;
    return false;
  };
  EXPECT_FALSE(noted(DiffPair(p), "linked to no operator"));
  ASSERT_FALSE(p.b.b.run.kernels.empty());
  for (auto& k : p.b.b.run.kernels) k.op = kNone;  // as a tracer without external correlation left them
  DiffReport r = DiffPair(p);
  EXPECT_TRUE(noted(r, "run b: " + std::to_string(p.b.b.run.kernels.size()) + " of " +
                           std::to_string(p.b.b.run.kernels.size()) + " kernels are linked to no operator"));
  EXPECT_FALSE(noted(r, "run a: " + std::to_string(p.a.b.run.kernels.size()) + " of"));
}

}  // namespace magneton::analysis
