// What the injection library does in each process that initializes CUDA:
// opens <base>.<pid>.mgt, starts the energy samplers and the CUPTI tracer,
// and writes samples and records as they come, from threads of its own.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "capture/cupti/record_env.h"
#include "capture/cupti/tracer.h"
#include "core/run.h"
#include "energy/samplers.h"

namespace magneton::capture {

struct RecordSettings {
  std::string output_base = "magneton";
  std::string command;
  env::EnergySources energy;  // which samplers run
  TracerOptions tracer;
};

// Reads the MAGNETON_RECORD_* variables (record_env.h). A malformed value is
// reported in `problems` and its default kept.
RecordSettings SettingsFromEnvironment(std::vector<std::string>* problems);

class ProcessRecorder {
 public:
  // Never fails the host: on error it says so on stderr and returns nullptr
  // (no file could be written) or a recorder without kernel tracing.
  static std::unique_ptr<ProcessRecorder> Start(const RecordSettings& settings);
  ~ProcessRecorder();

  void SetEnabled(bool enabled);
  bool tracing() const { return tracer_ != nullptr; }
  // Final flush and close; idempotent.
  void Stop();

 private:
  ProcessRecorder() = default;
  void WriterLoop();

  RunInfo info_;
  std::string path_;
  std::unique_ptr<RunWriter> writer_;
  std::mutex writer_mu_;
  std::vector<Device> devices_;
  std::vector<std::unique_ptr<energy::Sampler>> samplers_;
  std::unique_ptr<energy::SampleBuffer> samples_;
  std::unique_ptr<CuptiTracer> tracer_;
  std::thread thread_;
  std::mutex loop_mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<bool> stopped_{false};
};

}  // namespace magneton::capture
