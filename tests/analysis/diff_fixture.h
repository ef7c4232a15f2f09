// Builds pairs of Runs shaped like real recordings (stacks with Python and
// native frames, nested ATen ops, kernels linked to ops, fingerprints, config
// snapshots) with a known difference, plus the MatchResult and Attributions
// that the matcher and attribution would give, for tests of the diff core
// and the reports. Header-only; shared by tests/analysis and tests/report.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "analysis/match/region_match.h"
#include "core/run.h"
#include "energy/attribution.h"

namespace magneton::fixture {

class RunBuilder {
 public:
  RunBuilder(const std::string& command) {
    run.info.command = command;
    run.info.host = "testhost";
    run.info.pid = 4242;
    run.devices.push_back({0, "gpu", "NVIDIA H200", "GPU-0000", 0, 141LL << 30});
  }

  int64_t Frame(const std::string& kind, const std::string& function, const std::string& file, int line,
                const std::string& module = "") {
    for (const auto& f : run.frames)
      if (f.kind == kind && f.function == function && f.file == file && f.line == line && f.module == module)
        return f.id;
    magneton::Frame f;
    f.id = static_cast<int64_t>(run.frames.size());
    f.kind = kind;
    f.function = function;
    f.file = file;
    f.line = line;
    f.module = module;
    run.frames.push_back(f);
    return f.id;
  }
  // Frames innermost first, as the recorder stores them.
  int64_t Stack(std::vector<int64_t> frames) {
    for (const auto& s : run.stacks)
      if (s.frames == frames) return s.id;
    run.stacks.push_back({static_cast<int64_t>(run.stacks.size()), std::move(frames)});
    return run.stacks.back().id;
  }
  int64_t Tensor(std::vector<int64_t> shape, double mean, std::vector<int64_t> strides = {},
                 const std::string& dtype = "float32") {
    magneton::Tensor t;
    t.id = static_cast<int64_t>(run.tensors.size());
    t.storage = 1000 + t.id;
    t.shape = std::move(shape);
    if (strides.empty()) {  // row-major
      strides.assign(t.shape.size(), 1);
      for (size_t i = t.shape.size(); i-- > 1;) strides[i - 1] = strides[i] * t.shape[i];
    }
    t.strides = std::move(strides);
    t.dtype = dtype;
    t.device = 0;
    Fingerprint fp;
    fp.numel = t.numel();
    fp.mean = mean;
    fp.stddev = 0.5;
    fp.min = mean - 2;
    fp.max = mean + 2;
    fp.l2 = std::sqrt(static_cast<double>(fp.numel)) * 0.6;
    fp.quantiles = {static_cast<float>(fp.min), static_cast<float>(mean), static_cast<float>(fp.max)};
    t.fingerprint = fp;
    run.tensors.push_back(t);
    return t.id;
  }
  int64_t Op(const std::string& name, int64_t parent, int64_t start, int64_t end, int64_t stack,
             std::vector<int64_t> inputs = {}, std::vector<int64_t> outputs = {}) {
    magneton::Op op;
    op.id = static_cast<int64_t>(run.ops.size());
    op.parent = parent;
    op.name = name;
    op.framework = "torch";
    op.thread = 77;
    op.start_ns = start;
    op.end_ns = end;
    op.stack = stack;
    op.device = 0;
    op.inputs = std::move(inputs);
    op.outputs = std::move(outputs);
    run.ops.push_back(op);
    return op.id;
  }
  int64_t Kernel(const std::string& name, int64_t op, int64_t start, int64_t end, int grid_x = 128,
                 int block_x = 256, int64_t stack = kNone) {
    magneton::Kernel k;
    k.id = static_cast<int64_t>(run.kernels.size());
    k.name = name;
    k.device = 0;
    k.stream = 7;
    k.start_ns = start;
    k.end_ns = end;
    k.grid[0] = grid_x;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = block_x;
    k.block[1] = k.block[2] = 1;
    k.registers = 96;
    k.correlation = 500 + k.id;
    k.op = op;
    k.stack = stack;
    run.kernels.push_back(k);
    return k.id;
  }
  Run run;
};

// Attribution as energy::Attribute gives it: kernel energies rolled up to ops
// inclusively, kernel time likewise, plus an idle share for the device.
inline energy::Attribution AttributionFor(const Run& run, const std::vector<double>& kernel_j,
                                          bool measured = true, double idle_j = 5.0) {
  energy::Attribution at;
  at.measured = measured;
  at.kernel_j = kernel_j;
  at.op_j.assign(run.ops.size(), 0);
  at.op_gpu_ns.assign(run.ops.size(), 0);
  double busy = 0;
  for (const auto& k : run.kernels) {
    double j = measured ? kernel_j[k.id] : NAN;
    busy += measured ? j : 0;
    for (int64_t o = k.op; o >= 0; o = run.ops[o].parent) {
      at.op_j[o] += measured ? j : 0;
      at.op_gpu_ns[o] += static_cast<double>(k.end_ns - k.start_ns);
    }
  }
  if (!measured) at.op_j.assign(run.ops.size(), NAN);
  energy::DeviceEnergy d;
  d.device = 0;
  d.start_ns = run.info.start_ns;
  d.end_ns = run.info.end_ns;
  d.busy_j = measured ? busy : NAN;
  d.idle_j = measured ? idle_j : NAN;
  d.total_j = measured ? busy + idle_j : NAN;
  d.method = measured ? "energy.total" : "unavailable";
  d.sensor_updates = measured ? 100 : 0;  // stands for a long, well-sampled window
  at.devices.push_back(d);
  return at;
}

// One side of a pair of runs being built region by region.
struct Side {
  RunBuilder b;
  std::vector<double> kernel_j;
  int64_t t = 1'000'000;  // ns clock
  int64_t script_frame = -1;
  explicit Side(const std::string& cmd) : b(cmd) {
    b.run.info.start_ns = t;
    script_frame = b.Frame("python", "main", "/home/user/bench/run_model.py", 12);
  }
  // A Python stack: the given innermost frames, torch's module call, then the script.
  int64_t PyStack(std::vector<int64_t> inner) {
    inner.push_back(b.Frame("python", "_call_impl",
                            "/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", 1784));
    inner.push_back(script_frame);
    return b.Stack(inner);
  }
  // Adds a kernel of `ns` device time and `j` joules to `op`, advancing the clock.
  void K(const std::string& name, int64_t op, int64_t ns, double j, int grid = 128, int64_t stack = kNone) {
    b.Kernel(name, op, t, t + ns, grid, 256, stack);
    kernel_j.push_back(j);
    t += ns;
  }
  void Finish(int iterations) {
    b.run.info.end_ns = t + 1000;
    b.run.info.extra["iterations"] = std::to_string(iterations);
  }
  energy::Attribution Energy(bool measured = true) const { return AttributionFor(b.run, kernel_j, measured); }
};

struct Pair {
  Side a{"python run_model.py --variant a"}, b{"python run_model.py --variant b"};
  analysis::MatchResult match;
  void AddRegion(std::vector<int64_t> ops_a, std::vector<int64_t> ops_b, int64_t in_a, int64_t in_b,
                 int64_t out_a, int64_t out_b, double rel_diff = 1e-4) {
    analysis::RegionMatch r;
    r.id = static_cast<int64_t>(match.regions.size());
    r.ops_a = std::move(ops_a);
    r.ops_b = std::move(ops_b);
    r.inputs_a = {in_a};
    r.inputs_b = {in_b};
    r.outputs_a = {out_a};
    r.outputs_b = {out_b};
    r.output_rel_diff = rel_diff;
    match.regions.push_back(r);
    match.tensor_pairs.emplace_back(in_a, in_b);
    match.tensor_pairs.emplace_back(out_a, out_b);
  }
};

// HF GPT-2 Conv1D: addmm(bias, x, W) in a; mm(x, W) + bias in b. Per call, b
// spends `energy_ratio` times a's energy in `time_ratio` times a's time.
inline Pair Conv1DPair(int layers, int iterations, double energy_ratio, double time_ratio) {
  Pair p;
  int64_t conv_a = p.a.b.Frame("python", "forward",
                               "/venv/lib/python3.12/site-packages/transformers/pytorch_utils.py", 119);
  int64_t conv_b = p.b.b.Frame("python", "conv1d_mm_add", "/work/python/magneton/demo/gpt2_blocks.py", 41);
  for (int it = 0; it < iterations; ++it)
    for (int l = 0; l < layers; ++l) {
      double m = 0.01 * (l + 1) + it * 0.001;
      // Side a: view, addmm (one fused GEMM with bias epilogue), view.
      Side& a = p.a;
      int64_t x = a.b.Tensor({8, 1024, 768}, m), w = a.b.Tensor({768, 2304}, 0.0),
              bias = a.b.Tensor({2304}, 0.0);
      int64_t x2 = a.b.Tensor({8192, 768}, m), y2 = a.b.Tensor({8192, 2304}, m * 3),
              y = a.b.Tensor({8, 1024, 2304}, m * 3);
      int64_t sa = a.PyStack({conv_a});
      int64_t v1 = a.b.Op("aten::view", kNone, a.t, a.t + 2000, sa, {x}, {x2});
      a.t += 3000;
      int64_t mm = a.b.Op("aten::addmm", kNone, a.t, 0, sa, {bias, x2, w}, {y2});
      a.K("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_bias_epilogue", mm, 1'000'000, 0.50);
      a.b.run.ops[mm].end_ns = a.t;
      int64_t v2 = a.b.Op("aten::view", kNone, a.t, a.t + 2000, sa, {y2}, {y});
      a.t += 3000;
      // Side b: view, mm, add, view.
      Side& b = p.b;
      int64_t xb = b.b.Tensor({8, 1024, 768}, m), wb = b.b.Tensor({768, 2304}, 0.0),
              biasb = b.b.Tensor({2304}, 0.0);
      int64_t x2b = b.b.Tensor({8192, 768}, m), mmo = b.b.Tensor({8192, 2304}, m * 3 - 0.01),
              y2b = b.b.Tensor({8192, 2304}, m * 3), yb = b.b.Tensor({8, 1024, 2304}, m * 3);
      int64_t sb = b.PyStack({conv_b});
      int64_t w1 = b.b.Op("aten::view", kNone, b.t, b.t + 2000, sb, {xb}, {x2b});
      b.t += 3000;
      int64_t bmm = b.b.Op("aten::mm", kNone, b.t, 0, sb, {x2b, wb}, {mmo});
      auto gemm_ns = static_cast<int64_t>(1'000'000 * time_ratio * 0.9);
      b.K("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32", bmm, gemm_ns,
          0.50 * energy_ratio * 0.8);
      b.b.run.ops[bmm].end_ns = b.t;
      int64_t add = b.b.Op("aten::add", kNone, b.t, 0, sb, {mmo, biasb}, {y2b});
      b.K("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", add,
          static_cast<int64_t>(1'000'000 * time_ratio) - gemm_ns, 0.50 * energy_ratio * 0.2);
      b.b.run.ops[add].end_ns = b.t;
      int64_t w2 = b.b.Op("aten::view", kNone, b.t, b.t + 2000, sb, {y2b}, {yb});
      b.t += 3000;
      p.AddRegion({v1, mm, v2}, {w1, bmm, add, w2}, x, xb, y, yb);
    }
  p.a.Finish(iterations);
  p.b.Finish(iterations);
  return p;
}

// A UNet-like linear layer: the same aten::linear -> aten::addmm in both runs,
// a fp32 SIMT GEMM in a (allow_tf32 off) and a TF32 tensor-core GEMM in b.
// a spends `energy_ratio` times b's energy and `time_ratio` times b's time.
inline Pair Tf32Pair(int layers, double energy_ratio, double time_ratio) {
  Pair p;
  p.a.b.run.config = {{"torch.backends.cuda.matmul.allow_tf32", "False"},
                      {"torch.backends.cudnn.allow_tf32", "False"},
                      {"torch.backends.cudnn.benchmark", "False"},
                      {"torch.version", "2.11.0+cu130"}};
  p.b.b.run.config = p.a.b.run.config;
  p.b.b.run.config["torch.backends.cuda.matmul.allow_tf32"] = "True";
  p.b.b.run.config["torch.backends.cudnn.allow_tf32"] = "True";
  for (int l = 0; l < layers; ++l) {
    int64_t in_a = 0, in_b = 0, out_a = 0, out_b = 0;
    std::vector<int64_t> top_a, top_b;
    for (Side* s : {&p.a, &p.b}) {
      bool is_a = s == &p.a;
      auto& fb = s->b;
      int64_t lin =
          fb.Frame("python", "forward", "/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", 134);
      int64_t blk = fb.Frame("python", "forward", "/work/python/magneton/demo/unet_like.py", 57);
      int64_t py = s->PyStack({lin, blk});
      // Kernel launch stacks: native frames on top of the Python ones; they
      // part where cuBLAS picks the GEMM.
      int64_t n_common = fb.Frame("native", "at::cuda::blas::gemm<float>", "", 0, "libtorch_cuda.so");
      int64_t n_pick = is_a ? fb.Frame("native", "cublasLtSgemmSimt", "", 0, "libcublasLt.so.13")
                            : fb.Frame("native", "cublasLtTf32TensorOpGemm", "", 0, "libcublasLt.so.13");
      std::vector<int64_t> kframes = {n_pick, n_common, lin, blk};
      kframes.push_back(fb.Frame("python", "_call_impl",
                                 "/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", 1784));
      kframes.push_back(s->script_frame);
      int64_t ks = fb.Stack(kframes);
      double m = 0.1 * (l + 1);
      int64_t x = fb.Tensor({64, 4096}, m), w = fb.Tensor({4096, 4096}, 0.0), bias = fb.Tensor({4096}, 0.0);
      int64_t y = fb.Tensor({64, 4096}, m * 2);
      int64_t linear = fb.Op("aten::linear", kNone, s->t, 0, py, {x, w, bias}, {y});
      s->t += 1000;
      fb.Op("aten::t", linear, s->t, s->t + 500, py, {w}, {});
      s->t += 1000;
      int64_t addmm = fb.Op("aten::addmm", linear, s->t, 0, py, {bias, x, w}, {y});
      double base_ns = 400'000, base_j = 0.2;
      if (is_a)
        s->K("sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_simt", addmm,
             static_cast<int64_t>(base_ns * time_ratio), base_j * energy_ratio, 132, ks);
      else
        s->K("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_tensorop", addmm,
             static_cast<int64_t>(base_ns), base_j, 132, ks);
      fb.run.ops[addmm].end_ns = s->t;
      fb.run.ops[linear].end_ns = s->t + 500;
      s->t += 1000;
      (is_a ? top_a : top_b).push_back(linear);
      (is_a ? in_a : in_b) = x;
      (is_a ? out_a : out_b) = y;
    }
    p.AddRegion(top_a, top_b, in_a, in_b, out_a, out_b, 2e-4);
  }
  p.a.Finish(1);
  p.b.Finish(1);
  return p;
}

// `instances` regions of one op each: make(side, is_a) adds the op to a side
// (with its kernels) and returns {op, input, output}.
struct OneOp {
  int64_t op, input, output;
};
template <class Make>
Pair OneOpRegions(int instances, Make make) {
  Pair p;
  for (int i = 0; i < instances; ++i) {
    OneOp a = make(p.a, true), b = make(p.b, false);
    p.AddRegion({a.op}, {b.op}, a.input, b.input, a.output, b.output);
  }
  p.a.Finish(1);
  p.b.Finish(1);
  return p;
}

// A region whose two sides launch the same kernel with a different grid, fed
// a transposed (non-contiguous) input on side b.
inline Pair LaunchPair(int instances, double energy_ratio) {
  return OneOpRegions(instances, [&](Side& s, bool is_a) {
    auto& fb = s.b;
    int64_t py = s.PyStack({fb.Frame("python", "attention", "/work/model.py", 88)});
    int64_t x = is_a ? fb.Tensor({512, 1024}, 0.3) : fb.Tensor({512, 1024}, 0.3, {1, 512});
    int64_t y = fb.Tensor({512, 1024}, 0.6);
    int64_t op = fb.Op("aten::gelu", kNone, s.t, 0, py, {x}, {y});
    s.K("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>", op, 200'000,
        is_a ? 0.1 : 0.1 * energy_ratio, is_a ? 1024 : 4096);
    fb.run.ops[op].end_ns = s.t;
    return OneOp{op, x, y};
  });
}

}  // namespace magneton::fixture

namespace magneton::fixture {

// A measured pass of `recorded`'s program: its ops `repeats` times over, with
// each op's (and kernel's) duration scaled by `scale(op name)`; no fingerprints.
template <class Scale>
Run MeasuredPass(const Run& recorded, int repeats, Scale scale) {
  Run m = recorded;
  m.ops.clear();
  m.kernels.clear();
  for (auto& t : m.tensors) t.fingerprint.reset();
  m.info.extra["fingerprints"] = "false";
  int64_t t = recorded.info.start_ns, n = static_cast<int64_t>(recorded.ops.size());
  for (int r = 0; r < repeats; ++r) {
    int64_t base = t - recorded.info.start_ns;
    for (const auto& op : recorded.ops) {
      Op o = op;
      o.id += r * n;
      if (o.parent >= 0) o.parent += r * n;
      double s = scale(op.name);
      o.start_ns = op.start_ns + base;
      o.end_ns = o.start_ns + static_cast<int64_t>((op.end_ns - op.start_ns) * s);
      m.ops.push_back(o);
    }
    for (const auto& k : recorded.kernels) {
      Kernel c = k;
      c.id = static_cast<int64_t>(m.kernels.size());
      c.op = k.op + r * n;
      double s = scale(recorded.ops[k.op].name);
      c.start_ns = m.ops[c.op].start_ns;
      c.end_ns = c.start_ns + static_cast<int64_t>((k.end_ns - k.start_ns) * s);
      m.kernels.push_back(c);
    }
    t += recorded.info.end_ns - recorded.info.start_ns;
  }
  m.info.end_ns = t;
  return m;
}

// A measured pass without operators, as magneton.record gives on a GPU: the
// recorded program's kernels (only) `repeats` times in launch order, each
// scaled by `scale(its op's name)`, `gap_ns` of device idle after each
// repetition (and `launch_gap_ns` before each of its kernels but the first:
// a launch-bound host), a launch API call 5 us before each kernel, and the
// GPU's energy counter read every 50 us while the device draws `idle_w`, plus
// `busy_w` while a kernel runs. energy::Attribute gives it its attribution.
template <class Scale>
Run TimelinePass(const Run& recorded, int repeats, Scale scale, int64_t gap_ns, double idle_w = 100,
                 double busy_w = 400, int64_t launch_gap_ns = 0) {
  Run m;
  m.info = recorded.info;
  m.info.extra["fingerprints"] = "false";
  m.info.extra["ops"] = "false";
  m.devices = recorded.devices;
  std::vector<const Kernel*> step;
  for (const auto& k : recorded.kernels)
    if (k.op != kRecorderWork) step.push_back(&k);
  int64_t t = recorded.info.start_ns + 1'000'000, corr = 1;
  for (int r = 0; r < repeats; ++r) {
    for (const Kernel* k : step) {
      Kernel c = *k;
      c.id = static_cast<int64_t>(m.kernels.size());
      c.op = kNone;
      c.correlation = corr++;
      if (k != step.front()) t += launch_gap_ns;
      c.start_ns = t;
      c.end_ns = t + static_cast<int64_t>((k->end_ns - k->start_ns) * scale(recorded.ops[k->op].name));
      t = c.end_ns;
      m.api_calls.push_back({static_cast<int64_t>(m.api_calls.size()), "cudaLaunchKernel", "runtime", 77,
                             c.start_ns - 5000, c.start_ns - 4000, c.correlation, kNone});
      m.kernels.push_back(c);
    }
    t += gap_ns;
  }
  m.info.start_ns = recorded.info.start_ns;
  m.info.end_ns = t + 1'000'000;
  SensorSeries e;
  e.device = 0;
  e.sensor = "energy.total";
  e.unit = "J";
  e.source = "nvml";
  double joules = 0;
  size_t k = 0;
  for (int64_t at = m.info.start_ns; at <= m.info.end_ns; at += 50'000) {
    // Exact integral of the power over the last 50 us (kernels run back to back, one at a time).
    for (int64_t s = at - 50'000; s < at; s += 1000) {
      while (k < m.kernels.size() && m.kernels[k].end_ns <= s) ++k;
      bool busy = k < m.kernels.size() && m.kernels[k].start_ns <= s;
      joules += (idle_w + (busy ? busy_w : 0)) * 1e-6;
    }
    e.t_ns.push_back(at);
    e.value.push_back(joules);
  }
  m.series.push_back(e);
  return m;
}

// Adds a host CPU device whose process (and main thread) was on a CPU
// `busy` of the run's wall time, read every 1/10 of the window.
inline void AddProcfs(Run& run, double busy, double watts_per_core = 5.0) {
  int32_t cpu = static_cast<int32_t>(run.devices.size());
  run.devices.push_back({cpu, "cpu", "Test CPU (2 CPUs)", "", -1, 0});
  int64_t from = run.info.start_ns, to = run.info.end_ns;
  auto series = [&](const std::string& sensor, const std::string& unit, const std::string& source, double scale) {
    SensorSeries s{static_cast<int64_t>(run.series.size()), cpu, sensor, unit, source, {}, {}};
    for (int i = 0; i <= 10; ++i) {
      int64_t t = from + (to - from) * i / 10;
      s.t_ns.push_back(t);
      s.value.push_back(scale * busy * (t - from) * 1e-9 + 0.5);  // 0.5 s used before the window
    }
    run.series.push_back(s);
  };
  series("cpu.time", "s", "procfs", 1.0);
  series("cpu.time.thread.4242.pt_main_thread", "s", "procfs", 0.98);
  series("energy.estimate", "J", "estimate", watts_per_core);
}

}  // namespace magneton::fixture
