// A small pre-LN transformer written many ways with tiny::Eager, with the
// module of every recorded op as its label (the ground truth for matching).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tiny_eager.h"

namespace magneton::tiny {

// How one program differs from the plain way of writing the model.
struct Variant {
  bool fused_qkv = false;        // one projection to q|k|v, then split
  bool linear_module = false;    // projections as nested aten::linear (weights [out, in])
  bool mm_then_add = false;      // projections as mm + add instead of addmm
  bool gelu_composite = false;   // tanh GELU as eight element-wise ops
  bool fused_attention = false;  // one op for softmax(q k^T / sqrt(d) + mask) v
  bool extra_layout = false;     // contiguous copies and reshapes around attention
  bool lazy_mask = false;        // causal mask built inside every attention call
  bool mask_from_input = false;  // the up-front mask reads an input's padding mask (data, not a constant)
  bool bf16_mlp = false;         // the MLP input goes through bfloat16 and back
  bool kv_outputs = false;       // k and v copied out as a cache nobody reads
  bool rename_ops = false;       // no op name in common with the other program
};

struct LayerWeights {
  T ln1_w, ln1_b, wq, wk, wv, bq, bk, bv, wo, bo, ln2_w, ln2_b, w1, b1, w2, b2;
};

struct Model {
  int64_t tokens = 8, width = 16, heads = 2;
  T input;
  std::vector<LayerWeights> layers;

  static Model Random(int layers, uint32_t seed, int64_t tokens = 8, int64_t width = 16) {
    Eager src(seed);
    Model m;
    m.tokens = tokens;
    m.width = width;
    m.input = src.Input({tokens, width});
    const float s = 0.3f;
    for (int i = 0; i < layers; ++i) {
      LayerWeights w;
      w.ln1_w = src.Input({width}, 0.2f);
      for (auto& v : w.ln1_w.v) v += 1.0f;
      w.ln1_b = src.Input({width}, 0.1f);
      w.wq = src.Input({width, width}, s);
      w.wk = src.Input({width, width}, s);
      w.wv = src.Input({width, width}, s);
      w.bq = src.Input({width}, 0.1f);
      w.bk = src.Input({width}, 0.1f);
      w.bv = src.Input({width}, 0.1f);
      w.wo = src.Input({width, width}, s);
      w.bo = src.Input({width}, 0.1f);
      w.ln2_w = src.Input({width}, 0.2f);
      for (auto& v : w.ln2_w.v) v += 1.0f;
      w.ln2_b = src.Input({width}, 0.1f);
      w.w1 = src.Input({width, 4 * width}, s);
      w.b1 = src.Input({4 * width}, 0.1f);
      w.w2 = src.Input({4 * width, width}, s * 0.5f);
      w.b2 = src.Input({width}, 0.1f);
      m.layers.push_back(w);
    }
    return m;
  }
};

// Records the model into e.run; labels[op id] names the module of each op.
class Program {
 public:
  Program(const Model& m, const Variant& v) : m_(m), v_(v) {}

  Run Record(std::vector<std::string>* labels) {
    Eager e;
    e_ = &e;
    e.PushFrame("main", 0);
    T x = e.Feed(m_.input);
    T mask;
    T padding;
    if (v_.mask_from_input) padding = e.Feed(T{{m_.tokens}, std::vector<float>(m_.tokens, 1.0f), -1});
    if (!v_.lazy_mask && !v_.fused_attention) mask = e.CausalMask(m_.tokens, v_.mask_from_input ? &padding : nullptr);
    for (size_t i = 0; i < m_.layers.size(); ++i) {
      const std::string L = "L" + std::to_string(i);
      Weights w = FeedLayer(m_.layers[i]);
      Module(L, [&] {
        T h;
        Module(L + ".ln1", [&] { h = e.LayerNorm(x, w.ln1_w, w.ln1_b); });
        Module(L + ".attn", [&] { h = Attention(h, w, mask); });
        x = e.Add(x, h);
        Module(L + ".ln2", [&] { h = e.LayerNorm(x, w.ln2_w, w.ln2_b); });
        Module(L + ".mlp", [&] { h = Mlp(h, w); });
        x = e.Add(x, h);
      });
    }
    if (v_.rename_ops)
      for (auto& op : e.run.ops) op.name = "op" + std::to_string(op.id * 7919 % 1000);
    if (labels) {
      labels->assign(e.run.ops.size(), "");
      for (auto& [begin, end, name] : modules_)
        for (int64_t op = begin; op < end; ++op)
          if ((*labels)[op].empty()) (*labels)[op] = name;
    }
    e_ = nullptr;
    return std::move(e.run);
  }

 private:
  // Weights as this program holds them (graph inputs of its run).
  struct Weights {
    T ln1_w, ln1_b, wq, wk, wv, wqkv, bq, bk, bv, bqkv, wo, bo, ln2_w, ln2_b, w1, b1, w2, b2;
  };
  Weights FeedLayer(const LayerWeights& l) {
    Eager& e = *e_;
    Weights w;
    auto weight = [&](const T& t) { return e.Feed(v_.linear_module ? Eager::PermuteValues(t, {1, 0}) : t); };
    w.ln1_w = e.Feed(l.ln1_w);
    w.ln1_b = e.Feed(l.ln1_b);
    if (v_.fused_qkv) {
      T cat = Eager::CatValues({&l.wq, &l.wk, &l.wv});
      w.wqkv = weight(cat);
      w.bqkv = e.Feed(Eager::CatValues({&l.bq, &l.bk, &l.bv}));
    } else {
      w.wq = weight(l.wq);
      w.wk = weight(l.wk);
      w.wv = weight(l.wv);
      w.bq = e.Feed(l.bq);
      w.bk = e.Feed(l.bk);
      w.bv = e.Feed(l.bv);
    }
    w.wo = weight(l.wo);
    w.bo = e.Feed(l.bo);
    w.ln2_w = e.Feed(l.ln2_w);
    w.ln2_b = e.Feed(l.ln2_b);
    w.w1 = weight(l.w1);
    w.b1 = e.Feed(l.b1);
    w.w2 = weight(l.w2);
    w.b2 = e.Feed(l.b2);
    return w;
  }

  // Runs `body` as a module call: a frame named after the module kind, called
  // from its own line of the caller, and the label of the ops it records.
  void Module(const std::string& name, const std::function<void()>& body) {
    const int64_t begin = static_cast<int64_t>(e_->run.ops.size());
    const std::string kind = name.substr(name.rfind('.') + 1);
    e_->PushFrame((kind[0] == 'L' ? std::string("Block") : kind) + ".forward",
                  static_cast<int>(std::hash<std::string>()(kind) % 1000));
    body();
    e_->PopFrame();
    modules_.emplace_back(begin, static_cast<int64_t>(e_->run.ops.size()), name);
  }

  T Project(const T& x, const T& w, const T& b) {
    Eager& e = *e_;
    if (v_.linear_module) return e.Linear(x, w, b);
    if (v_.mm_then_add) return e.Add(e.MatMul(x, w), b);
    return e.AddMM(b, x, w);
  }

  T Attention(const T& x, const Weights& w, const T& upfront_mask) {
    Eager& e = *e_;
    const int64_t t = m_.tokens, c = m_.width, h = m_.heads, d = c / h;
    T q, k, v;
    if (v_.fused_qkv) {
      auto parts = e.Split(Project(x, w.wqkv, w.bqkv), 3);
      q = parts[0], k = parts[1], v = parts[2];
    } else {
      q = Project(x, w.wq, w.bq);
      k = Project(x, w.wk, w.bk);
      v = Project(x, w.wv, w.bv);
    }
    if (v_.kv_outputs) {
      e.Copy(k, "aten::clone");
      e.Copy(v, "aten::clone");
    }
    auto heads = [&](const T& y) { return e.Permute(e.Reshape(y, {t, h, d}), {1, 0, 2}); };  // [h, t, d]
    T qh = heads(q), kh = heads(k), vh = heads(v);
    if (v_.extra_layout) {
      qh = e.Copy(qh);
      kh = e.Copy(kh);
    }
    T out;  // [h, t, d]
    if (v_.fused_attention) {
      T kt = Eager::PermuteValues(kh, {0, 2, 1});
      T s = Eager::MatMulValues(qh, kt);
      for (int64_t i = 0; i < s.numel(); ++i) {
        const int64_t row = (i / t) % t, col = i % t;
        s.v[i] = s.v[i] / std::sqrt(float(d)) + (col > row ? -1e9f : 0.0f);
      }
      // softmax rows, then @ v, all inside one op
      for (int64_t r = 0; r < s.numel() / t; ++r) {
        float mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < t; ++j) mx = std::max(mx, s.v[r * t + j]);
        for (int64_t j = 0; j < t; ++j) sum += s.v[r * t + j] = std::exp(s.v[r * t + j] - mx);
        for (int64_t j = 0; j < t; ++j) s.v[r * t + j] /= sum;
      }
      out = Eager::MatMulValues(s, vh);
      e.Record("aten::scaled_dot_product_attention", {&qh, &kh, &vh}, {&out});
    } else {
      T mask = v_.lazy_mask ? e.CausalMask(t) : upfront_mask;
      T kt = e.Permute(kh, {0, 2, 1}, "aten::transpose");
      T scores = e.Scale(e.MatMul(qh, kt, "aten::matmul"), 1.0f / std::sqrt(float(d)), "aten::div");
      T probs = e.Softmax(e.Add(scores, mask));
      out = e.MatMul(probs, vh, "aten::matmul");
    }
    T merged = e.Permute(out, {1, 0, 2}, "aten::transpose");  // [t, h, d]
    if (v_.extra_layout) merged = e.Copy(merged);
    merged = e.Reshape(merged, {t, c}, v_.extra_layout ? "aten::reshape" : "aten::view");
    return Project(merged, w.wo, w.bo);
  }

  T Mlp(const T& x, const Weights& w) {
    Eager& e = *e_;
    T in = x;
    if (v_.bf16_mlp)
      in = e.Map(
          e.CastBf16(x), [](float f) { return f; }, "aten::to");
    T a = Project(in, w.w1, w.b1);
    a = v_.gelu_composite ? e.GeluComposite(a) : e.Gelu(a);
    return Project(a, w.w2, w.b2);
  }

  const Model& m_;
  Variant v_;
  Eager* e_ = nullptr;
  std::vector<std::tuple<int64_t, int64_t, std::string>> modules_;
};

}  // namespace magneton::tiny
