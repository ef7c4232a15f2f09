// The measured pass's iterations (step_timeline.h) on a host timeline built
// by hand: which windows the per-iteration figures average.
#include "analysis/diff/step_timeline.h"

#include <gtest/gtest.h>

#include <cmath>

namespace magneton::analysis {
namespace {

constexpr int64_t kMs = 1'000'000;

// 8 repetitions of a step of two 1 ms operators, back to back; `foreign[r]`
// operators outside every repetition (1 ms each) run after repetition r.
struct Timeline {
  Run run;
  PassAlignment al;
  explicit Timeline(const std::vector<int>& foreign) {
    al.repeats = 8;
    int64_t t = 0;
    auto op = [&](int32_t rep) {
      Op o;
      o.id = static_cast<int64_t>(run.ops.size());
      o.name = rep < 0 ? "aten::eval_work" : "aten::step_work";
      o.start_ns = t;
      o.end_ns = t += kMs;
      run.ops.push_back(o);
      al.op_rep.push_back(rep);
    };
    op(-1);  // set-up before the first step
    for (int32_t r = 0; r < 8; ++r) {
      op(r), op(r);
      for (int k = 0; k < foreign[r]; ++k) op(-1);
    }
    run.info.start_ns = 0;
    run.info.end_ns = t;
  }
  StepTimeline Build() const { return BuildStepTimeline(run, energy::Attribution{}, al); }
};

TEST(StepTimeline, IterationsThatAlsoRanOtherWorkAreLeftOutOfTheMeans) {
  // An evaluation of 30 operators after steps 2 and 5: those two iterations
  // span 32 ms, the others 2 ms.
  StepTimeline tl = Timeline({0, 0, 30, 0, 0, 30, 0, 0}).Build();
  ASSERT_EQ(tl.steps.size(), 8u);
  EXPECT_EQ(tl.foreign_windows, 2);
  EXPECT_EQ(tl.foreign_items, 60);
  EXPECT_FALSE(tl.full_period(2));
  EXPECT_FALSE(tl.full_period(5));
  EXPECT_FALSE(tl.full_period(7));  // the last window ends with its last item
  EXPECT_TRUE(tl.full_period(0));
  EXPECT_NEAR(tl.seconds(), 2e-3, 1e-9);
  EXPECT_NEAR(tl.tail_seconds(), 0, 1e-9);
}

TEST(StepTimeline, OtherWorkInMostIterationsIsPartOfTheStep) {
  // Something outside the recorded step after every other iteration or more
  // (a logging call each step): it is the step's own, and counted.
  StepTimeline tl = Timeline({1, 1, 0, 1, 1, 0, 1, 0}).Build();
  EXPECT_EQ(tl.foreign_windows, 0);
  for (size_t i = 0; i + 1 < tl.steps.size(); ++i) EXPECT_TRUE(tl.full_period(i)) << i;
  EXPECT_NEAR(tl.seconds(), (5 * 3e-3 + 2 * 2e-3) / 7, 1e-9);
}

// 6 repetitions of two 1 ms kernels on the device, 4 ms apart; the host
// marks each step's end (`rec.step()`) every `mark_every` ns, and records
// the first kernel's launch call when `launches`.
Run DeviceRun(PassAlignment* al, int64_t mark_every, bool launches) {
  Run run;
  al->repeats = 6;
  for (int32_t r = 0; r < 6; ++r)
    for (int k = 0; k < 2; ++k) {
      Kernel x;
      x.id = static_cast<int64_t>(run.kernels.size());
      x.name = k ? "gemm" : "relu";
      x.start_ns = r * 4 * kMs + k * kMs;
      x.end_ns = x.start_ns + kMs;
      x.correlation = x.id + 1;
      run.kernels.push_back(x);
      al->kernel_rep.push_back(r);
      if (launches && k == 0) {
        ApiCall a;
        a.id = static_cast<int64_t>(run.api_calls.size());
        a.name = "cudaLaunchKernel_v7000";
        a.correlation = x.correlation;
        a.start_ns = r * 3 * kMs;  // the host runs ahead: 3 ms a step
        a.end_ns = a.start_ns + 1000;
        run.api_calls.push_back(a);
      }
    }
  for (int i = 1; mark_every > 0 && i <= 6; ++i) {
    Range m;
    m.id = static_cast<int64_t>(run.ranges.size());
    m.name = kStepMark;
    m.domain = kMagnetonDomain;
    m.start_ns = m.end_ns = i * mark_every;
    run.ranges.push_back(m);
  }
  run.info.end_ns = 24 * kMs;
  return run;
}

TEST(StepTimeline, HostPeriodFromLaunchCallsElseFromStepMarks) {
  PassAlignment al;
  StepTimeline launches = BuildStepTimeline(DeviceRun(&al, 0, true), energy::Attribution{}, al);
  ASSERT_TRUE(launches.on_device);
  EXPECT_NEAR(launches.seconds(), 4e-3, 1e-9);
  EXPECT_NEAR(launches.host_seconds(), 3e-3, 1e-9);

  PassAlignment al2;
  StepTimeline marks = BuildStepTimeline(DeviceRun(&al2, 2500'000, false), energy::Attribution{}, al2);
  EXPECT_EQ(marks.step_marks_ns.size(), 6u);
  EXPECT_NEAR(marks.host_seconds(), 2.5e-3, 1e-9);

  PassAlignment al3;
  StepTimeline neither = BuildStepTimeline(DeviceRun(&al3, 0, false), energy::Attribution{}, al3);
  EXPECT_TRUE(std::isnan(neither.host_seconds()));
}

// 6 repetitions of three 1 ms kernels, launch-bound: the device waits 1 ms
// before the second and 0.5 ms before the third, and idles 0.5 ms after it.
StepTimeline GappedSteps(double program_seconds) {
  Run run;
  PassAlignment al;
  al.repeats = 6;
  for (int32_t r = 0; r < 6; ++r)
    for (int64_t start : {0 * kMs, 2 * kMs, 7 * kMs / 2}) {
      Kernel x;
      x.id = static_cast<int64_t>(run.kernels.size());
      x.start_ns = r * 5 * kMs + start;
      x.end_ns = x.start_ns + kMs;
      run.kernels.push_back(x);
      al.kernel_rep.push_back(r);
    }
  run.info.end_ns = 30 * kMs;
  return BuildStepTimeline(run, energy::Attribution{}, al, program_seconds);
}

TEST(StepTimeline, TheTracersDelayIsTakenOffEveryGapAlike) {
  StepTimeline as_traced = GappedSteps(kUnmeasured);
  EXPECT_NEAR(as_traced.seconds(), 5e-3, 1e-9);
  EXPECT_EQ(as_traced.tracer_delay_ns, 0);

  // Untraced, the step took 4 ms: a third of a millisecond off each of the three gaps.
  StepTimeline paced = GappedSteps(4e-3);
  EXPECT_NEAR(paced.traced_seconds, 5e-3, 1e-9);
  EXPECT_NEAR(paced.seconds(), 4e-3, 1e-8);
  EXPECT_NEAR(paced.tracer_delay_ns, kMs / 3, 1);
  EXPECT_NEAR(paced.kernel_wait[1].ns, 2 * kMs / 3, 1);
  EXPECT_NEAR(paced.kernel_wait[2].ns, kMs / 6, 1);
  EXPECT_NEAR(paced.tail_seconds(), 1e-3 / 6, 1e-8);
  EXPECT_NEAR(paced.busy_seconds(), 3e-3, 1e-9);
  EXPECT_TRUE(std::isnan(paced.idle_joules()));  // no energy recorded: still unmeasured, not 0

  // 3.2 ms: the short gaps close, the long one gives the rest.
  StepTimeline closer = GappedSteps(3.2e-3);
  EXPECT_NEAR(closer.seconds(), 3.2e-3, 1e-8);
  EXPECT_EQ(closer.kernel_wait[2].ns, 0);
  EXPECT_NEAR(closer.kernel_wait[1].ns, kMs / 5, 1);

  // Faster than the device's own work: only the gaps go.
  StepTimeline busy = GappedSteps(2.5e-3);
  EXPECT_NEAR(busy.seconds(), 3e-3, 1e-9);
  EXPECT_EQ(busy.kernel_wait[1].ns, 0);

  // Slower untraced than traced: nothing is added.
  StepTimeline slower = GappedSteps(6e-3);
  EXPECT_NEAR(slower.seconds(), 5e-3, 1e-9);
  EXPECT_EQ(slower.tracer_delay_ns, 0);
}

}  // namespace
}  // namespace magneton::analysis
