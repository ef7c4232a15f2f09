#include "capture/torch/kernel_link.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#ifdef MAGNETON_HAVE_CUPTI_TRACER
#include "capture/cupti/api_selection.h"
#include "capture/cupti/tracer.h"
#endif

namespace magneton::capture {

std::string DefaultApiCalls(bool ops, bool fingerprints) {
#ifdef MAGNETON_HAVE_CUPTI_TRACER
  return ApiCallsName(RecorderApiCalls(ops, fingerprints));
#else
  (void)ops, (void)fingerprints;
  return "none";  // no tracer to start
#endif
}

Status LaunchIndex::Add(const Kernel& k) {
  if (remember_) {
    kernel_op_[k.id] = k.op;
    kernel_corr_[k.id] = k.correlation;
  }
  return inner()->Add(k);
}

Status LaunchIndex::Add(const ApiCall& a) {
  if (remember_) launches_.try_emplace(a.correlation, Launch{a.thread, a.start_ns});
  return inner()->Add(a);
}

Status LaunchIndex::LinkKernel(int64_t kernel_id, int64_t op_id) {
  if (auto it = kernel_op_.find(kernel_id); it != kernel_op_.end()) it->second = op_id;
  return inner()->LinkKernel(kernel_id, op_id);
}

Result<LaunchIndex::LinkCounts> LaunchIndex::LinkByTime(const std::vector<OpSpan>& ops,
                                                        const std::unordered_map<int64_t, int64_t>& thread_ids,
                                                        std::vector<std::pair<int64_t, int64_t>> recorder_work) {
  // Ops per thread in start order (ids are in start order already).
  std::unordered_map<int64_t, std::vector<int64_t>> by_thread;
  for (size_t id = 0; id < ops.size(); ++id) by_thread[ops[id].thread].push_back(static_cast<int64_t>(id));
  std::sort(recorder_work.begin(), recorder_work.end());
  std::vector<int64_t> latest_end;  // running max of the ends, for "some span before t still runs at t"
  for (const auto& [from, to] : recorder_work) latest_end.push_back(std::max(latest_end.empty() ? to : latest_end.back(), to));
  auto in_recorder_work = [&](int64_t t) {
    auto it = std::upper_bound(recorder_work.begin(), recorder_work.end(), std::pair{t, INT64_MAX});
    return it != recorder_work.begin() && latest_end[it - recorder_work.begin() - 1] >= t;
  };
  LinkCounts counts;
  for (auto& [kernel, op] : kernel_op_) {
    ++counts.kernels;
    if (op == kRecorderWork) {
      ++counts.recorder_work;
      continue;
    }
    if (op != kNone) {
      ++counts.by_correlation;
      continue;
    }
    auto launch = launches_.find(kernel_corr_[kernel]);
    if (launch == launches_.end()) continue;
    int64_t thread = launch->second.thread;
    if (auto t = thread_ids.find(thread); t != thread_ids.end()) thread = t->second;
    const int64_t t0 = launch->second.start_ns;
    int64_t cand = kNone;
    if (auto list = by_thread.find(thread); list != by_thread.end()) {
      // The last op started before the launch, then out through its parents
      // until one still runs at the launch: the innermost enclosing op.
      auto it = std::upper_bound(list->second.begin(), list->second.end(), t0,
                                 [&](int64_t t, int64_t id) { return t < ops[id].start_ns; });
      if (it != list->second.begin()) cand = *(it - 1);
      while (cand != kNone && ops[cand].end_ns < t0) cand = ops[cand].parent;
    }
    if (cand != kNone) {
      MAGNETON_RETURN_IF_ERROR(inner()->LinkKernel(kernel, cand));
      op = cand;
      ++counts.by_time;
    } else if (in_recorder_work(t0)) {
      MAGNETON_RETURN_IF_ERROR(inner()->LinkKernel(kernel, kRecorderWork));
      op = kRecorderWork;
      ++counts.recorder_work;
    }
  }
  return counts;
}

#ifdef MAGNETON_HAVE_CUPTI_TRACER
namespace {
class CuptiCorrelation : public KernelCorrelation {
 public:
  explicit CuptiCorrelation(std::unique_ptr<CuptiTracer> t) : tracer_(std::move(t)) {}
  void Push(uint64_t op_id) override { tracer_->PushExternalId(op_id); }
  void Pop() override { tracer_->PopExternalId(); }
  void SetEnabled(bool on) override { tracer_->SetEnabled(on); }
  void Mark(std::string name, int64_t thread, int64_t t_ns) override { tracer_->Mark(std::move(name), thread, t_ns); }
  Status StopTracing() override { return tracer_->StopTracing(); }
  Status Stop() override { return tracer_->Stop(); }

 private:
  std::unique_ptr<CuptiTracer> tracer_;
};
}  // namespace

Result<std::unique_ptr<KernelCorrelation>> KernelCorrelation::Start(RunWriter* writer, std::vector<Device>* devices,
                                                                   std::mutex* writer_mutex, std::string_view api_calls,
                                                                   WaitSites* waits) {
  TracerOptions options;
  options.devices = devices;
  options.wait_sites = waits;
  options.writer_mutex = writer_mutex;
  // Linking kernels to ops needs every API call: the external correlation
  // records come with the API records. With only the launch-like calls
  // enabled one by one, a recording inside torch on the H200 got no API rows
  // and no external correlation: 0 of 140 kernels linked (2026-12-03); with
  // every API call on, 235 of 235 (2026-12-02).
  if (!ParseApiCalls(api_calls, &options.api_calls))
    return MakeError(ErrorCode::kInvalidArgument, "unknown API call selection '" + std::string(api_calls) + "'");
  options.launches_by_exclusion = true;  // the process's CUDA context exists already (tracer.h)
  options.detach_at_stop = true;         // the program goes on after the recording
  // MAGNETON_CUPTI_SELECT=include: the selected calls enabled one by one
  // instead, to measure what the exclusion costs (docs/tracing.md).
  if (const char* e = std::getenv("MAGNETON_CUPTI_SELECT"); e && std::string_view(e) == "include")
    options.launches_by_exclusion = false;
  auto tracer = CuptiTracer::Start(writer, options);
  if (!tracer.ok()) return tracer.error();
  return std::unique_ptr<KernelCorrelation>(new CuptiCorrelation(std::move(tracer.value())));
}
#else
Result<std::unique_ptr<KernelCorrelation>> KernelCorrelation::Start(RunWriter*, std::vector<Device>*, std::mutex*,
                                                                   std::string_view, WaitSites*) {
  return MakeError(ErrorCode::kUnavailable, "kernel tracing: this build has no CUPTI tracer");
}
#endif

}  // namespace magneton::capture
