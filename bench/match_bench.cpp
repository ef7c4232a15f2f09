// Semantic matching at scale (docs/benchmarks.md, "Matching"): generated
// transformer-shaped run pairs of about 1k, 10k, 100k and 1M top-level ops on
// side A; side B computes the same layers with different granularity
// (separate q/k/v, mm + add, 8-op GELU), extra layout ops and casts, a mask
// built in every layer, and no op names in common. Fingerprints are
// synthetic but shaped like real ones (33 sorted quantiles, moments, norms,
// spectra); equivalent values differ by float noise on the two sides.
//
//   build/bench/match_bench --benchmark_filter='BM_Match/100000$'
//
// Counters: ops per side, regions found, peak RSS of the process
// (getrusage, MiB) and its growth during the match.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "analysis/match/region_match.h"
#include "process_usage.h"

namespace {

using magneton::Fingerprint;
using magneton::Op;
using magneton::Run;
using magneton::Tensor;

using magneton::bench::CpuSeconds;
using magneton::bench::PeakRssMiB;

// A logical value: its fingerprint, seen through a layout (shape) per side.
struct Value {
  Fingerprint fp;
};

class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  // A fresh value of `numel` elements with a random distribution and spectra.
  Value Fresh(int64_t numel, int modes) {
    std::normal_distribution<double> n01(0, 1);
    std::uniform_real_distribution<double> u(0, 1);
    Value v;
    Fingerprint& f = v.fp;
    f.numel = numel;
    f.mean = 0.2 * n01(rng_);
    f.stddev = 0.3 + 2 * u(rng_);
    const double skew = 0.3 * n01(rng_);
    // A skewed normal shape plus per-quantile sampling noise, as finite
    // tensors have: no two values share their quantile profile.
    for (int k = 0; k < 33; ++k) {
      const double p = (k + 0.5) / 33.0;
      const double z = std::sqrt(2.0) * ErfInv(2 * p - 1) + 0.05 * n01(rng_);
      f.quantiles.push_back(static_cast<float>(f.mean + f.stddev * (z + skew * (z * z - 1) / 6)));
    }
    std::sort(f.quantiles.begin(), f.quantiles.end());
    f.min = f.quantiles.front() - 0.5 * f.stddev;
    f.max = f.quantiles.back() + 0.5 * f.stddev;
    f.quantiles.front() = static_cast<float>(f.min);
    f.quantiles.back() = static_cast<float>(f.max);
    f.l2 = std::sqrt(numel * (f.mean * f.mean + f.stddev * f.stddev));
    f.l1 = numel * f.stddev * (0.7 + 0.2 * u(rng_));
    for (int m = 0; m < modes; ++m) {
      std::vector<float> s;
      double lead = 0.3 + 0.6 * u(rng_);
      for (int k = 0; k < 8; ++k, lead *= 0.55 + 0.3 * u(rng_)) s.push_back(static_cast<float>(lead));
      f.spectra.push_back(s);
    }
    return v;
  }

  // The same values recomputed another way: relative float noise.
  Fingerprint Noisy(const Fingerprint& f, double rel) {
    std::normal_distribution<double> n01(0, rel);
    Fingerprint g = f;
    auto jitter = [&](double x) { return x * (1 + n01(rng_)); };
    g.mean = jitter(g.mean);
    g.stddev = jitter(g.stddev);
    g.l1 = jitter(g.l1);
    g.l2 = jitter(g.l2);
    for (auto& q : g.quantiles) q = static_cast<float>(jitter(q));
    g.min = g.quantiles.front();
    g.max = g.quantiles.back();
    for (auto& s : g.spectra)
      for (auto& x : s) x = static_cast<float>(jitter(x));
    return g;
  }

 private:
  static double ErfInv(double x) {  // Giles' single-precision approximation is plenty here
    double w = -std::log((1.0 - x) * (1.0 + x)), p;
    if (w < 5) {
      w -= 2.5;
      p = 2.81022636e-08;
      for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                       0.246640727, 1.50140941})
        p = c + p * w;
    } else {
      w = std::sqrt(w) - 3;
      p = -0.000200214257;
      for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                       1.00167406, 2.83297682})
        p = c + p * w;
    }
    return p * x;
  }

  std::mt19937_64 rng_;
};

// Appends ops and tensor rows to a Run.
class Writer {
 public:
  Writer(Run& run, Generator& gen, bool rename) : run_(run), gen_(gen), rename_(rename) {}

  int64_t Input(const Fingerprint& fp, std::vector<int64_t> shape) { return Row(fp, std::move(shape)); }
  int64_t Op1(const char* name, std::vector<int64_t> in, const Fingerprint& fp, std::vector<int64_t> shape) {
    return Ops(name, std::move(in), {{fp, std::move(shape)}})[0];
  }
  std::vector<int64_t> Ops(const char* name, std::vector<int64_t> in,
                           std::vector<std::pair<Fingerprint, std::vector<int64_t>>> out) {
    Op op;
    op.id = static_cast<int64_t>(run_.ops.size());
    op.name = rename_ ? "k" + std::to_string(op.id % 977) : name;
    op.start_ns = op.id * 1000;
    op.end_ns = op.start_ns + 500;
    op.inputs = std::move(in);
    for (auto& [fp, shape] : out) op.outputs.push_back(Row(fp, std::move(shape)));
    run_.ops.push_back(std::move(op));
    return run_.ops.back().outputs;
  }
  Generator& gen() { return gen_; }

 private:
  int64_t Row(const Fingerprint& fp, std::vector<int64_t> shape) {
    Tensor t;
    t.id = static_cast<int64_t>(run_.tensors.size());
    t.storage = t.id;
    t.dtype = "float32";
    t.shape = std::move(shape);
    t.fingerprint = fp;
    run_.tensors.push_back(std::move(t));
    return run_.tensors.back().id;
  }

  Run& run_;
  Generator& gen_;
  bool rename_;
};

// One pre-LN transformer layer on both sides; returns the residual outputs.
struct Layer {
  static constexpr int64_t T = 16, C = 64, H = 4, D = C / H;

  static std::pair<int64_t, int64_t> Emit(Writer& a, Writer& b, int64_t xa, int64_t xb, int64_t mask_a) {
    Generator& g = a.gen();
    auto both = [&](const Value& v) { return std::make_pair(v.fp, g.Noisy(v.fp, 1e-6)); };
    auto param = [&](int64_t numel, std::vector<int64_t> shape) {
      Value w = g.Fresh(numel, shape.size() >= 2 ? 2 : 0);
      return std::make_pair(a.Input(w.fp, shape), b.Input(w.fp, shape));
    };
    const std::vector<int64_t> tc{T, C}, htd{H, T, D}, htt{H, T, T}, tf{T, 4 * C};
    // ln1
    auto [ln1w_a, ln1w_b] = param(C, {C});
    Value h = g.Fresh(T * C, 2);
    auto [h_a, h_b] = both(h);
    const int64_t ha = a.Op1("aten::layer_norm", {xa, ln1w_a}, h_a, tc);
    const int64_t hb = b.Op1("aten::layer_norm", {xb, ln1w_b}, h_b, tc);
    // q, k, v: A fused addmm + split, B three mm + add
    Value q = g.Fresh(T * C, 2), k = g.Fresh(T * C, 2), v = g.Fresh(T * C, 2);
    auto [wqkv_a, unused] = param(3 * C * C, {C, 3 * C});
    (void)unused;
    const int64_t qkv = a.Op1("aten::addmm", {ha, wqkv_a}, g.Fresh(3 * T * C, 2).fp, {T, 3 * C});
    auto qkv_parts = a.Ops("aten::split", {qkv}, {{q.fp, tc}, {k.fp, tc}, {v.fp, tc}});
    std::vector<int64_t> heads_a, heads_b;
    for (int i = 0; i < 3; ++i) {
      const Value& x = i == 0 ? q : i == 1 ? k : v;
      const int64_t view = a.Op1("aten::view", {qkv_parts[i]}, x.fp, {T, H, D});
      heads_a.push_back(a.Op1("aten::transpose", {view}, x.fp, htd));
      auto [w_a, w_b] = param(C * C, {C, C});
      (void)w_a;
      const int64_t mm = b.Op1("aten::mm", {hb, w_b}, g.Fresh(T * C, 2).fp, tc);
      const int64_t proj = b.Op1("aten::add", {mm}, g.Noisy(x.fp, 1e-6), tc);
      const int64_t r = b.Op1("aten::reshape", {proj}, g.Noisy(x.fp, 1e-6), {T, H, D});
      const int64_t p = b.Op1("aten::permute", {r}, g.Noisy(x.fp, 1e-6), htd);
      heads_b.push_back(b.Op1("aten::contiguous", {p}, g.Noisy(x.fp, 1e-6), htd));
    }
    // attention math; B builds its mask here
    Value s = g.Fresh(H * T * T, 3), sm = g.Fresh(H * T * T, 3), pr = g.Fresh(H * T * T, 3), o = g.Fresh(T * C, 3);
    auto [s_a, s_b] = both(s);
    auto [sm_a, sm_b] = both(sm);
    auto [pr_a, pr_b] = both(pr);
    auto [o_a, o_b] = both(o);
    const int64_t kt_a = a.Op1("aten::transpose", {heads_a[1]}, k.fp, {H, D, T});
    const int64_t sa = a.Op1("aten::matmul", {heads_a[0], kt_a}, s_a, htt);
    const int64_t sma =
        a.Op1("aten::add", {a.Op1("aten::div", {sa}, g.Fresh(H * T * T, 3).fp, htt), mask_a}, sm_a, htt);
    const int64_t oa = a.Op1("aten::matmul", {a.Op1("aten::softmax", {sma}, pr_a, htt), heads_a[2]}, o_a, htd);
    const int64_t kt_b = b.Op1("aten::transpose", {heads_b[1]}, g.Noisy(k.fp, 1e-6), {H, D, T});
    const int64_t sb = b.Op1("aten::matmul", {heads_b[0], kt_b}, s_b, htt);
    const Value mask = g.Fresh(T * T, 2);
    const int64_t mb = b.Op1("aten::tril", {b.Op1("aten::ones", {}, g.Fresh(T * T, 2).fp, {T, T})}, mask.fp, {T, T});
    const int64_t smb = b.Op1("aten::add", {b.Op1("aten::mul", {sb}, g.Fresh(H * T * T, 3).fp, htt), mb}, sm_b, htt);
    const int64_t ob = b.Op1("aten::matmul", {b.Op1("aten::softmax", {smb}, pr_b, htt), heads_b[2]}, o_b, htd);
    // merge heads, output projection, residual
    const int64_t ma = a.Op1("aten::view", {a.Op1("aten::transpose", {oa}, o.fp, {T, H, D})}, o.fp, tc);
    const int64_t mb2 =
        b.Op1("aten::view", {b.Op1("aten::contiguous", {b.Op1("aten::permute", {ob}, o_b, {T, H, D})}, o_b, {T, H, D})},
              o_b, tc);
    Value at = g.Fresh(T * C, 2), x1 = g.Fresh(T * C, 2);
    auto [at_a, at_b] = both(at);
    auto [x1_a, x1_b] = both(x1);
    auto [wo_a, wo_b] = param(C * C, {C, C});
    const int64_t pa = a.Op1("aten::addmm", {ma, wo_a}, at_a, tc);
    const int64_t pb = b.Op1("aten::add", {b.Op1("aten::mm", {mb2, wo_b}, g.Fresh(T * C, 2).fp, tc)}, at_b, tc);
    const int64_t ra = a.Op1("aten::add", {xa, pa}, x1_a, tc);
    const int64_t rb = b.Op1("aten::add", {xb, pb}, x1_b, tc);
    // MLP: B casts its input to bfloat16 and back, and spells GELU out
    Value h2 = g.Fresh(T * C, 2), f = g.Fresh(T * 4 * C, 2), gl = g.Fresh(T * 4 * C, 2), m = g.Fresh(T * C, 2),
          x2 = g.Fresh(T * C, 2);
    auto [ln2_a, ln2_b] = param(C, {C});
    const int64_t h2a = a.Op1("aten::layer_norm", {ra, ln2_a}, h2.fp, tc);
    const int64_t h2b = b.Op1("aten::layer_norm", {rb, ln2_b}, g.Noisy(h2.fp, 1e-6), tc);
    const int64_t castb =
        b.Op1("aten::to", {b.Op1("aten::to", {h2b}, g.Noisy(h2.fp, 2e-3), tc)}, g.Noisy(h2.fp, 2e-3), tc);
    auto [w1_a, w1_b] = param(4 * C * C, {C, 4 * C});
    const int64_t fa = a.Op1("aten::addmm", {h2a, w1_a}, f.fp, tf);
    const int64_t fb =
        b.Op1("aten::add", {b.Op1("aten::mm", {castb, w1_b}, g.Fresh(T * 4 * C, 2).fp, tf)}, g.Noisy(f.fp, 2e-3), tf);
    const int64_t ga = a.Op1("aten::gelu", {fa}, gl.fp, tf);
    int64_t t = fb;
    for (const char* step :
         {"aten::pow", "aten::mul", "aten::add", "aten::mul", "aten::tanh", "aten::add", "aten::mul"})
      t = b.Op1(step, {t, fb}, g.Fresh(T * 4 * C, 2).fp, tf);
    const int64_t gb = b.Op1("aten::mul", {t}, g.Noisy(gl.fp, 2e-3), tf);
    auto [w2_a, w2_b] = param(4 * C * C, {4 * C, C});
    const int64_t mpa = a.Op1("aten::addmm", {ga, w2_a}, m.fp, tc);
    const int64_t mpb =
        b.Op1("aten::add", {b.Op1("aten::mm", {gb, w2_b}, g.Fresh(T * C, 2).fp, tc)}, g.Noisy(m.fp, 2e-3), tc);
    const int64_t outa = a.Op1("aten::add", {ra, mpa}, x2.fp, tc);
    const int64_t outb = b.Op1("aten::add", {rb, mpb}, g.Noisy(x2.fp, 2e-3), tc);
    return {outa, outb};
  }
};

struct RunPair {
  Run a, b;
};

RunPair Generate(int64_t target_ops) {
  RunPair p;
  Generator gen(42);
  Writer a(p.a, gen, false), b(p.b, gen, true);
  const Value x = gen.Fresh(Layer::T * Layer::C, 2);
  int64_t xa = a.Input(x.fp, {Layer::T, Layer::C}), xb = b.Input(x.fp, {Layer::T, Layer::C});
  const int64_t mask = a.Op1("aten::triu", {}, gen.Fresh(Layer::T * Layer::T, 2).fp, {Layer::T, Layer::T});
  while (static_cast<int64_t>(p.a.ops.size()) < target_ops) std::tie(xa, xb) = Layer::Emit(a, b, xa, xb, mask);
  return p;
}

void BM_Match(benchmark::State& state) {
  const RunPair pair = Generate(state.range(0));
  const double rss_runs = PeakRssMiB();
  size_t regions = 0, unmatched = 0;
  magneton::analysis::MatchStats stats;
  double cpu = 0;
  for (auto _ : state) {
    const double cpu0 = CpuSeconds();
    magneton::analysis::MatchResult m = magneton::analysis::MatchRuns(pair.a, pair.b);
    regions = m.regions.size();
    unmatched = m.unmatched_a.size() + m.unmatched_b.size();
    stats = m.stats;
    cpu = CpuSeconds() - cpu0;
    benchmark::DoNotOptimize(m);
  }
  state.counters["ops_a"] = static_cast<double>(pair.a.ops.size());
  state.counters["ops_b"] = static_cast<double>(pair.b.ops.size());
  state.counters["regions"] = static_cast<double>(regions);
  state.counters["unmatched"] = static_cast<double>(unmatched);
  state.counters["comparisons"] = static_cast<double>(stats.comparisons);
  state.counters["equivalences"] = static_cast<double>(stats.equivalences);
  state.counters["process_cpu_s"] = cpu;
  state.counters["graph_s"] = stats.graph_seconds;
  state.counters["classes_s"] = stats.classes_seconds;
  state.counters["cuts_s"] = stats.cuts_seconds;
  state.counters["peak_rss_MiB"] = PeakRssMiB();
  state.counters["match_rss_MiB"] = PeakRssMiB() - rss_runs;
}

BENCHMARK(BM_Match)->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
