// `magneton record` on a machine with no GPU: the command runs as if Magneton
// were not there, and Magneton says why nothing was recorded.
#include <gtest/gtest.h>

#include <filesystem>

#include "capture/cupti/record_env.h"
#include "run_magneton.h"

namespace magneton::testing {
namespace {

TEST(RecordCommand, PassesTheExitCodeThrough) {
  TempDir dir;
  EXPECT_EQ(RunMagneton({"record", "-o", dir / "r", "--", "true"}).exit_code, 0);
  EXPECT_EQ(RunMagneton({"record", "-o", dir / "r", "--", "sh", "-c", "exit 3"}).exit_code, 3);
  // Killed by a signal: 128 + the signal, like a shell.
  EXPECT_EQ(RunMagneton({"record", "-o", dir / "r", "--", "sh", "-c", "kill -TERM $$"}).exit_code, 128 + 15);
}

TEST(RecordCommand, LeavesTheProgramsOutputAlone) {
  TempDir dir;
  auto r = RunMagneton({"record", "-o", dir / "r", "--", "sh", "-c", "echo out; echo err >&2"});
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err.rfind("err\n", 0), 0u) << r.err;  // the program's stderr first, Magneton's lines after
}

TEST(RecordCommand, SaysWhyNoKernelsWereRecorded) {
  if (std::filesystem::exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has an NVIDIA driver";
  TempDir dir;
  auto r = RunMagneton({"record", "-o", dir / "r", "--", "true"});
  EXPECT_NE(r.err.find("no kernels recorded"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no NVIDIA driver"), std::string::npos) << r.err;
}

TEST(RecordCommand, BadUsageIsExitTwoWithOneLine) {
  TempDir dir;
  for (const std::string args : {"record true", "record --delay -1 -- true", "record --duration 0 -- true",
                                 "record -o /nonexistent/dir/r -- true", "record --only-ranges '' -- true",
                                 "record --only-ranges x: --no-nvtx -- true",
                                 "record --energy gpu -- true", "record --energy nvml,,rapl -- true"}) {
    auto r = RunMagnetonShell(kMagneton + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err.rfind("magneton: ", 0), 0u) << args << ": " << r.err;
  }
}

TEST(RecordCommand, EnergySourcesAreAllNoneOrAList) {
  capture::env::EnergySources s;
  ASSERT_TRUE(capture::env::ParseEnergySources("nvml,procfs", &s));
  EXPECT_TRUE(s.nvml && s.procfs && !s.rapl);
  ASSERT_TRUE(capture::env::ParseEnergySources("none", &s));
  EXPECT_FALSE(s.any());
  ASSERT_TRUE(capture::env::ParseEnergySources("all", &s));
  EXPECT_TRUE(s.nvml && s.rapl && s.procfs);
  for (const char* bad : {"", ",", "nvml,gpu", "NVML"}) EXPECT_FALSE(capture::env::ParseEnergySources(bad, &s)) << bad;
  EXPECT_TRUE(s.nvml && s.rapl && s.procfs);  // a refused list leaves the choice as it was
}

TEST(RecordCommand, CommandThatCannotRun) {
  TempDir dir;
  auto r = RunMagneton({"record", "-o", dir / "r", "--", "/nonexistent/program"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err.find("/nonexistent/program"), std::string::npos);
}

TEST(RecordCommand, RefusesToStackOnAnotherInjectedTool) {
  TempDir dir;
  auto r = RunMagneton({"record", "--", "true"}, {"CUDA_INJECTION64_PATH=/opt/other.so"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("CUDA_INJECTION64_PATH"), std::string::npos);
}

TEST(RecordCommand, MissingInjectionLibraryIsExplained) {
  TempDir dir;
  auto r = RunMagneton({"record", "-o", dir / "r", "--", "sh", "-c", "exit 4"}, {"MAGNETON_CUPTI_LIB=" + dir / "missing.so"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("missing.so cannot be loaded"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace magneton::testing
