// Attribution on a real recording: `magneton record` of a 2-layer GPT-2
// forward (torch emit_nvtx) on an H200, 2026-12-02 (scripts/gpu/cupti.sh,
// tests/data/cupti/gpt2-small.mgt): 226 kernels, 70 copies, 495 NVTX ranges,
// NVML series.
#include <gtest/gtest.h>

#include <cmath>

#include "core/store.h"
#include "energy/attribution.h"

namespace magneton::energy {
namespace {

magneton::Run LoadGpt2() {
  auto run = LoadRun(std::string(MAGNETON_TEST_DATA) + "/cupti/gpt2-small.mgt");
  EXPECT_TRUE(run.ok()) << run.error().message;
  return run.ok() ? std::move(run.value()) : magneton::Run{};
}

TEST(RecordedGpt2, KernelsCopiesAndIdleSumToTheGpuEnergy) {
  magneton::Run run = LoadGpt2();
  ASSERT_EQ(run.kernels.size(), 226u);
  Attribution a = Attribute(run);
  ASSERT_TRUE(a.measured);
  const DeviceEnergy* gpu = nullptr;
  for (const auto& d : a.devices)
    if (run.devices[d.device].kind == "gpu") gpu = &d;
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->source, "nvml");
  double kernels = 0, transfers = 0;
  for (double j : a.kernel_j) {
    ASSERT_FALSE(std::isnan(j));
    EXPECT_GE(j, 0);
    kernels += j;
  }
  for (double j : a.transfer_j)
    if (!std::isnan(j)) transfers += j;
  EXPECT_GT(kernels, 0);
  EXPECT_NEAR(kernels + transfers, gpu->busy_j, 1e-6 * gpu->total_j);
  EXPECT_NEAR(gpu->busy_j + gpu->idle_j, gpu->total_j, 1e-6 * gpu->total_j);
  // The device idles most of this short run (13 ms of kernels in 1.5 s):
  // idle power near the H200's ~118 W, and idle holds most of the energy.
  EXPECT_GT(gpu->idle_j, gpu->busy_j);
  EXPECT_GT(gpu->idle_w, 80);
  EXPECT_LT(gpu->idle_w, 200);
  // 1.5 s of NVML energy counter: about one reading per 100 ms.
  EXPECT_GE(gpu->sensor_updates, 8);
  EXPECT_LE(gpu->sensor_updates, 30);
}

TEST(RecordedGpt2, NvtxRangesGetTheEnergyOfTheKernelsLaunchedInside) {
  magneton::Run run = LoadGpt2();
  Attribution a = Attribute(run);
  ASSERT_FALSE(a.range_j.empty());
  double busy = 0;
  for (const auto& d : a.devices) busy += d.busy_j;
  // Each top-level range holds what was launched in it; together at most
  // the busy energy (kernels launched outside any range are left out).
  double top = 0;
  for (const Range& r : run.ranges) {
    if (r.parent >= 0) continue;
    auto it = a.range_j.find(r.id);
    if (it != a.range_j.end()) top += it->second;
  }
  EXPECT_GT(top, 0);
  EXPECT_LE(top, busy * (1 + 1e-9));
}

}  // namespace
}  // namespace magneton::energy
