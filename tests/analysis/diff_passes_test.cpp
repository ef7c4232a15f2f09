// Measured passes: costs from an unperturbed run of the same program
// (analysis/diff/pass_align.h).
#include <gtest/gtest.h>

#include "analysis/diff/diff.h"
#include "analysis/diff/pass_align.h"
#include "diff_fixture.h"

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

TEST(DiffPasses, ADifferentProgramIsRefusedNamingTheOp) {
  fixture::Pair p = fixture::Conv1DPair(2, 1, 1.0, 1.0);
  magneton::Run m = fixture::MeasuredPass(p.a.b.run, 1, [](const std::string&) { return 1.0; });
  m.ops[1].name = "aten::mm";  // recorded op 1 is aten::addmm
  auto al = AlignPasses(p.a.b.run, m);
  ASSERT_FALSE(al.ok());
  EXPECT_NE(al.error().message.find("differs at recorded op 1: aten::addmm vs aten::mm"), std::string::npos)
      << al.error().message;
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
  // b's region: 0.9 ms GEMM x1.5 + 0.1 ms add = 1.45 ms vs 1 ms.
  EXPECT_NEAR(f.cost_delta_pct, 45, 0.1);
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

}  // namespace
}  // namespace magneton::analysis
