// A CUDA program as `magneton record` sees it with no framework and no NVTX
// ranges (analysis/diff/kernel_regions.h): one host thread launching kernels
// and copies onto one stream, each with its launch API call, and
// synchronizing calls that make the host wait for the device. The device runs
// items in launch order, each when the previous one is done and its launch
// has reached the device. Program() builds a small transformer's training
// script this way. Shared by tests/analysis and tests/report.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "core/run.h"

namespace magneton::fixture {

struct KernelProgram {
  Run run;
  int64_t host = 1'000'000;    // the host's clock: where the next API call starts
  int64_t device = 1'000'000;  // when the device is free again
  int64_t correlation = 1;
  int64_t launch_ns = 4'000;                     // host time per launch call
  static constexpr int64_t kLatencyNs = 6'000;  // launch to device

  explicit KernelProgram(const std::string& command) {
    run.info.command = command;
    run.info.host = "testhost";
    run.info.start_ns = host;
    run.info.extra["capture"] = "cupti-injection";
    run.devices.push_back({0, "gpu", "NVIDIA H200", "GPU-0000", 0, 141LL << 30});
  }
  int64_t Api(const std::string& name, int64_t ns) {
    ApiCall a;
    a.id = static_cast<int64_t>(run.api_calls.size());
    a.name = name;
    a.domain = "runtime";
    a.thread = 7;
    a.start_ns = host;
    a.end_ns = host + ns;
    a.correlation = correlation++;
    run.api_calls.push_back(a);
    host += ns;
    return a.correlation;
  }
  // Starts on the device once it is free and the launch has arrived.
  std::pair<int64_t, int64_t> Place(int64_t ns) {
    const int64_t start = std::max(device, host + kLatencyNs);
    device = start + ns;
    return {start, device};
  }
  void Kernel(const std::string& name, int64_t ns, int32_t grid = 128, int32_t block = 256) {
    magneton::Kernel k;
    k.id = static_cast<int64_t>(run.kernels.size());
    k.name = name;
    k.grid[0] = grid;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = block;
    k.block[1] = k.block[2] = 1;
    k.correlation = Api("cudaLaunchKernel_v7000", launch_ns);
    std::tie(k.start_ns, k.end_ns) = Place(ns);
    run.kernels.push_back(k);
  }
  void Copy(const std::string& kind, int64_t bytes, int64_t ns) {
    Transfer t;
    t.id = static_cast<int64_t>(run.transfers.size());
    t.kind = kind;
    t.bytes = bytes;
    t.correlation = Api("cudaMemcpyAsync_v3020", launch_ns);
    std::tie(t.start_ns, t.end_ns) = Place(ns);
    run.transfers.push_back(t);
  }
  // The host waits until the device is done (cudaStreamSynchronize), then
  // spends `host_ns` before its next call (printing a loss, loading data).
  void Sync(int64_t host_ns) {
    Transfer t;
    t.id = static_cast<int64_t>(run.transfers.size());
    t.kind = "sync";
    t.start_ns = host;
    const int64_t done = std::max(device, host);
    t.correlation = Api("cudaStreamSynchronize_v3020", done - host + 1'000);
    t.end_ns = host;
    run.transfers.push_back(t);
    host += host_ns;
  }
  Run Done() {
    run.info.end_ns = std::max(host, device) + 1'000;
    return run;
  }
};

inline const std::string kFp32Gemm = "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_stage3_ffma_execute_kernel";
inline const std::string kTf32Gemm =
    "sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64x32_stage4_tensor16x8x8_kernel";

// A small transformer's step as its kernels: an embedding, `layers` layers of
// norm, GEMM, activation, GEMM, then a head and a loss.
struct Variant {
  std::string gemm = kFp32Gemm;
  int64_t gemm_ns = 40'000;
  bool item = false;         // `loss.item()` each step: a 4-byte copy and a synchronize
  bool extra_kernel = false; // a contiguous() copy kernel before each layer's second GEMM
  int32_t norm_grid = 128;
  int layers = 4;
  double kernel_scale = 1.0;  // every kernel's time: under 0.5 the host's launches (4 us) bound the step
  int64_t launch_ns = 4'000;  // the host's time per launch: a slow host (Python between launches) bounds the step
};

inline void Step(KernelProgram& p, const Variant& v, bool warm_up) {
  auto kernel = [&](const std::string& name, int64_t ns, int32_t grid = 1) {
    p.Kernel(name, static_cast<int64_t>(static_cast<double>(ns) * v.kernel_scale), grid);
  };
  // The first step autotunes: each GEMM is a probe kernel and then the pick.
  auto gemm = [&] {
    if (warm_up) kernel("gemm_autotune_probe", 90'000);
    kernel(v.gemm, v.gemm_ns);
  };
  kernel("embedding_kernel", 8'000);
  for (int l = 0; l < v.layers; ++l) {
    kernel("layer_norm_kernel", 5'000, v.norm_grid);
    gemm();
    kernel("gelu_kernel", 6'000);
    if (v.extra_kernel) kernel("direct_copy_kernel", 9'000);
    gemm();
  }
  kernel("lm_head_gemm", 30'000);
  kernel("cross_entropy_kernel", 7'000);
  if (v.item) {
    p.Copy("DtoH", 4, 1'500);
    p.Sync(150'000);
  }
}

// Set-up (weights to the device), a warm-up step, `steps` steps, a summary.
inline Run Program(const std::string& command, const Variant& v, int steps) {
  KernelProgram p(command);
  p.launch_ns = v.launch_ns;
  p.Copy("HtoD", 1 << 20, 50'000);
  p.Kernel("fill_kernel", 3'000);
  p.Sync(300'000);
  Step(p, v, true);
  for (int i = 0; i < steps; ++i) Step(p, v, false);
  p.Copy("DtoH", 4096, 2'000);
  p.Sync(100'000);
  return p.Done();
}

}  // namespace magneton::fixture
