// The kernel-level diff of runs with nothing to match but their kernels
// (analysis/diff/kernel_regions.h): programs built here (kernel_program.h),
// and recordings of real programs on the H200 with what would let another
// diff match them (operators, NVTX ranges) taken out.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/diff/diff.h"
#include "analysis/diff/kernel_regions.h"
#include "analysis/diff/launch_calls.h"
#include "analysis/diff/rules.h"
#include "kernel_program.h"
#include "recorded_runs.h"

namespace magneton::analysis {
namespace {

const std::string kGpu = std::string(MAGNETON_TEST_DATA) + "/diff/gpu/";
using fixture::kTf32Gemm;
using fixture::Program;
using fixture::Variant;

// The rules in the repository (rules/*.json).
DiffOptions WithRules() {
  DiffOptions o;
  auto rules = LoadRulesDir(std::string(MAGNETON_TEST_DATA) + "/../../rules");
  EXPECT_TRUE(rules.ok()) << rules.error().message;
  if (rules.ok()) o.rules = std::move(*rules);
  return o;
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

bool Noted(const DiffReport& r, const std::string& part) {
  return std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& n) { return Contains(n, part); });
}

bool Names(const std::vector<NamedCount>& v, const std::string& part) {
  return std::any_of(v.begin(), v.end(), [&](const NamedCount& n) { return Contains(n.name, part); });
}

// The script run as `va` for `steps_a` steps against it run as `vb`.
Result<DiffReport> DiffPrograms(const Variant& va, int steps_a, const Variant& vb, int steps_b,
                                const DiffOptions& options = {}) {
  return DiffRuns(Program("prog a", va, steps_a), Program("prog b", vb, steps_b), nullptr, nullptr, options);
}

const Finding* Top(const DiffReport& r) { return r.findings.empty() ? nullptr : &r.findings.front(); }

// The notes and the findings that are not noise, for failure messages.
std::string Dump(const DiffReport& r) {
  std::string out;
  for (const auto& n : r.notes) out += "note: " + n + "\n";
  for (const auto& f : r.findings) {
    if (f.verdict == Verdict::kNoise) continue;
    out += std::string(ToString(f.verdict)) + " [" + ToString(f.evidence_class()) + "] " + f.label + ": " + f.why +
           "\n";
    for (const auto& e : f.evidence) out += "  " + std::string(ToString(e.kind)) + ": " + e.summary + "\n";
  }
  return out;
}

TEST(DiffKernels, FullFp32GemmsAreWasteAgainstTf32) {
  Variant tf32;
  tf32.gemm = kTf32Gemm;
  tf32.gemm_ns = 10'000;
  auto r = DiffPrograms({}, 12, tf32, 9, WithRules());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->matched_by_kernels);
  EXPECT_FALSE(r->matched_by_range);
  EXPECT_EQ(r->a.ops, 0);  // segments are not recorded operators
  EXPECT_EQ(r->a.kernels, 1 + 13 * 19 + 8);  // set-up's fill, 13 steps (warm-up included), its 8 probes
  EXPECT_TRUE(Noted(*r, "matched by kernel sequence")) << Dump(*r);
  EXPECT_TRUE(Noted(*r, "nothing shows that the two sides compute the same thing"));
  // Each side's loop is found; set-up, the warm-up step (an autotuning probe
  // before each GEMM: 27 items) and the summary lie outside. The last
  // repetition also holds the summary's copy, so it is not identical.
  EXPECT_TRUE(Noted(*r, "run a: an iteration is one repetition of a step of 19 kernels and copies (12 repetitions, "
                        "11 identical; 30 kernels and copies outside them"))
      << Dump(*r);
  EXPECT_TRUE(Noted(*r, "run b: an iteration is one repetition of a step of 19 kernels and copies (9 repetitions, "
                        "8 identical"));
  EXPECT_EQ(r->a.iterations, 1);  // costs are per repetition
  EXPECT_EQ(r->a.measured_repeats, 12);
  EXPECT_EQ(r->b.measured_repeats, 9);

  ASSERT_EQ(r->waste_count(), 1);
  const Finding& f = r->findings.front();
  EXPECT_EQ(f.costly, 'a');
  EXPECT_EQ(f.regions.size(), 8u);  // two GEMMs in each of four layers: one finding
  EXPECT_TRUE(Contains(f.label, "f32f32_f32f32_f32") && Contains(f.label, "(a) vs")) << f.label;
  EXPECT_TRUE(Contains(f.label, "tf32f32")) << f.label;
  EXPECT_FALSE(f.outputs_compared);
  EXPECT_TRUE(Contains(f.why, "outputs not compared: the runs hold no values; matched by kernel sequence")) << f.why;
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kKernels);
  const Evidence& e = f.evidence.front();
  EXPECT_TRUE(Contains(e.summary, "same place in the step, different kernels")) << e.summary;
  EXPECT_TRUE(Names(e.only_a, "f32f32_f32f32_f32"));
  EXPECT_TRUE(Names(e.only_b, "tf32f32"));
  ASSERT_EQ(f.rules.size(), 1u);
  EXPECT_EQ(f.rules.front().id, "fp32-kernels-not-tf32");
  // Time stands in for energy: 8 GEMMs an iteration, 40 us against 10 us.
  EXPECT_EQ(r->cost_unit, "s");
  EXPECT_NEAR(f.a.seconds, 8 * 40e-6, 1e-9);
  EXPECT_NEAR(f.b.seconds, 8 * 10e-6, 1e-9);
  EXPECT_NEAR(f.saved_per_iteration, 8 * 30e-6, 1e-9);
  // The accounting adds up, and the segments hold the whole iteration.
  for (const RunSummary* s : {&r->a, &r->b}) {
    ASSERT_TRUE(s->account.available);
    EXPECT_NEAR(s->account.regions + s->account.unmatched + s->account.idle + s->account.unattributed,
                s->account.total, 1e-12);
    EXPECT_EQ(s->account.unmatched, 0);
    EXPECT_GT(s->account.matched_share(), 0.99);
  }
  // Everything the two sides share is noise.
  for (const auto& g : r->findings)
    if (&g != &f) {
      EXPECT_EQ(g.verdict, Verdict::kNoise) << g.label << ": " << g.why;
    }
}

TEST(DiffKernels, TheSameProgramTwiceIsNoWaste) {
  auto r = DiffPrograms({}, 10, {}, 14);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->matched_by_kernels);
  EXPECT_EQ(r->waste_count(), 0);
  for (const auto& f : r->findings) EXPECT_EQ(f.verdict, Verdict::kNoise) << f.label << ": " << f.why;
  EXPECT_TRUE(Noted(*r, "they differ at 0 places"));
}

TEST(DiffKernels, ASynchronizeEachStepIsATimelineFindingNamingTheCall) {
  Variant item;
  item.item = true;
  auto r = DiffPrograms(item, 10, {}, 10, WithRules());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(Noted(*r, "synchronizing calls per iteration: a 1 (cudaStreamSynchronize x1), b 0 (none)")) << Dump(*r);
  EXPECT_TRUE(Noted(*r, "they differ at 1 place (a: 2 items there, b: 1)"));
  ASSERT_GE(r->waste_count(), 1);
  const Finding& f = *Top(*r);
  EXPECT_EQ(f.costly, 'a');
  // The host's 150 us after the synchronize is the device's wait for its next
  // launch: the finding holds the copy and the kernel that waited.
  EXPECT_TRUE(Contains(f.label, "copy DtoH 4 B")) << f.label;
  EXPECT_GT(f.a.wait_seconds, 140e-6);
  EXPECT_LT(f.b.wait_seconds, 10e-6);
  EXPECT_EQ(f.evidence_class(), EvidenceClass::kTimeline) << f.evidence.front().summary;
  auto sync = std::find_if(f.evidence.begin(), f.evidence.end(),
                           [](const Evidence& e) { return Contains(e.summary, "synchronizing calls before"); });
  ASSERT_NE(sync, f.evidence.end());
  EXPECT_TRUE(Contains(sync->summary, "a cudaStreamSynchronize x1, b none")) << sync->summary;
  // The call is the cause, and the rule for a synchronize in the step says what to do
  // (a run of kernels alone does not say which operator made it).
  EXPECT_TRUE(std::any_of(f.rules.begin(), f.rules.end(), [](const RuleHit& h) { return h.id == "explicit-synchronize"; }));
  EXPECT_TRUE(std::none_of(f.rules.begin(), f.rules.end(), [](const RuleHit& h) { return h.id == "launch-bound-step"; }));
  auto copy = std::find_if(f.evidence.begin(), f.evidence.end(),
                           [](const Evidence& e) { return Names(e.only_a, "copy DtoH 4 B"); });
  EXPECT_NE(copy, f.evidence.end());
  // The step's boundary is cut where neither device waits: the wait is in a region, not an idle tail.
  EXPECT_LT(r->a.account.idle, 0.05 * r->a.account.total);
}

// The same `loss.item()` and host work after it, in a step whose kernels are
// shorter than their launches: the device has drained before the host
// synchronizes, so the call returns at once and the device waits for the
// host's launches either way. The calls are named, not blamed.
TEST(DiffKernels, ASynchronizeInALaunchBoundStepIsNotWhyTheDeviceWaits) {
  Variant item, plain;
  item.item = true;
  item.kernel_scale = plain.kernel_scale = 0.1;
  auto r = DiffPrograms(item, 10, plain, 10, WithRules());
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_GE(r->waste_count(), 1) << Dump(*r);
  const Finding& f = *Top(*r);
  EXPECT_EQ(f.costly, 'a');
  EXPECT_EQ(f.evidence_class(), EvidenceClass::kTimeline) << Dump(*r);
  auto sync = std::find_if(f.evidence.begin(), f.evidence.end(),
                           [](const Evidence& e) { return Contains(e.summary, "synchronizing calls before"); });
  ASSERT_NE(sync, f.evidence.end());
  EXPECT_TRUE(Contains(sync->summary, "not why its device waits")) << sync->summary;
  auto has = [&](const char* id) {
    return std::any_of(f.rules.begin(), f.rules.end(), [&](const RuleHit& h) { return h.id == id; });
  };
  EXPECT_TRUE(has("launch-bound-step")) << Dump(*r);
  EXPECT_FALSE(has("explicit-synchronize")) << Dump(*r);
}

// A launch-bound step (the host takes 60 us per launch) against the same
// step run back to back, as a captured CUDA graph runs it, whose side also
// launches a copy kernel of its own before each layer's second GEMM. At those
// places the costlier side runs nothing the other lacks: what it spends more
// is the device waiting for its launches, one cause with every other place's
// wait, so the step's waits are one timeline finding that holds them all.
TEST(DiffKernels, ALaunchBoundStepsWaitsAreOneFindingWhereTheOtherSideRunsMore) {
  Variant slow_host, graph;
  slow_host.launch_ns = 60'000;
  graph.extra_kernel = true;
  auto r = DiffPrograms(slow_host, 10, graph, 10, WithRules());
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->waste_count(), 1) << Dump(*r);
  const Finding& f = *Top(*r);
  EXPECT_EQ(f.costly, 'a');
  EXPECT_EQ(f.evidence_class(), EvidenceClass::kTimeline) << Dump(*r);
  EXPECT_TRUE(Contains(f.label, "the device waiting at")) << f.label;
  // The places where b launches its copy kernel are in it, not a kernels finding of their own.
  EXPECT_TRUE(Contains(f.evidence.front().summary, "the device waits for its work")) << f.evidence.front().summary;
  for (const auto& other : r->findings)
    EXPECT_FALSE(other.verdict == Verdict::kWaste && other.evidence_class() == EvidenceClass::kKernels) << Dump(*r);
  // A costlier side with a kernel of its own there is costlier by it: the kernels lead.
  Variant slow_extra = slow_host;
  slow_extra.extra_kernel = true;
  slow_extra.gemm_ns = graph.gemm_ns;
  auto own = DiffPrograms(slow_extra, 10, {}, 10, WithRules());
  ASSERT_TRUE(own.ok()) << own.error().message;
  EXPECT_TRUE(std::any_of(own->findings.begin(), own->findings.end(), [](const Finding& g) {
    return g.verdict == Verdict::kWaste && g.costly == 'a' && g.evidence_class() == EvidenceClass::kKernels &&
           Names(g.evidence.front().only_a, "direct_copy_kernel");
  })) << Dump(*own);
}

TEST(DiffKernels, ASynchronizingCallWithAStackIsNamedWithItsLine) {
  // `record --stacks` walks the stack at synchronizing calls too: the innermost
  // frame outside CUDA's libraries names the code that makes the host wait.
  Variant item;
  item.item = true;
  magneton::Run a = Program("prog a", item, 10);
  Frame cudart{0, "native", "cudaStreamSynchronize", "", 0, "libcudart.so.13"};
  Frame user{1, "native", "TrainLoop::Step()", "/work/engine/train.cpp", 88, "engine"};
  Frame main{2, "native", "main", "/work/engine/main.cpp", 12, "engine"};
  a.frames = {cudart, user, main};
  a.stacks = {{0, {0, 1, 2}}};
  for (auto& c : a.api_calls)
    if (c.name.rfind("cudaStreamSynchronize", 0) == 0) c.stack = 0;
  auto r = DiffRuns(a, Program("prog b", {}, 10), nullptr, nullptr, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(Noted(*r, "a 1 (cudaStreamSynchronize at train.cpp!TrainLoop::Step() x1)")) << Dump(*r);
  ASSERT_GE(r->waste_count(), 1);
  const Finding& f = *Top(*r);
  auto sync = std::find_if(f.evidence.begin(), f.evidence.end(),
                           [](const Evidence& e) { return Contains(e.summary, "synchronizing calls before"); });
  ASSERT_NE(sync, f.evidence.end());
  EXPECT_TRUE(Contains(sync->summary, "a cudaStreamSynchronize at train.cpp!TrainLoop::Step() x1, b none"))
      << sync->summary;
}

TEST(DiffKernels, AKernelOnlyOneSideLaunchesCountsWithTheKernelItServes) {
  Variant extra;
  extra.extra_kernel = true;
  auto r = DiffPrograms(extra, 8, {}, 8);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->waste_count(), 1);
  const Finding& f = r->findings.front();
  EXPECT_EQ(f.costly, 'a');
  EXPECT_EQ(f.regions.size(), 4u);  // one a layer
  // The copy kernel goes with the GEMM that follows it: 9 + 40 us against 40 us.
  EXPECT_TRUE(Contains(f.label, "direct_copy_kernel")) << f.label;
  EXPECT_NEAR(f.a.seconds / f.b.seconds, 49.0 / 40.0, 0.01);
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kKernels);
  EXPECT_TRUE(Names(f.evidence.front().only_a, "direct_copy_kernel"));
  EXPECT_TRUE(f.evidence.front().only_b.empty());
}

TEST(DiffKernels, TheSameKernelLaunchedDifferentlyIsLaunchEvidence) {
  Variant wide;
  wide.norm_grid = 512;
  magneton::Run a = Program("prog --norm-grid 512", wide, 8), b = Program("prog", {}, 8);
  // The wider launch runs longer on a.
  for (auto& k : a.kernels)
    if (k.name == "layer_norm_kernel") k.end_ns += 6'000;
  auto r = DiffRuns(a, b, nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_GE(r->waste_count(), 1);
  const Finding& f = r->findings.front();
  EXPECT_TRUE(Contains(f.label, "layer_norm_kernel")) << f.label;
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kLaunch);
  EXPECT_EQ(f.evidence.front().params.front().parameter, "grid");
}

// A decoding loop recorded whole (no code change): without a cache (a) each
// step's kernels run over the whole sequence so far, their grids growing; with
// one (b) over the newest position, plus the cache's copy. The steps repeat by
// kernel names only (without the tile sizes a GEMM library picks by size);
// they are found and aligned so, and each place costs the mean over the steps.
TEST(DiffKernels, AStepWhoseGridsGrowIsFoundByKernelNames) {
  fixture::KernelProgram pa("decode.py"), pb("decode.py --cache");
  for (int pos = 0; pos < 16; ++pos) {
    for (auto* p : {&pa, &pb}) {
      const bool full = p == &pa;
      const int32_t rows = full ? 16 + pos : 1;
      p->Kernel("embedding_kernel", 2'000, rows);
      if (!full) p->Kernel("CatArrayBatchedCopy", 3'000, 1 + pos);
      // The GEMM library picks a larger tile once the sequence is long enough.
      p->Kernel(rows < 24 ? "sm90_xmma_gemm_f16f16_f16f32_tilesize64x64" : "sm90_xmma_gemm_f16f16_f16f32_tilesize128x128",
                full ? 4'000 * rows : 5'000, rows);
      p->Kernel("softmax_warp_forward", full ? 500 * rows : 1'000, rows);
      p->Kernel(rows < 24 ? "sm90_xmma_gemm_f16f16_f16f32_tilesize64x64" : "sm90_xmma_gemm_f16f16_f16f32_tilesize128x128",
                full ? 1'000 * rows : 2'000, rows);
      p->Kernel("argmax_kernel", 2'000);
    }
  }
  auto r = DiffRuns(pa.Done(), pb.Done(), nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(Noted(*r, "grids and sizes change from one iteration to the next")) << Dump(*r);
  EXPECT_GE(r->a.measured_repeats, 14) << Dump(*r);
  EXPECT_GE(r->b.measured_repeats, 14) << Dump(*r);
  ASSERT_GE(r->waste_count(), 1) << Dump(*r);
  const Finding& f = r->findings.front();
  EXPECT_EQ(f.costly, 'a') << Dump(*r);
  EXPECT_TRUE(Contains(f.label, "gemm")) << Dump(*r);
  // The mean over the positions: 4 us x 23.5 rows for a's first GEMM, not one position's.
  EXPECT_NEAR(f.a.seconds, 4'000e-9 * 23.5, 5e-6) << Dump(*r);
}

TEST(DiffKernels, RunsWithoutARepeatedStepAreComparedWhole) {
  fixture::KernelProgram pa("once"), pb("once");
  for (auto* p : {&pa, &pb}) {
    p->Kernel("a_kernel", 5'000);
    p->Kernel("b_kernel", 5'000);
  }
  pb.Kernel("c_kernel", 5'000);
  auto r = DiffRuns(pa.Done(), pb.Done(), nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(Noted(*r, "run a: no step of its 2 kernels and copies repeats, so the run is one iteration"));
  // c_kernel, at the end of b only, goes with the shared kernel before it.
  ASSERT_EQ(r->regions.size(), 2u);
  EXPECT_EQ(r->findings.front().label, "b_kernel (a) vs b_kernel + c_kernel (b)");
  EXPECT_EQ(r->findings.front().costly, 'b');
  // --iterations 1: a loop is compared whole too, and --iterations N divides it.
  magneton::Run a = Program("prog", {}, 6), b = Program("prog", {}, 6);
  DiffOptions once;
  once.iterations = 1;
  auto whole = DiffRuns(a, b, nullptr, nullptr, once);
  ASSERT_TRUE(whole.ok());
  EXPECT_TRUE(Noted(*whole, "run a: compared whole, as one iteration (--iterations 1)"));
  EXPECT_EQ(whole->a.measured_repeats, 1);
  EXPECT_EQ(whole->waste_count(), 0);
  DiffOptions six;
  six.iterations = 6;
  auto steps = DiffRuns(a, b, nullptr, nullptr, six);
  ASSERT_TRUE(steps.ok());
  EXPECT_EQ(steps->a.measured_repeats, 6);
  EXPECT_EQ(steps->a.iterations, 1);
}

TEST(DiffKernels, RunsWithValuesOrSharedRangesAreNotDiffedByKernels) {
  magneton::Run a = Program("prog", {}, 4);
  magneton::Run with_ops = a;
  Op op;
  op.name = "aten::mm";
  op.framework = "torch";
  with_ops.ops.push_back(op);
  Tensor t;
  t.fingerprint = Fingerprint{};
  with_ops.tensors.push_back(t);
  EXPECT_FALSE(MatchesByKernels(with_ops, a));
  magneton::Run no_kernels = a;
  no_kernels.kernels.clear();
  EXPECT_FALSE(MatchesByKernels(no_kernels, a));
  // NVTX ranges that hold no device work on either side do not match: kernels then.
  magneton::Run ranged = a;
  Range range;
  range.name = "idle";
  range.start_ns = a.info.start_ns;
  range.end_ns = a.info.start_ns + 1;
  ranged.ranges.push_back(range);
  auto r = DiffRuns(ranged, ranged, nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->matched_by_kernels);
  EXPECT_TRUE(Noted(*r, "NVTX ranges share no path that holds device work"));
}

// The cublas-engine case (tests/analysis/diff_ranges_test.cpp) without its
// NVTX ranges: what `magneton record` gives of any C++ engine with no
// annotations. FP32 (CUBLAS_COMPUTE_32F) against TF32 GEMMs, recorded on the H200.
TEST(DiffKernels, CublasEngineWithoutRangesFindsItsFp32Gemms) {
  LOAD_RECORDED_RUN(kGpu + "engine_fp32.mgt", a);
  LOAD_RECORDED_RUN(kGpu + "engine_tf32.mgt", b);
  a->ranges.clear();
  b->ranges.clear();
  ASSERT_TRUE(MatchesByKernels(*a, *b));
  auto r = DiffRuns(*a, *b, nullptr, nullptr, WithRules());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->matched_by_kernels);
  EXPECT_TRUE(r->energy_measured);
  ASSERT_GE(r->waste_count(), 1);
  const Finding& f = r->findings.front();
  EXPECT_EQ(f.costly, 'a');
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kKernels);
  EXPECT_TRUE(Names(f.evidence.front().only_a, "gemm_f32f32_f32f32_f32"));
  EXPECT_TRUE(Names(f.evidence.front().only_b, "tf32"));
  ASSERT_FALSE(f.rules.empty());
  EXPECT_EQ(f.rules.front().id, "fp32-kernels-not-tf32");
  // Ground truth on the H200 (cases/groundtruth-h200.json): fp32 costs 6.45x the energy.
  EXPECT_NEAR(f.a.joules / f.b.joules, 6.45, 1.3) << f.label;
}

TEST(DiffKernels, TwoEngineRecordingsOfTheSameSideAreNoWaste) {
  LOAD_RECORDED_RUN(kGpu + "engine_fp32.mgt", a);
  LOAD_RECORDED_RUN(kGpu + "engine_fp32_again.mgt", b);
  a->ranges.clear();
  b->ranges.clear();
  auto r = DiffRuns(*a, *b, nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->matched_by_kernels);
  for (const auto& f : r->findings) EXPECT_EQ(f.verdict, Verdict::kNoise) << f.label << ": " << f.why;
}

// A real model's kernels with its operators taken out: the UNet-like model of
// `magneton demo --case unet-tf32`, measured on the H200 with TF32 off (a)
// and on (b), each 20 iterations (tests/data/diff/gpu/unet_*-measured.mgt).
Run WithoutOperators(Run run) {
  run.ops.clear();
  run.tensors.clear();
  for (auto& k : run.kernels) k.op = kNone;
  for (auto& t : run.transfers) t.op = kNone;
  return run;
}

TEST(DiffKernels, UnetWithTf32OffLaunchesFp32Kernels) {
  LOAD_RECORDED_RUN(kGpu + "unet_fp32-measured.mgt", a);
  LOAD_RECORDED_RUN(kGpu + "unet_tf32-measured.mgt", b);
  magneton::Run ra = WithoutOperators(*a), rb = WithoutOperators(*b);
  ASSERT_TRUE(MatchesByKernels(ra, rb));
  auto r = DiffRuns(ra, rb, nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  // 20 iterations of 53 and 59 kernels; the step is cut where both sides
  // launch the same kernel, so the first and last iterations are partial.
  EXPECT_TRUE(Noted(*r, "run a: an iteration is one repetition of a step of 53 kernels and copies (19 repetitions"))
      << Dump(*r);
  EXPECT_TRUE(Noted(*r, "run b: an iteration is one repetition of a step of 59 kernels and copies (19 repetitions"));
  // Where the FP32 side runs FFMA GEMMs and convolutions, TF32 runs
  // tensor-core kernels: waste on a, at several places, one cause (the
  // configuration keys that differ), so one finding.
  int fp32 = 0;
  for (const auto& f : r->findings) {
    if (f.verdict != Verdict::kWaste || f.evidence_class() != EvidenceClass::kKernels) continue;
    EXPECT_EQ(f.costly, 'a') << f.label;
    const Evidence& e = f.evidence.front();
    EXPECT_TRUE(Names(e.only_a, "f32f32_f32f32_f32")) << e.summary;
    EXPECT_TRUE(Names(e.only_b, "tf32") || Names(e.only_b, "tensorop")) << e.summary;
    EXPECT_TRUE(Contains(f.label, "more places with kernels the configuration chose")) << f.label;
    EXPECT_GE(f.regions.size(), 3u) << f.label;
    bool tf32_key = false;
    for (const auto& c : e.config) tf32_key |= Contains(c.key, "allow_tf32");
    EXPECT_TRUE(tf32_key) << e.summary;
    ++fp32;
  }
  EXPECT_EQ(fp32, 1) << Dump(*r);
  // These measured passes recorded every operator, so their host was slow to
  // launch: the device waits between kernels on both sides (timeline findings
  // in either direction), the FP32 side's kernels are what differs.
  // A/A: each against itself.
  for (const magneton::Run* run : {&ra, &rb}) {
    auto same = DiffRuns(*run, *run, nullptr, nullptr, DiffOptions{});
    ASSERT_TRUE(same.ok());
    EXPECT_EQ(same->waste_count(), 0);
  }
}

// GPT-2 (2 layers) recorded on the H200 by the injection library
// (tests/data/cupti/gpt2-small.mgt), its NVTX ranges taken out. The other side
// is a copy made here to model "the same program with TF32 on": its FP32 FFMA
// GEMM kernels renamed to TF32 tensor-core ones and given a third of their
// device time (the engine case measured 6-7x on the H200). Not a recording:
// it checks that a real kernel stream is stepped, aligned and diffed, and
// that renamed kernels at the same places become `kernels` findings.
magneton::Run WithTf32Gemms(magneton::Run run) {
  auto replace = [](std::string& s, const std::string& from, const std::string& to) {
    if (auto at = s.find(from); at != std::string::npos) s.replace(at, from.size(), to);
  };
  for (auto& k : run.kernels) {
    if (k.name.find("f32f32_f32f32_f32") == std::string::npos && k.name.find("simt_sgemm") == std::string::npos)
      continue;
    replace(k.name, "f32f32_f32f32_f32", "f32f32_tf32f32_f32");
    replace(k.name, "ffma", "tensor16x8x8");
    replace(k.name, "simt_sgemm", "tensorop_s1688gemm");
    k.end_ns = k.start_ns + (k.end_ns - k.start_ns) / 3;
  }
  return run;
}

TEST(DiffKernels, Gpt2KernelStreamAgainstAModelOfItWithTf32) {
  LOAD_RECORDED_RUN(std::string(MAGNETON_TEST_DATA) + "/cupti/gpt2-small.mgt", run);
  run->ranges.clear();
  magneton::Run tf32 = WithTf32Gemms(*run);
  auto same = DiffRuns(*run, *run, nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(same.ok()) << same.error().message;
  EXPECT_TRUE(same->matched_by_kernels);
  EXPECT_TRUE(Noted(*same, "run a: an iteration is one repetition of a step of 47 kernels and copies (5 repetitions"))
      << Dump(*same);
  EXPECT_EQ(same->waste_count(), 0) << Dump(*same);

  auto r = DiffRuns(*run, tf32, nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_GE(r->waste_count(), 1) << Dump(*r);
  EXPECT_TRUE(Noted(*r, "run b: an iteration is one repetition of a step of 47 kernels and copies (5 repetitions"));
  // The renamed GEMMs are `kernels` waste on a. This recording is launch-bound
  // (the device waits for the host over 90% of an iteration), so the time b's
  // GEMMs no longer take is spent waiting for the next launch: the kernels
  // after them cost b more, as `timeline` findings.
  int gemms = 0;
  for (const auto& f : r->findings) {
    if (f.verdict != Verdict::kWaste) continue;
    if (f.evidence_class() == EvidenceClass::kTimeline) {
      EXPECT_EQ(f.costly, 'b') << f.label;
      EXPECT_GT(f.b.wait_seconds, f.a.wait_seconds) << f.label;
      continue;
    }
    EXPECT_EQ(f.costly, 'a') << f.label;
    ASSERT_EQ(f.evidence_class(), EvidenceClass::kKernels) << Dump(*r);
    EXPECT_TRUE(Names(f.evidence.front().only_a, "ffma") || Names(f.evidence.front().only_a, "simt_sgemm"));
    EXPECT_TRUE(Names(f.evidence.front().only_b, "tensor"));
    ++gemms;
  }
  EXPECT_GE(gemms, 4) << Dump(*r);
}

}  // namespace
}  // namespace magneton::analysis

namespace magneton::analysis {
namespace {

// A recording pass's kernels with the launch call each correlates with; the
// recorder's own kernels (fingerprints) launched one by one either way.
magneton::Run Launched(const std::vector<std::pair<std::string, int>>& calls) {
  magneton::Run run;
  int64_t corr = 1;
  auto kernel = [&](int64_t op) {
    magneton::Kernel k;
    k.id = static_cast<int64_t>(run.kernels.size());
    k.name = "gemm";
    k.op = op;
    k.correlation = corr;
    run.kernels.push_back(k);
  };
  for (const auto& [name, kernels] : calls) {
    run.api_calls.push_back({static_cast<int64_t>(run.api_calls.size()), name, "runtime", 1, 0, 1, corr, kNone});
    for (int i = 0; i < kernels; ++i) kernel(kNone);
    ++corr;
  }
  for (int i = 0; i < 3; ++i, ++corr) {
    run.api_calls.push_back({static_cast<int64_t>(run.api_calls.size()), "cudaLaunchKernel_v7000", "runtime", 1, 0, 1,
                             corr, kNone});
    kernel(kRecorderWork);
  }
  return run;
}

TEST(LaunchCalls, AGraphReplayedOnOneSideIsNamedWithTheCallsOfEach) {
  magneton::Run eager = Launched({{"cudaLaunchKernel_v7000", 1}, {"cudaLaunchKernel_v7000", 1}, {"cuLaunchKernel", 1}});
  magneton::Run graph = Launched({{"cudaGraphLaunch_v10000", 3}});
  EXPECT_EQ(LaunchCalls(eager), (std::map<std::string, int64_t>{{"cuLaunchKernel", 1}, {"cudaLaunchKernel", 2}}));
  EXPECT_EQ(LaunchCalls(graph), (std::map<std::string, int64_t>{{"cudaGraphLaunch", 1}}));
  auto e = LaunchCallEvidence(eager, graph);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, EvidenceClass::kTimeline);
  EXPECT_NE(e->summary.find("cuLaunchKernel x1 + cudaLaunchKernel x2 on a and cudaGraphLaunch x1 on b: b replays"),
            std::string::npos)
      << e->summary;
  // Launched alike, or without launch rows: nothing to tell.
  EXPECT_FALSE(LaunchCallEvidence(eager, eager).has_value());
  EXPECT_FALSE(LaunchCallEvidence(graph, magneton::Run{}).has_value());
}

}  // namespace
}  // namespace magneton::analysis
