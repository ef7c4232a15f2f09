// The C entry points of libmagneton_cupti.so.
//
//   InitializeInjection   called by the CUDA driver during cuInit when
//                         CUDA_INJECTION64_PATH names this library
//   magneton_start/stop   pause and resume recording (magneton.start()/stop())
//   magneton_recording    1 while this process records kernels
//
// NVTX: `magneton record` also points NVTX_INJECTION64_PATH here. NVTX looks
// up InitializeInjectionNvtx2 in this library and, not finding it here, in
// the libraries it depends on: libcupti provides it, so CUPTI sees NVTX.
//
// Nothing throws across these functions, and a failure never stops the host.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "capture/cupti/process_recorder.h"

namespace {

using magneton::capture::ProcessRecorder;

// The one recorder of this process; created at CUDA init, stopped at exit.
std::mutex g_mu;
ProcessRecorder* g_recorder = nullptr;
pid_t g_owner = 0;
// magneton_start/stop called before CUDA initialized: applied at start. -1: none.
std::atomic<int> g_requested{-1};

void StopAtExit() {
  std::lock_guard<std::mutex> lock(g_mu);
  // A forked child inherits the pointer but not the threads; only the owner stops it.
  if (!g_recorder || getpid() != g_owner) return;
  try {
    g_recorder->Stop();
  } catch (...) {
  }
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
