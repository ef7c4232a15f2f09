// Run files recorded on the GPU and committed (tests/data/diff/gpu/): a test
// that reads one fails where the file is missing or does not load, since a
// skipped test would hide a moved file. The case suite's own run files (cases/*/runs/)
// are packed and re-recorded with the suite; tests keep their copies here.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/store.h"

namespace magneton::testing {

// tests/data/diff/gpu/, with its trailing slash.
inline std::string GpuRuns() { return std::string(MAGNETON_TEST_DATA) + "/diff/gpu/"; }

// cases/<name>/runs/, with its trailing slash: the suite's own run files,
// packed (runs.tar.xz) and replaced whenever the suite is recorded again.
inline std::string CaseRuns(const std::string& name) {
  return std::string(MAGNETON_TEST_DATA) + "/../../cases/" + name + "/runs/";
}

}  // namespace magneton::testing

#define LOAD_RECORDED_RUN(path, into)                                                                    \
  const std::string into##_path = (path);                                                               \
  ASSERT_TRUE(std::filesystem::exists(into##_path)) << into##_path << " is not in the tree";            \
  auto into = ::magneton::LoadRun(into##_path);                                                         \
  ASSERT_TRUE(into.ok()) << into.error().message
