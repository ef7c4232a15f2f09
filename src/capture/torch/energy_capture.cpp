#include "capture/torch/energy_capture.h"

#include "core/stats_registry.h"

#ifdef MAGNETON_HAVE_SAMPLERS
#include "energy/samplers.h"
#endif

namespace magneton::capture {

namespace {

class NoEnergy : public EnergyCapture {
 public:
  int64_t series_count() const override { return 0; }
  Status Drain(RunWriter*) override { return Status::Ok(); }
  Status Stop(RunWriter*) override { return Status::Ok(); }
};

#ifdef MAGNETON_HAVE_SAMPLERS
class SampledEnergy : public EnergyCapture {
 public:
  int64_t series_count() const override { return series_; }
  Status Drain(RunWriter* writer) override { return buffer_.Drain(writer); }
  Status Stop(RunWriter* writer) override {
    for (auto& s : samplers_) s->Stop();
    samplers_.clear();
    return buffer_.Drain(writer);
  }

  std::vector<std::unique_ptr<energy::Sampler>> samplers_;
  energy::SampleBuffer buffer_;
  int64_t series_ = 0;
};
#endif

}  // namespace

Result<std::unique_ptr<EnergyCapture>> EnergyCapture::Start(const std::string& which, RunWriter* writer,
                                                            std::vector<Device>* devices,
                                                            std::vector<Stat>* problems) {
  if (which == "none" || which.empty()) return std::unique_ptr<EnergyCapture>(new NoEnergy());
  if (which != "nvml" && which != "rapl" && which != "auto")
    return MakeError(ErrorCode::kInvalidArgument,
                     "energy='" + which + "': expected one of none, nvml, rapl, auto");
#ifdef MAGNETON_HAVE_SAMPLERS
  energy::SamplerOptions options;
  options.nvml = which == "nvml" || which == "auto";
  options.rapl = which == "rapl" || which == "auto";
  options.procfs = which == "auto";
  auto capture = std::make_unique<SampledEnergy>();
  for (auto& s : energy::OpenSamplers(options, problems)) {
    auto sink = capture->buffer_.Attach(*s, writer, devices);
    Status st = sink.ok() ? s->Start(*sink) : sink.status();
    if (!st.ok()) {
      problems->push_back(MakeStat(stats::kSamplerFailed, 1, s->name() + ": " + st.message()));
      continue;
    }
    capture->series_ += static_cast<int64_t>(s->series().size());
    capture->samplers_.push_back(std::move(s));
  }
  return std::unique_ptr<EnergyCapture>(std::move(capture));
#else
  (void)writer;
  (void)devices;
  problems->push_back(MakeStat(stats::kEnergyUnavailable, 1, "energy='" + which + "': this build has no energy samplers"));
  return std::unique_ptr<EnergyCapture>(new NoEnergy());
#endif
}

}  // namespace magneton::capture
