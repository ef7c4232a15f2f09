// The diff of runs that hold kernels and NVTX ranges but no operator values
// (range_regions.h): the cublas-engine case as recorded on the H200
// (tests/data/diff/gpu/engine_*.mgt: one chain of fp32 GEMMs, CUBLAS_COMPUTE_32F vs
// CUBLAS_COMPUTE_32F_FAST_TF32), and engine-shaped runs built here.
//
// engine_fp32.mgt, engine_tf32.mgt (the case's runs) and engine_fp32_again.mgt
// (a second FP32 recording) were made on the H200 (2026-12-04, driver 580.159.04), each
// `magneton record --api all --only-ranges magneton.case/measured -- engine
// --compute fp32|tf32 --seconds 1 --warmup 1`. They hold the launches (CUDA
// API calls), so every GEMM counts in the layer range that launched it.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/diff/diff.h"
#include "analysis/diff/range_regions.h"
#include "diff_fixture.h"
#include "recorded_runs.h"

namespace magneton::analysis {
namespace {

const std::string kGpu = testing::GpuRuns();

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

bool Noted(const DiffReport& r, const std::string& part) {
  return std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& n) { return Contains(n, part); });
}

bool Names(const std::vector<NamedCount>& v, const std::string& part) {
  return std::any_of(v.begin(), v.end(), [&](const NamedCount& n) { return Contains(n.name, part); });
}


TEST(DiffRanges, CublasEngineFp32GemmsAreWasteAgainstTf32) {
  LOAD_RECORDED_RUN(kGpu + "engine_fp32.mgt", a);
  LOAD_RECORDED_RUN(kGpu + "engine_tf32.mgt", b);
  ASSERT_TRUE(a->ops.empty() && b->ops.empty());
  ASSERT_TRUE(MatchesByRanges(*a, *b));
  auto r = DiffRuns(*a, *b, nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->matched_by_range);
  EXPECT_FALSE(r->regions.empty());
  EXPECT_EQ(r->a.ops, 0);  // NVTX-derived ops are not recorded operators
  EXPECT_TRUE(Noted(*r, "matched by NVTX range name"));
  EXPECT_TRUE(Noted(*r, "run a holds no configuration snapshot"));
  EXPECT_TRUE(r->energy_measured);
  EXPECT_FALSE(Noted(*r, "no launch record"));  // --api all: every kernel has its launch
  // b ran more iterations in its second: its extra instances are named, not compared.
  EXPECT_GT(r->unmatched_ops_b, 0);
  // The engine says nothing of iterations: they are the instances of its outermost repeated range.
  EXPECT_EQ(r->a.iterations, 175);  // in the measured range; one more ran under engine/warmup
  EXPECT_GT(r->b.iterations, r->a.iterations);
  EXPECT_TRUE(Noted(*r, "an iteration is one instance of NVTX range magneton.case/measured > engine/iteration "
                        "(175 in run a, " + std::to_string(r->b.iterations) + " in run b)"));
  EXPECT_TRUE(Noted(*r, "NVTX ranges only in run b"));

  // The top finding: the FP32 side wastes, because it launches other kernels.
  ASSERT_GT(r->waste_count(), 0);
  const Finding& top = r->findings.front();
  EXPECT_EQ(top.verdict, Verdict::kWaste);
  EXPECT_EQ(top.costly, 'a');
  EXPECT_EQ(top.evidence_class(), EvidenceClass::kKernels);

  // The eight gemm_chain layer ranges make one substitution, told once: one
  // waste finding, kernels named on each side (full-FP32 FFMA GEMMs on a,
  // TF32 tensor-core GEMMs on b), costed over all eight.
  int layers = 0;
  for (const auto& lf : r->findings) layers += Contains(lf.label, "gemm_chain/layer");
  ASSERT_EQ(layers, 1);
  const Finding& f = top;
  EXPECT_TRUE(Contains(f.label, "engine/iteration > gemm_chain/layer")) << f.label;
  EXPECT_TRUE(Contains(f.label, "and 7 more places with the same kernels")) << f.label;
  EXPECT_GT(f.regions.size(), 8 * 100u);  // one per layer and measured iteration of a
  EXPECT_GT(f.cost_delta_pct, 100) << f.why;
  EXPECT_FALSE(f.outputs_compared);
  EXPECT_TRUE(Contains(f.why, "outputs not compared")) << f.why;
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kKernels);
  const Evidence& e = f.evidence.front();
  EXPECT_TRUE(Names(e.only_a, "gemm_f32f32_f32f32_f32") && Names(e.only_a, "ffma")) << e.summary;
  EXPECT_TRUE(Names(e.only_b, "xmma_gemm_f32f32_tf32f32")) << e.summary;
  EXPECT_FALSE(Names(e.only_a, "tf32"));
  ASSERT_EQ(e.only_a.size(), 1u);
  EXPECT_EQ(e.only_a[0].count, 8);  // one per layer
  EXPECT_TRUE(e.config.empty());    // no snapshot on either side: no key can be named
  // Ground truth on the H200 (cases/groundtruth-h200.json): fp32 costs 6.45x the energy.
  EXPECT_NEAR(f.a.joules / f.b.joules, 6.45, 1.3) << f.label;
  EXPECT_NEAR(f.saved_per_iteration, (f.a.cost() - f.b.cost()) / 175, 1e-9 * f.a.cost()) << f.label;
}

TEST(DiffRanges, TheSameRecordingTwiceIsNoWaste) {
  for (const char* file : {"engine_fp32.mgt", "engine_tf32.mgt"}) {
    LOAD_RECORDED_RUN(kGpu + file, run);
    auto r = DiffRuns(*run, *run, nullptr, nullptr, DiffOptions{});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->matched_by_range);
    EXPECT_FALSE(r->regions.empty());
    EXPECT_EQ(r->waste_count(), 0) << file << ": " << r->findings.front().label << ": " << r->findings.front().why;
    for (const auto& f : r->findings) EXPECT_NE(f.verdict, Verdict::kTradeOff) << f.label;
  }
}

TEST(DiffRanges, TwoRecordingsOfTheSameSideAreNoWaste) {
  LOAD_RECORDED_RUN(kGpu + "engine_fp32.mgt", a);
  LOAD_RECORDED_RUN(kGpu + "engine_fp32_again.mgt", b);
  auto r = DiffRuns(*a, *b, nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->matched_by_range);
  EXPECT_GT(r->regions.size(), 1000u);
  for (const auto& f : r->findings) EXPECT_EQ(f.verdict, Verdict::kNoise) << f.label << ": " << f.why;
  // One side without its launch records puts the same kernels elsewhere: the report warns.
  a->api_calls.clear();
  auto mixed = DiffRuns(*a, *b, nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(mixed.ok());
  EXPECT_TRUE(Noted(*mixed, "run a places its kernels by where they ran and run b by their launch"));
}

// An engine-shaped run: each iteration a range holding one range per layer;
// every layer launches one GEMM (a cudaLaunchKernel record on the thread),
// which runs on the device after its range has closed, and the iteration
// itself launches a copy kernel after its layers.
struct Engine {
  Run run;
  int64_t t = 1'000'000;
  int64_t correlation = 1;
  std::vector<int64_t> open;  // range ids pushed and not yet popped

  explicit Engine(const std::string& command) {
    run.info.command = command;
    run.info.start_ns = t;
    run.devices.push_back({0, "gpu", "NVIDIA H200", "GPU-0000", 0, 141LL << 30});
  }
  void Push(const std::string& name) {
    Range r;
    r.id = static_cast<int64_t>(run.ranges.size());
    r.name = name;
    r.thread = 7;
    r.start_ns = t++;
    r.parent = open.empty() ? kNone : open.back();
    run.ranges.push_back(r);
    open.push_back(r.id);
  }
  void Pop() {
    run.ranges[open.back()].end_ns = t++;
    open.pop_back();
  }
  // Launched now, on the device `delay` ns later, for `ns`.
  void Launch(const std::string& kernel, int64_t delay, int64_t ns) {
    ApiCall a;
    a.id = static_cast<int64_t>(run.api_calls.size());
    a.name = "cudaLaunchKernel";
    a.domain = "runtime";
    a.thread = 7;
    a.start_ns = t;
    a.end_ns = t + 5;
    a.correlation = correlation;
    run.api_calls.push_back(a);
    Kernel k;
    k.id = static_cast<int64_t>(run.kernels.size());
    k.name = kernel;
    k.start_ns = t + delay;
    k.end_ns = t + delay + ns;
    k.correlation = correlation++;
    run.kernels.push_back(k);
    t += 10;
  }
  void Iteration(const std::string& layer1_kernel, int64_t layer1_ns) {
    Push("engine/iteration");
    Push("gemm_chain/layer0");
    Launch("sgemm_128x128", 100'000, 20'000);
    Pop();
    Push("gemm_chain/layer1");
    Launch(layer1_kernel, 100'000, layer1_ns);
    Pop();
    Launch("copy_kernel", 100'000, 5'000);
    Pop();
    t += 500'000;
  }
  Run Done() {
    run.info.end_ns = t + 1000;
    return run;
  }
};

TEST(DiffRanges, EachRangeCostsTheKernelsLaunchedInItAndNotInItsSubRanges) {
  Engine a("engine --compute fp32"), b("engine --compute tf32");
  for (int i = 0; i < 3; ++i) {
    a.Iteration("sgemm_128x128", 40'000);
    b.Iteration("xmma_tf32_gemm", 10'000);
  }
  b.Push("engine/checksum");  // on one side only
  b.Launch("reduce_kernel", 10, 1'000);
  b.Pop();
  magneton::Run ra = a.Done(), rb = b.Done();
  ASSERT_TRUE(MatchesByRanges(ra, rb));

  RangeRun derived = WithRangeOps(ra);
  EXPECT_EQ(derived.kernels_placed_by_start, 0);
  for (const auto& k : derived.run.kernels) {
    ASSERT_NE(k.op, kNone) << k.name;
    const std::string& path = derived.run.ops[k.op].name;
    if (k.name == "copy_kernel") {
      EXPECT_EQ(path, "engine/iteration");
    } else if (k.name == "sgemm_128x128" && path != "engine/iteration > gemm_chain/layer0") {
      EXPECT_EQ(path, "engine/iteration > gemm_chain/layer1");
    }
  }

  auto r = DiffRuns(ra, rb, nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->regions.size(), 9u);  // 3 paths x 3 iterations
  EXPECT_EQ(r->unmatched_ops_b, 1);
  EXPECT_TRUE(Noted(*r, "NVTX ranges only in run b (or more often than in run a), not compared: engine/checksum"));
  EXPECT_FALSE(Noted(*r, "no launch record"));
  ASSERT_EQ(r->waste_count(), 1);
  const Finding& f = r->findings.front();
  EXPECT_EQ(f.label, "engine/iteration > gemm_chain/layer1");
  EXPECT_EQ(f.regions.size(), 3u);
  EXPECT_EQ(f.costly, 'a');
  EXPECT_NEAR(f.a.seconds, 3 * 40e-6, 1e-12);  // its own GEMM only, not the copy of its parent
  EXPECT_NEAR(f.b.seconds, 3 * 10e-6, 1e-12);
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kKernels);
  EXPECT_EQ(f.evidence.front().all_a.size(), 1u);
  EXPECT_TRUE(Names(f.evidence.front().only_b, "xmma_tf32_gemm"));
  EXPECT_EQ(r->a.iterations, 3);  // engine/iteration, the outermost repeated path (engine/checksum runs once)
  EXPECT_EQ(r->b.iterations, 3);
  EXPECT_NEAR(f.saved_per_iteration, 30e-6, 1e-12);  // time here: no energy; per iteration of a
  EXPECT_TRUE(Noted(*r, "an iteration is one instance of NVTX range engine/iteration (3 in run a, 3 in run b)"));
  // A count the user gives, or one the run states, wins over the inferred one.
  DiffOptions given;
  given.iterations = 1;
  auto once = DiffRuns(ra, rb, nullptr, nullptr, given);
  ASSERT_TRUE(once.ok());
  EXPECT_EQ(once->a.iterations, 1);
  EXPECT_NEAR(once->findings.front().saved_per_iteration, 90e-6, 1e-12);
  EXPECT_FALSE(Noted(*once, "an iteration is one instance"));
  ra.info.extra["iterations"] = "6";
  EXPECT_EQ(WithRangeOps(ra).run.info.extra.at("iterations"), "6");
  EXPECT_TRUE(WithRangeOps(ra).iteration_range.empty());
  auto stated = DiffRuns(ra, rb, nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(stated.ok());
  EXPECT_EQ(stated->a.iterations, 6);
  EXPECT_TRUE(Noted(*stated, "run b: an iteration is one instance of NVTX range engine/iteration (3 in the run)"));
  // The layer that runs the same kernel, and the iteration's own copy, are noise.
  for (const auto& g : r->findings) {
    if (g.label != f.label) {
      EXPECT_EQ(g.verdict, Verdict::kNoise) << g.label << ": " << g.why;
    }
  }
}

TEST(DiffRanges, RunsWithValuesAreMatchedByValues) {
  fixture::Pair p = fixture::Conv1DPair(2, 1, 1.3, 1.0);
  magneton::Run a = p.a.b.run, b = p.b.b.run;
  for (magneton::Run* run : {&a, &b}) {
    Range r;
    r.name = "step";
    r.thread = 77;
    r.start_ns = run->info.start_ns;
    r.end_ns = run->info.end_ns;
    run->ranges.push_back(r);
  }
  EXPECT_FALSE(MatchesByRanges(a, b));
  auto r = DiffRuns(a, b, nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->matched_by_range);
  for (const auto& f : r->findings) EXPECT_TRUE(f.outputs_compared);
  // Without ranges or kernels on one side, there is nothing to match by name either.
  magneton::Run no_ranges = Engine("engine").Done();
  EXPECT_FALSE(MatchesByRanges(no_ranges, no_ranges));
}

}  // namespace
}  // namespace magneton::analysis
