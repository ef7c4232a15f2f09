// `magneton diff` on recorded run pairs of about 100k operators a side
// (docs/benchmarks.md, "Diff"), recorded by bench/record_diff_pairs.py into
// $MAGNETON_DIFF_BENCH_DIR (default /tmp/magneton-diff-pairs):
//   jax_mlp      record_jax of an 8-layer MLP without and with jax.jit
//   torch_gpt2   GPT-2 with HF's eight-operator GELU against the fused one,
//                recording passes and measured passes
// and jax_mlp with kernels: a CPU recording has none, so for the diff's
// per-kernel work (attribution, costs, merging XLA-fused regions) a kernel is
// added per leaf equation of the eager run, and per dot_general and mul of
// the jitted one (the equations between launch none, as where XLA fuses
// them), each for its equation's time, with an energy counter read every
// 100 ms: a stand-in for a GPU recording, labelled as such.
//
//   PYTHONPATH=python python bench/record_diff_pairs.py /tmp/magneton-diff-pairs
//   build/bench/diff_bench
//
// Each benchmark loads the pair, then times DiffRuns (matching, attribution
// of both sides, costs, verdicts, root cause) as the CLI runs it. Counters:
// ops and kernels per side, regions, seconds to load, process CPU time of
// the diff (all threads), peak RSS.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "analysis/diff/diff.h"
#include "core/store.h"
#include "process_usage.h"
#include "stand_in_kernels.h"

namespace {

using magneton::Run;

using magneton::bench::CpuSeconds;
using magneton::bench::PeakRssMiB;

std::string Dir() {
  const char* d = std::getenv("MAGNETON_DIFF_BENCH_DIR");
  return d && *d ? d : "/tmp/magneton-diff-pairs";
}

std::optional<Run> Load(const std::string& name) {
  const std::string path = Dir() + "/" + name + ".mgt";
  if (!std::filesystem::exists(path)) return std::nullopt;
  auto r = magneton::LoadRun(path);
  if (!r.ok()) return std::nullopt;
  return std::move(*r);
}

// The stand-in kernels (above): `fused` keeps them to dot_general and mul.
void AddKernels(Run& run, bool fused) {
  magneton::testing::AddStandInKernels(run, fused);
  run.devices = {{0, "gpu", "NVIDIA H200", "GPU-0", 0, 141LL << 30}};
  magneton::SensorSeries e;
  e.sensor = "energy.total";
  e.unit = "J";
  e.source = "nvml";
  double joules = 0;
  for (int64_t t = run.info.start_ns; t <= run.info.end_ns + 100'000'000; t += 100'000'000, joules += 40) {
    e.t_ns.push_back(t);
    e.value.push_back(joules);
  }
  run.series.push_back(e);
}

// a, b: run names; measured: whether "<name>-measured.mgt" passes go with them.
void DiffPair(benchmark::State& state, const std::string& a, const std::string& b, bool measured,
              bool kernels = false) {
  const double t0 = CpuSeconds();
  std::optional<Run> ra = Load(a), rb = Load(b), ma, mb;
  if (measured) ma = Load(a + "-measured"), mb = Load(b + "-measured");
  if (!ra || !rb || (measured && (!ma || !mb))) {
    state.SkipWithError(("run files missing in " + Dir() + ": record them with bench/record_diff_pairs.py").c_str());
    return;
  }
  const double load = CpuSeconds() - t0;
  if (kernels) AddKernels(*ra, false), AddKernels(*rb, true);
  magneton::analysis::DiffReport report;
  double cpu = 0;
  for (auto _ : state) {
    const double c0 = CpuSeconds();
    auto r = magneton::analysis::DiffRuns(*ra, *rb, ma ? &*ma : nullptr, mb ? &*mb : nullptr, {});
    cpu = CpuSeconds() - c0;
    if (!r.ok()) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    report = std::move(*r);
  }
  state.counters["ops_a"] = static_cast<double>(ra->ops.size());
  state.counters["ops_b"] = static_cast<double>(rb->ops.size());
  state.counters["kernels_a"] = static_cast<double>((ma ? *ma : *ra).kernels.size());
  state.counters["kernels_b"] = static_cast<double>((mb ? *mb : *rb).kernels.size());
  state.counters["regions"] = static_cast<double>(report.regions.size());
  state.counters["waste"] = report.waste_count();
  state.counters["load_cpu_s"] = load;
  state.counters["diff_cpu_s"] = cpu;
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}

void BM_DiffJaxEagerAgainstJit(benchmark::State& state) { DiffPair(state, "jax_mlp_eager", "jax_mlp_jit", false); }
void BM_DiffJaxEagerAgainstJitWithKernels(benchmark::State& state) {
  DiffPair(state, "jax_mlp_eager", "jax_mlp_jit", false, true);
}
void BM_DiffTorchGpt2Gelu(benchmark::State& state) {
  DiffPair(state, "torch_gpt2_gelu_new", "torch_gpt2_gelu_fused", true);
}

BENCHMARK(BM_DiffJaxEagerAgainstJit)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_DiffJaxEagerAgainstJitWithKernels)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_DiffTorchGpt2Gelu)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
