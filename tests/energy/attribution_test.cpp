// Attribution on series shaped like NVML's (nvml_like_series.h): the counter
// delta is reconciled exactly, idle gaps stay idle, concurrent kernels split
// each instant's energy, and kernels roll up into ops and ranges.
#include <gtest/gtest.h>

#include <cmath>

#include "energy/attribution.h"
#include "energy/energy_curve.h"
#include "nvml_like_series.h"

namespace magneton::energy {
namespace {

using testing::AddNvmlSeries;
using testing::kMs;
using testing::kSec;
using testing::PowerSteps;

Kernel MakeKernel(int64_t id, int64_t start, int64_t end, int64_t stream = 7, int64_t op = kNone, int64_t corr = 0) {
  Kernel k;
  k.id = id;
  k.name = "k" + std::to_string(id);
  k.device = 0;
  k.stream = stream;
  k.start_ns = start;
  k.end_ns = end;
  k.op = op;
  k.correlation = corr;
  return k;
}

// One GPU drawing `watts` throughout, from `sensor`, over [0, end_ns].
magneton::Run ConstantPowerRun(double watts, int64_t end_ns, const char* sensor = "power.instant") {
  magneton::Run run;
  run.devices.push_back(Device{0, "gpu", "GPU", "", 0, 0});
  run.info.start_ns = 0;
  run.info.end_ns = end_ns;
  run.series.push_back(SensorSeries{0, 0, sensor, "W", "nvml", {0}, {watts}});
  return run;
}

// A GPU that idles at 80 W, runs a 3 s burst of back-to-back kernels at
// 680 W, idles 2 s, then another 3 s burst.
struct TwoBursts {
  magneton::Run run;
  PowerSteps truth;
  TwoBursts() {
    const int64_t t0 = 50 * kSec;
    run.info.start_ns = t0;
    run.info.end_ns = t0 + 10 * kSec;
    truth.t = {0, t0 + 1 * kSec, t0 + 4 * kSec, t0 + 6 * kSec, t0 + 9 * kSec};
    truth.w = {80, 680, 80, 680, 80};
    int64_t id = 0;
    for (int64_t burst : {t0 + 1 * kSec, t0 + 6 * kSec})
      for (int64_t t = burst; t < burst + 3 * kSec; t += 10 * kMs)
        run.kernels.push_back(MakeKernel(id++, t, t + 10 * kMs));
    AddNvmlSeries(run, truth, t0 - 300 * kMs, t0 + 10 * kSec + 300 * kMs);
  }
};

double Sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

TEST(Attribution, KernelsPlusIdleEqualTheCounterDelta) {
  TwoBursts w;
  Attribution a = Attribute(w.run);
  ASSERT_TRUE(a.measured);
  ASSERT_EQ(a.devices.size(), 1u);
  const DeviceEnergy& d = a.devices[0];
  EXPECT_EQ(d.method, "energy.total+activity");
  EXPECT_NEAR(Sum(a.kernel_j) + d.idle_j, d.total_j, 1e-9 * d.total_j);
  EXPECT_NEAR(d.busy_j, Sum(a.kernel_j), 1e-9 * d.total_j);
  // The window's counter delta, interpolated at the edges, is the truth here
  // to within the sensor's timing (a poll period of 15 ms at each edge).
  double truth = w.truth.Energy(w.run.info.start_ns, w.run.info.end_ns);
  EXPECT_NEAR(d.total_j, truth, 0.01 * truth);
}

TEST(Attribution, WindowEdgesOnCounterUpdatesGiveTheRawDelta) {
  TwoBursts w;
  const SensorSeries* counter = w.run.FindSeries(0, "energy.total");
  // Edges on the 3rd and the last-but-one counter readings.
  w.run.info.start_ns = counter->t_ns[2];
  w.run.info.end_ns = counter->t_ns[counter->t_ns.size() - 2];
  Attribution a = Attribute(w.run);
  double delta = counter->value[counter->value.size() - 2] - counter->value[2];
  EXPECT_NEAR(a.devices[0].total_j, delta, 1e-9 * delta);
  EXPECT_NEAR(Sum(a.kernel_j) + a.devices[0].idle_j, delta, 1e-9 * delta);
}

TEST(Attribution, IdleGapsAreKeptAsIdleEnergy) {
  TwoBursts w;
  Attribution a = Attribute(w.run);
  const DeviceEnergy& d = a.devices[0];
  EXPECT_EQ(d.idle_ns, 4 * kSec);  // 1 s before, 2 s between, 1 s after the bursts
  // Idle power is 80 W. The counter's first-seen jitter (up to 17 ms) is all
  // that blurs the four idle edges; a power-shaped split would smear up to a
  // 100 ms update of busy power (~60 J) into each.
  EXPECT_NEAR(d.idle_w, 80.0, 2.0);
  EXPECT_NEAR(d.idle_j, 80.0 * 4, 8.0);
  // Each 10 ms kernel at 680 W gets about 6.8 J, none of the idle energy.
  double busy_truth = 680.0 * 6;
  EXPECT_NEAR(Sum(a.kernel_j), busy_truth, 0.05 * busy_truth);
}

// Host-to-device copies alone, in the idle stretch between the bursts, while
// the GPU draws its idle 80 W: they are charged the idle level for their
// time, not the SMs' busy level.
TEST(Attribution, ACopyBetweenHostAndDeviceAloneDrawsTheIdleLevel) {
  TwoBursts w;
  const int64_t gap = w.run.info.start_ns + 4 * kSec + 500 * kMs;
  for (int64_t i = 0; i < 50; ++i) {
    Transfer t;
    t.id = i;
    t.kind = "HtoD";
    t.src_memory = "pageable";
    t.start_ns = gap + i * 20 * kMs;
    t.end_ns = t.start_ns + 10 * kMs;
    w.run.transfers.push_back(t);
  }
  Attribution a = Attribute(w.run);
  ASSERT_EQ(a.devices[0].method, "energy.total+activity");
  ASSERT_EQ(a.transfer_j.size(), 50u);
  // 80 W for 10 ms: 0.8 J each (busy would be 6.8 J).
  EXPECT_NEAR(Sum(a.transfer_j) / 50, 0.8, 0.1);
  EXPECT_NEAR(a.devices[0].idle_w, 80, 2);
}

// A steady loop: every 20 ms, 16 ms of kernels at 600 W, then a 4 ms copy
// from the host alone at the idle 100 W, for 2 s; after the run's window the
// device idles at 100 W for `hold` (the recorder's idle hold), sampled.
magneton::Run SteadyCopyLoop(int64_t hold) {
  magneton::Run run;
  const int64_t t0 = 20 * kSec, end = t0 + 2 * kSec;
  run.info.start_ns = t0;
  run.info.end_ns = end;
  PowerSteps truth{{0}, {100}};
  int64_t id = 0;
  for (int64_t t = t0; t < end; t += 20 * kMs) {
    run.kernels.push_back(MakeKernel(id, t, t + 16 * kMs));
    Transfer c;
    c.id = id++;
    c.kind = "HtoD";
    c.start_ns = t + 16 * kMs;
    c.end_ns = t + 20 * kMs;
    run.transfers.push_back(c);
    truth.t.insert(truth.t.end(), {t, t + 16 * kMs});
    truth.w.insert(truth.w.end(), {600, 100});
  }
  AddNvmlSeries(run, truth, t0 - 10 * kMs, end + hold);
  return run;
}

TEST(Attribution, AnIdleHoldAfterASteadyLoopGivesTheCopiesTheIdleLevel) {
  // Without the hold the busy fraction never varies: the power shape charges
  // each copy about the loop's mean power.
  Attribution plain = Attribute(SteadyCopyLoop(0));
  ASSERT_EQ(plain.devices[0].method, "energy.total+power.instant");
  EXPECT_GT(Sum(plain.transfer_j) / 100, 1.5);  // 4 ms at 500 W: 2 J
  Attribution held = Attribute(SteadyCopyLoop(300 * kMs));
  ASSERT_EQ(held.devices[0].method, "energy.total+activity");
  ASSERT_TRUE(held.devices[0].activity.has_value());
  EXPECT_NEAR(held.devices[0].activity->idle_w, 100, 10);
  EXPECT_NEAR(held.devices[0].activity->busy_w, 600, 30);
  EXPECT_NEAR(Sum(held.transfer_j) / 100, 0.4, 0.05);  // 4 ms at 100 W
  // The hold lies outside the window: the run's total is the loop's.
  EXPECT_NEAR(held.devices[0].total_j, 100 * (16e-3 * 600 + 4e-3 * 100), 10);
}

// A GPU busy at the same duty cycle throughout (5 ms of every 10 ms) gives
// the two-level model nothing to fit: the instant power shapes the intervals.
TEST(Attribution, ConstantDutyCycleFallsBackToThePowerShape) {
  magneton::Run run;
  run.info.start_ns = 10 * kSec;
  run.info.end_ns = 12 * kSec;
  PowerSteps truth{{0}, {380}};
  for (int64_t t = run.info.start_ns, id = 0; t < run.info.end_ns; t += 10 * kMs)
    run.kernels.push_back(MakeKernel(id++, t, t + 5 * kMs));
  AddNvmlSeries(run, truth, 10 * kSec, 12 * kSec);  // sampled only while that runs
  Attribution a = Attribute(run);
  EXPECT_EQ(a.devices[0].method, "energy.total+power.instant");
  EXPECT_NEAR(Sum(a.kernel_j) + a.devices[0].idle_j, a.devices[0].total_j, 1e-9 * a.devices[0].total_j);
  EXPECT_NEAR(a.devices[0].total_j, 760, 760 * 0.01);
}

// Constant power and no counter make the split exact: A runs 0-2 s, B 1-2 s.
TEST(Attribution, ConcurrentKernelsShareEachInstantEqually) {
  magneton::Run run = ConstantPowerRun(500, 3 * kSec, "power.usage");
  run.kernels.push_back(MakeKernel(0, 0, 2 * kSec, /*stream=*/1));
  run.kernels.push_back(MakeKernel(1, 1 * kSec, 2 * kSec, /*stream=*/2));
  Attribution a = Attribute(run);
  EXPECT_EQ(a.devices[0].method, "power.usage integral");
  EXPECT_NEAR(a.kernel_j[0], 500 + 250, 1e-6);
  EXPECT_NEAR(a.kernel_j[1], 250, 1e-6);
  EXPECT_NEAR(a.devices[0].idle_j, 500, 1e-6);
  EXPECT_EQ(a.devices[0].busy_ns, 2 * kSec);
}

TEST(Attribution, ZeroLengthAndOutOfWindowKernelsGetNothing) {
  magneton::Run run;
  run.devices.push_back(Device{0, "gpu", "GPU", "", 0, 0});
  run.info.start_ns = 1 * kSec;
  run.info.end_ns = 2 * kSec;
  run.series.push_back(SensorSeries{0, 0, "power.instant", "W", "nvml", {0}, {100}});
  run.kernels.push_back(MakeKernel(0, 1500 * kMs, 1500 * kMs));
  run.kernels.push_back(MakeKernel(1, 0, 500 * kMs));
  run.kernels.push_back(MakeKernel(2, 1900 * kMs, 2100 * kMs));  // half inside
  Attribution a = Attribute(run);
  EXPECT_EQ(a.kernel_j[0], 0);
  EXPECT_EQ(a.kernel_j[1], 0);
  EXPECT_NEAR(a.kernel_j[2], 10, 1e-9);
}

TEST(Attribution, WithoutSeriesNothingIsInvented) {
  magneton::Run run;
  run.devices.push_back(Device{0, "gpu", "GPU", "", 0, 0});
  run.kernels.push_back(MakeKernel(0, 0, 10));
  run.ops.push_back(Op{});
  run.kernels[0].op = 0;
  Attribution a = Attribute(run);
  EXPECT_FALSE(a.measured);
  ASSERT_EQ(a.devices.size(), 1u);
  EXPECT_EQ(a.devices[0].method, "unavailable");
  EXPECT_TRUE(std::isnan(a.kernel_j[0]));
  EXPECT_TRUE(std::isnan(a.op_j[0]));
  EXPECT_EQ(a.op_gpu_ns[0], 10);  // time is still known
}

// ops: 0 "module" > 1 "linear" > 2 "addmm" (kernels 0, 1); 3 "relu" (kernel 2)
// under 0; transfer 0 under op 1. Power 100 W constant, no overlap.
TEST(Attribution, OpsIncludeTheirChildrensKernelsAndTransfers) {
  magneton::Run run = ConstantPowerRun(100, 1 * kSec);
  for (int i = 0; i < 4; ++i) {
    Op op;
    op.id = i;
    op.parent = i == 0 ? kNone : (i == 3 ? 0 : i - 1);
    run.ops.push_back(op);
  }
  run.kernels.push_back(MakeKernel(0, 0, 100 * kMs, 7, 2));
  run.kernels.push_back(MakeKernel(1, 100 * kMs, 200 * kMs, 7, 2));
  run.kernels.push_back(MakeKernel(2, 200 * kMs, 250 * kMs, 7, 3));
  Transfer t;
  t.id = 0;
  t.kind = "HtoD";
  t.start_ns = 300 * kMs;
  t.end_ns = 310 * kMs;
  t.op = 1;
  run.transfers.push_back(t);
  Attribution a = Attribute(run);
  EXPECT_NEAR(a.op_j[2], 20, 1e-9);
  EXPECT_NEAR(a.op_j[1], 21, 1e-9);
  EXPECT_NEAR(a.op_j[3], 5, 1e-9);
  EXPECT_NEAR(a.op_j[0], 26, 1e-9);
  EXPECT_NEAR(a.transfer_j[0], 1, 1e-9);
  EXPECT_EQ(a.op_gpu_ns[0], 250 * kMs);
}

// A corrupt parent cycle (0 -> 1 -> 0) neither hangs nor counts twice.
TEST(Attribution, AParentCycleIsCutNotFollowed) {
  magneton::Run run = ConstantPowerRun(100, 1 * kSec);
  for (int i = 0; i < 2; ++i) {
    Op op;
    op.id = i;
    op.parent = 1 - i;
    run.ops.push_back(op);
  }
  run.kernels.push_back(MakeKernel(0, 0, 100 * kMs, 7, 0));
  run.kernels.push_back(MakeKernel(1, 100 * kMs, 200 * kMs, 7, 1));
  Attribution a = Attribute(run);
  EXPECT_NEAR(std::max(a.op_j[0], a.op_j[1]), 20, 1e-9);  // the op cut as root holds both
  EXPECT_NEAR(std::min(a.op_j[0], a.op_j[1]), 10, 1e-9);
}

// Ranges take what was launched on their thread while open: through the API
// call's correlation id, else the launching op's start; others by midpoint.
TEST(Attribution, RangesGetKernelsLaunchedOnTheirThreadWhileOpen) {
  magneton::Run run = ConstantPowerRun(100, 10 * kSec);
  auto api = [&](int64_t id, int64_t thread, int64_t t, int64_t corr) {
    ApiCall c;
    c.id = id;
    c.name = "cudaLaunchKernel";
    c.thread = thread;
    c.start_ns = t;
    c.end_ns = t + 5000;
    c.correlation = corr;
    run.api_calls.push_back(c);
  };
  api(0, 1, 100 * kMs, 11);  // thread 1, inside the range
  api(1, 1, 900 * kMs, 12);  // thread 1, after it
  api(2, 2, 150 * kMs, 13);  // another thread
  // Kernels run later than their launch (queued): the range ends before some do.
  run.kernels.push_back(MakeKernel(0, 600 * kMs, 700 * kMs, 7, kNone, 11));
  run.kernels.push_back(MakeKernel(1, 950 * kMs, 1000 * kMs, 7, kNone, 12));
  run.kernels.push_back(MakeKernel(2, 700 * kMs, 800 * kMs, 7, kNone, 13));
  Op op;
  op.id = 0;
  op.thread = 1;
  op.start_ns = 200 * kMs;
  run.ops.push_back(op);
  run.kernels.push_back(MakeKernel(3, 800 * kMs, 900 * kMs, 7, 0, 0));   // via its op
  run.kernels.push_back(MakeKernel(4, 300 * kMs, 400 * kMs, 7, kNone, 0));  // no launch info
  run.ranges.push_back(Range{0, "step", "nvtx", 1, 0, 500 * kMs, kNone});
  run.ranges.push_back(Range{1, "inner", "nvtx", 1, 50 * kMs, 150 * kMs, 0});
  Attribution a = Attribute(run);
  EXPECT_NEAR(a.range_j.at(0), a.kernel_j[0] + a.kernel_j[3] + a.kernel_j[4], 1e-9);
  EXPECT_NEAR(a.range_j.at(0), 10 + 10 + 10, 1e-9);
  EXPECT_NEAR(a.range_j.at(1), 10, 1e-9);  // kernel 0 only
}

TEST(EnergyCurve, TenSecondsOfSteadyLoadMatchTheTruth) {
  magneton::Run run;
  PowerSteps truth{{0, 1 * kSec}, {80, 680}};
  AddNvmlSeries(run, truth, 500 * kMs, 12 * kSec);
  int64_t a = 1 * kSec + 500 * kMs, b = 11 * kSec + 500 * kMs;
  EnergyCurve counter = BuildEnergyCurve(run, 0, a, b);
  EXPECT_NEAR(counter.Between(a, b), 6800, 6800 * 0.002);
  EXPECT_NEAR(counter.peak_w, 680, 1e-9);
  // The same from the instant power alone (no counter): still close under
  // steady load, which is what the H200 experiment compares.
  magneton::Run power_only;
  AddNvmlSeries(power_only, truth, 500 * kMs, 12 * kSec, 37 * kMs, /*counter=*/false);
  EnergyCurve instant = BuildEnergyCurve(power_only, 0, a, b);
  EXPECT_EQ(instant.method, "power.instant integral");
  EXPECT_NEAR(instant.Between(a, b), 6800, 6800 * 0.01);
}

// The first counter reading only marks when sampling began; anchoring on it
// would smear a whole update's worth of energy into the wrong interval.
TEST(EnergyCurve, TheFirstCounterReadingIsNotAnAnchor) {
  magneton::Run run;
  PowerSteps truth{{0}, {300}};
  AddNvmlSeries(run, truth, 1 * kSec + 90 * kMs, 3 * kSec, 0, /*counter=*/true, /*instant=*/false);
  const SensorSeries* c = run.FindSeries(0, "energy.total");
  int64_t a = c->t_ns[0], b = c->t_ns[1];
  // Constant 300 W: any interval's energy is 300 W x its length.
  EnergyCurve curve = BuildEnergyCurve(run, 0, a, b);
  double expect = 300.0 * double(b - a) * 1e-9;
  EXPECT_NEAR(curve.Between(a, b), expect, 0.1 * expect);
}

}  // namespace
}  // namespace magneton::energy
