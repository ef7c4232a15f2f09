// Tensor equivalence from fingerprints: layout-invariant, tolerant of casts,
// sharp between different values; candidate hashing finds what a full scan finds.
#include "analysis/fingerprint/fingerprint_compare.h"

#include <gtest/gtest.h>

#include <random>

#include "analysis/fingerprint/candidate_index.h"
#include "analysis/fingerprint/host_fingerprint.h"
#include "tiny_eager.h"

namespace magneton::analysis {
namespace {

Tensor Make(const tiny::T& t, const std::string& dtype = "float32") {
  Tensor r;
  r.shape = t.shape;
  r.dtype = dtype;
  r.fingerprint = HostFingerprint(t.v, t.shape);
  return r;
}

tiny::T Random(std::vector<int64_t> shape, uint32_t seed, float scale = 1.0f) {
  tiny::Eager e(seed);
  return e.Input(std::move(shape), scale);
}

TEST(FingerprintCompare, PermuteReshapeAndCopyAreEquivalent) {
  tiny::T x = Random({2, 3, 5, 4}, 1);
  const Tensor fx = Make(x);
  EXPECT_LT(FingerprintDifference(fx, Make(tiny::Eager::PermuteValues(x, {0, 2, 1, 3}))), 1e-6);
  EXPECT_LT(FingerprintDifference(fx, Make(tiny::Eager::PermuteValues(x, {3, 1, 2, 0}))), 1e-6);
  tiny::T flat{{6, 20}, x.v, -1};  // a reshape: spectra not comparable, the rest equal
  EXPECT_LT(FingerprintDifference(fx, Make(flat)), 1e-6);
  tiny::T unsqueezed{{1, 2, 3, 5, 4}, x.v, -1};  // size-1 dims carry nothing
  EXPECT_LT(FingerprintDifference(fx, Make(unsqueezed)), 1e-6);
}

TEST(FingerprintCompare, DifferentValuesDiffer) {
  const Tensor a = Make(Random({8, 16}, 1)), b = Make(Random({8, 16}, 2));
  EXPECT_GT(FingerprintDifference(a, b), 0.05);
  // Same multiset of values, different arrangement: only the spectra see it.
  tiny::T x = Random({8, 16}, 3);
  tiny::T low_rank{{8, 16}, {}, -1};
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 16; ++j) low_rank.v.push_back(float(i + 1) * float(j % 4 + 1));
  tiny::T shuffled = low_rank;
  std::shuffle(shuffled.v.begin(), shuffled.v.end(), std::mt19937(7));
  EXPECT_GT(FingerprintDifference(Make(low_rank), Make(shuffled)), 0.05);
}

TEST(FingerprintCompare, SpectraOfAnotherKindAreNoEvidence) {
  // The low-rank and shuffled values above differ only in their spectra; a
  // file of encoding 1 (singular values) against today's (Schatten norms)
  // compares their values alone.
  tiny::T low_rank{{8, 16}, {}, -1};
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 16; ++j) low_rank.v.push_back(float(i + 1) * float(j % 4 + 1));
  tiny::T shuffled = low_rank;
  std::shuffle(shuffled.v.begin(), shuffled.v.end(), std::mt19937(7));
  Tensor old = Make(shuffled);
  old.fingerprint->spectra_kind = SpectraKind::kSingularValues;
  EXPECT_GT(FingerprintDifference(Make(low_rank), Make(shuffled)), 0.05);
  EXPECT_LT(FingerprintDifference(Make(low_rank), old), 1e-6);
}

TEST(FingerprintCompare, CastsStayWithinTolerance) {
  tiny::Eager e(4);
  tiny::T x = e.Input({16, 32});
  tiny::T y = e.CastBf16(x);
  const double d = FingerprintDifference(Make(x), Make(y, "bfloat16"));
  EXPECT_GT(d, 1e-5);  // the cast is visible...
  EXPECT_LT(d, 5e-3);  // ...but well within the default tolerance
}

TEST(FingerprintCompare, NotComparableAcrossNumelDtypeOrMissing) {
  tiny::T x = Random({4, 4}, 1);
  Tensor a = Make(x);
  Tensor ints = Make(x, "int64");
  EXPECT_EQ(FingerprintDifference(a, ints), kNotComparable);
  EXPECT_EQ(FingerprintDifference(a, Make(Random({4, 5}, 1))), kNotComparable);
  Tensor none;
  none.dtype = "float32";
  EXPECT_EQ(FingerprintDifference(a, none), kNotComparable);
  EXPECT_EQ(ClassifyDtype("bfloat16"), DtypeClass::kFloat);
  EXPECT_EQ(ClassifyDtype("torch.int32"), DtypeClass::kInt);
  EXPECT_EQ(ClassifyDtype("Long"), DtypeClass::kInt);
  EXPECT_EQ(ClassifyDtype("bool"), DtypeClass::kBool);
  EXPECT_EQ(ClassifyDtype("complex64"), DtypeClass::kOther);
}

TEST(FingerprintCompare, ConstantsAreNotInformative) {
  tiny::T zeros{{4, 4}, std::vector<float>(16, 0.0f), -1};
  tiny::T ones{{4, 4}, std::vector<float>(16, 1.0f), -1};
  EXPECT_FALSE(Informative(Make(zeros)));
  EXPECT_FALSE(Informative(Make(ones)));
  EXPECT_TRUE(Informative(Make(Random({4, 4}, 1))));
}

// The index must return every tensor a full scan accepts, over a population
// with near-duplicates at varied distances and scales.
TEST(CandidateIndex, FindsEverythingAFullScanFinds) {
  std::mt19937 rng(11);
  std::vector<Tensor> pool;
  for (int i = 0; i < 60; ++i) {
    const float scale = std::pow(10.0f, float(i % 7) - 3);
    tiny::T base = Random({6, 10}, 100 + i, scale);
    pool.push_back(Make(base));
    for (double eps : {1e-5, 3e-3, 9e-3, 2e-2}) {
      tiny::T near = base;
      std::normal_distribution<float> noise(0, 1);
      for (auto& v : near.v) v *= float(1 + eps * noise(rng));
      pool.push_back(Make(near));
    }
  }
  std::vector<const Tensor*> ptrs;
  for (auto& t : pool) ptrs.push_back(&t);
  for (double tol : {1e-4, 1e-3, 1e-2, 1.8e-2}) {
    CandidateIndex index(ptrs, tol);
    for (const Tensor& q : pool) {
      std::vector<int> seen(pool.size(), 0);
      index.ForEachCandidate(q, [&](int32_t id) { seen[id] = 1; });
      for (size_t j = 0; j < pool.size(); ++j)
        if (FingerprintDifference(q, pool[j]) <= tol) {
          EXPECT_TRUE(seen[j]) << "tolerance " << tol << " entry " << j;
        }
    }
  }
}

}  // namespace
}  // namespace magneton::analysis
