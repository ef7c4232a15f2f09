// Energy costs: reading the trace clock, and attribution of a run of N kernels on 4 streams (overlapping), each
// launched by an op in a 3-level tree, 1000 ranges, and NVML-like series
// (counter and instant power every 100 ms) over the run's span.
#include <benchmark/benchmark.h>

#include <random>

#include "energy/attribution.h"
#include "energy/clock.h"

namespace {

magneton::Run MakeRun(int64_t kernels) {
  using namespace magneton;
  Run run;
  run.devices.push_back(Device{0, "gpu", "NVIDIA H200", "GPU-bench", 0, 0});
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> dur(2'000, 200'000), gap(0, 20'000);
  int64_t t[4] = {0, 0, 0, 0};
  for (int64_t i = 0; i < kernels; ++i) {
    if (i % 8 == 0) {  // a parent op every 8 kernels, a grandparent every 64
      Op op;
      op.id = static_cast<int64_t>(run.ops.size());
      op.parent = i % 64 == 0 ? kNone : (i / 64) * 8;
      op.thread = 1;
      op.start_ns = t[0];
      run.ops.push_back(op);
    }
    Kernel k;
    k.id = i;
    k.device = 0;
    k.stream = i % 4;
    k.start_ns = t[i % 4] + gap(rng);
    k.end_ns = k.start_ns + dur(rng);
    t[i % 4] = k.end_ns;
    k.op = static_cast<int64_t>(run.ops.size()) - 1;
    run.kernels.push_back(k);
  }
  int64_t end = std::max(std::max(t[0], t[1]), std::max(t[2], t[3]));
  run.info.start_ns = 0;
  run.info.end_ns = end;
  SensorSeries counter{0, 0, "energy.total", "J", "nvml", {}, {}}, instant{1, 0, "power.instant", "W", "nvml", {}, {}};
  std::uniform_real_distribution<double> watts(400, 700);
  double joules = 1e5;
  for (int64_t u = -100'000'000; u <= end + 200'000'000; u += 100'000'000) {
    double w = watts(rng);
    joules += w * 0.1;
    counter.t_ns.push_back(u + 9'000'000);
    counter.value.push_back(joules);
    instant.t_ns.push_back(u + 1'000'000);
    instant.value.push_back(w);
  }
  run.series = {counter, instant};
  for (int64_t r = 0; r < 1000; ++r)
    run.ranges.push_back(Range{r, "step", "nvtx", 1, end / 1000 * r, end / 1000 * (r + 1), kNone});
  return run;
}

void BM_Attribute(benchmark::State& state) {
  magneton::Run run = MakeRun(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(magneton::energy::Attribute(run));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Attribute)->Arg(10'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_ClockNow(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(magneton::energy::NowNs());
}
BENCHMARK(BM_ClockNow);

}  // namespace

BENCHMARK_MAIN();
