// Regions whose two sides run the same operators, kernels, launch parameters
// and layouts, yet cost differently: noise with what explains the difference,
// never waste (same_work.h, docs/diff.md "Same work, other cost").
#include <gtest/gtest.h>

#include "analysis/diff/diff.h"
#include "analysis/diff/same_cause.h"
#include "analysis/diff/sync_sites.h"
#include "analysis/match/region_match.h"
#include "core/store.h"
#include "diff_fixture.h"

namespace magneton::analysis {
namespace {

using fixture::Pair;

// The GELU regions of LaunchPair with b's layouts and launches made a's:
// nothing structural differs. b's kernels take `time_ratio` times a's time
// and `energy_ratio` times its energy.
Pair SameWork(double energy_ratio, double time_ratio) {
  Pair p = fixture::LaunchPair(5, energy_ratio);
  for (auto& t : p.b.b.run.tensors) t.strides = {1024, 1};
  int64_t later = 0;  // kernels run back to back: each starts as much later as the ones before grew
  for (auto& k : p.b.b.run.kernels) {
    k.grid[0] = 1024;
    const int64_t was = k.end_ns - k.start_ns, ns = static_cast<int64_t>(was * time_ratio);
    k.start_ns += later;
    k.end_ns = k.start_ns + ns;
    later += ns - was;
  }
  return p;
}

DiffReport DiffPair(const Pair& p, energy::Attribution ea, energy::Attribution eb) {
  return Diff(p.a.b.run, p.b.b.run, p.match, ea, eb, {});
}

TEST(DiffSameWork, EnergyAttributedByDifferentMethodsIsNotWaste) {
  Pair p = SameWork(1.3, 1.0);
  energy::Attribution eb = p.b.Energy();
  eb.devices[0].method = "energy.total+activity";
  DiffReport r = DiffPair(p, p.a.Energy(), eb);
  const Finding& f = r.findings.at(0);
  EXPECT_EQ(f.verdict, Verdict::kNoise);
  EXPECT_NE(f.why.find("different methods in the two runs (a: energy.total; b: energy.total+activity)"),
            std::string::npos)
      << f.why;
  EXPECT_EQ(r.waste_count(), 0);
}

TEST(DiffSameWork, OverlapWithOtherDeviceWorkExplainsTheDifference) {
  Pair p = SameWork(1.3, 1.0);
  // On b a host-to-device copy on another stream runs beside every GELU kernel.
  for (const auto& k : std::vector<Kernel>(p.b.b.run.kernels)) {
    Transfer t;
    t.id = static_cast<int64_t>(p.b.b.run.transfers.size());
    t.kind = "HtoD";
    t.bytes = 1 << 20;
    t.stream = 9;
    t.start_ns = k.start_ns + (k.end_ns - k.start_ns) / 4;
    t.end_ns = k.end_ns;
    p.b.b.run.transfers.push_back(t);
  }
  DiffReport r = DiffPair(p, p.a.Energy(), p.b.Energy());
  const Finding& f = r.findings.at(0);
  EXPECT_EQ(f.verdict, Verdict::kNoise);
  EXPECT_NE(f.why.find("beside other work for 0% of its time on a and 75% on b (mostly HtoD)"), std::string::npos)
      << f.why;
}

TEST(DiffSameWork, SlowerKernelsAreTheDeviceNotTheCodeAndLowerClocksAreNamed) {
  Pair p = SameWork(1.3, 1.3);  // b: the same kernels 30% longer, 30% more energy
  DiffReport r = DiffPair(p, p.a.Energy(), p.b.Energy());
  const Finding& f = r.findings.at(0);
  EXPECT_EQ(f.verdict, Verdict::kNoise);
  EXPECT_NE(f.why.find("run 30% longer on b"), std::string::npos) << f.why;
  EXPECT_NE(f.why.find("the device ran slower"), std::string::npos) << f.why;

  // With NVML's SM clock recorded on both sides, the lower clock is named.
  for (auto [run, mhz] : {std::pair{&p.a.b.run, 1980.0}, std::pair{&p.b.b.run, 1410.0}}) {
    SensorSeries clock;
    clock.device = 0;
    clock.sensor = "clock.sm";
    clock.unit = "MHz";
    clock.t_ns = {run->info.start_ns};
    clock.value = {mhz};
    run->series.push_back(clock);
  }
  DiffReport throttled = DiffPair(p, p.a.Energy(), p.b.Energy());
  EXPECT_NE(throttled.findings.at(0).why.find("mean SM clock of 1410 MHz against 1980 MHz on a"), std::string::npos)
      << throttled.findings.at(0).why;
}

// A cudaStreamSynchronize at `at` with its CUPTI synchronization record; the
// host blocks in it for `blocked_ns` (waiting for the device to drain).
void AddSync(magneton::Run& run, int64_t correlation, int64_t at, int64_t blocked_ns = 0) {
  run.api_calls.push_back({static_cast<int64_t>(run.api_calls.size()), "cudaStreamSynchronize_v3020", "runtime", 77,
                           at, at + blocked_ns + 1000, correlation, kNone});
  Transfer t;
  t.id = static_cast<int64_t>(run.transfers.size());
  t.kind = "sync";
  t.start_ns = at;
  t.end_ns = at + blocked_ns;
  t.correlation = correlation;
  run.transfers.push_back(t);
}

// Measured passes of a SameWork pair; on b the host launches each kernel
// 150 us late. With `syncs`, b waits for the device before each launch
// (cudaStreamSynchronize), as its recording pass does inside each operator
// (or as `record_sync` places the recording pass's call before kernel k); the
// host blocks in each measured call for `blocked_ns`.
Result<DiffReport> DiffLateLaunches(Pair& p, bool syncs,
                                    std::function<void(magneton::Run&, const Kernel&)> record_sync = nullptr,
                                    int64_t blocked_ns = 120'000) {
  auto one = [](const std::string&) { return 1.0; };
  magneton::Run measured_a = fixture::TimelinePass(p.a.b.run, 4, one, 0);
  magneton::Run measured_b = fixture::TimelinePass(p.b.b.run, 4, one, 0);
  int64_t shift = 0;
  for (auto& k : measured_b.kernels) {
    shift += 150'000;
    k.start_ns += shift, k.end_ns += shift;
  }
  for (size_t i = 0; i < measured_b.api_calls.size(); ++i)
    measured_b.api_calls[i].start_ns = measured_b.kernels[i].start_ns - 5000,
    measured_b.api_calls[i].end_ns = measured_b.kernels[i].start_ns - 4000;
  measured_b.info.end_ns += shift;
  // A synchronize just before each launch: correlation ids follow call order.
  if (syncs)
    for (magneton::Run* run : {&measured_b, &p.b.b.run}) {
      for (auto& c : run->api_calls) c.correlation *= 10;
      for (size_t i = 0; i < run->kernels.size(); ++i) {
        Kernel& k = run->kernels[i];
        k.correlation *= 10;
        if (run == &measured_b)
          AddSync(*run, k.correlation - 5, k.start_ns - 20'000 - blocked_ns, blocked_ns);
        else if (record_sync)
          record_sync(*run, k);
        else  // in the recording pass, inside the op that launches the kernel
          AddSync(*run, k.correlation - 5, run->ops[k.op].start_ns + 1);
      }
    }
  energy::Attribution ea = p.a.Energy(), eb = p.b.Energy();
  energy::Attribution ma = energy::Attribute(measured_a), mb = energy::Attribute(measured_b);
  return Diff(DiffInput{&p.a.b.run, &ea, &measured_a, &ma}, DiffInput{&p.b.b.run, &eb, &measured_b, &mb}, p.match,
              {});
}

// A recorded training step (a GELU MLP with AdamW, tests/data/torch) given one
// kernel per leaf operator, diffed against itself with measured passes of 6
// repetitions where b's host launches late (`late_ns`) the kernels of the
// operators `late` picks. `busy`: both processes' CPU time, in cores over
// their windows (0: not recorded), so a slower b spends more per iteration.
Result<DiffReport> SelfDiffWithLateLaunches(const std::function<bool(const std::string&)>& late, int64_t late_ns,
                                            double busy = 0, bool sync_each_step = false, int64_t sync_blocked_ns = 0) {
  static const magneton::Run run = [] {
    auto r = LoadRun(std::string(MAGNETON_TEST_DATA) + "/torch/train_gelu_composite.mgt");
    if (!r.ok()) return magneton::Run{};
    std::vector<char> parent(r->ops.size(), 0);
    for (const auto& op : r->ops)
      if (op.parent >= 0) parent[op.parent] = 1;
    for (const auto& op : r->ops) {
      if (parent[op.id]) continue;
      magneton::Kernel k;
      k.id = static_cast<int64_t>(r->kernels.size());
      k.name = op.name + "_kernel";
      k.op = op.id;
      k.start_ns = op.start_ns;
      k.end_ns = op.start_ns + 20'000;
      k.grid[0] = k.block[0] = 128;
      k.correlation = k.id + 1;
      r->kernels.push_back(k);
    }
    return std::move(*r);
  }();
  static const MatchResult match = MatchRuns(run, run);
  auto one = [](const std::string&) { return 1.0; };
  magneton::Run ma = fixture::TimelinePass(run, 6, one, 50'000), mb = fixture::TimelinePass(run, 6, one, 50'000);
  std::vector<const magneton::Kernel*> step;  // the recorded step's kernels, as TimelinePass repeats them
  for (const auto& k : run.kernels)
    if (k.op != kRecorderWork) step.push_back(&k);
  int64_t shift = 0;
  for (size_t i = 0; i < mb.kernels.size(); ++i) {
    // With a sync per step, the step's first tenth launches on time after it: the
    // host's late work is spread over the rest of the step.
    const bool after_sync = sync_each_step && i % step.size() < step.size() / 10;
    if (!after_sync && late(run.ops[step[i % step.size()]->op].name)) shift += late_ns;
    mb.kernels[i].start_ns += shift, mb.kernels[i].end_ns += shift;
    mb.api_calls[i].start_ns = mb.kernels[i].start_ns - 5000, mb.api_calls[i].end_ns = mb.kernels[i].start_ns - 4000;
  }
  mb.info.end_ns += shift;
  // With `sync_each_step`: b waits for the device before each step but the first (a `.item()`).
  // Correlation ids follow call order: room for one between two launches.
  if (sync_each_step) {
    for (auto& c : mb.api_calls) c.correlation *= 10;
    for (auto& k : mb.kernels) k.correlation *= 10;
    for (size_t i = step.size(); i < mb.kernels.size(); i += step.size())
      AddSync(mb, mb.kernels[i].correlation - 5, mb.kernels[i].start_ns - sync_blocked_ns, sync_blocked_ns);
  }
  if (busy > 0) fixture::AddProcfs(ma, busy), fixture::AddProcfs(mb, busy);
  energy::Attribution e = energy::Attribute(run), ea = energy::Attribute(ma), eb = energy::Attribute(mb);
  return Diff(DiffInput{&run, &e, &ma, &ea}, DiffInput{&run, &e, &mb, &eb}, match, {});
}

int LaunchWaitNotes(const DiffReport& r) {
  int n = 0;
  for (const auto& note : r.notes) n += note.rfind("launch waits:", 0) == 0;
  return n;
}

TEST(DiffSameWork, TheDeviceWaitingLongerStaysAFinding) {
  // The same kernels, but on b the host launches each GELU's 100 us late,
  // and the rest on time: a launch-bound stretch there is structural (class
  // timeline), not noise.
  auto r = SelfDiffWithLateLaunches([](const std::string& op) { return op == "aten::tanh"; }, 100'000);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(LaunchWaitNotes(*r), 0);
  ASSERT_GT(r->waste_count(), 0);
  const Finding& f = r->findings.at(0);
  EXPECT_EQ(f.verdict, Verdict::kWaste) << f.why;
  EXPECT_EQ(f.costly, 'b');
  EXPECT_NE(f.label.find("aten::tanh"), std::string::npos) << f.label;
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kTimeline);
  EXPECT_EQ(f.evidence[0].summary.find("synchronizing calls"), std::string::npos) << f.evidence[0].summary;
  ASSERT_EQ(f.evidence[0].params.size(), 1u);  // the cause, for rules/timeline.json
  EXPECT_EQ(f.evidence[0].params[0].parameter, "cause");
  EXPECT_EQ(f.evidence[0].params[0].value_b, kCauseLateLaunch);
  EXPECT_EQ(f.evidence[0].params[0].value_a, "-");
}

TEST(DiffSameWork, ASmallLateLaunchWithoutASyncIsTheHostsJitter) {
  // b's host launches one operator's kernels a little late in every
  // repetition, with no synchronization of its own: seen in an A/A pair of a
  // ResNet training step (H100, 2026-12-06), 0.1-1% of the step in a few small
  // regions where one process's host ran a little slower. Consistent, but
  // under 1% of the step: jitter, not a cause.
  auto small = SelfDiffWithLateLaunches([](const std::string& op) { return op == "aten::tanh"; }, 5'000);
  ASSERT_TRUE(small.ok()) << small.error().message;
  for (const auto& f : small->findings)
    EXPECT_FALSE(f.verdict == Verdict::kWaste && f.evidence_class() == EvidenceClass::kTimeline)
        << f.label << ": " << f.why;
}

int TimelineWaste(const DiffReport& r) {
  int n = 0;
  for (const auto& f : r.findings) n += f.verdict == Verdict::kWaste && f.evidence_class() == EvidenceClass::kTimeline;
  return n;
}

TEST(DiffSameWork, TheWaitsOfOneCauseAtSeveralPlacesAreOneFinding) {
  // b's host launches late at two places of the step (a launch-bound step
  // waits at many): one finding for the step, holding both places, costed as
  // their sum, the regions pointing at it.
  auto r = SelfDiffWithLateLaunches(
      [](const std::string& op) { return op == "aten::tanh" || op == "aten::_log_softmax"; }, 100'000);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(TimelineWaste(*r), 2);
  double saved = 0;
  size_t regions = 0;
  for (const auto& f : r->findings)
    if (f.verdict == Verdict::kWaste) saved += f.saved_per_iteration, regions += f.regions.size();
  FoldSameCause(*r);
  ASSERT_EQ(TimelineWaste(*r), 1);
  const Finding& f = r->findings.at(0);
  EXPECT_EQ(f.rank, 1);
  EXPECT_EQ(f.regions.size(), regions);
  EXPECT_NEAR(f.saved_per_iteration, saved, 1e-12);
  EXPECT_EQ(f.label.rfind("the device waiting at 2 places in the step", 0), 0u) << f.label;
  EXPECT_NE(f.evidence[0].summary.find("the device waits for it"), std::string::npos) << f.evidence[0].summary;
  for (const auto& pair : r->regions) {
    if (std::find(f.regions.begin(), f.regions.end(), pair.region) != f.regions.end()) {
      EXPECT_EQ(pair.finding, 0);
    }
  }
  // The timelines' items point at the findings that are left.
  for (const auto* t : {&r->timelines.a, &r->timelines.b})
    for (const auto& it : t->items) EXPECT_LT(it.finding, static_cast<int>(r->findings.size())) << it.name;
}

TEST(DiffSameWork, TheDeviceIdlingThroughTheStepAfterASyncIsOneRunLevelFinding) {
  // b waits for the device once per step (a loss read with `.item()`), and
  // its host's next work then no longer overlaps the device's: every launch
  // a little late, spread over the step, no region's finding alone. The
  // iteration's idle is the finding, named by the call b makes more.
  // 1 us per launch: under the 10% threshold in every region (its kernels run
  // 20 us each), a few percent of the iteration in all.
  auto all = [](const std::string&) { return true; };
  auto r = SelfDiffWithLateLaunches(all, 1'000, 0, true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto idle = std::find_if(r->findings.begin(), r->findings.end(), [](const Finding& f) {
    return f.label.rfind("the device idling per iteration after cudaStreamSynchronize", 0) == 0;
  });
  ASSERT_NE(idle, r->findings.end()) << r->findings.at(0).label << ": " << r->findings.at(0).why;
  EXPECT_EQ(idle->verdict, Verdict::kWaste) << idle->why;
  EXPECT_EQ(idle->rank, 1);
  EXPECT_EQ(idle->costly, 'b');
  EXPECT_EQ(idle->evidence_class(), EvidenceClass::kTimeline);
  EXPECT_TRUE(idle->regions.empty());
  EXPECT_GT(idle->b.seconds, idle->a.seconds);
  EXPECT_GT(idle->saved_per_iteration, 0);
  EXPECT_NE(idle->evidence[0].summary.find("the same device work"), std::string::npos) << idle->evidence[0].summary;
  const auto& params = idle->evidence[0].params;  // for rules/timeline.json
  ASSERT_FALSE(params.empty());
  EXPECT_EQ(params.back().parameter, "cause");
  EXPECT_EQ(params.back().value_b, kCauseSyncs);
  // The same late launches without the extra call: a host slower throughout, no finding.
  auto slower = SelfDiffWithLateLaunches(all, 1'000);
  ASSERT_TRUE(slower.ok()) << slower.error().message;
  EXPECT_EQ(slower->waste_count(), 0) << slower->findings.at(0).label;
}

// b reads a value back at the start of each step and the host blocks there
// for 2 ms (it was ahead of the device), then launches each GELU's tanh and
// the loss's log-softmax 100 us late: without the call the host would have
// launched all of them 2 ms earlier, so those waits are the call's, named as
// such. The same late launches after a call that returned at once are the
// host's.
TEST(DiffSameWork, WaitsAfterACallTheHostBlockedInAreThatCallsUpToItsTime) {
  // The written-out GELU's tanh, and the loss's log-softmax: two places in the step.
  auto gelu = [](const std::string& name) { return name == "aten::tanh" || name == "aten::_log_softmax"; };
  auto after = SelfDiffWithLateLaunches(gelu, 100'000, 0, true, 2'000'000);
  ASSERT_TRUE(after.ok()) << after.error().message;
  const Finding& f = after->findings.at(0);
  ASSERT_EQ(f.verdict, Verdict::kWaste) << f.label << ": " << f.why;
  EXPECT_EQ(f.costly, 'b');
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kTimeline);
  const auto& params = f.evidence[0].params;
  ASSERT_FALSE(params.empty());
  EXPECT_EQ(params.back().value_b, kCauseSyncs);
  EXPECT_TRUE(std::any_of(params.begin(), params.end(), [](const ParamDelta& p) {
    return IsStillWaitingAfter(p.parameter) && p.parameter.rfind("cudaStreamSynchronize", 0) == 0;
  })) << f.evidence[0].summary;
  // The two places are one cause: folded, they are one finding named by the call.
  ASSERT_EQ(after->waste_count(), 2);
  FoldSameCause(*after);
  ASSERT_EQ(after->waste_count(), 1);
  EXPECT_EQ(after->findings.at(0).label.rfind("the device waiting after cudaStreamSynchronize", 0), 0u)
      << after->findings.at(0).label;

  auto at_once = SelfDiffWithLateLaunches(gelu, 100'000, 0, true, 1'000);
  ASSERT_TRUE(at_once.ok()) << at_once.error().message;
  const Finding& g = at_once->findings.at(0);
  ASSERT_EQ(g.evidence_class(), EvidenceClass::kTimeline) << g.label << ": " << g.why;
  EXPECT_EQ(g.evidence[0].params.back().value_b, kCauseLateLaunch) << g.evidence[0].summary;
}

TEST(DiffSameWork, TheDeviceWaitingLongerEverywhereIsTheHostNotTheCode) {
  // Every launch of b's late on the same code (seen between two runs of one
  // program on the H200: one host issued the same steps 30% more slowly):
  // the machine, not a cause; said once, and no waste.
  auto r = SelfDiffWithLateLaunches([](const std::string&) { return true; }, 20'000);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(LaunchWaitNotes(*r), 1);
  EXPECT_EQ(r->waste_count(), 0) << r->findings.at(0).label << ": " << r->findings.at(0).why;
  bool explained = false;
  for (const auto& f : r->findings)
    explained |= f.why.find("b's host issued the same code more slowly throughout") != std::string::npos;
  EXPECT_TRUE(explained);
}

TEST(DiffSameWork, AHostSlowerThroughoutIsNoHostCpuFinding) {
  // The same, with each process keeping a core busy: b's slower host spends
  // more CPU time per iteration on the same calls. Not host waste either.
  auto slow = SelfDiffWithLateLaunches([](const std::string&) { return true; }, 20'000, 1.0);
  ASSERT_TRUE(slow.ok()) << slow.error().message;
  EXPECT_EQ(LaunchWaitNotes(*slow), 1);
  EXPECT_EQ(slow->waste_count(), 0) << slow->findings.at(0).label << ": " << slow->findings.at(0).why;
  // Where the waits are the code's (one operator late), the CPU time is judged.
  auto one = SelfDiffWithLateLaunches([](const std::string& op) { return op == "aten::tanh"; }, 400'000, 1.0);
  ASSERT_TRUE(one.ok()) << one.error().message;
  bool host = false;
  for (const auto& f : one->findings) host |= f.evidence_class() == EvidenceClass::kHost;
  EXPECT_TRUE(host);
}

TEST(DiffSameWork, TheSynchronizingCallsBeforeTheWaitAreNamedWithTheirLine) {
  Pair p = SameWork(1.0, 1.0);
  auto r = DiffLateLaunches(p, true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Finding& f = r->findings.at(0);
  EXPECT_EQ(f.verdict, Verdict::kWaste) << f.why;
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kTimeline);
  // The finding holds the five layers' regions: one call before each, five per iteration.
  EXPECT_NE(f.evidence[0].summary.find("synchronizing calls before them, per iteration: a none, b "
                                       "cudaStreamSynchronize in aten::gelu at model.py:88 (attention) x5"),
            std::string::npos)
      << f.evidence[0].summary;
  const auto& params = f.evidence[0].params;
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].subject + " " + params[0].parameter + "=" + params[0].value_b,
            "synchronizing calls cudaStreamSynchronize in aten::gelu at model.py:88 (attention)=5");
  EXPECT_EQ(params[1].value_b, kCauseSyncs);
}

// The same late launches and calls, but each call returns at once: the
// device had drained before the host called it. The calls are not why b's
// device waits; b's host is late at every launch, so that is a host slower
// throughout, as without the calls (TheDeviceWaitingLongerEverywhere...).
TEST(DiffSameWork, ASyncThatReturnsAtOnceIsNotWhyTheDeviceWaits) {
  Pair p = SameWork(1.0, 1.0);
  auto r = DiffLateLaunches(p, true, nullptr, 2'000);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->waste_count(), 0);
  const Finding& f = r->findings.at(0);
  EXPECT_EQ(f.verdict, Verdict::kNoise) << f.why;
  EXPECT_NE(f.why.find("b's host issued the same code more slowly throughout"), std::string::npos) << f.why;
}

// A torch.cuda.synchronize() in a forward hook: the recording pass's call
// runs between operators, and the recorder took the call's own Python stack.
// The finding names the hook's line, not the next operator's.
TEST(DiffSameWork, ASynchronizeBetweenOperatorsIsNamedAtItsOwnLine) {
  Pair p = SameWork(1.0, 1.0);
  magneton::Run& rec = p.b.b.run;
  const auto frame = static_cast<int64_t>(rec.frames.size());
  rec.frames.push_back({frame, "python", "sync_hook", "hooks.py", 12, ""});
  rec.frames.push_back({frame + 1, "python", "synchronize", "/site-packages/torch/cuda/__init__.py", 1083, ""});
  const auto stack = static_cast<int64_t>(rec.stacks.size());
  rec.stacks.push_back({stack, {frame + 1, frame}});
  // Room between the top-level operators for the hook's call.
  std::vector<int64_t> tops;
  for (const auto& op : rec.ops)
    if (op.parent == kNone) tops.push_back(op.start_ns);
  std::sort(tops.begin(), tops.end());
  for (auto& op : rec.ops)
    if (auto next = std::upper_bound(tops.begin(), tops.end(), op.start_ns); next != tops.end())
      op.end_ns = std::min(op.end_ns, *next - 100);
  auto r = DiffLateLaunches(p, true, [&](magneton::Run& run, const Kernel& k) {
    // Just before the top-level op that launches the kernel, outside it.
    int64_t op = k.op;
    while (run.ops[op].parent != kNone) op = run.ops[op].parent;
    AddSync(run, k.correlation - 5, run.ops[op].start_ns - 50);
    run.api_calls.back().stack = stack;
  });
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Finding& f = r->findings.at(0);
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kTimeline);
  EXPECT_NE(f.evidence[0].summary.find("b cudaStreamSynchronize at hooks.py:12 (sync_hook) x5"), std::string::npos)
      << f.evidence[0].summary;
  EXPECT_EQ(f.evidence[0].summary.find("before aten::"), std::string::npos) << f.evidence[0].summary;
}

// b's host launches each kernel 150 us late and reads a value back at the
// end of each step (a loss's `.item()`): one synchronize inside its last
// operator, after its last kernel. The recording pass made the call after its
// last work; the measured pass makes it before the next step's first, whose
// region is one of the layers' group: the group's finding names the call and
// where the recording made it.
TEST(DiffSameWork, ASyncAtTheEndOfTheStepIsNamedBeforeTheNextStepsWork) {
  Pair p = SameWork(1.0, 1.0);
  auto one = [](const std::string&) { return 1.0; };
  magneton::Run measured_a = fixture::TimelinePass(p.a.b.run, 4, one, 0);
  magneton::Run measured_b = fixture::TimelinePass(p.b.b.run, 4, one, 0);
  const size_t per_step = measured_b.kernels.size() / 4;
  for (magneton::Run* run : {&measured_b, &p.b.b.run}) {
    for (auto& c : run->api_calls) c.correlation *= 10;
    for (auto& k : run->kernels) k.correlation *= 10;
  }
  int64_t shift = 0;
  for (size_t i = 0; i < measured_b.kernels.size(); ++i) {
    Kernel& k = measured_b.kernels[i];
    shift += 150'000;
    k.start_ns += shift, k.end_ns += shift;
    measured_b.api_calls[i].start_ns = k.start_ns - 5000, measured_b.api_calls[i].end_ns = k.start_ns - 4000;
    if (i % per_step == per_step - 1) AddSync(measured_b, k.correlation + 5, k.end_ns - 100'000, 100'000);
  }
  measured_b.info.end_ns += shift;
  const Kernel& last = p.b.b.run.kernels.back();
  AddSync(p.b.b.run, last.correlation + 5, p.b.b.run.ops[last.op].end_ns - 1);
  energy::Attribution ea = p.a.Energy(), eb = p.b.Energy();
  energy::Attribution ma = energy::Attribute(measured_a), mb = energy::Attribute(measured_b);
  auto r = Diff(DiffInput{&p.a.b.run, &ea, &measured_a, &ma}, DiffInput{&p.b.b.run, &eb, &measured_b, &mb}, p.match,
                {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Finding& f = r->findings.at(0);
  EXPECT_EQ(f.verdict, Verdict::kWaste) << f.why;
  EXPECT_EQ(f.costly, 'b');
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kTimeline);
  const std::string& s = f.evidence[0].summary;
  EXPECT_NE(s.find("synchronizing calls before them, per iteration: a none, b cudaStreamSynchronize in "), std::string::npos)
      << s;
  EXPECT_NE(s.find("at model.py:88 (attention) x0.75"), std::string::npos) << s;  // the last step has no next one
  EXPECT_EQ(f.evidence[0].params.back().value_b, kCauseSyncs);
}

}  // namespace
}  // namespace magneton::analysis
