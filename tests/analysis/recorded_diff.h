// Real recordings under tests/data/ diffed as `magneton diff` diffs them,
// with the repository's rules. Header-only; for tests of the diff on
// committed run files.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analysis/diff/diff.h"
#include "analysis/diff/pass_split.h"
#include "analysis/diff/rules.h"
#include "core/store.h"

namespace magneton::analysis::recorded {

// tests/data/<path>.
inline magneton::Run Load(const std::string& path) {
  auto r = LoadRun(std::string(MAGNETON_TEST_DATA) + "/" + path);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? std::move(*r) : magneton::Run{};
}

// The diff's options as `magneton diff` sets them by default, with the repository's rules.
inline DiffOptions Options() {
  DiffOptions o;
  auto rules = LoadRulesDir(std::string(MAGNETON_TEST_DATA) + "/../../rules");
  EXPECT_TRUE(rules.ok());
  if (rules.ok()) o.rules = *rules;
  return o;
}

inline DiffReport Diff(const magneton::Run& a, const magneton::Run& b, const magneton::Run* ma = nullptr,
                       const magneton::Run* mb = nullptr, const DiffOptions& o = Options()) {
  auto r = DiffRuns(a, b, ma, mb, o);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? std::move(*r) : DiffReport{};
}

// Two files of both passes (recorded in one go, as `python -m magneton
// record` writes them) under tests/data/, split and diffed as `magneton diff
// a.mgt b.mgt` does.
inline Result<DiffReport> DiffBothPasses(const std::string& a_path, const std::string& b_path) {
  auto a = LoadRun(std::string(MAGNETON_TEST_DATA) + "/" + a_path);
  auto b = LoadRun(std::string(MAGNETON_TEST_DATA) + "/" + b_path);
  if (!a.ok()) return a.error();
  if (!b.ok()) return b.error();
  auto pa = SplitAtMeasuredPass(*a), pb = SplitAtMeasuredPass(*b);
  if (!pa || !pb) return Error{ErrorCode::kCorrupt, "a file lacks one of the passes"};
  return DiffRuns(pa->recorded, pb->recorded, &pa->measured, &pb->measured, Options());
}

inline bool Noted(const DiffReport& r, const std::string& what) {
  return std::any_of(r.notes.begin(), r.notes.end(),
                     [&](const std::string& n) { return n.find(what) != std::string::npos; });
}

}  // namespace magneton::analysis::recorded
