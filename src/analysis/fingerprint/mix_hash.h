// splitmix64's finalizer: a fast bijective mix of 64 bits, for hash keys
// built from several features and for per-class random values.
#pragma once

#include <cstdint>

namespace magneton::analysis {

inline uint64_t MixHash(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace magneton::analysis
