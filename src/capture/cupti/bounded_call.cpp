#include "capture/cupti/bounded_call.h"

#include "core/thread_name.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace magneton::capture {
namespace {

std::atomic<const char*> g_stage{"not started"};
std::atomic<const char*> g_drain_stage{"not started"};

// Shared with the worker, which may outlive the caller's wait.
struct Done {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
};

}  // namespace

bool RunWithin(std::function<void()> fn, std::chrono::milliseconds limit) {
  auto done = std::make_shared<Done>();
  try {
    std::thread([done, fn = std::move(fn)] {
      NameThisThread("bounded");
      try {
        fn();
      } catch (...) {
      }
      std::lock_guard<std::mutex> lock(done->mu);
      done->done = true;
      done->cv.notify_all();
    }).detach();
  } catch (...) {
    return false;  // no thread to be had: skip the work rather than risk blocking
  }
  std::unique_lock<std::mutex> lock(done->mu);
  return done->cv.wait_for(lock, limit, [&] { return done->done; });
}

void NoteStopStage(const char* stage) { g_stage.store(stage); }
const char* StopStage() { return g_stage.load(); }
void NoteDrainStage(const char* stage) { g_drain_stage.store(stage); }
const char* DrainStage() { return g_drain_stage.load(); }

}  // namespace magneton::capture
