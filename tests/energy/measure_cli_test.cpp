// `magneton measure` and `magneton doctor` through the real binary: the
// command's output and exit code pass through untouched, signals reach it,
// and without sensors the report says energy is unavailable and why.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "energy/nvml_api.h"
#include "energy_test_util.h"

namespace magneton::energy {
namespace {

using testing::TempDir;
using testing::TestData;

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs `magneton ARGS` through sh with stdout and stderr to files; returns the exit code.
int Magneton(const std::string& args, const TempDir& dir) {
  std::string cmd = std::string(MAGNETON_BINARY) + " " + args + " >" + (dir / "out") + " 2>" + (dir / "err");
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool HaveNvml() { return nvml::Load().ok(); }

TEST(MeasureCli, PassesOutputAndExitCodeThroughAndSaysEnergyIsUnavailable) {
  TempDir dir;
  // 200k lines on stdout, two on stderr, exit 3.
  int rc = Magneton("measure -- sh -c 'seq 1 200000; echo oops >&2; echo again >&2; exit 3'", dir);
  EXPECT_EQ(rc, 3);
  std::string out = Slurp(dir / "out");
  std::string expect;
  for (int i = 1; i <= 200000; ++i) expect += std::to_string(i) + "\n";
  EXPECT_TRUE(out == expect) << "stdout differs (" << out.size() << " vs " << expect.size() << " bytes)";
  std::string err = Slurp(dir / "err");
  EXPECT_EQ(err.rfind("oops\nagain\n", 0), 0u) << err;  // the command's stderr first, unchanged
  EXPECT_NE(err.find("exit code 3"), std::string::npos) << err;
  if (!HaveNvml()) {
    size_t at = err.find("energy unavailable: ");
    ASSERT_NE(at, std::string::npos) << err;
    EXPECT_NE(err.find("libnvidia-ml.so.1", at), std::string::npos) << "says why";
  }
}

TEST(MeasureCli, DeathBySignalIs128PlusTheSignal) {
  TempDir dir;
  EXPECT_EQ(Magneton("measure -- sh -c 'kill -KILL $$'", dir), 128 + SIGKILL);
  EXPECT_NE(Slurp(dir / "err").find("killed by signal 9"), std::string::npos);
}

TEST(MeasureCli, ForwardsATerminationSignalToTheCommand) {
  TempDir dir;
  pid_t pid = fork();
  if (pid == 0) {
    std::string err = dir / "err";
    freopen(err.c_str(), "w", stderr);
    execl(MAGNETON_BINARY, MAGNETON_BINARY, "measure", "--", "sleep", "30", static_cast<char*>(nullptr));
    _exit(99);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // samplers start, sleep starts
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(WIFEXITED(status)) << "magneton itself must not die of the signal";
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_LT(waited, 10.0);
  EXPECT_NE(Slurp(dir / "err").find("killed by signal 15"), std::string::npos) << Slurp(dir / "err");
}

TEST(MeasureCli, JsonReportToAFile) {
  TempDir dir;
  int rc = Magneton("measure --json -o " + (dir / "report.json") +
                        " --per 4 --unit token --carbon 400 -- sh -c 'echo hi'",
                    dir);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(Slurp(dir / "out"), "hi\n");
  auto j = nlohmann::json::parse(Slurp(dir / "report.json"), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["command"], nlohmann::json::array({"sh", "-c", "echo hi"}));
  EXPECT_EQ(j["per_unit"]["unit"], "token");
  EXPECT_EQ(j["co2e"]["g_per_kwh"], 400.0);
  EXPECT_TRUE(j["cpu"]["estimate"].get<bool>());
  EXPECT_EQ(j["energy_available"].get<bool>(), HaveNvml());
  if (!HaveNvml()) {
    EXPECT_TRUE(j["total_j"].is_null());
    EXPECT_FALSE(j["unavailable_reason"].get<std::string>().empty());
  }
}

TEST(MeasureCli, BadUsageIsOneLineAndExit2) {
  TempDir dir;
  EXPECT_EQ(Magneton("measure sh -c true", dir), 2);
  EXPECT_NE(Slurp(dir / "err").find("put '--' before the command"), std::string::npos);
  EXPECT_EQ(Magneton("measure --per 5 -- true", dir), 2);
  EXPECT_NE(Slurp(dir / "err").find("--unit"), std::string::npos);
  EXPECT_EQ(Magneton("measure --devices x -- true", dir), 2);
  EXPECT_EQ(Magneton("measure --carbon -3 -- true", dir), 2);
  EXPECT_EQ(Magneton("measure -- /nonexistent/cmd", dir), 127);
  EXPECT_NE(Slurp(dir / "err").find("cannot run '/nonexistent/cmd'"), std::string::npos);
}

TEST(DoctorCli, ReportsEveryPartAndExitsZero) {
  TempDir dir;
  // A missing interpreter keeps it quick and shows the frameworks' reason.
  std::string cmd = "MAGNETON_PYTHON=/nonexistent/python " + std::string(MAGNETON_BINARY) + " doctor --powercap-root " +
                    TestData("rapl/powercap") + " --perf-power-root " + TestData("rapl/perf_power") + " >" +
                    (dir / "out") + " 2>&1";
  int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::string out = Slurp(dir / "out");
  for (const char* part : {"GPUs (NVML)", "CUPTI", "RAPL (powercap)", "perf power PMU", "CPU activity", "torch", "JAX"})
    EXPECT_NE(out.find(part), std::string::npos) << part << "\n" << out;
  EXPECT_NE(out.find("3 of 4 zones readable"), std::string::npos) << out;
  EXPECT_NE(out.find("perf_event_open"), std::string::npos) << out;
  EXPECT_NE(out.find("cannot run '/nonexistent/python'"), std::string::npos) << out;
}

}  // namespace
}  // namespace magneton::energy
