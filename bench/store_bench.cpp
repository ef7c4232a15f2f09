// Run store throughput (docs/benchmarks.md, "Run store"):
//  - writer: kernel rows per second through RunWriter, including Close
//    (commit, WAL checkpoint); goal >= 1,000,000 rows/s on a 2-core box;
//  - reader: LoadRun of a run with 1M kernels; goal <= 2 s.
// Kernels look like a CUPTI trace: 64 distinct demangled names, CLOCK_MONOTONIC
// timestamps, increasing correlation ids, launches spread over ops.
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "core/store.h"

namespace {

using namespace magneton;

std::string ScratchPath(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("magneton-bench-") + std::to_string(getpid()) +
                                                    "-" + name))
      .string();
}

void RemoveRun(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path + suffix);
}

std::vector<std::string> KernelNames() {
  std::vector<std::string> names;
  for (int i = 0; i < 64; ++i)
    names.push_back("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, "
                    "at::native::binary_internal::MulFunctor<float>>, std::array<char*, 3ul>>(int, variant_" +
                    std::to_string(i) + ")");
  return names;
}

Kernel MakeKernel(int64_t i, const std::vector<std::string>& names) {
  Kernel k;
  k.id = i;
  k.name = names[(i * 7) % names.size()];
  k.device = 0;
  k.stream = 7 + i % 2;
  k.start_ns = 1'734'000'000'000'000 + 4'000 * i;  // ~20 days of uptime, in ns
  k.end_ns = k.start_ns + 2'500 + i % 1'000;
  k.grid[0] = 132 * (1 + i % 8);
  k.grid[1] = 1 + i % 4;
  k.grid[2] = 1;
  k.block[0] = 128;
  k.block[1] = 1;
  k.block[2] = 1;
  k.registers = 32 + i % 96;
  k.static_smem = 0;
  k.dynamic_smem = 49152;
  k.correlation = 10'000 + 3 * i;
  k.op = i / 4;
  k.stack = kNone;
  return k;
}

// Writes `n` kernels (and one device) to `path`; Close included, and timed
// alone into *close_s when given (commit, checkpoint of the WAL into the file).
bool WriteKernels(const std::string& path, int64_t n, const std::vector<std::string>& names,
                  double* close_s = nullptr) {
  RunInfo info;
  info.command = "store_bench";
  auto w = RunWriter::Create(path, info, /*overwrite=*/true);
  if (!w.ok()) return false;
  if (!(*w)->Add(Device{0, "gpu", "Bench GPU", "GPU-0", 0, 0}).ok()) return false;
  for (int64_t i = 0; i < n; ++i)
    if (!(*w)->Add(MakeKernel(i, names)).ok()) return false;
  const auto close_start = std::chrono::steady_clock::now();
  const bool ok = (*w)->Close().ok();
  if (close_s) *close_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - close_start).count();
  return ok;
}

double CpuSeconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void BM_WriteKernels(benchmark::State& state) {
  const int64_t n = state.range(0);
  const auto names = KernelNames();
  const std::string path = ScratchPath("write.mgt");
  // CPU seconds per iteration of the calling thread and of the whole process
  // (the difference is the store's writer thread): on a busy machine they
  // show the capacity that wall time hides.
  const double caller0 = CpuSeconds(CLOCK_THREAD_CPUTIME_ID), process0 = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
  double close_s = 0;
  for (auto _ : state) {
    if (!WriteKernels(path, n, names, &close_s)) state.SkipWithError("write failed");
  }
  const double iters = static_cast<double>(state.iterations());
  const double caller = (CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - caller0) / iters;
  state.counters["caller_cpu_s"] = caller;
  state.counters["close_s"] = close_s / iters;
  state.counters["writer_thread_cpu_s"] = (CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - process0) / iters - caller;
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["file_MB"] = std::filesystem::file_size(path) / 1e6;
  RemoveRun(path);
}
// Process CPU time: it includes the store's writer thread.
BENCHMARK(BM_WriteKernels)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

void BM_LoadRun(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::string path = ScratchPath("load.mgt");
  if (!WriteKernels(path, n, KernelNames())) {
    state.SkipWithError("write failed");
    return;
  }
  for (auto _ : state) {
    auto run = LoadRun(path);
    if (!run.ok() || static_cast<int64_t>(run->kernels.size()) != n) state.SkipWithError("load failed");
    benchmark::DoNotOptimize(run);
  }
  state.SetItemsProcessed(state.iterations() * n);
  RemoveRun(path);
}
BENCHMARK(BM_LoadRun)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
