// Replay's measurement (replay_windows.h, power_meter.h, window_power.h) on
// synthetic sensor streams: NVML-like series of a known power, read on a
// clock that the windows' calls and the meter's waits advance. No device and
// no wall time: every figure can be compared with the truth.
#include <gtest/gtest.h>

#include <cmath>

#include "energy/power_meter.h"
#include "energy/replay_windows.h"
#include "energy/window_power.h"
#include "nvml_like_series.h"

namespace magneton::energy {
namespace {

using testing::AddNvmlSeries;
using testing::kMs;
using testing::kSec;
using testing::PowerSteps;

// A device drawing `truth`, sampled from 1 s on, on a clock that starts at 2 s.
struct Bench {
  PowerSteps truth{{0}, {200.0}};
  bool sensors = true;
  int64_t now = 2 * kSec;
  std::vector<double> asked;  // window seconds the meter asked the calls for

  PowerMeter Meter() {
    return PowerMeter([this] { return Snapshot(); },
                      MeterClock{[this] { return now; }, [this](double s) { now += static_cast<int64_t>(s * 1e9); }});
  }
  Run Snapshot() const {
    Run run;
    if (sensors) AddNvmlSeries(run, truth, 1 * kSec, now);
    return run;
  }
  // Calls of `per_call` seconds each, as many as the window holds.
  WindowCalls Calls(double per_call) {
    return [this, per_call](double seconds) -> Result<CallWindow> {
      asked.push_back(seconds);
      CallWindow w;
      w.calls = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(seconds / per_call)));
      w.t0_ns = now;
      now += static_cast<int64_t>(static_cast<double>(w.calls) * per_call * 1e9);
      w.t1_ns = now;
      return w;
    };
  }
};

constexpr int64_t kNoDeadline = 1000 * kSec;

TEST(ReplayStatistics, MeanAndCoefficientOfVariation) {
  EXPECT_EQ(Mean({}), 0);
  EXPECT_DOUBLE_EQ(Mean({1, 2, 3}), 2);
  EXPECT_EQ(CoefficientOfVariation({5}), 0);
  EXPECT_EQ(CoefficientOfVariation({-1, 1}), 0);  // zero mean
  EXPECT_DOUBLE_EQ(CoefficientOfVariation({1, 3}), std::sqrt(2.0) / 2);
}

TEST(WindowPower, AverageOverAWindowAlignedOnSensorUpdates) {
  Bench b;
  b.now = 4 * kSec;
  const magneton::Run run = b.Snapshot();
  WindowPower p = MeasureWindowPower(run, 0, 2 * kSec, 3 * kSec);
  ASSERT_TRUE(p.ok);
  EXPECT_TRUE(p.aligned);
  // The counter is seen up to 15 ms after it updates: edges and periods jitter.
  EXPECT_NEAR(p.watts, 200, 4);
  EXPECT_NEAR(p.period_s, 0.1, 0.01);
  EXPECT_EQ(p.source, "nvml");
  // No sensor of another GPU, nor of the CPU.
  EXPECT_FALSE(MeasureWindowPower(run, 1, 2 * kSec, 3 * kSec).ok);
  EXPECT_FALSE(MeasureWindowPower(run, kHostDevice, 2 * kSec, 3 * kSec).ok);
}

TEST(WindowPower, AStepInsideTheWindowIsAveraged) {
  Bench b;
  b.truth = PowerSteps{{0, 2500 * kMs}, {100.0, 300.0}};
  b.now = 4 * kSec;
  WindowPower p = MeasureWindowPower(b.Snapshot(), 0, 2 * kSec, 3 * kSec);
  ASSERT_TRUE(p.ok);
  // Edges on the updates inside the window: about half at each level.
  EXPECT_NEAR(p.watts, 200, 25);
}

TEST(PowerMeter, IdleWaitsOnItsClockAndLearnsTheUpdatePeriod) {
  Bench b;
  b.truth = PowerSteps{{0}, {75.0}};
  PowerMeter meter = b.Meter();
  ASSERT_TRUE(meter.available());
  EXPECT_DOUBLE_EQ(meter.period_s(), 0.1);  // until readings say otherwise
  const int64_t before = b.now;
  WindowPower idle = meter.Idle(0, 0.6);
  EXPECT_EQ(b.now - before, 600 * kMs);
  ASSERT_TRUE(idle.ok);
  EXPECT_NEAR(idle.watts, 75, 1.5);
  EXPECT_NEAR(meter.period_s(), 0.1, 0.01);
  // A phase shift waits less than one update period.
  const int64_t t = b.now;
  meter.ShiftPhase();
  EXPECT_GE(b.now, t);
  EXPECT_LT(b.now - t, 100 * kMs);
}

TEST(PowerMeter, WithoutSensorsSaysWhy) {
  Bench b;
  b.sensors = false;
  PowerMeter meter = b.Meter();
  EXPECT_FALSE(meter.available());
  EXPECT_EQ(meter.reason(), "no energy sensor");
  EXPECT_FALSE(PowerMeter::Without("energy='none'")->available());
  EXPECT_EQ(PowerMeter::Without("energy='none'")->reason(), "energy='none'");
  EXPECT_FALSE(PowerMeter::Without("x")->Average(0, 0, kSec).ok);
}

TEST(MeasureWindows, SteadyPowerConvergesToTheTruePerCallEnergy) {
  Bench b;
  PowerMeter meter = b.Meter();
  WindowRule rule;
  auto s = MeasureWindows(meter, 0, false, std::nullopt, kNoDeadline, rule, b.Calls(0.001));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->status, ReplayStatus::kOk);
  EXPECT_TRUE(s->energy);
  EXPECT_GE(s->repeats, rule.min_repeats);
  EXPECT_NEAR(s->seconds_per_call, 0.001, 1e-9);
  EXPECT_NEAR(s->joules_per_call, 0.2, 0.2 * 0.02);  // 200 W x 1 ms
  EXPECT_LT(s->cv, 0.05);
  EXPECT_EQ(s->energy_source, "nvml");
  // Each window spans min_updates + 1 update periods at least (0.6 s > window_s).
  for (double w : b.asked) EXPECT_NEAR(w, 0.6, 0.05);
}

TEST(MeasureWindows, WithoutSensorsTimeIsJudged) {
  Bench b;
  b.sensors = false;
  PowerMeter meter = b.Meter();
  WindowRule rule;
  auto s = MeasureWindows(meter, 0, false, std::nullopt, kNoDeadline, rule, b.Calls(0.002));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->status, ReplayStatus::kOk);  // equal windows: converged at min_repeats
  EXPECT_EQ(s->repeats, rule.min_repeats);
  EXPECT_FALSE(s->energy);
  EXPECT_EQ(s->joules_per_call, -1);
  EXPECT_EQ(s->energy_source, "no energy sensor");
  for (double w : b.asked) EXPECT_DOUBLE_EQ(w, rule.window_s);
}

TEST(MeasureWindows, HostOnlyKeysCostIdlePowerOverTheirTime) {
  Bench b;
  PowerMeter meter = b.Meter();
  WindowRule rule;
  auto s = MeasureWindows(meter, 0, true, 50.0, kNoDeadline, rule, b.Calls(0.0001));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->status, ReplayStatus::kHost);
  EXPECT_TRUE(s->energy);
  EXPECT_NEAR(s->joules_per_call, 50 * 0.0001, 1e-9);
  EXPECT_EQ(s->energy_source, "idle power x host time (no device work)");
  for (double w : b.asked) EXPECT_DOUBLE_EQ(w, rule.host_window_s);  // short windows

  auto no_idle = MeasureWindows(meter, 0, true, std::nullopt, kNoDeadline, rule, b.Calls(0.0001));
  ASSERT_TRUE(no_idle.ok());
  EXPECT_EQ(no_idle->status, ReplayStatus::kHost);
  EXPECT_FALSE(no_idle->energy);
  EXPECT_EQ(no_idle->joules_per_call, -1);
  EXPECT_EQ(no_idle->energy_source, "no device work; idle power not measured");
}

TEST(MeasureWindows, ADeadlineBeforeTheFirstWindowIsBudget) {
  Bench b;
  PowerMeter meter = b.Meter();
  auto s = MeasureWindows(meter, 0, false, std::nullopt, b.now + 100 * kMs, WindowRule{}, b.Calls(0.001));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->status, ReplayStatus::kBudget);
  EXPECT_EQ(s->repeats, 0);
  EXPECT_EQ(s->seconds_per_call, 0);
  EXPECT_TRUE(b.asked.empty());

  // A host-only key with fewer windows than min_repeats is budget too.
  auto host = MeasureWindows(meter, 0, true, 50.0, b.now + 120 * kMs, WindowRule{}, b.Calls(0.001));
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->status, ReplayStatus::kBudget);
  EXPECT_EQ(host->repeats, 2);
}

TEST(MeasureWindows, WindowsThatNeverAgreeAreNoisy) {
  Bench b;
  b.sensors = false;
  PowerMeter meter = b.Meter();
  WindowRule rule;
  rule.max_repeats = 6;
  int k = 0;
  auto s = MeasureWindows(meter, 0, false, std::nullopt, kNoDeadline, rule, [&](double seconds) {
    return b.Calls(++k % 2 ? 0.001 : 0.003)(seconds);
  });
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->status, ReplayStatus::kNoisy);
  EXPECT_EQ(s->repeats, 6);
  EXPECT_GT(s->cv, 0.4);
}

TEST(MeasureWindows, AWindowCutShortIsMeasuredAgain) {
  Bench b;
  b.sensors = false;
  PowerMeter meter = b.Meter();
  int k = 0;
  auto s = MeasureWindows(meter, 0, false, std::nullopt, kNoDeadline, WindowRule{}, [&](double seconds) {
    // The first window holds a tenth of what was asked (an estimate too high).
    return b.Calls(0.001)(k++ == 0 ? seconds / 10 : seconds);
  });
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->status, ReplayStatus::kOk);
  EXPECT_EQ(s->repeats, 3);
  EXPECT_EQ(k, 4);  // the short one is not kept
  EXPECT_EQ(s->calls, 500);
}

TEST(MeasureWindows, AFailedCallEndsTheKey) {
  Bench b;
  PowerMeter meter = b.Meter();
  auto s = MeasureWindows(meter, 0, false, std::nullopt, kNoDeadline, WindowRule{},
                          [](double) -> Result<CallWindow> { return MakeError(ErrorCode::kInternal, "boom"); });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "boom");
}

}  // namespace
}  // namespace magneton::energy
