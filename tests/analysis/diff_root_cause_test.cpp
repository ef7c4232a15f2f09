// Root cause: evidence classes, call sites, launch-path divergence, config
// keys and the rules shipped in rules/ (docs/diff.md).
#include <gtest/gtest.h>

#include "analysis/diff/call_site.h"
#include "analysis/diff/diff.h"
#include "analysis/diff/root_cause.h"
#include "analysis/diff/rules.h"
#include "core/store.h"
#include "diff_fixture.h"
#include "recorded_diff.h"

namespace magneton::analysis {
namespace {

using fixture::Pair;

const std::string kRulesDir = std::string(MAGNETON_TEST_DATA) + "/../../rules";

std::vector<Rule> ShippedRules() {
  auto rules = LoadRulesDir(kRulesDir);
  EXPECT_TRUE(rules.ok()) << rules.error().message;
  return rules.ok() ? *rules : std::vector<Rule>{};
}

DiffReport DiffPair(const Pair& p, DiffOptions o = {}) {
  o.rules = ShippedRules();
  return Diff(p.a.b.run, p.b.b.run, p.match, p.a.Energy(), p.b.Energy(), o);
}

bool HasRule(const Finding& f, const std::string& id) {
  for (const auto& h : f.rules)
    if (h.id == id) return true;
  return false;
}

TEST(DiffRootCause, DifferentOperatorsNameBothSidesAndTheirCallSites) {
  Pair p = fixture::Conv1DPair(12, 1, 1.20, 1.0);
  DiffReport r = DiffPair(p);
  const Finding& f = r.findings.at(0);
  ASSERT_EQ(f.verdict, Verdict::kWaste);
  EXPECT_EQ(f.evidence_class(), EvidenceClass::kOperators);
  const Evidence& e = f.evidence[0];
  ASSERT_EQ(e.only_a.size(), 1u);
  EXPECT_EQ(e.only_a[0].name, "aten::addmm");
  EXPECT_EQ(e.only_a[0].call_site.line, 119);
  EXPECT_NE(e.only_a[0].call_site.file.find("transformers/pytorch_utils.py"), std::string::npos);
  ASSERT_EQ(e.only_b.size(), 2u);
  std::set<std::string> b_names{e.only_b[0].name, e.only_b[1].name};
  EXPECT_EQ(b_names, (std::set<std::string>{"aten::mm", "aten::add"}));
  EXPECT_EQ(e.only_b[0].call_site.line, 41);
  // Views are metadata: not listed as operators.
  for (const auto& nc : e.all_a) EXPECT_NE(nc.name, "aten::view");
  // The call paths share the script and torch's module call, then part.
  EXPECT_EQ(e.divergence.depth, 2);
  EXPECT_EQ(e.divergence.frame_a.line, 119);
  EXPECT_EQ(e.divergence.frame_b.line, 41);
  EXPECT_EQ(e.divergence.common.file.find("torch/nn/modules/module.py") != std::string::npos, true);
  // Kernels differ too, as weaker evidence after the operators.
  ASSERT_GE(f.evidence.size(), 2u);
  EXPECT_EQ(f.evidence[1].kind, EvidenceClass::kKernels);
  // The shipped rule for this pattern: b splits the bias add out of the GEMM.
  EXPECT_TRUE(HasRule(f, "bias-add-split-from-gemm"));
  EXPECT_FALSE(HasRule(f, "fused-addmm-costlier"));
  EXPECT_FALSE(HasRule(f, "tf32-matmul-off"));
}

TEST(DiffRootCause, FusedAddmmCostlierGetsItsOwnRecommendation) {
  Pair p = fixture::Conv1DPair(12, 1, 0.80, 1.0);  // now a (addmm) is the costly side
  DiffReport r = DiffPair(p);
  const Finding& f = r.findings.at(0);
  ASSERT_EQ(f.verdict, Verdict::kWaste) << f.why;
  EXPECT_EQ(f.costly, 'a');
  EXPECT_TRUE(HasRule(f, "fused-addmm-costlier"));
  EXPECT_FALSE(HasRule(f, "bias-add-split-from-gemm"));
}

TEST(DiffRootCause, SameOperatorsDifferentKernelsNameTheSteeringConfigKey) {
  Pair p = fixture::Tf32Pair(8, 1.35, 1.5);
  p.a.b.run.config["unrelated.key"] = "x";
  DiffReport r = DiffPair(p);
  const Finding& f = r.findings.at(0);
  ASSERT_EQ(f.verdict, Verdict::kWaste) << f.why;
  EXPECT_EQ(f.costly, 'a');
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kKernels);
  const Evidence& e = f.evidence[0];
  EXPECT_NE(e.summary.find("same operators"), std::string::npos) << e.summary;
  ASSERT_EQ(e.only_a.size(), 1u);
  EXPECT_NE(e.only_a[0].name.find("simt"), std::string::npos);
  EXPECT_NE(e.only_b[0].name.find("tensorop"), std::string::npos);
  // Launch paths: script, module call, unet_like.py, linear.py, at::cuda::blas::gemm are
  // shared; cuBLAS's pick is the first difference.
  EXPECT_EQ(e.divergence.depth, 5);
  EXPECT_EQ(e.divergence.common.function, "at::cuda::blas::gemm<float>");
  EXPECT_EQ(e.divergence.frame_a.function, "cublasLtSgemmSimt");
  EXPECT_EQ(e.divergence.frame_b.function, "cublasLtTf32TensorOpGemm");
  EXPECT_EQ(e.divergence.frame_a.kind, "native");
  // Only the keys known to steer GEMM kernels, not every differing key.
  ASSERT_EQ(e.config.size(), 1u);
  EXPECT_EQ(e.config[0].key, "torch.backends.cuda.matmul.allow_tf32");
  EXPECT_EQ(e.config[0].value_a, "False");
  EXPECT_EQ(e.config[0].value_b, "True");
  ASSERT_TRUE(HasRule(f, "tf32-matmul-off"));
  for (const auto& h : f.rules)
    if (h.id == "tf32-matmul-off") {
      EXPECT_NE(h.recommendation.find("torch.backends.cuda.matmul.allow_tf32 is False on the costlier side"),
                std::string::npos)
          << h.recommendation;
      EXPECT_EQ(h.recommendation.find("{key}"), std::string::npos);
    }
  EXPECT_FALSE(HasRule(f, "tf32-conv-off"));  // no convolution in the region
  EXPECT_EQ(r.config.size(), 3u);             // the report still lists every differing key
}

TEST(DiffRootCause, KeysARunDoesNotSnapshotSteerNothing) {
  // Another framework's run (JAX) has no torch.* keys: their absence is not a setting.
  Pair p = fixture::Tf32Pair(8, 1.35, 1.5);
  auto& cb = p.b.b.run.config;
  for (auto it = cb.begin(); it != cb.end();) it = it->first.rfind("torch.", 0) == 0 ? cb.erase(it) : std::next(it);
  cb["env.CUDA_VISIBLE_DEVICES"] = "0";
  p.a.b.run.config["env.NVIDIA_TF32_OVERRIDE"] = "0";  // set on one side only: still a difference
  DiffReport r = DiffPair(p);
  const Finding& f = r.findings.at(0);
  ASSERT_EQ(f.verdict, Verdict::kWaste) << f.why;
  ASSERT_EQ(f.evidence[0].config.size(), 1u);
  EXPECT_EQ(f.evidence[0].config[0].key, "env.NVIDIA_TF32_OVERRIDE");
  ASSERT_TRUE(HasRule(f, "tf32-matmul-off"));  // fired by the variable, not by the missing torch.* keys
  for (const auto& h : f.rules)
    if (h.id == "tf32-matmul-off") {
      EXPECT_EQ(h.recommendation.rfind("env.NVIDIA_TF32_OVERRIDE is 0", 0), 0u) << h.recommendation;
    }
  bool listed = false;
  for (const auto& d : r.config) listed |= d.key == "torch.backends.cuda.matmul.allow_tf32";
  EXPECT_TRUE(listed);  // the report still lists every differing key
}

TEST(DiffRootCause, KeysNoRuleNamesAreCandidatesWhereNothingElseDiffers) {
  // Different GEMM kernels for the same operator on the same inputs, and no
  // TF32 key differs: a key no rule knows did it (here: the BLAS library).
  Pair p = fixture::Tf32Pair(8, 1.35, 1.5);
  p.b.b.run.config = p.a.b.run.config;
  p.a.b.run.config["torch.backends.cuda.preferred_blas_library"] = "cublas";
  p.b.b.run.config["torch.backends.cuda.preferred_blas_library"] = "cublaslt";
  p.a.b.run.config["env.CUBLAS_WORKSPACE_CONFIG"] = ":16:8";
  p.b.b.run.config["env.CUBLAS_WORKSPACE_CONFIG"] = ":4096:8";
  p.b.b.run.config["version.cuda"] = "13.0";
  p.a.b.run.config["version.cuda"] = "12.8";
  DiffReport r = DiffPair(p);
  const Finding& f = r.findings.at(0);
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kKernels) << f.label;
  const auto& keys = f.evidence[0].config;
  ASSERT_EQ(keys.size(), 3u);
  // The operators' own framework first, then the environment, then the rest.
  EXPECT_EQ(keys[0].key, "torch.backends.cuda.preferred_blas_library");
  EXPECT_EQ(keys[1].key, "env.CUBLAS_WORKSPACE_CONFIG");
  EXPECT_EQ(keys[2].key, "version.cuda");
  for (const auto& k : keys) EXPECT_FALSE(k.by_rule) << k.key;
  EXPECT_FALSE(HasRule(f, "tf32-matmul-off"));
  // Where the inputs' layouts differ, they explain the kernels: no candidates.
  Pair strided = fixture::LaunchPair(5, 1.3);
  strided.a.b.run.config["torch.backends.cuda.preferred_blas_library"] = "cublas";
  DiffReport s = DiffPair(strided);
  for (const auto& e : s.findings.at(0).evidence)
    for (const auto& k : e.config) EXPECT_TRUE(k.by_rule) << k.key;
  // Where the operators differ (addmm against mm + add), they explain the kernels.
  Pair ops = fixture::Conv1DPair(12, 1, 0.80, 1.0);
  ops.a.b.run.config["torch.backends.cuda.preferred_blas_library"] = "cublas";
  ops.b.b.run.config["torch.backends.cuda.preferred_blas_library"] = "cublaslt";
  DiffReport o = DiffPair(ops);
  ASSERT_EQ(o.findings.at(0).evidence_class(), EvidenceClass::kOperators);
  for (const auto& e : o.findings.at(0).evidence) EXPECT_TRUE(e.config.empty()) << ToString(e.kind);
}

TEST(DiffRootCause, SameKernelsDifferentLaunchAndLayout) {
  Pair p = fixture::LaunchPair(5, 1.3);
  DiffReport r = DiffPair(p);
  const Finding& f = r.findings.at(0);
  ASSERT_EQ(f.verdict, Verdict::kWaste) << f.why;
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kLaunch);
  const Evidence& e = f.evidence[0];
  std::map<std::string, const ParamDelta*> by_param;
  for (const auto& d : e.params) by_param[d.parameter] = &d;
  ASSERT_TRUE(by_param.count("grid"));
  EXPECT_EQ(by_param["grid"]->value_a, "(1024,1,1)");
  EXPECT_EQ(by_param["grid"]->value_b, "(4096,1,1)");
  ASSERT_TRUE(by_param.count("strides"));
  EXPECT_EQ(by_param["strides"]->value_a, "[1024,1]");
  EXPECT_EQ(by_param["strides"]->value_b, "[1,512]");
  ASSERT_TRUE(by_param.count("contiguous"));
  EXPECT_EQ(by_param["contiguous"]->value_b, "no");
  EXPECT_NE(e.summary.find("same kernels"), std::string::npos) << e.summary;
  EXPECT_TRUE(HasRule(f, "non-contiguous-input"));
}

// An LM head over every prompt position (a) against the last position only
// (b): the same aten::mm, different GEMM kernels, and a's input holds 512x the
// elements for the same outputs.
TEST(DiffRootCause, SameOperatorsOnMoreDataIsDiscardedWorkNotKernelChoice) {
  Pair p = fixture::OneOpRegions(3, [](fixture::Side& s, bool is_a) {
    auto& fb = s.b;
    int64_t py = s.PyStack({fb.Frame("python", "next_token_logits", "/work/generate.py", 26)});
    int64_t x = is_a ? fb.Tensor({4096, 768}, 0.3) : fb.Tensor({8, 768}, 0.3);
    int64_t w = fb.Tensor({768, 50257}, 0.0);
    int64_t y = fb.Tensor({8, 50257}, 0.6);
    int64_t op = fb.Op("aten::mm", kNone, s.t, 0, py, {x, w}, {y});
    s.K(is_a ? "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8" : "void sgemm_largek_lds64", op,
        is_a ? 6'000'000 : 80'000, is_a ? 4.0 : 0.05, 132);
    fb.run.ops[op].end_ns = s.t;
    return fixture::OneOp{op, x, y};
  });
  DiffReport r = DiffPair(p);
  const Finding& f = r.findings.at(0);
  ASSERT_EQ(f.verdict, Verdict::kWaste) << f.why;
  EXPECT_EQ(f.costly, 'a');
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kLaunch);
  const Evidence& e = f.evidence[0];
  EXPECT_NE(e.summary.find("same operators on more data: aten::mm input 0 is [4096,768] on a against [8,768] on b "
                           "(512x the elements)"),
            std::string::npos)
      << e.summary;
  std::map<std::string, const ParamDelta*> by_param;
  for (const auto& d : e.params) by_param[d.parameter] = &d;
  ASSERT_TRUE(by_param.count("elements"));
  EXPECT_EQ(by_param["elements"]->value_a, "3145728");
  EXPECT_EQ(by_param["elements"]->value_b, "6144");
  EXPECT_TRUE(HasRule(f, "discarded-work"));
  // The different kernels follow, as the second piece of evidence.
  ASSERT_GE(f.evidence.size(), 2u);
  EXPECT_EQ(f.evidence[1].kind, EvidenceClass::kKernels);
}

// A decoding step over the whole sequence (a) against one with a cache (b):
// b runs an operator of its own (the cache's cat), a nothing a lacks but the
// same matrix product on every position. The extra data leads; b's cat backs it.
TEST(DiffRootCause, MoreDataLeadsWhereOnlyTheLeanerSideRunsOperatorsOfItsOwn) {
  Pair p;
  for (int i = 0; i < 3; ++i) {
    int64_t region_op[2] = {kNone, kNone}, cat = kNone, in[2] = {0, 0}, out[2] = {0, 0};
    for (bool is_a : {true, false}) {
      fixture::Side& s = is_a ? p.a : p.b;
      auto& fb = s.b;
      int64_t py = s.PyStack({fb.Frame("python", "forward", "/work/decode.py", 14)});
      int64_t x = is_a ? fb.Tensor({18, 768}, 0.3) : fb.Tensor({1, 768}, 0.3);
      int64_t w = fb.Tensor({768, 768}, 0.0);
      int64_t y = fb.Tensor({1, 768}, 0.6);
      int64_t h = x;
      if (!is_a) {
        h = fb.Tensor({1, 768}, 0.35);
        cat = fb.Op("aten::cat", kNone, s.t, 0, py, {x}, {h});
        s.K("void at::native::CatArrayBatchedCopy", cat, 20'000, 0.01, 8);
        fb.run.ops[cat].end_ns = s.t;
      }
      int64_t mm = fb.Op("aten::mm", kNone, s.t, 0, py, {h, w}, {y});
      s.K("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n", mm, is_a ? 900'000 : 100'000, is_a ? 0.9 : 0.1, 132);
      fb.run.ops[mm].end_ns = s.t;
      region_op[is_a ? 0 : 1] = mm;
      in[is_a ? 0 : 1] = x;
      out[is_a ? 0 : 1] = y;
    }
    p.AddRegion({region_op[0]}, {cat, region_op[1]}, in[0], in[1], out[0], out[1]);
  }
  p.a.Finish(1);
  p.b.Finish(1);
  DiffReport r = DiffPair(p);
  const Finding& f = r.findings.at(0);
  ASSERT_EQ(f.verdict, Verdict::kWaste) << f.why;
  EXPECT_EQ(f.costly, 'a');
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kLaunch) << f.evidence[0].summary;
  EXPECT_NE(f.evidence[0].summary.find("aten::mm input 0 is [18,768] on a against [1,768] on b (18x the elements)"),
            std::string::npos)
      << f.evidence[0].summary;
  ASSERT_GE(f.evidence.size(), 2u);
  EXPECT_EQ(f.evidence[1].kind, EvidenceClass::kOperators);
}

// Training steps of three residual blocks (scripts/record_fixture.py
// checkpoint), plain (a) against each block under torch.utils.checkpoint (b),
// both passes in each file: b's backward runs each block's forward again, up to
// the last value it needs (norm, up projection, gelu; not the down
// projection). Those are values b computed before: the finding says so and the
// recomputation rule fixes it.
TEST(DiffRootCause, ActivationCheckpointingComputesValuesASecondTime) {
  auto r = recorded::DiffBothPasses("torch/train_blocks.mgt", "torch/train_blocks_checkpointed.mgt");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Finding& f = r->findings.at(0);
  ASSERT_EQ(f.verdict, Verdict::kWaste) << f.why;
  EXPECT_EQ(f.costly, 'b');
  const Evidence& e = f.evidence.at(0);
  ASSERT_EQ(e.kind, EvidenceClass::kOperators);
  EXPECT_NE(e.summary.find("b computes 3 values a second time (first aten::native_layer_norm"), std::string::npos)
      << e.summary;
  const ParamDelta* again = nullptr;
  for (const auto& d : e.params)
    if (d.parameter == "recomputed values") again = &d;
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->value_a, "0");
  EXPECT_EQ(again->value_b, "3");
  ASSERT_EQ(f.rules.size(), 1u);
  EXPECT_EQ(f.rules[0].id, "recomputation");
}

// A GELU written out (a) against the fused one (b) in a training step: a's
// extra operators compute new values, and two of them the same product twice
// (autograd's gradients of h * h, a small part of a's extra time). No
// recomputation is named.
TEST(DiffRootCause, ExtraOperatorsWithAFewRepeatedValuesAreNotRecomputation) {
  const std::string dir = std::string(MAGNETON_TEST_DATA) + "/torch/";
  auto a = LoadRun(dir + "train_gelu_composite.mgt"), b = LoadRun(dir + "train_gelu_fused.mgt");
  ASSERT_TRUE(a.ok() && b.ok());
  auto one = [](const std::string&) { return 1.0; };
  magneton::Run ma = fixture::MeasuredPass(*a, 3, one), mb = fixture::MeasuredPass(*b, 3, one);
  DiffOptions o;
  o.rules = ShippedRules();
  auto r = DiffRuns(*a, *b, &ma, &mb, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  bool operators = false;
  for (const auto& f : r->findings) {
    operators = operators || f.evidence_class() == EvidenceClass::kOperators;
    EXPECT_FALSE(HasRule(f, "recomputation")) << f.label;
    for (const auto& e : f.evidence) EXPECT_EQ(e.summary.find("a second time"), std::string::npos) << e.summary;
  }
  EXPECT_TRUE(operators);
}

TEST(DiffRootCause, SameElementCountInAnotherShapeIsNotMoreWork) {
  Pair p = fixture::LaunchPair(5, 1.3);
  for (auto& t : p.b.b.run.tensors)
    if (t.shape == std::vector<int64_t>{512, 1024}) t.shape = {1024, 512};
  DiffReport r = DiffPair(p);
  const Finding& f = r.findings.at(0);
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kLaunch);
  EXPECT_EQ(f.evidence[0].summary.find("more data"), std::string::npos) << f.evidence[0].summary;
  EXPECT_FALSE(HasRule(f, "discarded-work"));
}

TEST(DiffRootCause, SameKernelsInTheSameTimeWithMoreEnergyAreNoiseNotWaste) {
  Pair p = fixture::LaunchPair(5, 1.3);
  // Make b identical in layout and launch: only the energy differs.
  for (auto& t : p.b.b.run.tensors) t.strides = {1024, 1};
  for (auto& k : p.b.b.run.kernels) k.grid[0] = 1024;
  DiffReport r = DiffPair(p);
  const Finding& f = r.findings.at(0);
  EXPECT_EQ(f.verdict, Verdict::kNoise) << f.why;
  EXPECT_NEAR(f.cost_delta_pct, 30, 0.1);
  EXPECT_EQ(f.evidence_class(), EvidenceClass::kNone);
  EXPECT_NE(f.why.find("same device time"), std::string::npos) << f.why;
  EXPECT_NE(f.evidence[0].summary.find("attribution effect"), std::string::npos) << f.evidence[0].summary;
  EXPECT_TRUE(f.rules.empty());
  EXPECT_EQ(r.waste_count(), 0);
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.find("1 region group costs at least 10% more") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(DiffRootCause, NoiseFindingsCarryNoEvidence) {
  Pair p = fixture::Conv1DPair(4, 1, 1.02, 1.0);
  DiffReport r = DiffPair(p);
  const Finding& f = r.findings.at(0);
  EXPECT_EQ(f.verdict, Verdict::kNoise);
  EXPECT_TRUE(f.evidence.empty());
  EXPECT_EQ(f.evidence_class(), EvidenceClass::kNone);
}

TEST(DiffCallSite, UserCallSiteSkipsFrameworkFrames) {
  fixture::RunBuilder b("x");
  int64_t torch_f = b.Frame("python", "_call_impl", "/v/site-packages/torch/nn/modules/module.py", 1784);
  int64_t user = b.Frame("python", "forward", "/home/u/model.py", 33);
  int64_t native = b.Frame("native", "at::native::addmm_out", "", 0, "libtorch_cpu.so");
  int64_t s = b.Stack({native, torch_f, user});
  CallSite site = UserCallSite(b.run, s);
  EXPECT_EQ(site.file, "/home/u/model.py");
  EXPECT_EQ(site.line, 33);
  EXPECT_EQ(Describe(site), "model.py:33 (forward)");
  EXPECT_EQ(Describe(ToCallSite(b.run.frames[native])), "libtorch_cpu.so!at::native::addmm_out");
  EXPECT_TRUE(UserCallSite(b.run, kNone).empty());
  // Only framework frames: fall back to the innermost one.
  EXPECT_EQ(UserCallSite(b.run, b.Stack({native, torch_f})).function, "at::native::addmm_out");
}

TEST(DiffCallSite, DivergenceOfIdenticalAndUnrecordedPaths) {
  fixture::RunBuilder b("x");
  int64_t f1 = b.Frame("python", "main", "/a.py", 1), f2 = b.Frame("python", "g", "/a.py", 9);
  int64_t s = b.Stack({f2, f1});
  Divergence same = FirstDivergence(b.run, s, b.run, s);
  EXPECT_EQ(same.depth, 2);
  EXPECT_TRUE(same.frame_a.empty() && same.frame_b.empty());
  EXPECT_EQ(FirstDivergence(b.run, kNone, b.run, s).depth, -1);
}

TEST(DiffCallSite, TheLaunchersFramesAreNoCommonPath) {
  // Two scripts run by `python -m magneton record`: runpy's and the runner's
  // frames are above both; the paths part at the scripts themselves.
  fixture::RunBuilder b("x");
  int64_t runpy = b.Frame("python", "_run_module_as_main", "<frozen runpy>", 198);
  int64_t runner = b.Frame("python", "_run_code", "/v/python/magneton/__main__.py", 108);
  int64_t a = b.Frame("python", "<module>", "/u/attn_naive.py", 64), bb = b.Frame("python", "<module>", "/u/sdpa.py", 59);
  int64_t fa = b.Frame("python", "attn", "/u/attn_naive.py", 18), fb = b.Frame("python", "attn", "/u/sdpa.py", 17);
  Divergence d = FirstDivergence(b.run, b.Stack({fa, a, runner, runpy}), b.run, b.Stack({fb, bb, runner, runpy}));
  EXPECT_EQ(d.depth, 0);
  EXPECT_EQ(d.frame_a.file, "/u/attn_naive.py");
  EXPECT_EQ(d.frame_b.file, "/u/sdpa.py");
}

TEST(DiffComputeOps, WrappersAndViewsAreLookedThrough) {
  Pair p = fixture::Tf32Pair(1, 1.0, 1.0);
  CostModel cost(p.a.b.run, p.a.Energy());
  RegionSide side{&p.a.b.run, &cost, &p.match.regions[0].ops_a};
  auto workers = ComputeOps(side);
  ASSERT_EQ(workers.size(), 1u);  // aten::linear -> aten::t (view), aten::addmm
  EXPECT_EQ(p.a.b.run.ops[workers[0]].name, "aten::addmm");
  EXPECT_TRUE(IsMetadataOp("aten::view"));
  EXPECT_FALSE(IsMetadataOp("aten::copy_"));
  // A wrapper with nothing recorded under it still counts: it did the work.
  p.a.b.run.ops[workers[0]].parent = kNone;
  p.a.b.run.ops[workers[0] - 1].parent = kNone;  // the aten::t
  CostModel again(p.a.b.run, p.a.Energy());
  auto alone = ComputeOps(RegionSide{&p.a.b.run, &again, &p.match.regions[0].ops_a});
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(p.a.b.run.ops[alone[0]].name, "aten::linear");
}

}  // namespace
}  // namespace magneton::analysis
