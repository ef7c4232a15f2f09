#include "energy/samplers.h"

#include "core/store.h"
#include "energy/meter_sampler.h"
#include "energy/nvml_sampler.h"
#include "energy/procfs_sampler.h"
#include "energy/rapl_sampler.h"
#include "energy/sampler_util.h"

namespace magneton::energy {

std::vector<std::unique_ptr<Sampler>> OpenSamplers(const SamplerOptions& options, std::vector<Stat>* problems) {
  std::vector<std::unique_ptr<Sampler>> out;
  std::vector<Stat> local;
  std::vector<Stat>& notes = problems ? *problems : local;
  auto take = [&](Result<std::unique_ptr<Sampler>> r, const StatDef& stat) {
    if (r.ok())
      out.push_back(std::move(*r));
    else
      notes.push_back(MakeStat(stat, 1, r.error().message));
  };
  if (options.nvml) take(OpenNvmlSampler(options, &notes), stats::kNvmlUnavailable);
  if (options.rapl) take(OpenRaplSampler(options, &notes), stats::kRaplUnavailable);
  if (!options.meter.empty()) take(OpenMeterSampler(options), stats::kMeterUnavailable);
  if (options.procfs) take(OpenProcfsSampler(options), stats::kProcfsUnavailable);
  return out;
}

// Routes one sampler's readings into the buffer, mapping its series indices
// (0.., plus any announced later) to the run's series ids.
class SampleBuffer::Route : public SampleSink {
 public:
  Route(SampleBuffer* owner, std::vector<int32_t> device_ids) : owner_(owner), device_ids_(std::move(device_ids)) {}
  void OnSample(int series_index, int64_t t_ns, double value) override {
    owner_->Push(*this, series_index, t_ns, value);
  }
  void OnStat(const Stat& stat) override { owner_->PushStat(stat); }
  void OnSeries(int series_index, const SeriesSpec& spec) override { owner_->Declare(*this, series_index, spec); }

  SampleBuffer* owner_;
  std::vector<int32_t> device_ids_;  // sampler device index -> run device id
  std::vector<int64_t> series_ids_;  // sampler series index -> run series id (-1: unknown)
};

class SampleBuffer::Target {
 public:
  virtual ~Target() = default;
  virtual Status Add(const Device& d) = 0;
  virtual Status AddSeries(const SensorSeries& s) = 0;
  virtual Status AddSample(int64_t series, int64_t t_ns, double value) = 0;
  virtual Status Add(const Stat& s) = 0;
};

namespace {

class WriterTarget : public SampleBuffer::Target {
 public:
  explicit WriterTarget(RunWriter* w) : w_(w) {}
  Status Add(const Device& d) override { return w_->Add(d); }
  Status AddSeries(const SensorSeries& s) override { return w_->AddSeries(s); }
  Status AddSample(int64_t series, int64_t t_ns, double value) override { return w_->AddSample(series, t_ns, value); }
  Status Add(const Stat& s) override { return w_->Add(s); }

 private:
  RunWriter* w_;
};

class RunTarget : public SampleBuffer::Target {
 public:
  explicit RunTarget(Run* run) : run_(run) {}
  Status Add(const Device& d) override { return Status::Ok(); }  // Attach appended it already
  // Placed by id: a series announced while sampling may arrive before one
  // declared later by Attach with a lower id.
  Status AddSeries(const SensorSeries& s) override {
    if (s.id < 0) return MakeError(ErrorCode::kInternal, "negative series id");
    if (s.id >= static_cast<int64_t>(run_->series.size())) {
      size_t old = run_->series.size();
      run_->series.resize(static_cast<size_t>(s.id) + 1);
      for (size_t i = old; i < run_->series.size(); ++i) run_->series[i].id = static_cast<int64_t>(i);
    }
    run_->series[static_cast<size_t>(s.id)] = s;
    return Status::Ok();
  }
  Status AddSample(int64_t series, int64_t t_ns, double value) override {
    SensorSeries& s = run_->series.at(static_cast<size_t>(series));
    s.t_ns.push_back(t_ns);
    s.value.push_back(value);
    return Status::Ok();
  }
  Status Add(const Stat& stat) override {
    for (Stat& s : run_->stats)  // like the store: a stat of the same name adds up
      if (s.name == stat.name) {
        s.value += stat.value;
        return Status::Ok();
      }
    run_->stats.push_back(stat);
    return Status::Ok();
  }

 private:
  Run* run_;
};

}  // namespace

SampleBuffer::SampleBuffer(int64_t first_series_id) : next_series_(first_series_id) {}
SampleBuffer::~SampleBuffer() = default;

Result<SampleSink*> SampleBuffer::Attach(const Sampler& sampler, RunWriter* writer, std::vector<Device>* devices) {
  WriterTarget target(writer);
  return AttachTo(sampler, target, devices);
}

Status SampleBuffer::Drain(RunWriter* writer) {
  WriterTarget target(writer);
  return DrainTo(target);
}

Result<SampleSink*> SampleBuffer::Attach(const Sampler& sampler, Run* run) {
  RunTarget target(run);
  return AttachTo(sampler, target, &run->devices);
}

Status SampleBuffer::Drain(Run* run) {
  RunTarget target(run);
  return DrainTo(target);
}

Result<SampleSink*> SampleBuffer::AttachTo(const Sampler& sampler, Target& writer, std::vector<Device>* devices) {
  std::vector<int32_t> ids;
  for (Device d : sampler.devices()) {
    int32_t id = -1;
    for (const Device& known : *devices) {
      bool same = !d.uuid.empty() ? known.uuid == d.uuid : (known.kind == d.kind && known.ordinal == d.ordinal);
      if (same) id = known.id;
    }
    if (id < 0) {
      d.id = static_cast<int32_t>(devices->size());
      MAGNETON_RETURN_IF_ERROR(writer.Add(d));
      devices->push_back(d);
      id = d.id;
    }
    ids.push_back(id);
  }
  auto route = std::make_unique<Route>(this, std::move(ids));
  std::lock_guard lock(mu_);
  // Series announced by samplers already running have lower ids: write them
  // first, so ids reach the writer in order.
  for (const SensorSeries& s : declared_) MAGNETON_RETURN_IF_ERROR(writer.AddSeries(s));
  declared_.clear();
  for (const SeriesSpec& spec : sampler.series()) {
    SensorSeries s;
    s.id = next_series_++;
    s.device = route->device_ids_.at(static_cast<size_t>(spec.device));
    s.sensor = spec.sensor;
    s.unit = spec.unit;
    s.source = spec.source;
    MAGNETON_RETURN_IF_ERROR(writer.AddSeries(s));
    route->series_ids_.push_back(s.id);
  }
  routes_.push_back(std::move(route));
  return static_cast<SampleSink*>(routes_.back().get());
}

void SampleBuffer::Push(const Route& route, int series_index, int64_t t_ns, double value) {
  std::lock_guard lock(mu_);
  if (series_index < 0 || static_cast<size_t>(series_index) >= route.series_ids_.size() ||
      route.series_ids_[series_index] < 0)
    return;  // a sampler bug (sample before its series): drop rather than misfile
  pending_.push_back(Pending{route.series_ids_[series_index], t_ns, value});
}

void SampleBuffer::Declare(Route& route, int series_index, const SeriesSpec& spec) {
  std::lock_guard lock(mu_);
  if (series_index < 0 || spec.device < 0 || static_cast<size_t>(spec.device) >= route.device_ids_.size()) return;
  if (route.series_ids_.size() <= static_cast<size_t>(series_index)) route.series_ids_.resize(series_index + 1, -1);
  if (route.series_ids_[series_index] >= 0) return;
  SensorSeries s;
  s.id = next_series_++;
  s.device = route.device_ids_[spec.device];
  s.sensor = spec.sensor;
  s.unit = spec.unit;
  s.source = spec.source;
  route.series_ids_[series_index] = s.id;
  declared_.push_back(std::move(s));
}

void SampleBuffer::PushStat(const Stat& stat) {
  std::lock_guard lock(mu_);
  stats_.push_back(stat);
}

Status SampleBuffer::DrainTo(Target& writer) {
  std::vector<Pending> pending;
  std::vector<SensorSeries> declared;
  std::vector<Stat> stats;
  {
    std::lock_guard lock(mu_);
    pending.swap(pending_);
    declared.swap(declared_);
    stats.swap(stats_);
  }
  // Declarations first: their samples may be in this same batch.
  for (const SensorSeries& s : declared) MAGNETON_RETURN_IF_ERROR(writer.AddSeries(s));
  for (const Pending& p : pending) MAGNETON_RETURN_IF_ERROR(writer.AddSample(p.series, p.t_ns, p.value));
  for (const Stat& s : stats) MAGNETON_RETURN_IF_ERROR(writer.Add(s));
  samples_written_ += static_cast<int64_t>(pending.size());
  return Status::Ok();
}

}  // namespace magneton::energy
