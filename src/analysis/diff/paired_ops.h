// Pairing the two sides of a region for comparison: the i-th occurrence of a
// name on one side with the i-th on the other, and the differences found
// between pairs collected once each (root_cause.cpp, arguments.cpp).
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/diff/finding.h"
#include "analysis/diff/root_cause.h"
#include "core/run.h"

namespace magneton::analysis {

// Differences listed per piece of evidence, at most.
inline constexpr size_t kMaxParams = 12;

template <class T, class Name>
std::vector<std::pair<T, T>> PairByName(const std::vector<T>& x, const std::vector<T>& y, Name name) {
  std::map<std::string, std::vector<T>> ys;
  for (const auto& e : y) ys[name(e)].push_back(e);
  std::map<std::string, size_t> used;
  std::vector<std::pair<T, T>> out;
  for (const auto& e : x) {
    auto& bucket = ys[name(e)];
    size_t& i = used[name(e)];
    if (i < bucket.size()) out.emplace_back(e, bucket[i++]);
  }
  return out;
}

// One line per (parameter, values), however often it repeats.
inline void AddDelta(std::vector<ParamDelta>& out, const std::string& subject, const std::string& param,
                     const std::string& va, const std::string& vb) {
  if (va == vb || out.size() >= kMaxParams) return;
  for (const auto& d : out)
    if (d.parameter == param && d.value_a == va && d.value_b == vb) return;
  out.push_back({subject, param, va, vb});
}

// Calls fn(a's op, b's op) for the ops of `wa` and `wb` paired by name.
template <class Fn>
void ForEachPairedOp(const RegionSide& a, const std::vector<int64_t>& wa, const RegionSide& b,
                     const std::vector<int64_t>& wb, Fn fn) {
  using Named = std::pair<std::string, int64_t>;
  auto named = [](const Run& run, const std::vector<int64_t>& ops) {
    std::vector<Named> v;
    for (auto id : ops) v.emplace_back(run.ops[id].name, id);
    return v;
  };
  for (auto [na, nb] : PairByName(named(*a.run, wa), named(*b.run, wb), [](const Named& n) { return n.first; }))
    fn(a.run->ops[na.second], b.run->ops[nb.second]);
}

// Calls fn(op name, input index, a's tensor, b's tensor) for each input of
// the ops the two sides share.
template <class Fn>
void ForEachPairedInput(const RegionSide& a, const std::vector<int64_t>& wa, const RegionSide& b,
                        const std::vector<int64_t>& wb, Fn fn) {
  ForEachPairedOp(a, wa, b, wb, [&](const Op& oa, const Op& ob) {
    for (size_t i = 0; i < std::min(oa.inputs.size(), ob.inputs.size()); ++i) {
      auto ta = oa.inputs[i], tb = ob.inputs[i];
      if (ta < 0 || tb < 0 || ta >= static_cast<int64_t>(a.run->tensors.size()) ||
          tb >= static_cast<int64_t>(b.run->tensors.size()))
        continue;
      fn(oa.name, i, a.run->tensors[ta], b.run->tensors[tb]);
    }
  });
}

}  // namespace magneton::analysis
