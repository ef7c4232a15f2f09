// Evidence of class `arguments` (docs/diff.md, "Root cause"): the same
// operators called differently besides their inputs' layouts: non-tensor
// arguments, where inputs live, and how copies between host and device ran.
#include <gtest/gtest.h>

#include <map>

#include "analysis/diff/arguments.h"
#include "analysis/diff/diff.h"
#include "analysis/diff/rules.h"
#include "diff_fixture.h"

namespace magneton::analysis {
namespace {

using fixture::Pair;
using fixture::Side;

DiffReport DiffPair(const Pair& p) {
  DiffOptions o;
  auto rules = LoadRulesDir(std::string(MAGNETON_TEST_DATA) + "/../../rules");
  EXPECT_TRUE(rules.ok()) << rules.error().message;
  if (rules.ok()) o.rules = *rules;
  return Diff(p.a.b.run, p.b.b.run, p.match, p.a.Energy(), p.b.Energy(), o);
}

std::vector<std::string> RuleIds(const Finding& f) {
  std::vector<std::string> ids;
  for (const auto& h : f.rules) ids.push_back(h.id);
  return ids;
}

std::map<std::string, ParamDelta> ByParameter(const Evidence& e) {
  std::map<std::string, ParamDelta> out;
  for (const auto& d : e.params) out.emplace(d.subject + " " + d.parameter, d);
  return out;
}

// A training step's input batch copied to the device, then used: `pinned`
// sides copy from pinned memory with non_blocking=True (an asynchronous
// copy), the others from pageable memory with a blocking one. The step's
// kernel costs `joules`. b's copies alternate between `b_lines` lines of
// its code (a batch and its labels, each copied by a line of its own).
Pair CopyPair(int instances, double joules_a, double joules_b, bool a_pinned, bool b_pinned, int b_lines = 1) {
  Pair p;
  auto add = [](Side& s, bool pinned, double joules, int line) {
    auto& fb = s.b;
    int64_t py = s.PyStack({fb.Frame("python", "train_step", "/work/train.py", line)});
    int64_t host = fb.Tensor({256, 1024}, 0.3);
    fb.run.tensors[host].device = kHostDevice;
    fb.run.tensors[host].memory = pinned ? kMemoryPinned : kMemoryPageable;
    int64_t dev = fb.Tensor({256, 1024}, 0.3);
    fb.run.tensors[dev].memory = kMemoryDevice;
    int64_t y = fb.Tensor({256, 1024}, 0.6);
    int64_t copy = fb.Op("aten::copy_", kNone, s.t, 0, py, {dev, host}, {dev});
    fb.run.ops[copy].args = pinned ? "non_blocking=True" : "non_blocking=False";
    Transfer t;
    t.id = static_cast<int64_t>(fb.run.transfers.size());
    t.kind = "HtoD";
    t.bytes = 256 * 1024 * 4;
    t.start_ns = s.t;
    t.end_ns = s.t += 90'000;
    t.op = copy;
    t.src_memory = pinned ? kMemoryPinned : kMemoryPageable;
    t.dst_memory = kMemoryDevice;
    t.synchronous = !pinned;
    fb.run.transfers.push_back(t);
    fb.run.ops[copy].end_ns = s.t;
    int64_t use = fb.Op("aten::relu", kNone, s.t, 0, py, {dev}, {y});
    s.K("void at::native::vectorized_elementwise_kernel<4, at::native::ReluKernel>", use, 120'000, joules);
    fb.run.ops[use].end_ns = s.t;
    return std::pair{host, y};
  };
  for (int i = 0; i < instances; ++i) {
    const int64_t first_a = static_cast<int64_t>(p.a.b.run.ops.size());
    const int64_t first_b = static_cast<int64_t>(p.b.b.run.ops.size());
    auto [in_a, out_a] = add(p.a, a_pinned, joules_a, 41);
    auto [in_b, out_b] = add(p.b, b_pinned, joules_b, 41 + i % b_lines);
    p.AddRegion({first_a, first_a + 1}, {first_b, first_b + 1}, in_a, in_b, out_a, out_b);
  }
  p.a.Finish(1);
  p.b.Finish(1);
  return p;
}

TEST(DiffArguments, PageableBlockingCopyAgainstPinnedAsyncNamesWhatDiffersAndTheFix) {
  DiffReport r = DiffPair(CopyPair(4, 0.13, 0.10, false, true));
  const Finding& f = r.findings.at(0);
  ASSERT_EQ(f.verdict, Verdict::kWaste) << f.why;
  EXPECT_EQ(f.costly, 'a');
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kArguments) << f.evidence[0].summary;
  const Evidence& e = f.evidence[0];
  auto d = ByParameter(e);
  ASSERT_TRUE(d.count("HtoD copy source memory")) << e.summary;
  EXPECT_EQ(d["HtoD copy source memory"].value_a, "pageable");
  EXPECT_EQ(d["HtoD copy source memory"].value_b, "pinned");
  ASSERT_TRUE(d.count("HtoD copy synchronous"));
  EXPECT_EQ(d["HtoD copy synchronous"].value_a, "yes");
  EXPECT_EQ(d["HtoD copy synchronous"].value_b, "no");
  ASSERT_TRUE(d.count("aten::copy_ non_blocking"));
  EXPECT_EQ(d["aten::copy_ non_blocking"].value_a, "False");
  EXPECT_EQ(d["aten::copy_ non_blocking"].value_b, "True");
  // The copy's source tensor says where it lives too (memory, not only the copy record).
  EXPECT_TRUE(d.count("aten::copy_ input 1 memory"));
  EXPECT_FALSE(d.count("HtoD copy destination memory"));  // the same on both sides
  EXPECT_EQ(e.summary.rfind("same operators, called differently: HtoD copy source memory pageable on a, pinned on b", 0),
            0u)
      << e.summary;
  auto ids = RuleIds(f);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "pageable-host-memory"), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), "blocking-copy"), ids.end());
}

TEST(DiffArguments, CopiesByOneLineOfOneSideAndTwoLinesOfTheOtherAreOneFinding) {
  DiffReport r = DiffPair(CopyPair(4, 0.13, 0.10, false, true, 2));
  int waste = 0;
  for (const auto& f : r.findings) waste += f.verdict == Verdict::kWaste;
  EXPECT_EQ(waste, 1);
  const Finding& f = r.findings.at(0);
  EXPECT_EQ(f.regions.size(), 4u);
  EXPECT_EQ(f.evidence_class(), EvidenceClass::kArguments);
  EXPECT_NE(f.label.find("train.py:41"), std::string::npos) << f.label;
}

TEST(DiffArguments, TheFixIsGivenOnlyWhereTheCostlierSideDoesWhatItFixes) {
  // b copies from pageable memory and still costs less: the arguments differ
  // (the finding is backed), but pinning a's memory is no advice.
  DiffReport r = DiffPair(CopyPair(4, 0.13, 0.10, true, false));
  const Finding& f = r.findings.at(0);
  ASSERT_EQ(f.verdict, Verdict::kWaste) << f.why;
  EXPECT_EQ(f.costly, 'a');
  EXPECT_EQ(f.evidence_class(), EvidenceClass::kArguments);
  EXPECT_TRUE(f.rules.empty()) << RuleIds(f).front();
}

TEST(DiffArguments, TheSameCallsOnBothSidesAreNoEvidence) {
  DiffReport r = DiffPair(CopyPair(4, 0.13, 0.10, true, true));
  const Finding& f = r.findings.at(0);
  EXPECT_EQ(f.verdict, Verdict::kNoise) << f.why;
  for (const auto& e : f.evidence) EXPECT_NE(e.kind, EvidenceClass::kArguments) << e.summary;
}

TEST(DiffArguments, AnArgumentExplainsDifferentKernelsBeforeAnyConfigurationKey) {
  // gelu(approximate='tanh') against gelu(): the same operator, other kernels.
  Pair p = fixture::OneOpRegions(3, [](Side& s, bool is_a) {
    auto& fb = s.b;
    int64_t py = s.PyStack({fb.Frame("python", "mlp", "/work/model.py", 61)});
    int64_t x = fb.Tensor({512, 3072}, 0.3), y = fb.Tensor({512, 3072}, 0.6);
    int64_t op = fb.Op("aten::gelu", kNone, s.t, 0, py, {x}, {y});
    fb.run.ops[op].args = is_a ? "approximate='none'" : "approximate='tanh'";
    s.K(is_a ? "void at::native::GeluCUDAKernelImpl_erf" : "void at::native::GeluCUDAKernelImpl_tanh", op, 200'000,
        is_a ? 0.14 : 0.10);
    fb.run.ops[op].end_ns = s.t;
    return fixture::OneOp{op, x, y};
  });
  p.a.b.run.config["torch.backends.cuda.preferred_blas_library"] = "cublas";
  DiffReport r = DiffPair(p);
  const Finding& f = r.findings.at(0);
  ASSERT_EQ(f.verdict, Verdict::kWaste) << f.why;
  ASSERT_EQ(f.evidence_class(), EvidenceClass::kKernels);
  ASSERT_GE(f.evidence.size(), 2u);
  const Evidence& args = f.evidence[1];
  ASSERT_EQ(args.kind, EvidenceClass::kArguments);
  ASSERT_EQ(args.params.size(), 1u);
  EXPECT_EQ(args.params[0].subject, "aten::gelu");
  EXPECT_EQ(args.params[0].parameter, "approximate");
  EXPECT_EQ(args.params[0].value_a, "'none'");
  // The code explains the kernels: no configuration key is offered as a candidate.
  for (const auto& e : f.evidence) EXPECT_TRUE(e.config.empty()) << ToString(e.kind);
}

TEST(DiffArguments, ArgumentsSplitAtTheNextName) {
  using Args = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(SplitArgs("dtype=float16, non_blocking=True"),
            (Args{{"dtype", "float16"}, {"non_blocking", "True"}}));
  EXPECT_EQ(SplitArgs("size=[2,3], reduce='mean, sum', dim=1"),
            (Args{{"size", "[2,3]"}, {"reduce", "'mean, sum'"}, {"dim", "1"}}));
  EXPECT_TRUE(SplitArgs("").empty());
}

}  // namespace
}  // namespace magneton::analysis
