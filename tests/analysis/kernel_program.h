// A CUDA program as `magneton record` sees it with no framework and no NVTX
// ranges (analysis/diff/kernel_regions.h): one host thread launching kernels
// and copies onto one stream, each with its launch API call, and
// synchronizing calls that make the host wait for the device. The device runs
// items in launch order, each when the previous one is done and its launch
// has reached the device. Shared by tests/analysis and tests/report.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/run.h"

namespace magneton::fixture {

struct KernelProgram {
  Run run;
  int64_t host = 1'000'000;    // the host's clock: where the next API call starts
  int64_t device = 1'000'000;  // when the device is free again
  int64_t correlation = 1;
  static constexpr int64_t kLaunchNs = 4'000;  // host time per launch call
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
    k.correlation = Api("cudaLaunchKernel_v7000", kLaunchNs);
    std::tie(k.start_ns, k.end_ns) = Place(ns);
    run.kernels.push_back(k);
  }
  void Copy(const std::string& kind, int64_t bytes, int64_t ns) {
    Transfer t;
    t.id = static_cast<int64_t>(run.transfers.size());
    t.kind = kind;
    t.bytes = bytes;
    t.correlation = Api("cudaMemcpyAsync_v3020", kLaunchNs);
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

}  // namespace magneton::fixture
