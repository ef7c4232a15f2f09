// Measured passes: costs from an unperturbed run of the same program
// (analysis/diff/pass_align.h).
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/diff/diff.h"
#include "analysis/diff/pass_align.h"
#include "core/store.h"
#include "diff_fixture.h"
#include "energy/attribution.h"

namespace magneton::analysis {
namespace {

TEST(DiffPasses, AlignFindsEveryRepetition) {
  fixture::Pair p = fixture::Conv1DPair(3, 1, 1.0, 1.0);
  const magneton::Run& rec = p.a.b.run;
  magneton::Run m = fixture::MeasuredPass(rec, 3, [](const std::string&) { return 1.0; });
  auto al = AlignPasses(rec, m);
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->repeats, 3);
  int64_t n = static_cast<int64_t>(rec.ops.size());
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(al->measured_ops[i], (std::vector<int64_t>{i, i + n, i + 2 * n}));
  // Extra ops before the first repetition (warm-up) are skipped.
  magneton::Run warm = m;
  magneton::Op extra = warm.ops[0];
  extra.name = "aten::zeros";
  warm.ops.insert(warm.ops.begin(), extra);
  auto al2 = AlignPasses(rec, warm);
  ASSERT_TRUE(al2.ok());
  EXPECT_EQ(al2->repeats, 3);
  EXPECT_EQ(al2->measured_ops[0][0], 1);
}

TEST(DiffPasses, AStrayOpIsToleratedButAnotherProgramIsRefused) {
  fixture::Pair p = fixture::Conv1DPair(2, 1, 1.0, 1.0);
  const magneton::Run& rec = p.a.b.run;
  magneton::Run m = fixture::MeasuredPass(rec, 3, [](const std::string&) { return 1.0; });
  m.ops[rec.ops.size() + 1].name = "aten::mm";  // recorded op 1 is aten::addmm; once, in the second repetition
  auto al = AlignPasses(rec, m);
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_EQ(al->repeats, 3);
  EXPECT_EQ(al->exact, 2);
  EXPECT_EQ(al->unaligned, 1);
  EXPECT_EQ(al->unaligned_names.at("aten::mm"), 1);
  EXPECT_EQ(al->measured_ops[1][1], kNone);
  for (auto& op : m.ops)  // every addmm is an mm: another program
    if (op.name == "aten::addmm") op.name = "aten::mm";
  auto other = AlignPasses(rec, m);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("does not repeat the recorded step"), std::string::npos)
      << other.error().message;
}

// A decoding loop over a growing sequence: each step runs the same operators
// (kernels) as the recorded one, on other shapes (grids). Aligned by names
// alone, and said so; another program still is refused.
TEST(DiffPasses, AStepWhoseShapesGrowIsAlignedByNames) {
  fixture::Pair p = fixture::Conv1DPair(2, 1, 1.0, 1.0);
  const magneton::Run& rec = p.a.b.run;
  magneton::Run m = fixture::MeasuredPass(rec, 3, [](const std::string&) { return 1.0; });
  const size_t n = rec.ops.size();
  for (size_t i = n; i < m.ops.size(); ++i)  // repetitions 2 and 3 on longer sequences
    for (int64_t t : m.ops[i].inputs)
      if (t >= 0 && !m.tensors[t].shape.empty()) m.tensors[t].shape[0] = 100 + static_cast<int64_t>(i / n);
  auto al = AlignPasses(rec, m);
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_TRUE(al->by_names);
  EXPECT_EQ(al->repeats, 3);
  EXPECT_EQ(al->measured_ops[1], (std::vector<int64_t>{1, static_cast<int64_t>(n) + 1, 2 * static_cast<int64_t>(n) + 1}));
  EXPECT_FALSE(AlignPasses(rec, fixture::MeasuredPass(rec, 3, [](const std::string&) { return 1.0; }))->by_names);
  for (auto& op : m.ops)
    if (op.name == "aten::addmm") op.name = "aten::mm";
  EXPECT_FALSE(AlignPasses(rec, m).ok());

  const magneton::Run& krec = p.b.b.run;
  magneton::Run km = fixture::TimelinePass(krec, 3, [](const std::string&) { return 1.0; }, 200'000);
  const size_t nk = krec.kernels.size();
  for (size_t k = nk; k < km.kernels.size(); ++k) km.kernels[k].grid[0] += static_cast<int64_t>(k / nk);
  auto kal = AlignPasses(krec, km);
  ASSERT_TRUE(kal.ok()) << kal.error().message;
  EXPECT_TRUE(kal->by_device_work && kal->by_names);
  EXPECT_EQ(kal->repeats, 3);
}

TEST(DiffPasses, KernelEvidenceComesFromTheMeasuredPass) {
  // The recording pass also ran the fingerprinting's kernels; one got linked to an op.
  fixture::Pair p = fixture::Conv1DPair(4, 1, 1.3, 1.0);
  auto one = [](const std::string&) { return 1.0; };
  magneton::Run ma = fixture::MeasuredPass(p.a.b.run, 2, one), mb = fixture::MeasuredPass(p.b.b.run, 2, one);
  p.a.K("void at::native::radixSortKVInPlace<fingerprint>", 1, 50'000, 0.01);
  energy::Attribution ea = p.a.Energy(), eb = p.b.Energy();
  energy::Attribution mea = fixture::AttributionFor(ma, std::vector<double>(ma.kernels.size(), 0.5));
  energy::Attribution meb = fixture::AttributionFor(mb, std::vector<double>(mb.kernels.size(), 0.5));
  auto r = Diff(DiffInput{&p.a.b.run, &ea, &ma, &mea}, DiffInput{&p.b.b.run, &eb, &mb, &meb}, p.match, {});
  ASSERT_TRUE(r.ok());
  const Finding& f = r->findings.at(0);
  ASSERT_NE(f.verdict, Verdict::kNoise) << f.why;
  ASSERT_GE(f.evidence.size(), 2u);
  EXPECT_EQ(f.evidence[1].kind, EvidenceClass::kKernels);
  for (const auto& k : f.evidence[1].all_a)
    EXPECT_EQ(k.name.find("fingerprint"), std::string::npos) << k.name;
  EXPECT_EQ(f.evidence[1].all_a.size(), 1u);
}

TEST(DiffPasses, CostsComeFromTheMeasuredPass) {
  // The recording pass shows no difference (fingerprinting dominates its
  // times); the measured passes show b's GEMM 50% slower. Time only.
  fixture::Pair p = fixture::Conv1DPair(4, 1, 1.0, 1.0);
  auto one = [](const std::string&) { return 1.0; };
  magneton::Run ma = fixture::MeasuredPass(p.a.b.run, 5, one);
  magneton::Run mb =
      fixture::MeasuredPass(p.b.b.run, 5, [](const std::string& n) { return n == "aten::mm" ? 1.5 : 1.0; });
  energy::Attribution ea = p.a.Energy(false), eb = p.b.Energy(false);
  energy::Attribution mea = fixture::AttributionFor(ma, std::vector<double>(ma.kernels.size(), 0), false);
  energy::Attribution meb = fixture::AttributionFor(mb, std::vector<double>(mb.kernels.size(), 0), false);

  DiffReport plain = Diff(p.a.b.run, p.b.b.run, p.match, ea, eb, {});
  EXPECT_EQ(plain.findings.at(0).verdict, Verdict::kNoise);

  auto r = Diff(DiffInput{&p.a.b.run, &ea, &ma, &mea}, DiffInput{&p.b.b.run, &eb, &mb, &meb}, p.match, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Finding& f = r->findings.at(0);
  EXPECT_EQ(f.verdict, Verdict::kWaste) << f.why;
  EXPECT_EQ(f.costly, 'b');
  // b's region: 0.9 ms GEMM x1.5 + 0.1 ms add = 1.45 ms vs 1 ms, each plus the
  // device's wait of a few us for the GEMM (the view before it runs on the host).
  EXPECT_NEAR(f.cost_delta_pct, 45, 1.0);
  EXPECT_GT(f.a.wait_seconds, 0);
  EXPECT_LT(f.a.wait_seconds, 0.01 * f.a.seconds);
  EXPECT_EQ(r->a.measured_repeats, 5);
  // The whole run is per repetition: one recording's worth.
  EXPECT_NEAR(r->a.seconds, (p.a.b.run.info.end_ns - p.a.b.run.info.start_ns) * 1e-9, 1e-9);
  bool noted = false;
  for (const auto& n : r->notes) noted |= n.find("measured pass (5 repetitions") != std::string::npos;
  EXPECT_TRUE(noted);

  magneton::Run wrong = mb;  // another program: every aten::add is an aten::sub
  for (auto& op : wrong.ops)
    if (op.name == "aten::add") op.name = "aten::sub";
  auto bad =
      Diff(DiffInput{&p.a.b.run, &ea, &ma, &mea}, DiffInput{&p.b.b.run, &eb, &wrong, &meb}, p.match, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("measured pass of run b"), std::string::npos);
}

// The measured pass without operators (a GPU's default): kernels only,
// aligned with the recording pass's kernels, which carry their ops.
TEST(DiffPasses, KernelsOfAMeasuredPassWithoutOpsGetTheRecordedOps) {
  fixture::Pair p = fixture::Conv1DPair(3, 1, 1.0, 1.0);
  const magneton::Run& rec = p.b.b.run;
  magneton::Run m = fixture::TimelinePass(rec, 4, [](const std::string&) { return 1.0; }, 200'000);
  auto al = AlignPasses(rec, m);
  ASSERT_TRUE(al.ok()) << al.error().message;
  EXPECT_TRUE(al->by_device_work);
  EXPECT_EQ(al->repeats, 4);
  EXPECT_EQ(al->exact, 4);
  const size_t n = rec.kernels.size();
  ASSERT_EQ(m.kernels.size(), 4 * n);
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    EXPECT_EQ(al->kernel_rep[k], static_cast<int32_t>(k / n));
    EXPECT_EQ(al->kernel_op[k], rec.kernels[k % n].op);
  }
  // The recording's own fingerprint kernels are not part of its step.
  magneton::Run with_fp = rec;
  magneton::Kernel fp = with_fp.kernels[0];
  fp.id = static_cast<int64_t>(with_fp.kernels.size());
  fp.name = "void at::native::radixSortKVInPlace<fingerprint>";
  fp.op = kRecorderWork;
  with_fp.kernels.push_back(fp);
  auto again = AlignPasses(with_fp, m);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->exact, 4);
  // A recording without kernels cannot be aligned with a measured pass without ops.
  magneton::Run bare = rec;
  bare.kernels.clear();
  auto none = AlignPasses(bare, m);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("the recording pass holds no kernels"), std::string::npos);
}

TEST(DiffPasses, KernelsOfAMeasuredPassTakeTheirCallPathsFromTheRecordedOps) {
  // TF32 off in a: the same operator launches another GEMM. The measured
  // passes hold kernels only, with no stack and no op of their own.
  fixture::Pair p = fixture::Tf32Pair(4, 1.35, 1.5);
  auto one = [](const std::string&) { return 1.0; };
  magneton::Run ma = fixture::TimelinePass(p.a.b.run, 6, one, 100'000), mb = fixture::TimelinePass(p.b.b.run, 6, one, 100'000);
  for (magneton::Run* m : {&ma, &mb})
    for (auto& k : m->kernels) k.stack = kNone;
  energy::Attribution ea = p.a.Energy(), eb = p.b.Energy();
  energy::Attribution mea = energy::Attribute(ma), meb = energy::Attribute(mb);
  auto r = Diff(DiffInput{&p.a.b.run, &ea, &ma, &mea}, DiffInput{&p.b.b.run, &eb, &mb, &meb}, p.match, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Finding& f = r->findings.at(0);
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kKernels) << f.label;
  const Evidence& e = f.evidence[0];
  ASSERT_FALSE(e.only_a.empty());
  // The kernel's call site is the line of the model that called the operator...
  EXPECT_EQ(e.only_a[0].call_site.line, 57) << e.only_a[0].call_site.file;
  // ...and both launch paths are recorded: the same down to the operator, so
  // the kernel was chosen inside it (by the library, its inputs or a key).
  EXPECT_GT(e.divergence.depth, 0);
  EXPECT_TRUE(e.divergence.frame_a.empty() && e.divergence.frame_b.empty());
  EXPECT_EQ(e.divergence.common.line, 134);  // torch/nn/modules/linear.py, the innermost shared frame
}

TEST(DiffPasses, TimelinePassesCostRegionsAndAccountForTheWholeIteration) {
  // b's GEMM runs 1.5x as long at the same power: 1.5x the energy.
  fixture::Pair p = fixture::Conv1DPair(4, 1, 1.0, 1.0);
  auto one = [](const std::string&) { return 1.0; };
  auto slow_mm = [](const std::string& n) { return n == "aten::mm" ? 1.5 : 1.0; };
  const int64_t gap = 300'000;
  magneton::Run ma = fixture::TimelinePass(p.a.b.run, 6, one, gap), mb = fixture::TimelinePass(p.b.b.run, 6, slow_mm, gap);
  energy::Attribution ea = p.a.Energy(), eb = p.b.Energy();
  energy::Attribution mea = energy::Attribute(ma), meb = energy::Attribute(mb);
  auto r = Diff(DiffInput{&p.a.b.run, &ea, &ma, &mea}, DiffInput{&p.b.b.run, &eb, &mb, &meb}, p.match, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->energy_measured);
  const Finding& f = r->findings.at(0);
  EXPECT_EQ(f.verdict, Verdict::kWaste) << f.why;
  EXPECT_EQ(f.costly, 'b');
  // a's layer: 1 ms GEMM; b's: 1.35 ms GEMM + 0.1 ms add, all at 500 W.
  EXPECT_NEAR(f.cost_delta_pct, 45, 2);
  for (const auto* side : {&r->a, &r->b}) {
    const IterationAccount& acc = side->account;
    ASSERT_TRUE(acc.available);
    EXPECT_TRUE(acc.on_device);
    EXPECT_EQ(acc.periods, 5);
    // The four parts add up to the iteration, and the iteration is a step plus its gap.
    EXPECT_NEAR(acc.regions + acc.unmatched + acc.idle + acc.unattributed, acc.total, 1e-9);
    const double step_s = side == &r->a ? 4 * 1e-3 : 4 * 1.45e-3;
    EXPECT_NEAR(acc.seconds, step_s + gap * 1e-9, 1e-7);
    EXPECT_NEAR(acc.host_seconds, acc.seconds, 1e-7);
    EXPECT_NEAR(acc.busy_seconds, step_s, 1e-7);
    EXPECT_NEAR(acc.total, step_s * 500 + gap * 1e-9 * 100, 0.01 * acc.total);
    EXPECT_NEAR(acc.idle, gap * 1e-9 * 100, 0.05 * acc.idle);
    EXPECT_GT(acc.matched_share(), 0.9);
    EXPECT_NEAR(side->joules, acc.total, 1e-12);  // the whole run is per iteration, from the same pass
  }
  EXPECT_NEAR(r->matched_share_a, r->a.account.matched_share(), 1e-12);
  for (const auto& note : r->notes) EXPECT_NE(note.rfind("no device timeline:", 0), 0u) << note;
  // The finding's share of the run is of an iteration of the same pass: a percentage, never above 100.
  EXPECT_GT(f.saved_pct_of_run, 0);
  EXPECT_LT(f.saved_pct_of_run, 100);
}

// The same program on both sides; b's measured pass was slowed by its
// tracer, 500 us of host time before every launch (a launch-bound step), and
// its untraced steps ran at a's pace. Told so, the diff takes the tracer's
// delay off b's gaps: no waste, the same iteration on both sides.
TEST(DiffPasses, TheTracersStretchIsTakenOffAtTheUntracedPace) {
  fixture::Pair p = fixture::Conv1DPair(4, 1, 1.0, 1.0);
  const magneton::Run& rec = p.a.b.run;
  const MatchResult match = MatchRuns(rec, rec);
  auto one = [](const std::string&) { return 1.0; };
  const int64_t gap = 300'000, launch = 500'000;
  magneton::Run ma = fixture::TimelinePass(rec, 6, one, gap);
  magneton::Run mb = fixture::TimelinePass(rec, 6, one, gap, 100, 400, launch);
  energy::Attribution e = p.a.Energy(), mea = energy::Attribute(ma), meb = energy::Attribute(mb);
  auto traced = Diff(DiffInput{&rec, &e, &ma, &mea}, DiffInput{&rec, &e, &mb, &meb}, match, {});
  ASSERT_TRUE(traced.ok()) << traced.error().message;
  const double a_s = traced->a.account.seconds;
  ASSERT_GT(traced->b.account.seconds, a_s * 1.2);

  DiffOptions o;
  o.untraced_b = UntracedSteps{100, a_s, kUnmeasured};
  auto r = Diff(DiffInput{&rec, &e, &ma, &mea}, DiffInput{&rec, &e, &mb, &meb}, match, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const IterationAccount& b = r->b.account;
  EXPECT_NEAR(b.seconds, a_s, 1e-3 * a_s);
  EXPECT_NEAR(b.total, r->a.account.total, 0.03 * b.total);
  EXPECT_NEAR(b.regions + b.unmatched + b.idle + b.unattributed, b.total, 1e-9);
  for (const Finding& f : r->findings) EXPECT_NE(f.verdict, Verdict::kWaste) << f.label << ": " << f.why;
  EXPECT_TRUE(r->b.untraced.has_value());
  bool noted = false;
  for (const auto& n : r->notes) noted |= n.find("was taken off each idle gap") != std::string::npos;
  EXPECT_TRUE(noted);
}

// A CPU training step (scripts/record_fixture.py train): autograd runs each
// backward node (tensor-less in the recording) inside a tensor-less
// evaluate_function scope, and the optimizer its updates inside
// Optimizer.step. The scopes are in no region, the operators inside them are:
// the account counts those where they are matched, and a scope's own time
// with them when all of them are matched.
TEST(DiffPasses, ScopesAroundMatchedNodesAreAccountedByTheirNodes) {
  const std::string dir = std::string(MAGNETON_TEST_DATA) + "/torch/";
  auto a = LoadRun(dir + "train_gelu_composite.mgt"), b = LoadRun(dir + "train_gelu_fused.mgt");
  ASSERT_TRUE(a.ok() && b.ok());
  const MatchResult match = MatchRuns(*a, *b);
  ASSERT_TRUE(match.unmatched_a.empty() && match.unmatched_b.empty());
  auto one = [](const std::string&) { return 1.0; };
  magneton::Run ma = fixture::MeasuredPass(*a, 3, one), mb = fixture::MeasuredPass(*b, 3, one);
  energy::Attribution ea = energy::Attribute(*a), eb = energy::Attribute(*b);
  energy::Attribution mea = energy::Attribute(ma), meb = energy::Attribute(mb);
  auto r = Diff(DiffInput{&*a, &ea, &ma, &mea}, DiffInput{&*b, &eb, &mb, &meb}, match, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (const auto* side : {&r->a, &r->b}) {
    const IterationAccount& acc = side->account;
    ASSERT_TRUE(acc.available);
    EXPECT_FALSE(acc.on_device);
    EXPECT_NEAR(acc.regions + acc.unmatched + acc.idle + acc.unattributed, acc.total, 1e-9);
    // Every node is matched, so all of the step is in regions (99.9-100% of it);
    // 63% when whole scopes counted as in no region, 84-88% when their own time did.
    EXPECT_GT(acc.regions, 0.95 * acc.busy_seconds);
    EXPECT_LT(acc.unmatched, 0.05 * acc.busy_seconds);
  }
  // Said once: the host's timeline is the operators' own, recorded one by one.
  EXPECT_EQ(std::count_if(r->notes.begin(), r->notes.end(),
                          [](const std::string& n) { return n.rfind("no device timeline:", 0) == 0; }),
            1);
}

// The CPU training step against itself, 8 measured repetitions a side, with
// host time inserted into b's measured pass: `delay(id)` ns before its op `id`,
// every op from there on starting that much later.
template <class Delay>
Result<DiffReport> DelayedSelfDiff(const magneton::Run& run, const MatchResult& match, Delay delay) {
  auto one = [](const std::string&) { return 1.0; };
  magneton::Run ma = fixture::MeasuredPass(run, 8, one), mb = fixture::MeasuredPass(run, 8, one);
  int64_t shift = 0;
  for (auto& op : mb.ops) {  // ids run in start order
    shift += delay(op.id);
    op.start_ns += shift;
    op.end_ns += shift;
  }
  mb.info.end_ns += shift;
  energy::Attribution e = energy::Attribute(run), mea = energy::Attribute(ma), meb = energy::Attribute(mb);
  return Diff(DiffInput{&run, &e, &ma, &mea}, DiffInput{&run, &e, &mb, &meb}, match, {});
}

// The CPU training step against itself, both programs spending 2 ms of their
// own code before the step's first linear, and b's measured pass slower
// throughout (every operator and every stretch between them 1.5x as long:
// another process on the machine), compared as measured: no finding says b's
// own code is the cause, for it runs as much slower as the operators do.
TEST(DiffPasses, AHostSlowerThroughoutIsNoCauseInTheProgramsOwnCode) {
  auto run = LoadRun(std::string(MAGNETON_TEST_DATA) + "/torch/train_gelu_composite.mgt");
  ASSERT_TRUE(run.ok());
  const MatchResult match = MatchRuns(*run, *run);
  auto one = [](const std::string&) { return 1.0; };
  magneton::Run ma = fixture::MeasuredPass(*run, 8, one), mb = fixture::MeasuredPass(*run, 8, one);
  const auto n = static_cast<int64_t>(run->ops.size());
  int64_t linear = 0;
  while (run->ops[linear].name != "aten::linear" || run->ops[linear].parent != kNone) ++linear;
  for (magneton::Run* m : {&ma, &mb}) {
    int64_t shift = 0;
    for (auto& op : m->ops) {  // ids run in start order
      shift += op.id % n == linear ? 2'000'000 : 0;
      op.start_ns += shift;
      op.end_ns += shift;
    }
    m->info.end_ns += shift;
  }
  const int64_t t0 = mb.info.start_ns;
  auto stretch = [&](int64_t t) { return t0 + (t - t0) * 3 / 2; };
  for (auto& op : mb.ops) op.start_ns = stretch(op.start_ns), op.end_ns = stretch(op.end_ns);
  for (auto& r : mb.ranges) r.start_ns = stretch(r.start_ns), r.end_ns = stretch(r.end_ns);
  mb.info.end_ns = stretch(mb.info.end_ns);
  energy::Attribution e = energy::Attribute(*run), mea = energy::Attribute(ma), meb = energy::Attribute(mb);
  DiffOptions o;
  o.normalize_host_time = false;
  auto r = Diff(DiffInput{&*run, &e, &ma, &mea}, DiffInput{&*run, &e, &mb, &meb}, match, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (const Finding& f : r->findings) {
    EXPECT_NE(f.verdict, Verdict::kWaste) << f.label << ": " << f.why;
    for (const Evidence& ev : f.evidence) EXPECT_NE(ev.kind, EvidenceClass::kTimeline) << f.label << ": " << ev.summary;
  }
}

// On a CPU run the host's own code between two operators (Python issuing the
// next one) is part of the step: it counts with the operator it issues, as the
// device's wait counts with the kernel it waited for. b's program spends 2 ms
// before its first linear each step; that region is b's waste, by its wait
// (consistent over the 8 repetitions: a few differing microseconds of Python
// are jitter, tests/analysis/diff_recorded_test.cpp).
TEST(DiffPasses, TheHostsCodeBeforeAnOperatorCountsWithIt) {
  auto run = LoadRun(std::string(MAGNETON_TEST_DATA) + "/torch/train_gelu_composite.mgt");
  ASSERT_TRUE(run.ok());
  const MatchResult match = MatchRuns(*run, *run);
  constexpr int64_t kDelay = 2'000'000;
  const auto n = static_cast<int64_t>(run->ops.size());
  int64_t linear = 0;  // the step's first linear (its first op is a layer_norm)
  while (run->ops[linear].name != "aten::linear" || run->ops[linear].parent != kNone) ++linear;
  auto r = DelayedSelfDiff(*run, match, [&](int64_t id) { return id % n == linear ? kDelay : 0; });
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_FALSE(r->findings.empty());
  const Finding& f = r->findings.front();
  EXPECT_EQ(f.verdict, Verdict::kWaste) << f.why;
  EXPECT_EQ(f.costly, 'b');
  EXPECT_NEAR(f.b.wait_seconds - f.a.wait_seconds, kDelay * 1e-9, 0.1 * kDelay * 1e-9);
  EXPECT_EQ(f.evidence_class(), EvidenceClass::kTimeline);
  EXPECT_NE(f.evidence.front().summary.find("the program's own code before them"), std::string::npos)
      << f.evidence.front().summary;
  bool holds_linear = false;
  for (int64_t id : f.regions)
    for (int64_t op : match.regions[id].ops_b) holds_linear |= op == linear;
  EXPECT_TRUE(holds_linear);
  // The account: the code between operators is with them; only the tail after
  // an iteration's last operator is left over, the same on both sides.
  for (const auto* side : {&r->a, &r->b}) {
    const IterationAccount& acc = side->account;
    EXPECT_GT(acc.waiting, 0);
    EXPECT_NEAR(acc.regions + acc.unmatched + acc.idle + acc.unattributed, acc.total, 1e-9);
  }
  EXPECT_NEAR(r->b.account.idle, r->a.account.idle, 1e-9);
  EXPECT_NEAR(r->b.account.regions - r->a.account.regions, kDelay * 1e-9, 0.1 * kDelay * 1e-9);
  EXPECT_NEAR(r->b.account.waiting - r->a.account.waiting, kDelay * 1e-9, 0.1 * kDelay * 1e-9);
}

// One repetition slowed by something outside the step (here 50 ms more of the
// host's own time in the middle of repetition 3 of 8): a note says the
// per-iteration totals carry it; the regions' costs do not, so no finding.
TEST(DiffPasses, AnUnevenRepetitionIsNotedAndMovesNoRegion) {
  auto run = LoadRun(std::string(MAGNETON_TEST_DATA) + "/torch/train_gelu_composite.mgt");
  ASSERT_TRUE(run.ok());
  const auto n = static_cast<int64_t>(run->ops.size());
  auto r = DelayedSelfDiff(*run, MatchRuns(*run, *run),
                           [&](int64_t id) -> int64_t { return id == 3 * n + n / 2 ? 50'000'000 : 0; });
  ASSERT_TRUE(r.ok()) << r.error().message;
  int uneven_a = 0, uneven_b = 0;
  for (const auto& note : r->notes) {
    uneven_a += note.rfind("run a: its iterations are uneven", 0) == 0;
    uneven_b += note.rfind("run b: its iterations are uneven: 1 of 7", 0) == 0;
  }
  EXPECT_EQ(uneven_a, 0);
  EXPECT_EQ(uneven_b, 1);
  EXPECT_GT(r->b.account.total, r->a.account.total + 0.005);  // the mean carries it
  EXPECT_EQ(r->waste_count(), 0);
}

}  // namespace
}  // namespace magneton::analysis
