// A tiny eager tensor library on host floats that records what it runs into a
// Run the way the torch recorder does: one op row per call (nested calls get
// the enclosing op as parent), one tensor row per written value, fingerprints
// of the real values. Matching tests write the same computation two ways with
// it and check which regions correspond.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/fingerprint/host_fingerprint.h"
#include "core/run.h"

namespace magneton::tiny {

struct T {
  std::vector<int64_t> shape;
  std::vector<float> v;
  int64_t id = -1;  // tensor row
  int64_t numel() const { return static_cast<int64_t>(v.size()); }
  int64_t dim(int i) const { return shape[i < 0 ? shape.size() + i : i]; }
};

class Eager {
 public:
  explicit Eager(uint32_t seed = 1) : rng_(seed) {}

  Run run;
  std::string dtype = "float32";

  // A graph input (parameter or program input) with N(0, scale^2) values.
  T Input(std::vector<int64_t> shape, float scale = 1.0f) {
    T t{std::move(shape), {}, -1};
    int64_t n = 1;
    for (auto d : t.shape) n *= d;
    std::normal_distribution<float> dist(0, scale);
    for (int64_t i = 0; i < n; ++i) t.v.push_back(dist(rng_));
    Register(t);
    return t;
  }
  // Same values as `t`, a fresh graph-input row (the other program's copy).
  T Feed(const T& t) {
    T c = t;
    Register(c);
    return c;
  }

  // Records an op reading `in` and writing `out` (rows assigned here).
  void Record(const std::string& name, const std::vector<const T*>& in, std::vector<T*> out) {
    Op op;
    op.id = static_cast<int64_t>(run.ops.size());
    op.name = name;
    op.framework = "tiny";
    op.parent = scopes_.empty() ? kNone : scopes_.back();
    op.start_ns = clock_++;
    op.stack = scopes_.empty() ? CaptureStack() : run.ops[scopes_.front()].stack;
    for (auto* t : in) op.inputs.push_back(t->id);
    run.ops.push_back(op);
    for (auto* t : out) {
      Register(*t);
      run.ops[op.id].outputs.push_back(t->id);
    }
    run.ops[op.id].end_ns = clock_++;
  }
  // Nested recording: ops recorded between Begin and End get this op as parent.
  int64_t Begin(const std::string& name, const std::vector<const T*>& in) {
    Op op;
    op.id = static_cast<int64_t>(run.ops.size());
    op.name = name;
    op.framework = "tiny";
    op.parent = scopes_.empty() ? kNone : scopes_.back();
    op.start_ns = clock_++;
    op.stack = scopes_.empty() ? CaptureStack() : run.ops[scopes_.front()].stack;
    for (auto* t : in) op.inputs.push_back(t->id);
    run.ops.push_back(op);
    scopes_.push_back(op.id);
    return op.id;
  }
  void End(std::vector<T*> out) {
    const int64_t id = scopes_.back();
    scopes_.pop_back();
    for (auto* t : out) {
      Register(*t);
      run.ops[id].outputs.push_back(t->id);
    }
    run.ops[id].end_ns = clock_++;
  }

  // Python-like call stack: ops record the frames open when they run.
  void PushFrame(const std::string& function, int call_line) {
    if (!frames_.empty()) frames_.back().second = call_line;  // the caller now sits at the call
    frames_.emplace_back(function, 0);
  }
  void PopFrame() { frames_.pop_back(); }

  // ---- operations ---------------------------------------------------------
  T MatMul(const T& a, const T& b, const std::string& name = "aten::mm") {
    T c = MatMulValues(a, b);
    Record(name, {&a, &b}, {&c});
    return c;
  }
  // a @ b + bias, bias broadcast over rows.
  T AddMM(const T& bias, const T& a, const T& b, const std::string& name = "aten::addmm") {
    T c = MatMulValues(a, b);
    for (int64_t i = 0; i < c.numel(); ++i) c.v[i] += bias.v[i % bias.numel()];
    Record(name, {&bias, &a, &b}, {&c});
    return c;
  }
  // x @ w^T + bias with w of shape [out, in], as nn.Linear (nested ops inside).
  T Linear(const T& x, const T& w, const T& bias) {
    Begin("aten::linear", {&x, &w, &bias});
    T wt = Transpose2d(w, "aten::t");
    T y = AddMM(bias, x, wt);
    End({&y});
    return y;
  }
  T Add(const T& a, const T& b, const std::string& name = "aten::add") {
    T c = a;
    for (int64_t i = 0; i < c.numel(); ++i) c.v[i] += b.v[i % b.numel()];
    Record(name, {&a, &b}, {&c});
    return c;
  }
  T Mul(const T& a, const T& b, const std::string& name = "aten::mul") {
    T c = a;
    for (int64_t i = 0; i < c.numel(); ++i) c.v[i] *= b.v[i % b.numel()];
    Record(name, {&a, &b}, {&c});
    return c;
  }
  T Scale(const T& a, float s, const std::string& name = "aten::mul") {
    return Map(
        a, [s](float x) { return x * s; }, name);
  }
  T AddScalar(const T& a, float s, const std::string& name = "aten::add") {
    return Map(
        a, [s](float x) { return x + s; }, name);
  }
  template <class F>
  T Map(const T& a, F f, const std::string& name) {
    T c = a;
    for (auto& x : c.v) x = f(x);
    Record(name, {&a}, {&c});
    return c;
  }
  T Gelu(const T& x) {
    return Map(
        x, [](float v) { return 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v))); },
        "aten::gelu");
  }
  // The tanh approximation as separate element-wise ops (HF's NewGELUActivation).
  T GeluComposite(const T& x) {
    T cube = Map(
        x, [](float v) { return v * v * v; }, "aten::pow");
    T inner = Scale(cube, 0.044715f);
    T sum = Add(x, inner);
    T scaled = Scale(sum, 0.7978845608f);
    T th = Map(
        scaled, [](float v) { return std::tanh(v); }, "aten::tanh");
    T one = AddScalar(th, 1.0f);
    T prod = Mul(x, one);
    return Scale(prod, 0.5f);
  }
  T Relu(const T& x) {
    return Map(
        x, [](float v) { return std::max(v, 0.0f); }, "aten::relu");
  }
  T Softmax(const T& x, const std::string& name = "aten::softmax") {
    T c = x;
    const int64_t cols = x.dim(-1);
    for (int64_t r = 0; r < x.numel() / cols; ++r) {
      float m = -INFINITY, s = 0;
      for (int64_t k = 0; k < cols; ++k) m = std::max(m, c.v[r * cols + k]);
      for (int64_t k = 0; k < cols; ++k) s += c.v[r * cols + k] = std::exp(c.v[r * cols + k] - m);
      for (int64_t k = 0; k < cols; ++k) c.v[r * cols + k] /= s;
    }
    Record(name, {&x}, {&c});
    return c;
  }
  T LayerNorm(const T& x, const T& w, const T& b) {
    T c = x;
    const int64_t cols = x.dim(-1);
    for (int64_t r = 0; r < x.numel() / cols; ++r) {
      double m = 0, var = 0;
      for (int64_t k = 0; k < cols; ++k) m += c.v[r * cols + k];
      m /= cols;
      for (int64_t k = 0; k < cols; ++k) var += (c.v[r * cols + k] - m) * (c.v[r * cols + k] - m);
      const double inv = 1.0 / std::sqrt(var / cols + 1e-5);
      for (int64_t k = 0; k < cols; ++k) c.v[r * cols + k] = float((c.v[r * cols + k] - m) * inv) * w.v[k] + b.v[k];
    }
    Record("aten::layer_norm", {&x, &w, &b}, {&c});
    return c;
  }
  // Causal mask added to scores [.., T, T]: -1e9 above the diagonal; built
  // from shapes alone, or reading `from` (an input's padding mask, as HF does).
  T CausalMask(int64_t t, const T* from = nullptr) {
    T m{{t, t}, std::vector<float>(t * t, 0.0f), -1};
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = i + 1; j < t; ++j) m.v[i * t + j] = -1e9f;
    std::vector<const T*> in;
    if (from) in.push_back(from);
    Record("aten::triu", in, {&m});
    return m;
  }

  // ---- layout ---------------------------------------------------------------
  T Permute(const T& x, const std::vector<int>& perm, const std::string& name = "aten::permute") {
    T c = PermuteValues(x, perm);
    Record(name, {&x}, {&c});
    return c;
  }
  T Transpose2d(const T& x, const std::string& name = "aten::transpose") { return Permute(x, {1, 0}, name); }
  T Reshape(const T& x, std::vector<int64_t> shape, const std::string& name = "aten::view") {
    T c{std::move(shape), x.v, -1};
    Record(name, {&x}, {&c});
    return c;
  }
  T Copy(const T& x, const std::string& name = "aten::contiguous") {
    T c = x;
    Record(name, {&x}, {&c});
    return c;
  }
  // Rounds to bfloat16 and records a cast (values stay float for arithmetic).
  T CastBf16(const T& x) {
    T c = x;
    for (auto& v : c.v) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      bits = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u;
      std::memcpy(&v, &bits, 4);
    }
    Record("aten::to", {&x}, {&c});
    return c;
  }
  // Splits the last dim into equal parts: one op, several outputs.
  std::vector<T> Split(const T& x, int parts) {
    const int64_t cols = x.dim(-1), w = cols / parts, rows = x.numel() / cols;
    std::vector<T> out(parts);
    for (int p = 0; p < parts; ++p) {
      out[p].shape = x.shape;
      out[p].shape.back() = w;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < w; ++k) out[p].v.push_back(x.v[r * cols + p * w + k]);
    }
    std::vector<T*> ptrs;
    for (auto& t : out) ptrs.push_back(&t);
    Record("aten::split", {&x}, ptrs);
    return out;
  }
  // Concatenates along the last dim (fusing weights, for instance).
  static T CatValues(const std::vector<const T*>& xs) {
    const int64_t rows = xs[0]->numel() / xs[0]->dim(-1);
    T c{xs[0]->shape, {}, -1};
    c.shape.back() = 0;
    for (auto* x : xs) c.shape.back() += x->dim(-1);
    for (int64_t r = 0; r < rows; ++r)
      for (auto* x : xs)
        for (int64_t k = 0; k < x->dim(-1); ++k) c.v.push_back(x->v[r * x->dim(-1) + k]);
    return c;
  }
  static T PermuteValues(const T& x, const std::vector<int>& perm) {
    const size_t d = x.shape.size();
    std::vector<int64_t> strides(d, 1), shape(d);
    for (int i = static_cast<int>(d) - 2; i >= 0; --i) strides[i] = strides[i + 1] * x.shape[i + 1];
    for (size_t i = 0; i < d; ++i) shape[i] = x.shape[perm[i]];
    T c{shape, std::vector<float>(x.v.size()), -1};
    std::vector<int64_t> idx(d, 0);
    for (int64_t o = 0; o < c.numel(); ++o) {
      int64_t src = 0;
      for (size_t i = 0; i < d; ++i) src += idx[i] * strides[perm[i]];
      c.v[o] = x.v[src];
      for (int i = static_cast<int>(d) - 1; i >= 0; --i) {
        if (++idx[i] < shape[i]) break;
        idx[i] = 0;
      }
    }
    return c;
  }
  // Batched matmul over leading dims: [..., n, k] x [..., k, m].
  static T MatMulValues(const T& a, const T& b) {
    const int64_t n = a.dim(-2), k = a.dim(-1), m = b.dim(-1);
    const int64_t batch = a.numel() / (n * k);
    const int64_t b_batch = b.numel() / (k * m);
    T c{a.shape, std::vector<float>(batch * n * m, 0.0f), -1};
    c.shape.back() = m;
    for (int64_t z = 0; z < batch; ++z)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) {
          double s = 0;
          for (int64_t q = 0; q < k; ++q) s += double(a.v[(z * n + i) * k + q]) * b.v[((z % b_batch) * k + q) * m + j];
          c.v[(z * n + i) * m + j] = static_cast<float>(s);
        }
    return c;
  }

 private:
  void Register(T& t) {
    Tensor row;
    row.id = static_cast<int64_t>(run.tensors.size());
    row.shape = t.shape;
    row.dtype = dtype;
    row.storage = row.id;
    row.fingerprint = analysis::HostFingerprint(t.v, t.shape);
    run.tensors.push_back(std::move(row));
    t.id = run.tensors.back().id;
  }

  // Deduplicated Frame and Stack rows for the current frames, innermost first;
  // each op call is its own line in the innermost frame.
  int64_t CaptureStack() {
    if (frames_.empty()) return kNone;
    frames_.back().second = ++line_;
    std::vector<int64_t> ids;
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
      auto key = std::make_tuple(it->first, it->second);
      auto [pos, fresh] = frame_ids_.emplace(key, static_cast<int64_t>(run.frames.size()));
      if (fresh) {
        Frame f;
        f.id = pos->second;
        f.kind = "python";
        f.function = it->first;
        f.file = "model.py";
        f.line = it->second;
        run.frames.push_back(f);
      }
      ids.push_back(pos->second);
    }
    auto [pos, fresh] = stack_ids_.emplace(ids, static_cast<int64_t>(run.stacks.size()));
    if (fresh) run.stacks.push_back(Stack{pos->second, ids});
    return pos->second;
  }

  std::vector<std::pair<std::string, int>> frames_;
  std::map<std::tuple<std::string, int>, int64_t> frame_ids_;
  std::map<std::vector<int64_t>, int64_t> stack_ids_;
  int line_ = 0;
  std::mt19937 rng_;
  std::vector<int64_t> scopes_;
  int64_t clock_ = 0;
};

}  // namespace magneton::tiny
