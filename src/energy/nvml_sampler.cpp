#include "energy/nvml_sampler.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "energy/clock.h"
#include "energy/nvml_api.h"
#include "energy/sampler_util.h"

namespace magneton::energy {

std::vector<unsigned> VisibleNvmlIndices(const char* visible, const std::vector<std::string>& uuids) {
  std::vector<unsigned> out;
  if (visible == nullptr) {
    for (unsigned i = 0; i < uuids.size(); ++i) out.push_back(i);
    return out;
  }
  std::string list(visible);
  size_t pos = 0;
  while (pos <= list.size() && !list.empty()) {
    size_t comma = list.find(',', pos);
    std::string entry = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    long index = -1;
    if (!entry.empty() && std::all_of(entry.begin(), entry.end(), ::isdigit)) {
      index = std::strtol(entry.c_str(), nullptr, 10);
      if (index >= static_cast<long>(uuids.size())) index = -1;
    } else if (entry.rfind("GPU-", 0) == 0) {
      for (unsigned i = 0; i < uuids.size(); ++i)
        if (uuids[i].rfind(entry, 0) == 0) index = i;  // a unique prefix is enough
    }
    // Like CUDA: the first entry that names no device ends the list.
    if (index < 0 || std::find(out.begin(), out.end(), unsigned(index)) != out.end()) break;
    out.push_back(static_cast<unsigned>(index));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

namespace {

// Series of one GPU; -1 where the reading is not offered.
struct GpuSeries {
  nvml::DeviceHandle handle = nullptr;
  int energy = -1, instant = -1, usage = -1, clock_sm = -1, clock_mem = -1, util_gpu = -1, util_mem = -1;
};

nvml::Return ReadInstant(const nvml::Api& api, nvml::DeviceHandle h, double* watts) {
  if (!api.DeviceGetFieldValues) return nvml::kErrorNotSupported;
  nvml::FieldValue fv;
  std::memset(&fv, 0, sizeof fv);
  fv.field_id = nvml::kFieldPowerInstant;
  nvml::Return r = api.DeviceGetFieldValues(h, 1, &fv);
  if (r != nvml::kSuccess) return r;
  if (fv.nvml_return != nvml::kSuccess) return fv.nvml_return;
  *watts = nvml::FieldAsDouble(fv) / 1000.0;  // mW
  return nvml::kSuccess;
}

nvml::Return ReadUsage(const nvml::Api& api, nvml::DeviceHandle h, double* watts) {
  if (!api.DeviceGetPowerUsage) return nvml::kErrorNotSupported;
  unsigned mw = 0;
  nvml::Return r = api.DeviceGetPowerUsage(h, &mw);
  *watts = mw / 1000.0;
  return r;
}

nvml::Return ReadEnergy(const nvml::Api& api, nvml::DeviceHandle h, double* joules) {
  if (!api.DeviceGetTotalEnergyConsumption) return nvml::kErrorNotSupported;
  unsigned long long mj = 0;
  nvml::Return r = api.DeviceGetTotalEnergyConsumption(h, &mj);
  *joules = static_cast<double>(mj) / 1000.0;
  return r;
}

std::string Text(char* buf) { return std::string(buf, strnlen(buf, 96)); }

Result<std::vector<GpuProbe>> ListGpus(const nvml::Api& api, std::vector<nvml::DeviceHandle>* handles) {
  unsigned count = 0;
  nvml::Return r = api.DeviceGetCount(&count);
  if (r != nvml::kSuccess) return MakeError(ErrorCode::kUnavailable, "NVML: nvmlDeviceGetCount: " + api.Describe(r));
  std::vector<nvml::DeviceHandle> all(count, nullptr);
  std::vector<std::string> uuids(count);
  for (unsigned i = 0; i < count; ++i) {
    if (api.DeviceGetHandleByIndex(i, &all[i]) != nvml::kSuccess) continue;
    char buf[96] = {};
    if (api.DeviceGetUUID && api.DeviceGetUUID(all[i], buf, sizeof buf) == nvml::kSuccess) uuids[i] = Text(buf);
  }
  std::vector<GpuProbe> gpus;
  for (unsigned index : VisibleNvmlIndices(std::getenv("CUDA_VISIBLE_DEVICES"), uuids)) {
    if (!all[index]) continue;
    GpuProbe g;
    g.nvml_index = index;
    g.device.kind = "gpu";
    g.device.ordinal = static_cast<int32_t>(gpus.size());
    g.device.uuid = uuids[index];
    char buf[96] = {};
    if (api.DeviceGetName && api.DeviceGetName(all[index], buf, sizeof buf) == nvml::kSuccess) g.device.name = Text(buf);
    nvml::Memory mem{};
    if (api.DeviceGetMemoryInfo && api.DeviceGetMemoryInfo(all[index], &mem) == nvml::kSuccess)
      g.device.memory_bytes = static_cast<int64_t>(mem.total);
    nvml::PciInfo pci{};
    if (api.DeviceGetPciInfo && api.DeviceGetPciInfo(all[index], &pci) == nvml::kSuccess)
      g.pci_bus_id = std::string(pci.bus_id, strnlen(pci.bus_id, sizeof pci.bus_id));
    unsigned limit_mw = 0;
    if (api.DeviceGetPowerManagementLimit &&
        api.DeviceGetPowerManagementLimit(all[index], &limit_mw) == nvml::kSuccess)
      g.power_limit_w = limit_mw / 1000.0;
    double v = 0;
    nvml::Return re = ReadEnergy(api, all[index], &v), ri = ReadInstant(api, all[index], &v),
                 ru = ReadUsage(api, all[index], &v);
    if (re != nvml::kSuccess) g.energy_counter = "nvmlDeviceGetTotalEnergyConsumption: " + api.Describe(re);
    if (ri != nvml::kSuccess) g.power_instant = "field NVML_FI_DEV_POWER_INSTANT: " + api.Describe(ri);
    if (ru != nvml::kSuccess) g.power_usage = "nvmlDeviceGetPowerUsage: " + api.Describe(ru);
    gpus.push_back(std::move(g));
    handles->push_back(all[index]);
  }
  return gpus;
}

class NvmlSampler : public PollingSampler {
 public:
  NvmlSampler(const nvml::Api* api, const SamplerOptions& options) : api_(api), options_(options) {}

  // Adds a GPU and the readings it offers (those that failed the probe are left out).
  void AddGpu(const GpuProbe& probe, nvml::DeviceHandle handle) {
    int dev = static_cast<int>(devices_.size());
    devices_.push_back(probe.device);
    GpuSeries g;
    g.handle = handle;
    auto add = [&](const char* sensor, const char* unit) {
      series_.push_back(SeriesSpec{dev, sensor, unit, "nvml"});
      return static_cast<int>(series_.size()) - 1;
    };
    if (probe.energy_counter.empty()) g.energy = add("energy.total", "J");
    if (probe.power_instant.empty()) g.instant = add("power.instant", "W");
    if (probe.power_usage.empty()) g.usage = add("power.usage", "W");
    unsigned u = 0;
    nvml::Utilization util{};
    if (api_->DeviceGetClockInfo && api_->DeviceGetClockInfo(handle, nvml::kClockSm, &u) == nvml::kSuccess)
      g.clock_sm = add("clock.sm", "MHz");
    if (api_->DeviceGetClockInfo && api_->DeviceGetClockInfo(handle, nvml::kClockMem, &u) == nvml::kSuccess)
      g.clock_mem = add("clock.mem", "MHz");
    if (api_->DeviceGetUtilizationRates && api_->DeviceGetUtilizationRates(handle, &util) == nvml::kSuccess) {
      g.util_gpu = add("util.gpu", "%");
      g.util_mem = add("util.mem", "%");
    }
    gpus_.push_back(g);
  }

  std::string name() const override { return "nvml"; }
  std::vector<Device> devices() const override { return devices_; }
  std::vector<SeriesSpec> series() const override { return series_; }

  std::vector<std::function<void()>> Loops() override {
    std::vector<std::function<void()>> loops = {[this] { FastLoop(); }};
    if (std::any_of(gpus_.begin(), gpus_.end(), [](const GpuSeries& g) { return g.energy >= 0; }))
      loops.push_back([this] { CounterLoop(); });
    return loops;
  }

  void Finish() override {
    if (int64_t n = read_errors_.exchange(0); n > 0)
      sink_->OnStat(MakeStat(stats::kNvmlReadErrors, n,
                             "NVML readings that failed while sampling (last: " + last_error_ + ")"));
  }

  ~NvmlSampler() override { Stop(); }

 private:
  // Times a reading by the midpoint of the call: the value was taken somewhere
  // inside it, and the energy counter's call alone lasts ~3.5 ms.
  template <class Read>
  void Sample(ChangeFilter& filter, int series, Read read) {
    if (series < 0) return;
    int64_t a = NowNs();
    double value = 0;
    nvml::Return r = read(&value);
    int64_t b = NowNs();
    if (r != nvml::kSuccess) {
      if (read_errors_.fetch_add(1) == 0) last_error_ = series_[series].sensor + ": " + api_->Describe(r);
      return;
    }
    if (filter.Update(static_cast<size_t>(series), value)) sink_->OnSample(series, a + (b - a) / 2, value);
  }

  // Power every poll interval; clocks and utilization on the slow cadence.
  void FastLoop() {
    ChangeFilter filter(series_.size());
    int64_t next_slow = 0;
    Every(int64_t(options_.poll_interval_us) * 1000, [&] {
      int64_t t0 = NowNs();
      for (const GpuSeries& g : gpus_) {
        Sample(filter, g.instant, [&](double* v) { return ReadInstant(*api_, g.handle, v); });
        Sample(filter, g.usage, [&](double* v) { return ReadUsage(*api_, g.handle, v); });
      }
      if (t0 >= next_slow) {
        next_slow = t0 + int64_t(options_.slow_poll_interval_us) * 1000;
        for (const GpuSeries& g : gpus_) SampleSlow(filter, g);
      }
      return true;
    });
  }

  // Clocks and utilization: they change slowly and matter less.
  void SampleSlow(ChangeFilter& filter, const GpuSeries& g) {
    auto clock = [&](unsigned which) {
      return [&, which](double* v) {
        unsigned mhz = 0;
        nvml::Return r = api_->DeviceGetClockInfo(g.handle, which, &mhz);
        *v = mhz;
        return r;
      };
    };
    Sample(filter, g.clock_sm, clock(nvml::kClockSm));
    Sample(filter, g.clock_mem, clock(nvml::kClockMem));
    nvml::Utilization util{};
    bool got = false;
    Sample(filter, g.util_gpu, [&](double* v) {
      nvml::Return r = api_->DeviceGetUtilizationRates(g.handle, &util);
      got = r == nvml::kSuccess;
      *v = util.gpu;
      return r;
    });
    if (got) Sample(filter, g.util_mem, [&](double* v) {
        *v = util.memory;
        return nvml::kSuccess;
      });
  }

  // The energy counter on its own thread and cadence: one read costs ~3.5 ms,
  // which would otherwise stall the 2 ms power polling.
  void CounterLoop() {
    ChangeFilter filter(series_.size());
    auto read_all = [&] {
      for (const GpuSeries& g : gpus_)
        Sample(filter, g.energy, [&](double* v) { return ReadEnergy(*api_, g.handle, v); });
      return true;
    };
    Every(int64_t(options_.energy_poll_interval_us) * 1000, read_all);
    read_all();  // one last reading at stop, so the window's end has a fresh counter value
  }

  const nvml::Api* api_;
  SamplerOptions options_;
  std::vector<Device> devices_;
  std::vector<SeriesSpec> series_;
  std::vector<GpuSeries> gpus_;
  std::atomic<int64_t> read_errors_{0};
  std::string last_error_;
};

}  // namespace

Result<NvmlProbe> ProbeNvml() {
  auto api = nvml::Load();
  if (!api.ok()) return api.error();
  NvmlProbe probe;
  char buf[96] = {};
  if ((*api)->SystemGetDriverVersion && (*api)->SystemGetDriverVersion(buf, sizeof buf) == nvml::kSuccess)
    probe.driver_version = Text(buf);
  if ((*api)->SystemGetNVMLVersion && (*api)->SystemGetNVMLVersion(buf, sizeof buf) == nvml::kSuccess)
    probe.nvml_version = Text(buf);
  std::vector<nvml::DeviceHandle> handles;
  auto gpus = ListGpus(**api, &handles);
  if (!gpus.ok()) return gpus.error();
  probe.gpus = std::move(*gpus);
  return probe;
}

Result<std::unique_ptr<Sampler>> OpenNvmlSampler(const SamplerOptions& options, std::vector<Stat>* problems) {
  auto api = nvml::Load();
  if (!api.ok()) return api.error();
  std::vector<nvml::DeviceHandle> handles;
  auto gpus = ListGpus(**api, &handles);
  if (!gpus.ok()) return gpus.error();
  if (gpus->empty()) return MakeError(ErrorCode::kUnavailable, "NVML: no visible GPU (CUDA_VISIBLE_DEVICES?)");
  auto sampler = std::make_unique<NvmlSampler>(*api, options);
  for (size_t i = 0; i < gpus->size(); ++i) {
    const GpuProbe& g = (*gpus)[i];
    if (!options.gpus.empty() &&
        std::find(options.gpus.begin(), options.gpus.end(), g.device.ordinal) == options.gpus.end())
      continue;
    std::string who = "GPU " + std::to_string(g.device.ordinal) + " (" + g.device.name + "): ";
    if (problems) {
      if (!g.energy_counter.empty())
        problems->push_back(MakeStat(stats::kNvmlEnergyCounterUnavailable, 1, who + g.energy_counter));
      if (!g.power_instant.empty())
        problems->push_back(MakeStat(stats::kNvmlPowerInstantUnavailable, 1, who + g.power_instant));
      if (!g.power_usage.empty())
        problems->push_back(MakeStat(stats::kNvmlPowerUsageUnavailable, 1, who + g.power_usage));
    }
    sampler->AddGpu(g, handles[i]);
  }
  if (sampler->devices().empty())
    return MakeError(ErrorCode::kInvalidArgument, "NVML: none of the requested GPUs is visible");
  return std::unique_ptr<Sampler>(std::move(sampler));
}

}  // namespace magneton::energy
