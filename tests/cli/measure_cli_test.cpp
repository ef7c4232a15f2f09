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
#include "run_magneton.h"

namespace magneton::testing {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string TestData(const std::string& rel) { return std::string(MAGNETON_TEST_DATA) + "/" + rel; }

bool HaveNvml() { return energy::nvml::Load().ok(); }

TEST(MeasureCli, PassesOutputAndExitCodeThroughAndSaysEnergyIsUnavailable) {
  // 200k lines on stdout, two on stderr, exit 3.
  auto r = RunMagneton({"measure", "--", "sh", "-c", "seq 1 200000; echo oops >&2; echo again >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  const std::string& out = r.out;
  std::string expect;
  for (int i = 1; i <= 200000; ++i) expect += std::to_string(i) + "\n";
  EXPECT_TRUE(out == expect) << "stdout differs (" << out.size() << " vs " << expect.size() << " bytes)";
  const std::string& err = r.err;
  EXPECT_EQ(err.rfind("oops\nagain\n", 0), 0u) << err;  // the command's stderr first, unchanged
  EXPECT_NE(err.find("exit code 3"), std::string::npos) << err;
  if (!HaveNvml()) {
    size_t at = err.find("energy unavailable: ");
    ASSERT_NE(at, std::string::npos) << err;
    EXPECT_NE(err.find("libnvidia-ml.so.1", at), std::string::npos) << "says why";
  }
}

TEST(MeasureCli, DeathBySignalIs128PlusTheSignal) {
  auto r = RunMagneton({"measure", "--", "sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
  EXPECT_NE(r.err.find("killed by signal 9"), std::string::npos);
}

// Started in the background to be signalled, so not through RunMagneton.
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
  auto r = RunMagneton({"measure", "--json", "-o", dir / "report.json", "--per", "4", "--unit", "token", "--carbon",
                        "400", "--", "sh", "-c", "echo hi"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "hi\n");
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
  auto no_dashes = RunMagneton({"measure", "sh", "-c", "true"});
  EXPECT_EQ(no_dashes.exit_code, 2);
  EXPECT_NE(no_dashes.err.find("put '--' before the command"), std::string::npos);
  auto per = RunMagneton({"measure", "--per", "5", "--", "true"});
  EXPECT_EQ(per.exit_code, 2);
  EXPECT_NE(per.err.find("--unit"), std::string::npos);
  EXPECT_EQ(RunMagneton({"measure", "--devices", "x", "--", "true"}).exit_code, 2);
  EXPECT_EQ(RunMagneton({"measure", "--carbon", "-3", "--", "true"}).exit_code, 2);
  auto missing = RunMagneton({"measure", "--", "/nonexistent/cmd"});
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.err.find("cannot run '/nonexistent/cmd'"), std::string::npos);
}

TEST(DoctorCli, ReportsEveryPartAndExitsZero) {
  // A missing interpreter keeps it quick and shows the frameworks' reason.
  auto r = RunMagneton({"doctor", "--powercap-root", TestData("rapl/powercap"), "--perf-power-root",
                        TestData("rapl/perf_power")},
                       {"MAGNETON_PYTHON=/nonexistent/python"});
  EXPECT_EQ(r.exit_code, 0);
  std::string out = r.out + r.err;
  for (const char* part : {"GPUs (NVML)", "CUPTI", "RAPL (powercap)", "perf power PMU", "CPU activity", "torch", "JAX"})
    EXPECT_NE(out.find(part), std::string::npos) << part << "\n" << out;
  EXPECT_NE(out.find("3 of 4 zones readable"), std::string::npos) << out;
  EXPECT_NE(out.find("perf_event_open"), std::string::npos) << out;
  EXPECT_NE(out.find("cannot run '/nonexistent/python'"), std::string::npos) << out;
}

}  // namespace
}  // namespace magneton::testing
