// Regions costed by estimate on real CPU recordings (tests/data/jax_dtype/,
// make_fixtures.py): one jitted kernel-regression prediction recorded by
// record_jax with jax_enable_x64 on (a) and off (b). On a CPU the equations
// inside the jit call have no execution of their own: each takes a share of
// the call's measured time (docs/jax.md).
#include <gtest/gtest.h>


#include "recorded_diff.h"

namespace magneton::analysis {
namespace {

using recorded::Noted;

magneton::Run Load(const std::string& name) { return recorded::Load("jax_dtype/" + name + ".mgt"); }

// Seconds in the run's top-level jit calls.
double CallSeconds(const magneton::Run& run) {
  double s = 0;
  for (const auto& op : run.ops)
    if (op.parent == kNone) s += static_cast<double>(op.end_ns - op.start_ns) * 1e-9;
  return s;
}

TEST(DiffEstimate, TheX64FlagIsOneFindingNamingTheKeyWithItsFix) {
  DiffReport r = recorded::Diff(Load("x64"), Load("x32"));
  ASSERT_GE(r.waste_count(), 1);
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.costly, 'a');
  EXPECT_EQ(f.evidence_class(), EvidenceClass::kLaunch);
  // The places that compute in another dtype are one cause: the configuration.
  EXPECT_GT(f.regions.size(), 3u);
  ASSERT_FALSE(f.evidence[0].config.empty());
  EXPECT_EQ(f.evidence[0].config[0].key, "jax.config.jax_enable_x64");
  EXPECT_TRUE(f.evidence[0].config[0].by_rule);
  ASSERT_FALSE(f.rules.empty());
  EXPECT_EQ(f.rules[0].id, "jax-x64");
  // Its times are shares of the jit calls, and the report says so.
  EXPECT_NE(f.why.find("estimate"), std::string::npos) << f.why;
  EXPECT_TRUE(Noted(r, "findings whose times are estimates"));
  // Shares of one call cannot witness the machine's speed.
  EXPECT_EQ(r.host_time_ratio, 1.0);
}

TEST(DiffEstimate, TheX64RuleNamesTheKeyOnlyWhereTheCostlySideComputesIn64Bits) {
  DiffReport r = recorded::Diff(Load("x32"), Load("x64"));
  for (const auto& f : r.findings)
    for (const auto& rule : f.rules)
      if (rule.id == "jax-x64") {
        EXPECT_EQ(f.costly, 'b') << f.label;
      }
}

TEST(DiffEstimate, SharesOfCallsThatCostTheSameAreNotWaste) {
  // b's calls stretched to a's length: every share of b grows alike, so the
  // shares still differ op by op while the measured calls do not.
  magneton::Run a = Load("x64"), b = Load("x32");
  const double stretch = CallSeconds(a) / CallSeconds(b);
  const int64_t t0 = b.info.start_ns;
  auto at = [&](int64_t t) { return t0 + static_cast<int64_t>(static_cast<double>(t - t0) * stretch); };
  for (auto& op : b.ops) op.start_ns = at(op.start_ns), op.end_ns = at(op.end_ns);
  b.info.end_ns = at(b.info.end_ns);
  DiffReport r = recorded::Diff(a, b);
  EXPECT_EQ(r.waste_count(), 0);
  bool explained = false;
  for (const auto& f : r.findings)
    explained |= f.why.find("whose measured times do not differ that way") != std::string::npos;
  EXPECT_TRUE(explained);
}

// tests/data/jax_layernorm/: one jitted MLP whose layer norm is written out
// (a) or takes jnp.var and lax.rsqrt (b), each recorded with 200 of the
// program's own calls after its op-level executions; XLA fuses either form
// into the same work, and the two programs' own calls are 9% apart.
TEST(DiffEstimate, WhereTheProgramsOwnCallsWereTimedTheyDecideWhetherSharesAreWaste) {
  magneton::Run a = recorded::Load("jax_layernorm/manual.mgt"), b = recorded::Load("jax_layernorm/library.mgt");
  // b's op-level executions stretched by half: every share of b grows, and
  // so do its op-level calls, but not the calls the program made itself.
  const int64_t t0 = b.info.start_ns;
  auto at = [&](int64_t t) { return t0 + (t - t0) * 3 / 2; };
  for (auto& op : b.ops) op.start_ns = at(op.start_ns), op.end_ns = at(op.end_ns);
  DiffOptions o = recorded::Options();  // the program's own calls taken out as `magneton diff` does
  o.untraced_a = TakeUntracedSteps(a);
  o.untraced_b = TakeUntracedSteps(b);
  ASSERT_TRUE(o.untraced_a && o.untraced_b);
  DiffReport r = recorded::Diff(a, b, nullptr, nullptr, o);
  EXPECT_EQ(r.waste_count(), 0);
  bool explained = false;
  for (const auto& f : r.findings)
    explained |= f.why.find("as the program runs it") != std::string::npos &&
                 f.why.find("whose measured times do not differ that way") != std::string::npos;
  EXPECT_TRUE(explained);
}

// tests/data/jax_train/: a JAX training step whose embedding is a one-hot
// matrix product (a) or a lookup (b), recorded on the CPU through the
// one-command route. Its programs' own steps are set 25% apart: the
// embedding's shares of the call claim more, and the finding is sized by the
// calls instead.
TEST(DiffEstimate, AFindingOfSharesClaimsNoMoreThanTheProgramsOwnCallsDifferBy) {
  magneton::Run a = recorded::Load("jax_train/onehot.mgt"), b = recorded::Load("jax_train/take.mgt");
  DiffOptions o = recorded::Options();
  o.untraced_a = TakeUntracedSteps(a);
  o.untraced_b = TakeUntracedSteps(b);
  ASSERT_TRUE(o.untraced_a && o.untraced_b);
  const DiffReport as_recorded = recorded::Diff(a, b, nullptr, nullptr, o);
  ASSERT_GE(as_recorded.waste_count(), 1);
  // The calls 92% apart: the shares' figure stands.
  EXPECT_EQ(as_recorded.findings[0].why.find("sized by the calls"), std::string::npos) << as_recorded.findings[0].why;
  o.untraced_a->seconds = o.untraced_b->seconds * 1.25;
  const DiffReport r = recorded::Diff(a, b, nullptr, nullptr, o);
  ASSERT_GE(r.waste_count(), 1);
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.costly, 'a');
  EXPECT_NEAR(f.saved_pct_of_run, 20.0, 0.01);
  EXPECT_NEAR(f.saved_per_iteration, o.untraced_b->seconds * 0.25, 1e-9);  // seconds: energy is unmeasured
  EXPECT_NE(f.why.find("sized by the calls' own difference"), std::string::npos) << f.why;
}

}  // namespace
}  // namespace magneton::analysis
