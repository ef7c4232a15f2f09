#include "capture/torch/kernel_link.h"

#ifdef MAGNETON_HAVE_CUPTI_TRACER
#include "capture/cupti/tracer.h"
#endif

namespace magneton::capture {

#ifdef MAGNETON_HAVE_CUPTI_TRACER
namespace {
class CuptiCorrelation : public KernelCorrelation {
 public:
  explicit CuptiCorrelation(std::unique_ptr<CuptiTracer> t) : tracer_(std::move(t)) {}
  void Push(uint64_t op_id) override { tracer_->PushExternalId(op_id); }
  void Pop() override { tracer_->PopExternalId(); }
  Status Stop() override { return tracer_->Stop(); }

 private:
  std::unique_ptr<CuptiTracer> tracer_;
};
}  // namespace

Result<std::unique_ptr<KernelCorrelation>> KernelCorrelation::Start(RunWriter* writer, std::vector<Device>* devices,
                                                                   std::mutex* writer_mutex) {
  TracerOptions options;
  options.devices = devices;
  options.writer_mutex = writer_mutex;
  auto tracer = CuptiTracer::Start(writer, options);
  if (!tracer.ok()) return tracer.error();
  return std::unique_ptr<KernelCorrelation>(new CuptiCorrelation(std::move(tracer.value())));
}
#else
Result<std::unique_ptr<KernelCorrelation>> KernelCorrelation::Start(RunWriter*, std::vector<Device>*, std::mutex*) {
  return MakeError(ErrorCode::kUnavailable, "kernel tracing: this build has no CUPTI tracer");
}
#endif

}  // namespace magneton::capture
