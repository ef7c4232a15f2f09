// A small synthetic Run that fills every table of the store, for the store's
// round-trip tests, the fuzz seed and the bundled demo file. It is made up,
// not recorded: the names look like a CUDA matmul step, the numbers are not
// measurements.
#pragma once

#include <cmath>
#include <string>

#include "core/run.h"

namespace magneton::testing {

inline Fingerprint SampleFingerprint(int seed, int spectra) {
  Fingerprint fp;
  fp.numel = 64 * (seed + 1);
  fp.mean = 0.25 * seed - 0.5;
  fp.stddev = 1.0 + seed;
  fp.min = -3.5 - seed;
  fp.max = 3.25 + seed;
  fp.l1 = 51.0 * (seed + 1);
  fp.l2 = std::sqrt(64.0 * (seed + 1));
  for (int i = 0; i < 9; ++i) fp.quantiles.push_back(static_cast<float>(fp.min + i * (fp.max - fp.min) / 8));
  for (int m = 0; m < spectra; ++m) {
    std::vector<float> s;
    for (int i = 0; i < 4; ++i) s.push_back(static_cast<float>(10.0 / (i + 1) + m + seed * 0.125));
    fp.spectra.push_back(std::move(s));
  }
  return fp;
}

// `kernels` kernels spread over `ops` ops; every other table gets a few rows.
inline Run MakeSampleRun(int ops = 6, int kernels = 12) {
  Run run;
  run.info.command = "python train_step.py --batch 8";
  run.info.host = "sample-host";
  run.info.clock_domain = "CLOCK_MONOTONIC";
  run.info.magneton_version = "0.1.0";
  run.info.pid = 4242;
  run.info.start_ns = 1'000'000'000;
  run.info.end_ns = 3'500'000'000;
  run.info.extra = {{"framework", "torch 2.11.0"}, {"synthetic", "1"}};

  run.devices.push_back(Device{0, "cpu", "Sample CPU", "", 0, int64_t{64} << 30});
  run.devices.push_back(Device{1, "gpu", "Sample GPU", "GPU-0000-sample", 0, int64_t{80} << 30});

  run.frames = {
      Frame{0, "python", "forward", "model.py", 42, ""},
      Frame{1, "python", "train_step", "train_step.py", 17, ""},
      Frame{2, "native", "at::native::addmm_out_cuda", "", 0, "libtorch_cuda.so"},
  };
  run.stacks = {Stack{0, {0, 1}}, Stack{1, {2, 0, 1}}, Stack{2, {}}};

  // Each op reads two tensors and writes one; the first output feeds the next op.
  for (int i = 0; i < 2 * ops + 2; ++i) {
    Tensor t;
    t.id = i;
    t.storage = 0x7f0000 + 0x1000 * i;
    t.offset = i % 3;
    t.version = i % 2;
    t.shape = i % 4 == 3 ? std::vector<int64_t>{} : std::vector<int64_t>{8, 16, 4 + i};
    t.strides = i % 4 == 3 ? std::vector<int64_t>{} : std::vector<int64_t>{16 * (4 + i), 4 + i, 1};
    t.dtype = i % 2 ? "bfloat16" : "float32";
    t.device = i % 5 == 4 ? kHostDevice : 1;
    t.memory = std::string(t.device == kHostDevice ? (i % 2 ? kMemoryPinned : kMemoryPageable) : kMemoryDevice);
    if (i % 3 != 2) t.fingerprint = SampleFingerprint(i, i % 3);
    run.tensors.push_back(std::move(t));
  }
  const char* names[] = {"aten::addmm", "aten::gelu", "aten::add", "aten::mm"};
  for (int i = 0; i < ops; ++i) {
    Op o;
    o.id = i;
    o.parent = i % 3 == 2 ? i - 1 : kNone;
    o.name = names[i % 4];
    o.schema = std::string(names[i % 4]) + "(Tensor self, Tensor other) -> Tensor";
    o.framework = "torch";
    o.sequence = 100 + i;
    o.forward_op = i >= ops / 2 ? i - ops / 2 : kNone;
    o.thread = 7 + i % 2;
    o.start_ns = run.info.start_ns + 1'000'000 * i;
    o.end_ns = o.start_ns + 800'000;
    o.stack = i % 3 == 1 ? kNone : i % 2;
    o.device = 1;
    o.inputs = {2 * i, 2 * i + 1};
    o.outputs = {2 * i + 2};
    if (i % 4 == 3) o.outputs.push_back(2 * i + 3);
    if (i % 2) o.args = "beta=1, alpha=0.5";
    run.ops.push_back(std::move(o));
  }
  for (int i = 0; i < kernels; ++i) {
    Kernel k;
    k.id = i;
    k.name = i % 2 ? "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>()"
                   : "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1";
    k.device = 1;
    k.stream = 7;
    k.start_ns = run.info.start_ns + 200'000 * i + 50'000;
    k.end_ns = k.start_ns + 120'000 + 1000 * i;
    k.grid[0] = 132 + i;
    k.grid[1] = 1 + i % 3;
    k.grid[2] = 1;
    k.block[0] = 128;
    k.block[1] = 2;
    k.block[2] = 1 + i % 2;
    k.registers = 168;
    k.static_smem = 1024 * (i % 4);
    k.dynamic_smem = 232448;
    k.correlation = 5000 + i;
    k.op = ops ? i % ops : kNone;
    k.stack = i % 3 == 0 ? 1 : kNone;
    run.kernels.push_back(std::move(k));
  }
  run.transfers = {
      Transfer{0, "HtoD", 1 << 20, 1, 7, run.info.start_ns + 10, run.info.start_ns + 90'000, 4000, 0, "pageable",
               "device", true},
      Transfer{1, "memset", 4096, 1, 7, run.info.start_ns + 100'000, run.info.start_ns + 101'000, 4001, kNone, "", "",
               false},
      Transfer{2, "DtoH", 512, 1, 0, run.info.end_ns - 90'000, run.info.end_ns - 10, 4002, ops ? ops - 1 : kNone,
               "device", "pinned", false},
  };
  run.api_calls = {
      ApiCall{0, "cudaLaunchKernel", "runtime", 7, run.info.start_ns + 40'000, run.info.start_ns + 45'000, 5000, 1},
      ApiCall{1, "cuMemcpyHtoDAsync_v2", "driver", 7, run.info.start_ns, run.info.start_ns + 5'000, 4000, kNone},
      // A thread polling an event: 1200 calls in one row.
      ApiCall{2, "cudaEventQuery", "runtime", 7, run.info.start_ns + 50'000, run.info.start_ns + 80'000, 5001, kNone,
              1200},
  };
  run.ranges = {
      Range{0, "train_step", "magneton", 7, run.info.start_ns, run.info.end_ns, kNone},
      Range{1, "forward", "nvtx", 7, run.info.start_ns + 1000, run.info.start_ns + 900'000, 0},
  };

  // An energy counter and an instant power reading for the GPU, one CPU-time series.
  SensorSeries energy{0, 1, "energy.total", "J", "nvml", {}, {}};
  SensorSeries power{1, 1, "power.instant", "W", "nvml", {}, {}};
  for (int i = 0; i <= 25; ++i) {
    int64_t t = run.info.start_ns + int64_t{100'000'000} * i;
    energy.t_ns.push_back(t);
    energy.value.push_back(5000.0 + 30.0 * i);  // 300 W over 100 ms steps
    power.t_ns.push_back(t);
    power.value.push_back(i % 2 ? 320.0 : 280.0);
  }
  run.series = {std::move(energy), std::move(power),
                SensorSeries{2, 0, "cpu.time", "s", "procfs", {run.info.start_ns, run.info.end_ns}, {0.5, 2.75}}};

  run.replays = {
      ReplayMeasurement{0, 0, "aten::addmm[8x16x4,8x16x5;float32]", 1, 200, 5, 1.2e-4, 0.041, 80.0, 0.012, "ok"},
      ReplayMeasurement{1, 1, "aten::gelu[8x16x6;bfloat16]", 1, 1000, 3, 9.5e-6, 0.0021, 80.0, 0.31, "budget"},
  };
  run.config = {{"torch.backends.cuda.matmul.allow_tf32", "False"}, {"CUDA_VISIBLE_DEVICES", "0"}};
  run.stats = {Stat{"cupti_records_dropped", "data_loss", 3, "activity buffer overflowed"},
               Stat{"replay_ops_skipped", "info", 1, "ops with host synchronization were not replayed"}};
  return run;
}

}  // namespace magneton::testing
