// Fused XLA operators (fused_regions.h) on the torch-vs-jax case as recorded on
// the H200 (tests/data/diff/gpu/torch_vs_jax_*.mgt): the JAX side's bias add and relu run
// inside the convolution's kernels, so alone they cost nothing.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/diff/diff.h"
#include "recorded_runs.h"

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

}  // namespace
}  // namespace magneton::analysis
