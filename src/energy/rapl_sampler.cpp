#include "energy/rapl_sampler.h"

#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <thread>

#include "energy/clock.h"
#include "energy/sampler_util.h"

namespace magneton::energy {

double WrappingCounter::Update(double raw) {
  if (first_) {
    first_ = false;
    last_raw_ = raw;
    return total_;
  }
  double delta = raw - last_raw_;
  if (delta < 0 && range_ > 0) {
    delta += range_;
    ++wraps_;
  }
  if (delta < 0) delta = 0;  // a non-wrapping counter never steps back; ignore noise
  last_raw_ = raw;
  total_ += delta;
  return total_;
}

namespace {

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') names.emplace_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// "intel-rapl:0:2" -> {0, 2}; empty when the name is not a zone.
std::vector<int> ZoneIndices(const std::string& entry) {
  const std::string prefix = "intel-rapl:";
  if (entry.rfind(prefix, 0) != 0) return {};
  std::vector<int> out;
  size_t pos = prefix.size();
  while (pos < entry.size()) {
    size_t colon = entry.find(':', pos);
    std::string part = entry.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
    if (part.empty() || !std::all_of(part.begin(), part.end(), ::isdigit)) return {};
    out.push_back(std::stoi(part));
    if (colon == std::string::npos) break;
    pos = colon + 1;
  }
  return out;
}

int PackageOf(const std::string& name, int fallback) {
  // "package-1" -> 1
  if (name.rfind("package-", 0) == 0) {
    std::string n = name.substr(8);
    if (!n.empty() && std::all_of(n.begin(), n.end(), ::isdigit)) return std::stoi(n);
  }
  return fallback;
}

// One counter the poll thread reads: raw value, joules per raw unit, wrap range.
struct Counter {
  std::function<Result<double>()> read;
  double joules_per_unit = 1;
  WrappingCounter unwrap;
  int series = 0;
};

// The stats a counter sampler keeps, named after it ("rapl_counter_wraps").
struct CounterStats {
  const StatDef& wraps;
  const StatDef& read_errors;
};
constexpr CounterStats kRaplStats{stats::kRaplCounterWraps, stats::kRaplReadErrors};
constexpr CounterStats kPerfPowerStats{stats::kPerfPowerCounterWraps, stats::kPerfPowerReadErrors};

// Polls monotonic energy counters and reports each one's cumulative joules
// (its first raw reading as the origin plus unwrapped deltas) when it changes.
class CounterSampler : public PollingSampler {
 public:
  CounterSampler(std::string name, const CounterStats& stats, int interval_us)
      : name_(std::move(name)), stats_(stats), interval_us_(interval_us) {}
  ~CounterSampler() override {
    Stop();
    for (int fd : fds_) close(fd);
  }
  void OwnFd(int fd) { fds_.push_back(fd); }

  int AddDevice(const Device& d) {
    for (size_t i = 0; i < devices_.size(); ++i)
      if (devices_[i].kind == d.kind && devices_[i].ordinal == d.ordinal) return static_cast<int>(i);
    devices_.push_back(d);
    return static_cast<int>(devices_.size()) - 1;
  }
  void AddCounter(int device, const std::string& sensor, Counter c) {
    series_.push_back(SeriesSpec{device, sensor, "J", name_});
    c.series = static_cast<int>(series_.size()) - 1;
    counters_.push_back(std::move(c));
  }
  bool empty() const { return counters_.empty(); }

  std::string name() const override { return name_; }
  std::vector<Device> devices() const override { return devices_; }
  std::vector<SeriesSpec> series() const override { return series_; }

  std::vector<std::function<void()>> Loops() override { return {[this] { Loop(); }}; }
  void Finish() override {
    int64_t wraps = 0;
    for (auto& c : counters_) wraps += c.unwrap.wraps();
    if (wraps > 0)
      sink_->OnStat(MakeStat(stats_.wraps, wraps));
    if (errors_ > 0)
      sink_->OnStat(MakeStat(stats_.read_errors, errors_, "counter reads that failed: " + last_error_));
  }

 private:
  void Loop() {
    ChangeFilter filter(series_.size());
    Every(int64_t(interval_us_) * 1000, [&] {
      for (auto& c : counters_) {
        int64_t a = NowNs();
        auto raw = c.read();
        int64_t b = NowNs();
        if (!raw.ok()) {
          if (errors_++ == 0) last_error_ = raw.error().message;
          continue;
        }
        // Report the raw origin plus unwrapped growth, in joules.
        double total = (first_raw_.count(c.series) ? first_raw_[c.series] : (first_raw_[c.series] = *raw)) +
                       c.unwrap.Update(*raw);
        double joules = total * c.joules_per_unit;
        if (filter.Update(static_cast<size_t>(c.series), joules)) sink_->OnSample(c.series, a + (b - a) / 2, joules);
      }
      return true;
    });
  }

  std::string name_;
  CounterStats stats_;
  int interval_us_;
  std::vector<Device> devices_;
  std::vector<SeriesSpec> series_;
  std::vector<Counter> counters_;
  std::map<int, double> first_raw_;
  int64_t errors_ = 0;
  std::string last_error_;
  std::vector<int> fds_;
};

Result<double> ReadNumber(const std::string& path) {
  auto text = ReadSmallFile(path);
  if (!text.ok()) return text.error();
  char* end = nullptr;
  double v = std::strtod(text->c_str(), &end);
  if (end == text->c_str()) return MakeError(ErrorCode::kCorrupt, path + ": not a number: '" + *text + "'");
  return v;
}

// Opens one counting event of the power PMU on `cpu`; -1 with *why on failure.
int OpenPowerEvent(int type, uint64_t config, int cpu, const std::string& event, std::string* why) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = static_cast<uint32_t>(type);
  attr.config = config;
  long fd = syscall(SYS_perf_event_open, &attr, -1 /* all processes */, cpu, -1, 0);
  if (fd >= 0) return static_cast<int>(fd);
  int err = errno;
  *why = event + " on cpu " + std::to_string(cpu) + ": perf_event_open: " + std::strerror(err) +
         (err == EACCES || err == EPERM ? " (needs CAP_PERFMON or kernel.perf_event_paranoid <= 0)" : "");
  return -1;
}

}  // namespace

Result<std::vector<RaplZone>> ScanPowercap(const std::string& root) {
  if (access(root.c_str(), F_OK) != 0)
    return MakeError(ErrorCode::kUnavailable, "powercap: " + root + " does not exist (no RAPL driver, or a VM)");
  std::vector<RaplZone> zones;
  std::map<int, int> package_of_top;  // top-level zone index -> package ordinal
  for (const std::string& entry : ListDir(root)) {
    std::vector<int> idx = ZoneIndices(entry);
    if (idx.empty()) continue;
    RaplZone z;
    z.dir = root + "/" + entry;
    auto name = ReadSmallFile(z.dir + "/name");
    z.name = name.ok() ? *name : entry;
    if (idx.size() == 1) {
      z.device_kind = z.name == "psys" ? "platform" : "cpu";
      z.package = z.name == "psys" ? 0 : PackageOf(z.name, idx[0]);
      z.sensor = "energy.total";
      package_of_top[idx[0]] = z.package;
    } else {
      z.device_kind = "cpu";
      z.package = package_of_top.count(idx[0]) ? package_of_top[idx[0]] : idx[0];
      z.sensor = "energy." + z.name;
    }
    auto range = ReadNumber(z.dir + "/max_energy_range_uj");
    z.max_range_uj = range.ok() ? *range : 0;
    auto energy = ReadNumber(z.dir + "/energy_uj");
    if (!energy.ok()) {
      z.problem = energy.error().message;
      if (z.problem.find("Permission denied") != std::string::npos)
        z.problem += " (energy_uj is root-only since Linux 5.10; run as root or grant read access)";
    } else if (!range.ok()) {
      z.problem = range.error().message + " (needed to unwrap the counter)";
    }
    zones.push_back(std::move(z));
  }
  if (zones.empty()) return MakeError(ErrorCode::kUnavailable, "powercap: no intel-rapl:* zones under " + root);
  return zones;
}

Result<PerfPowerPmu> ScanPerfPower(const std::string& root) {
  auto type = ReadNumber(root + "/type");
  if (!type.ok())
    return MakeError(ErrorCode::kUnavailable, "perf power PMU: " + type.error().message);
  PerfPowerPmu pmu;
  pmu.type = static_cast<int>(*type);
  auto mask = ReadSmallFile(root + "/cpumask");
  std::string m = mask.ok() ? *mask : "0";
  // cpumask lists one CPU per package: "0" or "0,28" (ranges do not occur here).
  for (size_t pos = 0; pos < m.size();) {
    size_t comma = m.find(',', pos);
    std::string part = m.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!part.empty() && std::all_of(part.begin(), part.end(), ::isdigit)) pmu.cpus.push_back(std::stoi(part));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  static const std::map<std::string, std::pair<std::string, std::string>> kSensor = {
      {"energy-pkg", {"energy.total", "cpu"}},   {"energy-cores", {"energy.core", "cpu"}},
      {"energy-ram", {"energy.dram", "cpu"}},    {"energy-gpu", {"energy.igpu", "cpu"}},
      {"energy-psys", {"energy.total", "platform"}}};
  for (const std::string& name : ListDir(root + "/events")) {
    auto it = kSensor.find(name);
    if (it == kSensor.end()) continue;  // .scale/.unit companions and unknown events
    auto spec = ReadSmallFile(root + "/events/" + name);
    if (!spec.ok()) continue;
    size_t eq = spec->find("event=");
    if (eq == std::string::npos) continue;
    PerfPowerEvent e;
    e.name = name;
    e.config = std::strtoull(spec->c_str() + eq + 6, nullptr, 0);
    auto scale = ReadNumber(root + "/events/" + name + ".scale");
    e.scale = scale.ok() ? *scale : 2.3283064365386962890625e-10;  // 2^-32 J, the usual RAPL unit
    e.sensor = it->second.first;
    e.device_kind = it->second.second;
    pmu.events.push_back(e);
  }
  if (pmu.events.empty()) return MakeError(ErrorCode::kUnavailable, "perf power PMU: no energy-* events under " + root);
  if (pmu.cpus.empty()) pmu.cpus.push_back(0);
  return pmu;
}

Result<PerfPowerPmu> ProbePerfPower(const std::string& root) {
  auto pmu = ScanPerfPower(root);
  if (!pmu.ok()) return pmu;
  for (const PerfPowerEvent& e : pmu->events) {
    std::string why;
    int fd = OpenPowerEvent(pmu->type, e.config, pmu->cpus.front(), e.name, &why);
    if (fd < 0) return MakeError(ErrorCode::kUnavailable, "perf power PMU: " + why);
    close(fd);
  }
  return pmu;
}

Result<uint64_t> ReadPerfCount(int fd) {
  uint64_t count = 0;
  ssize_t n = read(fd, &count, sizeof count);
  if (n != static_cast<ssize_t>(sizeof count))
    return MakeError(ErrorCode::kIo, std::string("perf power read: ") +
                                         (n < 0 ? std::strerror(errno) : "short read (" + std::to_string(n) + " bytes)"));
  return count;
}

Result<std::unique_ptr<Sampler>> OpenRaplSampler(const SamplerOptions& options, std::vector<Stat>* problems) {
  auto note = [&](const StatDef& stat, const std::string& why) {
    if (problems) problems->push_back(MakeStat(stat, 1, why));
  };
  std::string why;
  auto zones = ScanPowercap(options.powercap_root);
  if (zones.ok()) {
    auto sampler = std::make_unique<CounterSampler>("rapl", kRaplStats, options.rapl_poll_interval_us);
    for (const RaplZone& z : *zones) {
      if (!z.problem.empty()) {
        note(stats::kRaplZoneUnreadable, z.name + ": " + z.problem);
        continue;
      }
      Device d;
      d.kind = z.device_kind;
      d.ordinal = z.package;
      d.name = z.device_kind == "platform" ? "psys" : "package-" + std::to_string(z.package);
      int dev = sampler->AddDevice(d);
      std::string path = z.dir + "/energy_uj";
      sampler->AddCounter(dev, z.sensor, Counter{[path] { return ReadNumber(path); }, 1e-6,
                                                 WrappingCounter(z.max_range_uj), 0});
    }
    if (!sampler->empty()) return std::unique_ptr<Sampler>(std::move(sampler));
    why = "powercap: no readable zone under " + options.powercap_root;
  } else {
    why = zones.error().message;
  }
  auto pmu = ScanPerfPower(options.perf_power_root);
  if (!pmu.ok()) return MakeError(ErrorCode::kUnavailable, why + "; " + pmu.error().message);
  auto sampler = std::make_unique<CounterSampler>("perf_power", kPerfPowerStats, options.rapl_poll_interval_us);
  std::string perf_problem;
  for (size_t p = 0; p < pmu->cpus.size(); ++p) {
    for (const PerfPowerEvent& e : pmu->events) {
      if (e.device_kind == "platform" && p > 0) continue;  // psys is one per platform
      int fd = OpenPowerEvent(pmu->type, e.config, pmu->cpus[p], e.name, &perf_problem);
      if (fd < 0) {
        note(stats::kPerfPowerEventUnusable, perf_problem);
        continue;
      }
      Device d;
      d.kind = e.device_kind;
      d.ordinal = e.device_kind == "platform" ? 0 : static_cast<int32_t>(p);
      d.name = e.device_kind == "platform" ? "psys" : "package-" + std::to_string(p);
      int dev = sampler->AddDevice(d);
      int ifd = fd;
      auto read_count = [ifd]() -> Result<double> {
        auto count = ReadPerfCount(ifd);
        if (!count.ok()) return count.error();
        return static_cast<double>(*count);
      };
      sampler->OwnFd(ifd);
      sampler->AddCounter(dev, e.sensor, Counter{read_count, e.scale, WrappingCounter(0), 0});
    }
  }
  if (sampler->empty()) return MakeError(ErrorCode::kUnavailable, why + "; perf power PMU: " + perf_problem);
  return std::unique_ptr<Sampler>(std::move(sampler));
}

}  // namespace magneton::energy
