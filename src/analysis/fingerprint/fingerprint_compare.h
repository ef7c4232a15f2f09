// Tensor equivalence from stored fingerprints (docs/matching.md, "Tensor
// equivalence"). Two tensors are equivalent when their fingerprints agree
// within a relative tolerance: a permute, reshape or contiguous copy changes
// none of the compared features, a cast or a TF32 matmul changes them a little.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "core/fingerprint_stats.h"
#include "core/run.h"

namespace magneton::analysis {

// Values of different classes are never equivalent; within a class a cast
// (float32 -> bfloat16, int32 -> int64) keeps the values close.
enum class DtypeClass : uint8_t { kFloat, kInt, kBool, kOther };
DtypeClass ClassifyDtype(const std::string& dtype);

inline constexpr double kNotComparable = std::numeric_limits<double>::infinity();

// A fingerprint that can tell tensors apart: at least two values that are not
// all equal. Constants (zeros, masks of ones) match far too much to serve as
// evidence; a scalar does only where it is computed from data (the matcher's
// data scalars, match/tensor_classes.cpp).
bool Informative(const Tensor& t);

// A mask: every sampled value is the tensor's min or its max (a causal
// mask of 0 and -inf, a boolean). It says where, not what.
bool TwoValued(const Tensor& t);

// The largest relative difference over the fingerprint features:
//  - each statistic of ForEachStatistic (core/fingerprint_stats.h) against its scale;
//  - when both shapes are the same dims up to order (a permutation; size-1
//    dims ignored), the unfolding spectra matched as a multiset by dim size.
// 0 for identical values in any layout; kNotComparable when either
// fingerprint is missing or numel or dtype class differ.
double FingerprintDifference(const Tensor& a, const Tensor& b);

// FingerprintDifference(a, b) <= tolerance, decided with early exits.
bool FingerprintsWithin(const Tensor& a, const Tensor& b, double tolerance);

}  // namespace magneton::analysis
