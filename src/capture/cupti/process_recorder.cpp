#include "capture/cupti/process_recorder.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <fmt/core.h>

#include "capture/cupti/bounded_call.h"
#include "capture/cupti/record_env.h"
#include "core/stats_registry.h"
#include "core/store.h"
#include "core/thread_name.h"
#include "energy/clock.h"

namespace magneton::capture {
namespace {

constexpr auto kWriteEvery = std::chrono::milliseconds(200);

const char* Get(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

bool Flag(const char* name, bool fallback) {
  const char* v = Get(name);
  if (!v) return fallback;
  return std::string_view(v) != "0";
}

// Seconds -> ns; false when the text is not a non-negative number.
bool Seconds(const char* text, int64_t* ns) {
  char* end = nullptr;
  errno = 0;
  double s = std::strtod(text, &end);
  if (errno || end == text || *end || !std::isfinite(s) || s < 0 || s > 1e9) return false;
  *ns = static_cast<int64_t>(s * 1e9);
  return true;
}

std::string HostName() {
  char buf[HOST_NAME_MAX + 1] = {};
  return gethostname(buf, sizeof(buf)) == 0 ? buf : "";
}

// This process's own command line: under `magneton record` a child process
// (a worker) runs something other than the recorded command.
std::string OwnCommandLine() {
  std::FILE* f = std::fopen("/proc/self/cmdline", "rb");
  if (!f) return {};
  std::string s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) s.append(buf, n);
  std::fclose(f);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  for (char& c : s)
    if (c == '\0') c = ' ';
  return s;
}

void Say(const std::string& line) { std::fprintf(stderr, "magneton: %s\n", line.c_str()); }

}  // namespace

RecordSettings SettingsFromEnvironment(std::vector<std::string>* problems) {
  RecordSettings s;
  if (const char* v = Get(env::kOutput)) s.output_base = v;
  if (const char* v = Get(env::kCommand)) s.command = v;
  if (const char* v = Get(env::kEnergy); v && !env::ParseEnergySources(v, &s.energy))
    problems->push_back(fmt::format("{}={}: expected all, none or a list of nvml, rapl, procfs; all used", env::kEnergy, v));
  TracerOptions& t = s.tracer;
  t.stacks = Flag(env::kStacks, false);
  t.nvtx = Flag(env::kNvtx, true);
  t.start_paused = Flag(env::kStartPaused, false);
  if (const char* v = Get(env::kOnlyRanges)) t.only_ranges = v;
  if (const char* v = Get(env::kApi); v && !ParseApiCalls(v, &t.api_calls))
    problems->push_back(fmt::format("{}={}: expected launches, waits, all or none; launches used", env::kApi, v));
  for (auto [name, field] : {std::pair{env::kDelay, &t.delay_ns}, std::pair{env::kDuration, &t.duration_ns}}) {
    const char* v = Get(name);
    if (v && !Seconds(v, field)) problems->push_back(fmt::format("{}={}: not a number of seconds; ignored", name, v));
  }
  if (const char* v = Get(env::kDump)) t.dump_dir = v;
  if (const char* v = Get(env::kDumpMaxMb)) {
    char* end = nullptr;
    long mb = std::strtol(v, &end, 10);
    if (end == v || *end || mb <= 0) problems->push_back(fmt::format("{}={}: not a positive integer; ignored", env::kDumpMaxMb, v));
    else t.dump_max_bytes = static_cast<int64_t>(mb) << 20;
  }
  return s;
}

std::unique_ptr<ProcessRecorder> ProcessRecorder::Start(const RecordSettings& settings) {
  std::unique_ptr<ProcessRecorder> r(new ProcessRecorder());
  r->info_.command = OwnCommandLine();
  if (r->info_.command.empty()) r->info_.command = settings.command;
  if (!settings.command.empty()) r->info_.extra["recorded_command"] = settings.command;
  r->info_.host = HostName();
  r->info_.pid = getpid();
  r->info_.start_ns = energy::NowNs();
  r->info_.magneton_version = MAGNETON_VERSION;
  r->info_.extra["capture"] = "cupti-injection";
  r->path_ = fmt::format("{}.{}.mgt", settings.output_base, getpid());
  auto writer = RunWriter::Create(r->path_, r->info_);
  if (!writer.ok()) {
    Say(fmt::format("not recording process {}: {}", getpid(), writer.error().message));
    return nullptr;
  }
  r->writer_ = std::move(writer.value());
  RunWriter* w = r->writer_.get();
  std::vector<Stat> problems;

  // Energy first: its GPUs (with uuids) head the device table the tracer then matches.
  r->samples_ = std::make_unique<energy::SampleBuffer>();
  if (settings.energy.any()) {
    energy::SamplerOptions options;
    options.nvml = settings.energy.nvml;
    options.rapl = settings.energy.rapl;
    options.procfs = settings.energy.procfs;
    r->samplers_ = energy::OpenSamplers(options, &problems);
    for (auto it = r->samplers_.begin(); it != r->samplers_.end();) {
      auto sink = r->samples_->Attach(**it, w, &r->devices_);
      Status st = sink.ok() ? (*it)->Start(*sink) : sink.status();
      if (!st.ok()) {
        problems.push_back(MakeStat(stats::kSamplerFailed, 1, fmt::format("{}: {}", (*it)->name(), st.message())));
        it = r->samplers_.erase(it);
      } else {
        ++it;
      }
    }
  }

  TracerOptions tracer = settings.tracer;
  tracer.devices = &r->devices_;
  tracer.writer_mutex = &r->writer_mu_;
  auto t = CuptiTracer::Start(w, tracer);
  if (t.ok()) {
    r->tracer_ = std::move(t.value());
  } else {
    Say(fmt::format("process {}: {}", getpid(), t.error().message));
    problems.push_back(MakeStat(stats::kCuptiUnavailable, 1, t.error().message));
  }
  {
    std::lock_guard<std::mutex> lock(r->writer_mu_);
    for (const Stat& s : problems) (void)w->Add(s);
    (void)w->Flush();
  }
  r->thread_ = std::thread([p = r.get()] {
    NameThisThread("rec-writer");
    p->WriterLoop();
  });
  return r;
}

ProcessRecorder::~ProcessRecorder() { Stop(); }

void ProcessRecorder::SetEnabled(bool enabled) {
  if (tracer_) tracer_->SetEnabled(enabled);
}

void ProcessRecorder::WriterLoop() {
  auto last_flush = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(loop_mu_);
  while (!stopping_) {
    wake_.wait_for(lock, kWriteEvery);
    if (stopping_) break;
    lock.unlock();
    {
      std::lock_guard<std::mutex> w(writer_mu_);
      Status st = samples_->Drain(writer_.get());
      // At least once a second the rows reach the file, so a killed program loses at most that.
      if (st.ok() && std::chrono::steady_clock::now() - last_flush >= std::chrono::seconds(1)) {
        st = writer_->Flush();
        last_flush = std::chrono::steady_clock::now();
      }
      if (!st.ok()) Say(fmt::format("process {}: writing {}: {}", getpid(), path_, st.message()));
    }
    lock.lock();
  }
}

void ProcessRecorder::Stop() {
  if (stopped_.exchange(true) || !writer_) return;  // no writer: Start gave up before anything ran
  Status first;
  auto keep = [&](Status st) {
    if (!st.ok() && first.ok()) first = st;
  };
  if (tracer_) keep(tracer_->Stop());
  NoteStopStage("stopping energy samplers");
  for (auto& s : samplers_) s->Stop();
  {
    std::lock_guard<std::mutex> lock(loop_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  NoteStopStage("joining the run writer thread");
  if (thread_.joinable()) thread_.join();
  NoteStopStage("closing the run file");
  std::lock_guard<std::mutex> lock(writer_mu_);
  keep(samples_->Drain(writer_.get()));
  info_.end_ns = energy::NowNs();
  keep(writer_->SetInfo(info_));
  keep(writer_->Close());
  NoteStopStage("done");
  if (!first.ok()) Say(fmt::format("process {}: {}: {}", getpid(), path_, first.message()));
}

}  // namespace magneton::capture
