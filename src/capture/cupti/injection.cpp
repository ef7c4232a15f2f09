// The C entry points of libmagneton_cupti.so.
//
//   InitializeInjection   called by the CUDA driver during cuInit when
//                         CUDA_INJECTION64_PATH names this library
//   magneton_start/stop   pause and resume recording (magneton.start()/stop())
//   magneton_recording    1 while this process records kernels
//
// NVTX: `magneton record` also points NVTX_INJECTION64_PATH here. NVTX calls
// InitializeInjectionNvtx2 below, which hands over to libcupti's own, so
// CUPTI sees NVTX ranges (the MARKER records and the NVTX callbacks that
// drive --only-ranges). Said explicitly rather than left to dlsym's search
// of dependencies, so a missing hook gets a line on stderr, not silence.
//
// Nothing throws across these functions, and a failure never stops the host.
#include <dlfcn.h>
#include <unistd.h>

#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "capture/cupti/bounded_call.h"
#include "capture/cupti/process_recorder.h"

namespace {

using magneton::capture::ProcessRecorder;

// The one recorder of this process; created at CUDA init, stopped at exit.
std::mutex g_mu;
ProcessRecorder* g_recorder = nullptr;
pid_t g_owner = 0;
// magneton_start/stop called before CUDA initialized: applied at start. -1: none.
std::atomic<int> g_requested{-1};

// Longest the host's exit waits for the recording to close; past it the host
// exits and the run file keeps what its last flush wrote (at most ~1 s lost).
constexpr std::chrono::milliseconds kExitBound{2000};

void StopAtExit() {
  ProcessRecorder* recorder = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    // A forked child inherits the pointer but not the threads; only the owner stops it.
    if (!g_recorder || getpid() != g_owner) return;
    recorder = g_recorder;
  }
  // Stop flushes CUPTI and joins threads; either can wait on a driver already
  // being torn down. Never let that hold the host's exit.
  if (!magneton::capture::RunWithin([recorder] { recorder->Stop(); }, kExitBound))
    std::fprintf(stderr,
                 "magneton: process %d: recording did not close within %lld ms (stuck %s; drain thread: %s); "
                 "exiting without it\n",
                 static_cast<int>(getpid()), static_cast<long long>(kExitBound.count()),
                 magneton::capture::StopStage(), magneton::capture::DrainStage());
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int InitializeInjection(void) {
  try {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_recorder && g_owner == getpid()) return 1;
    std::vector<std::string> problems;
    auto settings = magneton::capture::SettingsFromEnvironment(&problems);
    for (const auto& p : problems) std::fprintf(stderr, "magneton: %s\n", p.c_str());
    int requested = g_requested.load();
    if (requested == 0) settings.tracer.start_paused = true;
    if (requested == 1) settings.tracer.start_paused = false;
    auto recorder = ProcessRecorder::Start(settings);
    if (!recorder) return 1;
    // Released on purpose: it lives until exit and is stopped by the atexit
    // handler, never by a static destructor running after CUDA's teardown.
    g_recorder = recorder.release();
    g_owner = getpid();
    std::atexit(StopAtExit);
  } catch (...) {
    std::fprintf(stderr, "magneton: kernel tracing failed to start; the program runs unrecorded\n");
  }
  return 1;
}

// NVTX's injection entry point; the argument is NVTX's export-table getter.
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(void* get_export_table) {
  using Init = int (*)(void*);
  Dl_info info{};
  void* cupti = nullptr;
  if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) && info.dli_fname)
    cupti = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  auto init = cupti ? reinterpret_cast<Init>(dlsym(cupti, "InitializeInjectionNvtx2")) : nullptr;
  if (!init) {
    std::fprintf(stderr, "magneton: libcupti has no NVTX hook (InitializeInjectionNvtx2); NVTX ranges are not recorded\n");
    return 0;  // NVTX then turns its calls into no-ops
  }
  return init(get_export_table);
}

__attribute__((visibility("default"))) void magneton_start(void) {
  g_requested.store(1);
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_recorder && getpid() == g_owner) g_recorder->SetEnabled(true);
}

__attribute__((visibility("default"))) void magneton_stop(void) {
  g_requested.store(0);
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_recorder && getpid() == g_owner) g_recorder->SetEnabled(false);
}

__attribute__((visibility("default"))) int magneton_recording(void) {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_recorder && getpid() == g_owner && g_recorder->tracing() ? 1 : 0;
}

}  // extern "C"
