// The kernel-level diff at scale (docs/benchmarks.md, "Kernel-level diff"):
// two whole-program recordings with no operators and no NVTX ranges
// (tests/analysis/kernel_program.h), a transformer's training script of 48
// layers (195 kernels a step), a warm-up step that autotunes and N steps; side
// b runs TF32 GEMMs. DiffRuns finds each side's step, aligns the two, costs
// and judges the segments.
//
//   build/bench/kernel_diff_bench --benchmark_filter='BM_KernelDiff/1000$'
//
// Counters: kernels per side, segments (regions), peak RSS (getrusage, MiB).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "../tests/analysis/kernel_program.h"
#include "analysis/diff/diff.h"

namespace {

double PeakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

void BM_KernelDiff(benchmark::State& state) {
  using magneton::fixture::Program;
  using magneton::fixture::Variant;
  const int steps = static_cast<int>(state.range(0));
  Variant fp32, tf32;
  fp32.layers = tf32.layers = 48;
  tf32.gemm = magneton::fixture::kTf32Gemm;
  tf32.gemm_ns = 10'000;
  const magneton::Run a = Program("train --tf32 off", fp32, steps), b = Program("train --tf32 on", tf32, steps);
  size_t regions = 0;
  for (auto _ : state) {
    auto r = magneton::analysis::DiffRuns(a, b, nullptr, nullptr, magneton::analysis::DiffOptions{});
    if (!r.ok()) state.SkipWithError(r.error().message.c_str());
    regions = r.ok() ? r->regions.size() : 0;
    benchmark::DoNotOptimize(r);
  }
  state.counters["kernels"] = static_cast<double>(a.kernels.size());
  state.counters["regions"] = static_cast<double>(regions);
  state.counters["peak_rss_mib"] = PeakRssMiB();
}
BENCHMARK(BM_KernelDiff)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3);

}  // namespace

BENCHMARK_MAIN();
