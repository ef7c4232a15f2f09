// Algorithm 1 on programs written two ways: the regions that come out must
// correspond module for module (labels from the program structure), and the
// differences real systems have must not break the match.
#include "analysis/match/region_match.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "analysis/fingerprint/fingerprint_compare.h"
#include "core/store.h"
#include "match_checks.h"
#include "match_scoring.h"
#include "tiny_transformer.h"

namespace magneton::analysis {
namespace {

using tiny::Variant;

struct Recorded {
  Run run;
  std::vector<std::string> labels;
};

Recorded RecordModel(const tiny::Model& m, const Variant& v) {
  Recorded r;
  r.run = tiny::Program(m, v).Record(&r.labels);
  return r;
}


testing::MatchScore MatchAndScore(const Variant& va, const Variant& vb, int layers = 2, uint32_t seed = 3,
                                  MatchResult* out = nullptr) {
  const tiny::Model m = tiny::Model::Random(layers, seed);
  Recorded a = RecordModel(m, va), b = RecordModel(m, vb);
  MatchResult r = MatchRuns(a.run, b.run);
  testing::CheckWellFormed(r, a.run, b.run, MatchOptions{}.tolerance);
  auto s = testing::ScoreMatch(r, a.labels, b.labels);
  if (std::getenv("MAGNETON_MATCH_DEBUG")) testing::PrintMatch(r, a.run, b.run, a.labels, b.labels);
  std::string missed;
  for (auto& l : s.missed) missed += l + " ";
  SCOPED_TRACE(missed);
  if (out) *out = std::move(r);
  return s;
}

// How many of a region's ops (one side's op ids) are named `name`.
int64_t CountNamed(const magneton::Run& run, const std::vector<int64_t>& ops, const std::string& name) {
  return std::count_if(ops.begin(), ops.end(), [&](int64_t op) { return run.ops[op].name == name; });
}

void ExpectPerfect(const testing::MatchScore& s) {
  EXPECT_EQ(s.correct, s.regions);
  EXPECT_EQ(s.recovered, s.labels) << "missed " << (s.missed.empty() ? "" : s.missed.front());
  EXPECT_GT(s.labels, 0);
}

TEST(RegionMatch, SameProgramMatchesEveryModule) {
  MatchResult r;
  auto s = MatchAndScore({}, {}, 2, 3, &r);
  ExpectPerfect(s);
  EXPECT_TRUE(r.unmatched_a.empty());
  EXPECT_TRUE(r.unmatched_b.empty());
  EXPECT_GT(r.stats.cut_points, 10);
}

TEST(RegionMatch, AddmmAgainstMmPlusAdd) {
  MatchResult r;
  Variant b;
  b.mm_then_add = true;
  ExpectPerfect(MatchAndScore({}, b, 2, 3, &r));
  EXPECT_TRUE(r.unmatched_a.empty());
}

TEST(RegionMatch, NestedLinearAgainstAddmm) {
  Variant b;
  b.linear_module = true;
  ExpectPerfect(MatchAndScore({}, b));
}

TEST(RegionMatch, CompositeGeluAgainstFused) {
  Variant b;
  b.gelu_composite = true;
  ExpectPerfect(MatchAndScore({}, b));
}

TEST(RegionMatch, SeparateQkvAgainstFusedQkvAndSplit) {
  Variant b;
  b.fused_qkv = true;
  ExpectPerfect(MatchAndScore({}, b));
}

TEST(RegionMatch, MathAttentionAgainstFusedAttention) {
  Variant b;
  b.fused_attention = true;
  ExpectPerfect(MatchAndScore({}, b));
}

TEST(RegionMatch, ExtraCopiesReshapesAndCasts) {
  Variant b;
  b.extra_layout = true;
  b.bf16_mlp = true;
  ExpectPerfect(MatchAndScore({}, b));
}

TEST(RegionMatch, MaskBuiltOnceAgainstEveryLayer) {
  Variant b;
  b.lazy_mask = true;
  ExpectPerfect(MatchAndScore({}, b, 3));
}

// HF's eager attention builds its causal mask from the input's padding mask
// and reads it in every layer; a fused attention needs none. The mask is
// data (it reads an input) live from the first layer to the last on one side
// only: it must not keep the layers from being cut apart.
TEST(RegionMatch, AMaskFromTheInputOnOneSideOnly) {
  Variant a, b;
  a.mask_from_input = true;
  b.fused_attention = true;
  ExpectPerfect(MatchAndScore(a, b, 3));
}

TEST(RegionMatch, UnreadCacheOutputsDoNotBreakCuts) {
  Variant b;
  b.kv_outputs = true;
  ExpectPerfect(MatchAndScore({}, b, 3));
}

TEST(RegionMatch, EverythingDifferentAtOnceWithNoNamesInCommon) {
  Variant a, b;
  a.linear_module = true;
  a.gelu_composite = true;
  a.lazy_mask = true;
  b.fused_qkv = true;
  b.mm_then_add = true;
  b.extra_layout = true;
  b.fused_attention = true;
  b.kv_outputs = true;
  b.rename_ops = true;
  ExpectPerfect(MatchAndScore(a, b, 3));
}

TEST(RegionMatch, OpNamesDoNotMatter) {
  const tiny::Model m = tiny::Model::Random(2, 8);
  Variant renamed;
  renamed.rename_ops = true;
  Recorded a = RecordModel(m, {}), b = RecordModel(m, {}), c = RecordModel(m, renamed);
  MatchResult with_names = MatchRuns(a.run, b.run), without = MatchRuns(a.run, c.run);
  ASSERT_EQ(with_names.regions.size(), without.regions.size());
  for (size_t i = 0; i < with_names.regions.size(); ++i) {
    EXPECT_EQ(with_names.regions[i].ops_a, without.regions[i].ops_a);
    EXPECT_EQ(with_names.regions[i].ops_b, without.regions[i].ops_b);
  }
}

// When the second program computes something else from layer 1 on, only
// layer 0 corresponds and the rest stays unmatched: no forced pairing.
TEST(RegionMatch, DivergingProgramsMatchOnlyTheCommonPrefix) {
  tiny::Model m = tiny::Model::Random(3, 4);
  tiny::Model other = m;
  other.layers[1] = tiny::Model::Random(2, 99).layers[1];
  other.layers[2] = tiny::Model::Random(3, 98).layers[2];
  Recorded a = RecordModel(m, {}), b = RecordModel(other, {});
  MatchResult r = MatchRuns(a.run, b.run);
  testing::CheckWellFormed(r, a.run, b.run, MatchOptions{}.tolerance);
  auto s = testing::ScoreMatch(r, a.labels, b.labels);
  EXPECT_EQ(s.correct, s.regions);
  std::set<std::string> matched;
  for (const auto& region : r.regions)
    for (auto op : region.ops_a) matched.insert(a.labels[op]);
  EXPECT_TRUE(matched.count("L0.attn"));
  EXPECT_TRUE(matched.count("L0.mlp"));
  EXPECT_FALSE(matched.count("L2.mlp"));
  EXPECT_FALSE(r.unmatched_a.empty());
  EXPECT_FALSE(r.unmatched_b.empty());
}

TEST(RegionMatch, UnrelatedProgramsMatchNothing) {
  Recorded a = RecordModel(tiny::Model::Random(2, 1), {}), b = RecordModel(tiny::Model::Random(2, 2), {});
  MatchResult r = MatchRuns(a.run, b.run);
  EXPECT_TRUE(r.regions.empty());
  EXPECT_TRUE(r.tensor_pairs.empty());
}

// Recorded on the CPU (scripts/record_fixture.py eig): a covariance's
// eigenvalues by the general solver (then sorted) against the symmetric one,
// and rows sampled only if they are all positive. The check ends in a Python
// bool, deeper on the general side: an op that writes no value must not be
// taken for the program's output, or the two sides' outputs differ and
// nothing matches (cases/hf-34570).
TEST(RegionMatch, ACheckTheHostBranchesOnIsNotTheOutput) {
  const std::string dir = std::string(MAGNETON_TEST_DATA) + "/torch/";
  auto a = LoadRun(dir + "eig_general.mgt"), b = LoadRun(dir + "eig_symmetric.mgt");
  ASSERT_TRUE(a.ok() && b.ok());
  MatchResult m = MatchRuns(*a, *b);
  testing::CheckWellFormed(m, *a, *b, MatchOptions{}.tolerance);
  EXPECT_TRUE(m.unmatched_a.empty());
  EXPECT_TRUE(m.unmatched_b.empty());
  bool solvers_paired = false;
  for (const auto& r : m.regions)
    solvers_paired |=
        CountNamed(*a, r.ops_a, "aten::linalg_eigvals") && CountNamed(*b, r.ops_b, "aten::linalg_eigvalsh");
  EXPECT_TRUE(solvers_paired);
  EXPECT_GT(m.regions.size(), 5u);
}

// A generation loop (model.generate): each step's output feeds the next step
// and, at the end, a stopping check the host branches on (a dead end with no
// value), while a small valued dead end (a position index nobody reads) comes
// first among the outputs. The decoding is the program's work, not a side
// output of the check: each step's GELU is matched on its own.
TEST(RegionMatch, AGenerationLoopIsTheWorkNotASideOutputOfItsStoppingCheck) {
  auto program = [](bool fused) {
    tiny::Eager e;
    tiny::T w = e.Input({8, 8}), pos = e.Input({1, 8}), h = e.Input({4, 8});
    tiny::T p = e.AddScalar(pos, 1.0f);
    tiny::T unread = e.Scale(p, 2.0f, "aten::unsqueeze");
    for (int step = 0; step < 4; ++step) {
      tiny::T x = e.Add(e.MatMul(h, w), p);
      h = fused ? e.Gelu(x) : e.GeluComposite(x);
    }
    e.Record("aten::is_nonzero", {&h}, {});
    (void)unread;
    return std::move(e.run);
  };
  const magneton::Run a = program(false), b = program(true);
  MatchResult m = MatchRuns(a, b);
  testing::CheckWellFormed(m, a, b, MatchOptions{}.tolerance);
  int gelus = 0;
  for (const auto& r : m.regions) {
    const auto fused = CountNamed(b, r.ops_b, "aten::gelu");
    EXPECT_LE(fused, 1) << "two steps in one region";
    gelus += static_cast<int>(fused);
  }
  EXPECT_EQ(gelus, 4);
}

// Recorded on the CPU (scripts/record_fixture.py train): one AdamW step of an
// MLP whose GELU is written out on one side and fused on the other. A training
// step has an output per parameter update, which no post-dominator path joins
// before the virtual sink, and saved activations that skip from the forward to
// the backward. Every update must still be matched, each on its own, and the
// forward before the GELU must not be folded into the backward.
TEST(RegionMatch, ATrainingStepMatchesEveryParameterUpdate) {
  const std::string dir = std::string(MAGNETON_TEST_DATA) + "/torch/";
  auto a = LoadRun(dir + "train_gelu_composite.mgt"), b = LoadRun(dir + "train_gelu_fused.mgt");
  ASSERT_TRUE(a.ok() && b.ok());
  MatchResult m = MatchRuns(*a, *b);
  testing::CheckWellFormed(m, *a, *b, MatchOptions{}.tolerance);
  EXPECT_TRUE(m.unmatched_a.empty());
  EXPECT_TRUE(m.unmatched_b.empty());
  // Ops of the backward pass: inside an autograd node (they carry its forward
  // op) or the engine's own work around it (a gradient summed in evaluate_function).
  auto backward = [](const magneton::Run& run, const std::vector<int64_t>& ops) {
    return std::count_if(ops.begin(), ops.end(), [&](int64_t op) {
      for (int64_t o = op; o != kNone; o = run.ops[o].parent)
        if (run.ops[o].forward_op != kNone || run.ops[o].name.rfind("autograd::engine::", 0) == 0) return true;
      return false;
    });
  };
  int updates = 0, first_linear = -1, gelu = -1;
  for (const auto& r : m.regions) {
    const auto ua = CountNamed(*a, r.ops_a, "aten::addcdiv_"), ub = CountNamed(*b, r.ops_b, "aten::addcdiv_");
    EXPECT_EQ(ua, ub);
    EXPECT_LE(ua, 1) << "two parameter updates in one region";
    updates += static_cast<int>(ua);
    if (first_linear < 0 && CountNamed(*a, r.ops_a, "aten::linear")) first_linear = static_cast<int>(r.id);
    if (CountNamed(*a, r.ops_a, "aten::tanh")) gelu = static_cast<int>(r.id);
  }
  EXPECT_EQ(updates, 6);  // weights and biases of the LayerNorm and both Linears
  ASSERT_GE(first_linear, 0);
  const RegionMatch& lin = m.regions[first_linear];
  EXPECT_EQ(backward(*a, lin.ops_a), 0);
  EXPECT_EQ(CountNamed(*b, lin.ops_b, "aten::linear"), 1);
  ASSERT_GE(gelu, 0);
  EXPECT_EQ(CountNamed(*b, m.regions[gelu].ops_b, "aten::gelu"), 1);
  // The GELU written out saves its intermediates for the backward pass, the
  // fused one only its input: the forward is still a region of its own, and
  // so is the backward (docs/matching.md, "Saved activations").
  EXPECT_EQ(backward(*a, m.regions[gelu].ops_a), 0);
  EXPECT_EQ(backward(*b, m.regions[gelu].ops_b), 0);
  int gelu_backward = -1;
  for (const auto& r : m.regions)
    if (CountNamed(*b, r.ops_b, "aten::gelu_backward")) gelu_backward = static_cast<int>(r.id);
  ASSERT_GE(gelu_backward, 0);
  EXPECT_EQ(backward(*a, m.regions[gelu_backward].ops_a), static_cast<int64_t>(m.regions[gelu_backward].ops_a.size()));
}

// Recorded on the CPU through the one-command route (tests/data/jax_train/,
// make_fixtures.py): a JAX training step whose embedding is a one-hot matrix
// product (a) or a lookup (b). JAX updates the parameters functionally
// (`w - 0.1 * g`, the step function's results), not in place: each update is
// still an output of its own, so the gradients behind the embedding's, which
// both sides compute alike, are matched, and the embedding's forward and
// backward are one region.
TEST(RegionMatch, AJaxTrainingStepMatchesEveryFunctionalParameterUpdate) {
  const std::string dir = std::string(MAGNETON_TEST_DATA) + "/jax_train/";
  auto a = LoadRun(dir + "onehot.mgt"), b = LoadRun(dir + "take.mgt");
  ASSERT_TRUE(a.ok() && b.ok());
  MatchResult m = MatchRuns(*a, *b);
  testing::CheckWellFormed(m, *a, *b, MatchOptions{}.tolerance);
  EXPECT_TRUE(m.unmatched_a.empty());
  EXPECT_TRUE(m.unmatched_b.empty());
  int updates = 0, embedding = 0;
  for (const auto& r : m.regions) {
    const auto ua = CountNamed(*a, r.ops_a, "jax:sub"), ub = CountNamed(*b, r.ops_b, "jax:sub");
    updates += static_cast<int>(std::min(ua, ub));
    if (CountNamed(*b, r.ops_b, "jax:scatter-add") && CountNamed(*b, r.ops_b, "jax:gather")) {
      ++embedding;
      EXPECT_GE(CountNamed(*a, r.ops_a, "jax:dot_general"), 2);  // the one-hot product and its transpose
    }
  }
  EXPECT_GE(updates, 3);  // emb, w and out, each matched
  EXPECT_EQ(embedding, 1);
}

TEST(RegionMatch, RunsWithoutFingerprintsMatchNothingAndDoNotFail) {
  const tiny::Model m = tiny::Model::Random(1, 5);
  Recorded a = RecordModel(m, {}), b = RecordModel(m, {});
  for (auto& t : b.run.tensors) t.fingerprint.reset();
  MatchResult r = MatchRuns(a.run, b.run);
  EXPECT_TRUE(r.regions.empty());
  EXPECT_EQ(r.unmatched_b.size(), static_cast<size_t>(r.stats.nodes_b));
  magneton::Run empty;
  MatchResult none = MatchRuns(empty, empty);
  EXPECT_TRUE(none.regions.empty());
}

// A program recorded over R repetitions holds every value R times: the value
// search costs one repetition's, not R x R comparisons per value, and matches
// each repetition as one does. record_jax of an MLP without and with jax.jit,
// 5 executions each (tests/data/dispatch/), against their first execution.
TEST(RegionMatch, RepeatedValuesAreSearchedForOnce) {
  auto load = [](const std::string& name) {
    auto r = LoadRun(std::string(MAGNETON_TEST_DATA) + "/dispatch/" + name + ".mgt");
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? std::move(*r) : magneton::Run{};
  };
  const magneton::Run a = load("jax_eager"), b = load("jax_jit");
  ASSERT_EQ(a.info.extra.at("iterations"), "5");
  auto first = [](magneton::Run run) {  // the first execution's ops (ids and tensors stay)
    run.ops.resize(run.ops.size() / 5);
    return run;
  };
  MatchResult all = MatchRuns(a, b), one = MatchRuns(first(a), first(b));
  ASSERT_GT(one.regions.size(), 10u);
  EXPECT_EQ(all.regions.size(), 5 * one.regions.size());
  EXPECT_LE(all.stats.comparisons, one.stats.comparisons + one.stats.comparisons / 2);
}


// A loss summed chunk by chunk from zero (cases/pytorch-12461): each chunk's
// squared differences of the kept elements, selected by a boolean mask on one
// side (as many values as the mask keeps), multiplied by it on the other (zeros
// where it drops). Between the chunk inputs and the loss, the only equivalent
// values are one-element ones: each chunk's sum and the running loss. They
// must be cut points, each chunk a region of its own with its sum compared:
// taken for constants, nothing after the inputs matched.
TEST(RegionMatch, AChunkedLossIsCutAtEachChunksSum) {
  constexpr int kChunks = 4;
  std::mt19937 rng(11);
  std::vector<tiny::T> masks(kChunks);
  for (auto& m : masks) {
    m.shape = {2, 16};
    for (int i = 0; i < 32; ++i) m.v.push_back(static_cast<float>(rng() % 2));
  }
  auto program = [&](bool select) {
    tiny::Eager e(5);
    std::vector<tiny::T> pred, target, mask;
    for (int c = 0; c < kChunks; ++c) {
      pred.push_back(e.Input({2, 16}));
      target.push_back(e.Input({2, 16}));
      e.dtype = "bool";
      mask.push_back(e.Feed(masks[c]));
      e.dtype = "float32";
    }
    auto sum = [&](const tiny::T& x) {
      double acc = 0;
      for (float v : x.v) acc += v;
      tiny::T s{{}, {static_cast<float>(acc)}, -1};
      e.Record("aten::sum", {&x}, {&s});
      return s;
    };
    auto sub = [&](const tiny::T& x, const tiny::T& y) {
      tiny::T d = x;
      for (size_t i = 0; i < d.v.size(); ++i) d.v[i] -= y.v[i];
      e.Record("aten::sub", {&x, &y}, {&d});
      return d;
    };
    auto kept = [&](const tiny::T& x, const tiny::T& m) {
      tiny::T k{{0}, {}, -1};
      for (size_t i = 0; i < x.v.size(); ++i)
        if (m.v[i] != 0) k.v.push_back(x.v[i]);
      k.shape = {k.numel()};
      e.Record("aten::index", {&x, &m}, {&k});
      return k;
    };
    tiny::T loss{{}, {0.0f}, -1};
    e.Record("aten::zeros", {}, {&loss});
    for (int c = 0; c < kChunks; ++c) {
      const tiny::T d = select ? sub(kept(pred[c], mask[c]), kept(target[c], mask[c]))
                               : e.Mul(sub(pred[c], target[c]), mask[c]);
      loss = e.Add(loss, sum(e.Mul(d, d)));
    }
    return std::move(e.run);
  };
  const magneton::Run a = program(true), b = program(false);
  MatchResult m = MatchRuns(a, b);
  testing::CheckWellFormed(m, a, b, MatchOptions{}.tolerance);
  EXPECT_TRUE(m.unmatched_a.empty());
  EXPECT_TRUE(m.unmatched_b.empty());
  int chunks = 0;
  for (const auto& r : m.regions) {
    const auto sums = CountNamed(a, r.ops_a, "aten::sum");
    EXPECT_EQ(sums, CountNamed(b, r.ops_b, "aten::sum"));
    EXPECT_LE(sums, 1) << "two chunks in one region";
    if (sums == 0) continue;
    ++chunks;
    EXPECT_EQ(CountNamed(a, r.ops_a, "aten::index"), 2);
    ASSERT_FALSE(r.outputs_a.empty());
    EXPECT_LT(r.output_rel_diff, 1e-5);
  }
  EXPECT_EQ(chunks, kChunks);
}

// A one-element value computed from one-element values alone is the same
// number wherever that code runs: an optimizer's step counters (2.0 for every
// parameter), incremented one parameter at a time on one side and all at once
// on the other, whose fused update is recorded writing nothing. Taken for
// evidence, every counter of one side was the other's, and one region paired
// the updates of every parameter but the last with the counters' increment.
TEST(RegionMatch, CountersOfOneValueAreNoEvidence) {
  constexpr int kParams = 4;
  auto program = [&](bool fused) {
    tiny::Eager e(9);
    std::vector<tiny::T> params, grads, steps;
    for (int i = 0; i < kParams; ++i) {
      params.push_back(e.Input({64}));
      grads.push_back(e.Input({64}, 1e-2f));
      steps.push_back(e.Feed(tiny::T{{}, {1.0f}, -1}));
    }
    if (fused) {
      std::vector<tiny::T> next = steps;
      std::vector<const tiny::T*> in;
      std::vector<tiny::T*> out;
      for (int i = 0; i < kParams; ++i) {
        next[i].v[0] += 1;
        in.push_back(&steps[i]);
        out.push_back(&next[i]);
      }
      e.Record("aten::_foreach_add_", in, out);
      std::vector<const tiny::T*> all;
      for (int i = 0; i < kParams; ++i) all.insert(all.end(), {&params[i], &grads[i], &next[i]});
      e.Record("aten::_fused_adam_", all, {});
    } else {
      for (int i = 0; i < kParams; ++i) {
        const tiny::T step = e.AddScalar(steps[i], 1.0f, "aten::add_");
        e.Record("aten::item", {&step}, {});
        const tiny::T m = e.Scale(grads[i], 0.1f, "aten::lerp_");
        e.Add(params[i], e.Scale(m, -1e-2f), "aten::addcdiv_");
      }
    }
    return std::move(e.run);
  };
  const magneton::Run a = program(false), b = program(true);
  MatchResult m = MatchRuns(a, b);
  testing::CheckWellFormed(m, a, b, MatchOptions{}.tolerance);
  EXPECT_TRUE(m.regions.empty());
}

}  // namespace
}  // namespace magneton::analysis
