#include "energy/procfs_sampler.h"

#include <dirent.h>
#include <unistd.h>

#include <charconv>
#include <map>
#include <thread>

#include "energy/clock.h"
#include "energy/sampler_util.h"

namespace magneton::energy {

Result<ProcStat> ParseProcStat(std::string_view text) {
  size_t open = text.find('('), close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return MakeError(ErrorCode::kCorrupt, "stat: no '(comm)'");
  ProcStat s;
  s.comm = std::string(text.substr(open + 1, close - open - 1));
  // After ')': field 3 (state) onward; utime is field 14, num_threads field 20.
  std::string_view rest = text.substr(close + 1);
  int64_t field[21] = {};
  int index = 3;
  size_t pos = 0;
  while (index <= 20 && pos < rest.size()) {
    while (pos < rest.size() && rest[pos] == ' ') ++pos;
    size_t end = rest.find(' ', pos);
    if (end == std::string_view::npos) end = rest.size();
    if (index >= 4) {
      auto [p, ec] = std::from_chars(rest.data() + pos, rest.data() + end, field[index]);
      if (ec != std::errc()) return MakeError(ErrorCode::kCorrupt, "stat: field " + std::to_string(index) + " is not a number");
    }
    ++index;
    pos = end;
  }
  if (index <= 20) return MakeError(ErrorCode::kCorrupt, "stat: too few fields");
  s.utime_ticks = field[14];
  s.stime_ticks = field[15];
  s.cutime_ticks = field[16];
  s.cstime_ticks = field[17];
  s.threads = field[20];
  return s;
}

namespace {

std::string Sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_');
  return out;
}

std::string CpuModel() {
  auto text = ReadSmallFile("/proc/cpuinfo");
  if (!text.ok()) return "CPU";
  size_t at = text->find("model name");
  if (at == std::string::npos) return "CPU";
  size_t colon = text->find(':', at), nl = text->find('\n', at);
  if (colon == std::string::npos || colon > nl) return "CPU";
  std::string model = text->substr(colon + 1, nl - colon - 1);
  model.erase(0, model.find_first_not_of(' '));
  return model;
}

class ProcfsSampler : public PollingSampler {
 public:
  explicit ProcfsSampler(const SamplerOptions& options) : options_(options) {
    pid_ = options.pid > 0 ? options.pid : getpid();
    ticks_per_s_ = static_cast<double>(sysconf(_SC_CLK_TCK));
    Device d;
    d.kind = "cpu";
    d.ordinal = -1;  // all of the host's CPUs, not one package
    d.name = CpuModel() + " (" + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " CPUs)";
    devices_.push_back(d);
    series_ = {SeriesSpec{0, "cpu.time", "s", "procfs"}, SeriesSpec{0, "cpu.util", "%", "procfs"},
               SeriesSpec{0, "energy.estimate", "J", "estimate"}};
  }
  ~ProcfsSampler() override { Stop(); }

  std::string name() const override { return "procfs"; }
  std::vector<Device> devices() const override { return devices_; }
  std::vector<SeriesSpec> series() const override { return series_; }

  std::vector<std::function<void()>> Loops() override { return {[this] { Loop(); }}; }

 private:
  void Loop() {
    ChangeFilter filter;
    std::string dir = "/proc/" + std::to_string(pid_);
    double last_cpu = -1;
    int64_t last_t = 0;
    Every(int64_t(options_.procfs_interval_us) * 1000, [&] {
      int64_t t = NowNs();
      auto text = ReadSmallFile(dir + "/stat");
      if (!text.ok()) return false;  // the process has gone: nothing more to watch
      auto st = ParseProcStat(*text);
      if (!st.ok()) return false;
      double cpu = (st->utime_ticks + st->stime_ticks + st->cutime_ticks + st->cstime_ticks) / ticks_per_s_;
      if (filter.Update(0, cpu)) sink_->OnSample(0, t, cpu);
      if (filter.Update(2, cpu * options_.cpu_watts_per_core))
        sink_->OnSample(2, t, cpu * options_.cpu_watts_per_core);
      if (last_cpu >= 0 && t > last_t) {
        double util = 100.0 * (cpu - last_cpu) / ((t - last_t) / 1e9);
        if (filter.Update(1, util)) sink_->OnSample(1, t, util);
      }
      last_cpu = cpu;
      last_t = t;
      if (options_.per_thread) SampleThreads(dir, t, filter);
      return true;
    });
  }

  // One series per thread that has used CPU time, announced when first busy.
  // schedstat's run time is in ns; stat's ticks (10 ms) are the fallback.
  void SampleThreads(const std::string& dir, int64_t t, ChangeFilter& filter) {
    DIR* d = opendir((dir + "/task").c_str());
    if (!d) return;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::string task = dir + "/task/" + e->d_name;
      double seconds = -1;
      std::string comm;
      if (auto sched = ReadSmallFile(task + "/schedstat"); sched.ok()) {
        int64_t ns = 0;
        auto [p, ec] = std::from_chars(sched->data(), sched->data() + sched->size(), ns);
        if (ec == std::errc()) seconds = ns / 1e9;
      }
      auto text = ReadSmallFile(task + "/stat");
      if (!text.ok()) continue;  // the thread ended
      auto st = ParseProcStat(*text);
      if (!st.ok()) continue;
      if (seconds < 0) seconds = (st->utime_ticks + st->stime_ticks) / ticks_per_s_;
      if (seconds <= 0) continue;
      std::string tid = e->d_name;
      auto it = thread_series_.find(tid);
      int index;
      if (it == thread_series_.end()) {
        index = static_cast<int>(series_.size());
        series_.push_back(SeriesSpec{0, "cpu.time.thread." + tid + "." + Sanitize(st->comm), "s", "procfs"});
        thread_series_[tid] = index;
        sink_->OnSeries(index, series_.back());
      } else {
        index = it->second;
      }
      if (filter.Update(static_cast<size_t>(index), seconds)) sink_->OnSample(index, t, seconds);
    }
    closedir(d);
  }

  SamplerOptions options_;
  int64_t pid_ = 0;
  double ticks_per_s_ = 100;
  std::vector<Device> devices_;
  std::vector<SeriesSpec> series_;
  std::map<std::string, int> thread_series_;
};

}  // namespace

Result<std::unique_ptr<Sampler>> OpenProcfsSampler(const SamplerOptions& options) {
  int64_t pid = options.pid > 0 ? options.pid : getpid();
  auto text = ReadSmallFile("/proc/" + std::to_string(pid) + "/stat");
  if (!text.ok()) return MakeError(ErrorCode::kUnavailable, "procfs: " + text.error().message);
  if (auto st = ParseProcStat(*text); !st.ok())
    return MakeError(ErrorCode::kUnavailable, "procfs: /proc/" + std::to_string(pid) + "/" + st.error().message);
  return std::unique_ptr<Sampler>(std::make_unique<ProcfsSampler>(options));
}

}  // namespace magneton::energy
