// A "custom C++ engine" with no framework: one chain of square fp32 GEMMs
// (X <- W_l X for each layer l) through cuBLAS, with the compute type chosen by a
// flag: CUBLAS_COMPUTE_32F (full fp32) or CUBLAS_COMPUTE_32F_FAST_TF32 (tensor cores).
// NVTX ranges name the iteration and each layer, so a CUPTI tracer can match the two
// runs at range level.
//
//   engine --compute fp32|tf32 [--size 4096] [--layers 8] [--iters 1] [--warmup 1]
//          [--seconds S] [--checksum FILE]
//
// Prints one line starting with "MAGNETON_CASE " holding a JSON record (iterations,
// CLOCK_MONOTONIC window edges, CPU seconds), as the Python cases do.
// Exit codes: 0 ok, 2 bad usage, 3 CUDA/cuBLAS failure.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/resource.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string compute = "";
  int size = 4096;
  int layers = 8;
  int iters = 1;
  int warmup = 1;
  double seconds = -1;  // > 0: ground-truth window instead of --iters
  std::string checksum;
};

[[noreturn]] void Usage(const char* problem) {
  std::fprintf(stderr, "engine: %s\nusage: engine --compute fp32|tf32 [--size N] [--layers L] "
               "[--iters N] [--warmup N] [--seconds S] [--checksum FILE]\n", problem);
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) Usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--compute") o.compute = value();
    else if (a == "--size") o.size = std::atoi(value());
    else if (a == "--layers") o.layers = std::atoi(value());
    else if (a == "--iters") o.iters = std::atoi(value());
    else if (a == "--warmup") o.warmup = std::atoi(value());
    else if (a == "--seconds") o.seconds = std::atof(value());
    else if (a == "--checksum") o.checksum = value();
    else Usage(("unknown argument " + a).c_str());
  }
  if (o.compute != "fp32" && o.compute != "tf32") Usage("--compute must be fp32 or tf32");
  if (o.size <= 0 || o.layers <= 0 || o.iters <= 0 || o.warmup < 0) Usage("sizes and counts must be positive");
  return o;
}

void CheckCuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "engine: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(3);
  }
}

void CheckBlas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "engine: %s: %s\n", what, cublasGetStatusString(s));
    std::exit(3);
  }
}

int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

double CpuSeconds() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_stime.tv_sec + 1e-6 * (r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

// Deterministic uniform values in [-scale, scale] (no cuRAND: one less library).
void Fill(std::vector<float>& v, uint64_t seed, float scale) {
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (float& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x = scale * (float((s >> 40) & 0xFFFFFF) / float(0x800000) - 1.0f);
  }
}

class Engine {
 public:
  explicit Engine(const Options& o) : o_(o), n_(size_t(o.size) * o.size) {
    CheckBlas(cublasCreate(&handle_), "cublasCreate");
    compute_ = o.compute == "tf32" ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    std::vector<float> host(n_);
    // Uniform weights with variance 1/size keep the chain's values O(1).
    const float w_scale = std::sqrt(3.0f / float(o.size));
    weights_.resize(o.layers);
    for (int l = 0; l < o.layers; ++l) {
      Fill(host, 100 + l, w_scale);
      weights_[l] = Upload(host);
    }
    Fill(host, 1, 1.0f);
    input_ = Upload(host);
    for (float*& b : act_) CheckCuda(cudaMalloc(&b, n_ * sizeof(float)), "cudaMalloc");
  }
  ~Engine() {
    for (float* w : weights_) cudaFree(w);
    for (float* b : act_) cudaFree(b);
    cudaFree(input_);
    cublasDestroy(handle_);
  }

  // One forward pass of the chain; returns the buffer holding the result.
  const float* Iteration() {
    const float alpha = 1.0f, beta = 0.0f;
    const float* x = input_;
    nvtxRangePushA("engine/iteration");
    for (int l = 0; l < o_.layers; ++l) {
      float* y = act_[l % 2];
      std::string name = "gemm_chain/layer" + std::to_string(l);
      nvtxRangePushA(name.c_str());
      CheckBlas(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, o_.size, o_.size, o_.size, &alpha,
                             weights_[l], CUDA_R_32F, o_.size, x, CUDA_R_32F, o_.size, &beta,
                             y, CUDA_R_32F, o_.size, compute_, CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx");
      nvtxRangePop();
      x = y;
    }
    nvtxRangePop();
    return x;
  }

  void WriteChecksum(const float* result, const std::string& path) {
    std::vector<float> host(n_);
    CheckCuda(cudaMemcpy(host.data(), result, n_ * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    double sum = 0, sq = 0;
    for (float v : host) { sum += v; sq += double(v) * v; }
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) { std::fprintf(stderr, "engine: %s: cannot write\n", path.c_str()); std::exit(2); }
    std::fprintf(f, "{\"sum\": %.9g, \"sumsq\": %.9g, \"first\": [", sum, sq);
    for (int i = 0; i < 8; ++i) std::fprintf(f, "%s%.9g", i ? ", " : "", host[i]);
    std::fprintf(f, "]}\n");
    std::fclose(f);
  }

 private:
  float* Upload(const std::vector<float>& host) {
    float* d = nullptr;
    CheckCuda(cudaMalloc(&d, n_ * sizeof(float)), "cudaMalloc");
    CheckCuda(cudaMemcpy(d, host.data(), n_ * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    return d;
  }

  Options o_;
  size_t n_;
  cublasHandle_t handle_ = nullptr;
  cublasComputeType_t compute_ = CUBLAS_COMPUTE_32F;
  std::vector<float*> weights_;
  float* input_ = nullptr;
  float* act_[2] = {nullptr, nullptr};
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  Engine engine(o);
  const float* out = nullptr;
  nvtxRangePushA("engine/warmup");
  for (int i = 0; i < o.warmup; ++i) out = engine.Iteration();
  CheckCuda(cudaDeviceSynchronize(), "warm-up");
  nvtxRangePop();

  const double cpu0 = CpuSeconds();
  const int64_t t0 = MonotonicNs();
  const int64_t deadline = o.seconds > 0 ? t0 + int64_t(o.seconds * 1e9) : 0;
  int iters = 0;
  nvtxRangePushA("magneton.case/measured");
  // A window queues iterations without a sync each; it closes once the device drained.
  while (o.seconds > 0 ? (iters == 0 || MonotonicNs() < deadline) : iters < o.iters) {
    out = engine.Iteration();
    ++iters;
  }
  CheckCuda(cudaDeviceSynchronize(), "measured iterations");
  nvtxRangePop();
  const int64_t t1 = MonotonicNs();
  const double cpu = CpuSeconds() - cpu0;

  if (!o.checksum.empty() && out) engine.WriteChecksum(out, o.checksum);
  const double wall = (t1 - t0) / 1e9;
  std::printf("MAGNETON_CASE {\"case\": \"cublas-engine\", \"side\": \"%s\", \"device\": \"cuda\", "
              "\"compute\": \"%s\", \"iters\": %d, \"t0_ns\": %lld, \"t1_ns\": %lld, \"wall_s\": %.9f, "
              "\"cpu_s\": %.6f, \"s_per_iter\": %.9f}\n",
              o.compute == "fp32" ? "wasteful" : "efficient", o.compute.c_str(), iters,
              static_cast<long long>(t0), static_cast<long long>(t1), wall, cpu, wall / iters);
  return 0;
}
