// The diff on GPU recordings made on the H200 by scripts/gpu/diff.sh
// (tests/data/diff/gpu/): energy from NVML, kernels from CUPTI. Skipped, with
// the reason, until those fixtures are in the tree.
#include <gtest/gtest.h>

#include <filesystem>

#include "analysis/diff/diff.h"
#include "analysis/diff/pass_align.h"
#include "analysis/diff/region_cost.h"
#include "analysis/diff/root_cause.h"
#include "analysis/diff/rules.h"
#include "analysis/match/region_match.h"
#include "core/store.h"

namespace magneton::analysis {
namespace {

const std::string kGpu = std::string(MAGNETON_TEST_DATA) + "/diff/gpu/";

struct Side {
  Run run, measured;
  energy::Attribution energy, measured_energy;
};

bool Load(const std::string& stem, Side* s) {
  auto r = LoadRun(kGpu + stem + ".mgt");
  auto m = LoadRun(kGpu + stem + "-measured.mgt");
  if (!r.ok() || !m.ok()) return false;
  s->run = std::move(*r);
  s->measured = std::move(*m);
  s->energy = energy::Attribute(s->run);
  s->measured_energy = energy::Attribute(s->measured);
  return true;
}

#define LOAD_OR_SKIP(stem, side)                                                                            \
  if (!std::filesystem::exists(kGpu + stem + ".mgt"))                                                       \
    GTEST_SKIP() << kGpu << stem << ".mgt is not in the tree: record it on a GPU with scripts/gpu/diff.sh"; \
  ASSERT_TRUE(Load(stem, &side)) << stem

// Root cause of every matched region, as if each were a finding (costly side a).
std::vector<RootCause> AllRootCauses(const Side& a, const Side& b, const std::vector<Rule>& rules,
                                     const std::vector<ConfigDelta>& config) {
  MatchResult m = MatchRuns(a.run, b.run);
  // Kernels come from the measured passes: the recording passes ran with
  // fingerprints and without kernel tracing.
  CostModel ca(a.run, a.energy), cb(b.run, b.energy);
  auto pa = AlignPasses(a.run, a.measured);
  auto pb = AlignPasses(b.run, b.measured);
  EXPECT_TRUE(pa.ok() && pb.ok());
  if (pa.ok()) ca.UseMeasuredPass(a.measured, a.measured_energy, std::move(*pa));
  if (pb.ok()) cb.UseMeasuredPass(b.measured, b.measured_energy, std::move(*pb));
  std::vector<RootCause> out;
  for (const auto& region : m.regions)
    out.push_back(
        FindRootCause({&a.run, &ca, &region.ops_a}, {&b.run, &cb, &region.ops_b}, 'a', config, rules));
  return out;
}

TEST(DiffGpuRecorded, Tf32OffAgainstOnNamesTheAllowTf32Key) {
  Side a, b;
  LOAD_OR_SKIP("unet_fp32", a);
  LOAD_OR_SKIP("unet_tf32", b);
  auto rules = LoadRulesDir(std::string(MAGNETON_TEST_DATA) + "/../../rules");
  ASSERT_TRUE(rules.ok());
  DiffOptions o;
  o.rules = *rules;
  auto r = Diff(DiffInput{&a.run, &a.energy, &a.measured, &a.measured_energy},
                DiffInput{&b.run, &b.energy, &b.measured, &b.measured_energy}, MatchRuns(a.run, b.run), o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // The CI-sized measured passes last ~0.1 s: one or two NVML readings, too
  // few to split energy between regions, so the diff says so and uses time.
  EXPECT_FALSE(r->energy_measured);
  EXPECT_EQ(r->cost_unit, "s");
  bool noted = false;
  for (const auto& n : r->notes) noted |= n.find("sensor reading") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_TRUE(r->a.has_kernels);
  bool key_named = false;
  for (const auto& rc : AllRootCauses(a, b, *rules, r->config))
    for (const auto& e : rc.evidence)
      for (const auto& c : e.config) key_named |= c.key.find("allow_tf32") != std::string::npos;
  EXPECT_TRUE(key_named) << "no region's kernel evidence names an allow_tf32 key";
}

TEST(DiffGpuRecorded, Conv1DRegionsShowAddmmAgainstMmPlusAdd) {
  Side a, b;
  LOAD_OR_SKIP("gpt2_addmm", a);
  LOAD_OR_SKIP("gpt2_mm_add", b);
  int conv = 0;
  for (const auto& rc : AllRootCauses(a, b, {}, {})) {
    const Evidence& e = rc.evidence[0];
    bool addmm = false, mm = false;
    for (const auto& n : e.only_a) addmm |= n.name == "aten::addmm";
    for (const auto& n : e.only_b) mm |= n.name == "aten::mm";
    if (addmm && mm) {
      ++conv;
      EXPECT_EQ(e.kind, EvidenceClass::kOperators);
    }
  }
  EXPECT_GT(conv, 0);
}

}  // namespace
}  // namespace magneton::analysis
