// libmagneton_cupti.so as the CUDA driver sees it: it loads, exports its C
// entry points, hands NVTX to CUPTI, and where CUPTI cannot trace it still
// writes a run that says why, leaving the host process alone.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include <csignal>

#include "capture/cupti/record_env.h"
#include "energy/clock.h"
#include "records.h"

namespace magneton::testing {
namespace {

const char* kLib = MAGNETON_CUPTI_LIB;

TEST(InjectionLibrary, LoadsAndExportsItsEntryPoints) {
  // Never unloaded, like the CUDA driver does: unloading would take libcupti
  // with it, leaking the block its static libstdc++ allocates at load
  // (LeakSanitizer fails the test on it).
  void* h = dlopen(kLib, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  ASSERT_NE(h, nullptr) << dlerror();
  for (const char* sym : {"InitializeInjection", "magneton_start", "magneton_stop", "magneton_recording"})
    EXPECT_NE(dlsym(h, sym), nullptr) << sym;
  // NVTX_INJECTION64_PATH points here; our own InitializeInjectionNvtx2 hands over to CUPTI's.
  void* nvtx = dlsym(h, "InitializeInjectionNvtx2");
  ASSERT_NE(nvtx, nullptr);
  Dl_info info{};
  ASSERT_NE(dladdr(nvtx, &info), 0);
  EXPECT_NE(std::string(info.dli_fname).find("libmagneton_cupti"), std::string::npos) << info.dli_fname;
  // Nothing else leaks out to clash with the host's own copies.
  EXPECT_EQ(dlsym(h, "sqlite3_open"), dlsym(RTLD_DEFAULT, "sqlite3_open"));
  auto recording = reinterpret_cast<int (*)()>(dlsym(h, "magneton_recording"));
  EXPECT_EQ(recording(), 0);  // CUDA never initialized here
  dlclose(h);
}

// Runs InitializeInjection in a child the way cuInit would, then exits it
// normally, or, with kill_after_s, lets it record that long and kills it.
struct ChildRun {
  int exit_code = -1;
  std::string err;
  int64_t ended_ns = 0;  // when the parent saw it end (CLOCK_MONOTONIC)
};

ChildRun InjectInChild(const TempDir& dir, const std::string& base, const char* energy = "0",
                       double kill_after_s = 0) {
  std::string err_path = dir / "child.err";
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    setenv(capture::env::kOutput, base.c_str(), 1);
    setenv(capture::env::kEnergy, energy, 1);
    void* h = dlopen(kLib, RTLD_NOW | RTLD_LOCAL);
    if (!h) _exit(90);
    auto init = reinterpret_cast<int (*)()>(dlsym(h, "InitializeInjection"));
    auto start = reinterpret_cast<void (*)()>(dlsym(h, "magneton_start"));
    if (init() != 1) _exit(91);
    start();
    if (kill_after_s > 0) {
      usleep(static_cast<useconds_t>(kill_after_s * 1e6));
      raise(SIGKILL);  // no atexit handler, no flush: what the file holds now is what survives
    }
    std::exit(7);  // a normal exit runs the atexit handler that closes the run
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ChildRun r;
  r.ended_ns = energy::NowNs();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = ReadBytes(err_path);
  return r;
}

TEST(InjectionLibrary, WithoutAGpuItWritesARunThatSaysWhy) {
  if (std::filesystem::exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has an NVIDIA driver";
  TempDir dir;
  ChildRun child = InjectInChild(dir, dir / "inj");
  EXPECT_EQ(child.exit_code, 7);  // the host's own exit code
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    if (e.path().extension() == ".mgt") files.push_back(e.path().string());
  ASSERT_EQ(files.size(), 1u) << child.err;
  EXPECT_NE(files[0].find("inj."), std::string::npos);
  auto run = LoadRun(files[0]);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_GT(run->info.end_ns, run->info.start_ns);  // closed at exit
  EXPECT_EQ(run->info.extra.at("capture"), "cupti-injection");
  EXPECT_NE(run->info.command.find("capture_tests"), std::string::npos);  // this process's own command line
  const Stat* why = FindStat(*run, "cupti_unavailable");
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(why->severity, "error");
  // Exactly one line on stderr, naming the process.
  EXPECT_EQ(std::count(child.err.begin(), child.err.end(), '\n'), 1) << child.err;
  EXPECT_NE(child.err.find("kernel tracing unavailable"), std::string::npos) << child.err;
}

TEST(InjectionLibrary, KilledMidRecordingItKeepsAllButItsLastSecond) {
  if (std::filesystem::exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has an NVIDIA driver";
  TempDir dir;
  ChildRun child = InjectInChild(dir, dir / "killed", "procfs", 3.0);
  EXPECT_EQ(child.exit_code, 128 + SIGKILL);
  std::string file;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    if (e.path().extension() == ".mgt") file = e.path().string();
  ASSERT_FALSE(file.empty()) << child.err;
  auto run = LoadRun(file);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_NE(FindStat(*run, "store.incomplete"), nullptr);
  // The CPU-time samples (every 100 ms) reached the file up to about a second before the kill.
  int64_t last = 0, points = 0;
  for (const auto& s : run->series)
    if (!s.t_ns.empty()) last = std::max(last, s.t_ns.back()), points += static_cast<int64_t>(s.t_ns.size());
  EXPECT_GT(points, 5);
  EXPECT_LT(child.ended_ns - last, 2'000'000'000) << (child.ended_ns - last) * 1e-9 << " s lost";
}

TEST(InjectionLibrary, UnwritableOutputLeavesTheHostRunning) {
  TempDir dir;
  ChildRun child = InjectInChild(dir, "/nonexistent/dir/run");
  EXPECT_EQ(child.exit_code, 7);
  EXPECT_NE(child.err.find("not recording process"), std::string::npos) << child.err;
}

}  // namespace
}  // namespace magneton::testing
