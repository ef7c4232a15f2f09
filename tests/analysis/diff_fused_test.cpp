// Fused XLA operators (fused_regions.h) on the torch-vs-jax case as recorded on
// the H200 (tests/data/diff/gpu/torch_vs_jax_*.mgt): the JAX side's bias add and relu run
// inside the convolution's kernels, so alone they cost nothing.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/diff/diff.h"
#include "core/store.h"
#include "recorded_runs.h"
#include "stand_in_kernels.h"

namespace magneton::analysis {
namespace {

const std::string kRuns = testing::GpuRuns();

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(DiffFused, FusedJaxOperatorsJoinTheRegionWhoseKernelsDidTheirWork) {
  LOAD_RECORDED_RUN(kRuns + "torch_vs_jax_torch.mgt", a);
  LOAD_RECORDED_RUN(kRuns + "torch_vs_jax_jax.mgt", b);
  auto r = DiffRuns(*a, *b, nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_FALSE(r->regions.empty());
  bool noted = std::any_of(r->notes.begin(), r->notes.end(),
                           [](const std::string& n) { return n.find("XLA fused") != std::string::npos; });
  EXPECT_TRUE(noted);
  for (const auto& p : r->regions) {
    // Every JAX region that does work launches kernels of its own now...
    EXPECT_GT(p.b.seconds, 0) << "a region of b costs nothing: " << p.ops_b.front();
    // ...and the relu is costed with the convolution whose epilogue computes it.
    if (Has(p.ops_b, "jax:max")) {
      EXPECT_TRUE(Has(p.ops_b, "jax:conv_general_dilated"));
    }
  }
}

// Many fused regions in a row, each merged on its own: record_jax of a jitted
// MLP (tests/data/dispatch/, 5 executions; a CPU run has no kernels) given a
// kernel per dot_general and mul only, as where XLA fuses the equations
// between them. After the merges every region launches kernels on both sides.
TEST(DiffFused, ChainsOfFusedRegionsAllFindTheKernelsThatDidTheirWork) {
  auto load = [](const std::string& name, bool fused) {
    auto r = LoadRun(std::string(MAGNETON_TEST_DATA) + "/dispatch/" + name + ".mgt");
    EXPECT_TRUE(r.ok());
    magneton::Run run = r.ok() ? std::move(*r) : magneton::Run{};
    testing::AddStandInKernels(run, fused);
    return run;
  };
  const magneton::Run a = load("jax_eager", false), b = load("jax_jit", true);
  auto r = DiffRuns(a, b, nullptr, nullptr, DiffOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_GT(r->regions.size(), 50u);
  EXPECT_TRUE(std::any_of(r->notes.begin(), r->notes.end(), [](const std::string& n) {
    return n.find("were merged into a neighbour") != std::string::npos;
  }));
  for (const auto& p : r->regions) {
    EXPECT_GT(p.a.seconds, 0);
    EXPECT_GT(p.b.seconds, 0) << "a region of b costs nothing: " << p.ops_b.front();
  }
}

}  // namespace
}  // namespace magneton::analysis
