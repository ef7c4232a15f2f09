// Small pieces every sampler shares: change detection, an interruptible
// sleep for poll threads, and reading one sysfs/procfs file.
#pragma once

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <thread>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/run.h"
#include "core/stats_registry.h"
#include "core/status.h"
#include "energy/sampler.h"

namespace magneton::energy {

// Remembers the last value reported per series: only changes are worth
// storing (a sensor that updates every 100 ms polled every 2 ms repeats itself
// 49 times out of 50). Each index must be updated by one thread only.
class ChangeFilter {
 public:
  explicit ChangeFilter(size_t n = 0) : last_(n, std::nan("")) {}
  void Resize(size_t n) { last_.resize(n, std::nan("")); }
  // True when `value` differs from the last one seen for `index` (the first always does).
  bool Update(size_t index, double value) {
    if (index >= last_.size()) last_.resize(index + 1, std::nan(""));
    double& last = last_[index];
    if (!std::isnan(last) && last == value) return false;
    last = value;
    return true;
  }

 private:
  std::vector<double> last_;
};

// Lets Stop() wake a poll thread at once instead of waiting out its sleep.
class StopSignal {
 public:
  // Sleeps up to `ns`; returns true when stop was requested.
  bool WaitFor(int64_t ns) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::nanoseconds(ns), [&] { return stop_; });
  }
  bool Requested() {
    std::lock_guard lock(mu_);
    return stop_;
  }
  void Request() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
  }
  void Reset() {
    std::lock_guard lock(mu_);
    stop_ = false;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

// A sampler whose readings come from poll loops on their own threads: Start
// runs each of Loops() on a thread, Stop wakes and joins them, then Finish()
// reports final stats. Derived destructors must call Stop().
class PollingSampler : public Sampler {
 public:
  Status Start(SampleSink* sink) final;
  void Stop() final;

 protected:
  virtual std::vector<std::function<void()>> Loops() = 0;
  virtual void Finish() {}
  // Runs `tick` every `period_ns` (start to start) until Stop or until it returns false.
  void Every(int64_t period_ns, const std::function<bool()>& tick);

  SampleSink* sink_ = nullptr;
  StopSignal stop_;

 private:
  std::vector<std::thread> threads_;
};

// Reads a small text file whole, trailing whitespace removed. The error names
// the path and the OS's reason (permission denied is the common one for RAPL).
Result<std::string> ReadSmallFile(const std::string& path);

}  // namespace magneton::energy
