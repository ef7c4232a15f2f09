// magneton._jax: writes a JAX recording (python/magneton/jax_recorder.py) into
// a run file through the same store writer, energy samplers and CUPTI kernel
// correlation as the torch recorder, so both frameworks produce the same Run.
//
// It is a second module init compiled into the _torch extension library
// (python/magneton/jax/native.py loads it by name from that file): capture
// keeps one C++ module and one copy of the writer and tracer. The JAX side
// computes rows in Python (the jaxpr walk) and hands them over once, at stop.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "capture/torch/energy_capture.h"
#include "capture/torch/kernel_link.h"
#include "capture/torch/recorder.h"
#include "capture/torch/run_dict.h"
#include "core/stats_registry.h"
#include "core/store.h"

namespace py = pybind11;

namespace magneton::capture {
namespace {

void ThrowIf(const Status& s) {
  if (s.ok()) return;
  if (s.error().code == ErrorCode::kInvalidArgument) throw py::value_error(s.message());
  throw std::runtime_error(s.message());
}

template <class T>
T Get(const py::dict& d, const char* key, T fallback) {
  return d.contains(key) && !d[key].is_none() ? d[key].cast<T>() : fallback;
}

// Rows from the recorder's dicts (keys as run_dict.h names them); a key left
// out keeps its member's default, or the JAX one set here first.
Op ToOp(const py::dict& d) {
  Op op;
  op.framework = "jax";
  RowFromDict(tables::kOps, d, &op, {"id", "name"});
  op.inputs = Get<std::vector<int64_t>>(d, "inputs", {});
  op.outputs = Get<std::vector<int64_t>>(d, "outputs", {});
  return op;
}

Tensor ToTensor(const py::dict& d) {
  Tensor t;
  RowFromDict(tables::kTensors, d, &t, {"id", "dtype"});
  if (!d.contains("storage") || d["storage"].is_none()) t.storage = t.id;  // its own storage
  return t;
}

Frame ToFrame(const py::dict& d) {
  Frame f;
  f.kind = "python";
  RowFromDict(tables::kFrames, d, &f, {"id"});
  return f;
}

Range ToRange(const py::dict& d) {
  Range r;
  r.domain = "jax";
  RowFromDict(tables::kRanges, d, &r, {"id", "name"});
  return r;
}

// Its id is the session's (Place).
Device ToDevice(const py::dict& d) {
  Device dev;
  dev.kind = "gpu";
  RowFromDict(tables::kDevices, d, &dev);
  return dev;
}

// Keeps the first failure of a sequence of writes.
struct FirstError {
  Status first;
  void Keep(Status s) {
    if (!s.ok() && first.ok()) first = std::move(s);
  }
};

std::string HostName() {
  char buf[256] = {0};
  return gethostname(buf, sizeof(buf) - 1) == 0 ? std::string(buf) : std::string();
}

// The writer the CUPTI tracer writes through, shared with the session's own
// writes (one lock). It writes kernels at once, each linked to the top-level
// op whose id was pushed around its launch, and remembers them, so that the
// recorder can relink each one from its jit op to the equation it computes
// (python/magneton/jax/kernels.py) when the recording ends; and it counts
// the tracer's ranges so the named-scope ranges can follow them in the same table.
class KernelHoldingWriter : public ForwardingRunWriter {
 public:
  explicit KernelHoldingWriter(RunWriter* target) : ForwardingRunWriter(target, &mu_) {}

  using ForwardingRunWriter::Add;
  Status Add(const Kernel& k) override {
    return Call([&] {
      seen_.push_back(Seen{k.id, k.name, k.op, k.start_ns, k.end_ns, k.device, k.stream});
      return inner()->Add(k);
    });
  }
  Status Add(const Range& r) override {
    return Call([&] {
      ++ranges_;
      return inner()->Add(r);
    });
  }
  Status LinkKernel(int64_t kernel_id, int64_t op_id) override {
    return Call([&] {
      if (kernel_id >= 0 && kernel_id < static_cast<int64_t>(seen_.size())) seen_[kernel_id].op = op_id;
      return inner()->LinkKernel(kernel_id, op_id);
    });
  }
  // Close (the base's) leaves the real writer to the session.

  // What the relinking needs of a kernel (the rest of its row is in the file).
  struct Seen {
    int64_t id = 0;
    std::string name;
    int64_t op = kNone;
    int64_t start_ns = 0, end_ns = 0;
    int32_t device = 0;
    int64_t stream = 0;
  };
  std::vector<Seen> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  int64_t ranges() const { return ranges_; }
  // Relinks kernel i to `ops[i]` where given (>= -1) and different from its op now.
  void Relink(const std::vector<int64_t>& ops, FirstError* e) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < seen_.size() && i < ops.size(); ++i)
      if (ops[i] >= kNone && ops[i] != seen_[i].op) {
        seen_[i].op = ops[i];
        e->Keep(inner()->LinkKernel(seen_[i].id, ops[i]));
      }
  }

 private:
  std::mutex mu_;
  std::vector<Seen> seen_;  // by kernel id
  int64_t ranges_ = 0;
};

// One recording: the run file is created, energy sampling and kernel tracing
// start at construction; the measured pass runs between construction and
// stop_tracing(); stop() writes everything.
class JaxSession {
 public:
  JaxSession(const std::string& path, bool overwrite, const std::string& energy, bool kernels,
             const std::string& command, int64_t start_ns, const std::vector<py::dict>& devices) {
    info_.command = command;
    info_.host = HostName();
    info_.pid = getpid();
    info_.start_ns = start_ns;
    info_.magneton_version = MAGNETON_VERSION;
    auto writer = RunWriter::Create(path, info_, overwrite);
    ThrowIf(writer.status());
    writer_ = std::move(writer.value());
    holding_ = std::make_unique<KernelHoldingWriter>(writer_.get());
    // Energy first: its GPUs (with uuids) head the device table that the
    // tensors and the tracer's kernels then match, as in the torch recorder.
    auto capture = EnergyCapture::Start(energy, writer_.get(), &devices_, &stats_);
    if (!capture.ok()) {
      (void)writer_->Close();
      ThrowIf(capture.status());
    }
    energy_ = std::move(capture.value());
    bool has_gpu = false;
    for (const auto& d : devices) {
      Device dev = ToDevice(d);
      has_gpu |= dev.kind == "gpu";
      device_ids_.push_back(Place(dev));
    }
    if (kernels && has_gpu) {
      auto k = KernelCorrelation::Start(holding_.get(), &devices_, &writer_mu_, "all");
      if (k.ok())
        kernels_ = std::move(k.value());
      else
        stats_.push_back(MakeStat(stats::kKernelTracingUnavailable, 1, k.error().message));
    }
  }

  ~JaxSession() {
    if (writer_) (void)Finish(py::dict(), 0, {});
  }

  const std::vector<int32_t>& device_ids() const { return device_ids_; }
  bool kernel_tracer() const { return traced_ || kernels_ != nullptr; }
  void Push(uint64_t op_id) {
    if (kernels_) kernels_->Push(op_id);
  }
  void Pop() {
    if (kernels_) kernels_->Pop();
  }
  // The end of one of the program's calls in the measured stretch: a step
  // mark on the run's clock, as the torch recorder's MarkStep writes.
  void MarkStep() {
    if (kernels_) kernels_->Mark(kStepMark, static_cast<int64_t>(gettid()), MonotonicNs());
  }

  // Ends kernel tracing but not the step marks: the program's later calls
  // run untraced, as the torch recorder's later measured steps do
  // (docs/recording.md, "Untraced steps"); notes where (kTracedUntilKey).
  void StopKernelTracing() {
    if (!kernels_) return;
    Status stopped = Status::Ok();
    {
      py::gil_scoped_release release;
      stopped = kernels_->StopTracing();
    }
    if (!stopped.ok()) stats_.push_back(MakeStat(stats::kKernelTracingFailed, 1, stopped.message()));
    info_.extra[kTracedUntilKey] = std::to_string(MonotonicNs());
    ThrowIf(holding_->SetInfo(info_));
  }

  // Ends kernel tracing; returns the kernels seen (written, linked to their
  // top-level op) as {"id", "name", "op", "start_ns", "end_ns", "device", "stream"}, in id order.
  py::list StopTracing() {
    FirstError e;
    if (kernels_) {
      py::gil_scoped_release release;
      e.Keep(kernels_->Stop());
      kernels_.reset();
      traced_ = true;
    }
    if (!e.first.ok()) stats_.push_back(MakeStat(stats::kKernelFlushFailed, 1, e.first.message()));
    py::list out;
    for (const auto& k : holding_->seen()) {
      py::dict d;
      d["id"] = k.id;
      d["name"] = k.name;
      d["op"] = k.op;
      d["start_ns"] = k.start_ns;
      d["end_ns"] = k.end_ns;
      d["device"] = k.device;
      d["stream"] = k.stream;
      out.append(d);
    }
    return out;
  }

  // Writes rows at once ({"frames", "stacks", "tensors", "ops", "config",
  // "extra"}: what one execution of the measured pass made, or what the
  // recording knows before it) and the sensor readings so far, so that a
  // killed recording keeps them.
  void Write(const py::dict& rows) {
    if (!writer_) throw py::value_error("JAX recording already stopped");
    FirstError e;
    {
      // One execution's rows reach the file in one commit: a kill keeps it whole or not at all.
      CommitGroup together(*holding_);
      WriteRows(rows, &e);
    }
    if (rows.contains("extra")) {
      for (auto [k, v] : rows["extra"].cast<py::dict>()) info_.extra[k.cast<std::string>()] = v.cast<std::string>();
      e.Keep(holding_->SetInfo(info_));
    }
    e.Keep(energy_->Drain(holding_.get()));
    ThrowIf(e.first);
  }

  // Relinks the kernels (kernel i to kernel_ops[i] where given), writes the
  // rest of the rows ({"frames", "stacks", "tensors", "ops", "ranges", "stats",
  // "config", "extra", "start_ns"}), the energy series and the run info; closes the file.
  py::dict Stop(const py::dict& rows, int64_t end_ns, const std::vector<int64_t>& kernel_ops) {
    if (!writer_) throw py::value_error("JAX recording already stopped");
    StopTracing();
    const int64_t kernels = static_cast<int64_t>(holding_->seen().size());
    Finish(rows, end_ns, kernel_ops);
    py::dict summary;
    summary["kernel_tracer"] = traced_;
    summary["kernels"] = kernels;
    summary["energy_series"] = energy_series_;
    ThrowIf(result_);
    return summary;
  }

 private:
  // The run id of `dev`: the row with its uuid (or kind and ordinal), else a new, written row.
  int32_t Place(Device dev) {
    for (const auto& d : devices_) {
      bool same = !dev.uuid.empty() && !d.uuid.empty() ? d.uuid == dev.uuid
                                                       : d.kind == dev.kind && d.ordinal == dev.ordinal;
      if (same) return d.id;
    }
    dev.id = static_cast<int32_t>(devices_.size());
    ThrowIf(writer_->Add(dev));
    devices_.push_back(dev);
    return dev.id;
  }

  void WriteRows(const py::dict& rows, FirstError* e) {
    RunWriter& w = *holding_;
    auto each = [&](const char* key, auto convert) {
      if (!rows.contains(key)) return;
      for (auto item : rows[key].cast<py::list>()) e->Keep(w.Add(convert(item.cast<py::dict>())));
    };
    each("frames", ToFrame);
    if (rows.contains("stacks"))
      for (auto item : rows["stacks"].cast<py::list>()) {
        py::dict d = item.cast<py::dict>();
        e->Keep(w.Add(Stack{d["id"].cast<int64_t>(), d["frames"].cast<std::vector<int64_t>>()}));
      }
    each("tensors", ToTensor);
    each("ops", ToOp);
    if (rows.contains("config"))
      for (auto [k, v] : rows["config"].cast<py::dict>())
        e->Keep(w.SetConfig(k.cast<std::string>(), v.cast<std::string>()));
  }

  void Finish(const py::dict& rows, int64_t end_ns, const std::vector<int64_t>& kernel_ops) {
    FirstError e;
    if (kernels_) {
      py::gil_scoped_release release;
      e.Keep(kernels_->Stop());
      kernels_.reset();
    }
    holding_->Relink(kernel_ops, &e);
    WriteRows(rows, &e);
    RunWriter& w = *writer_;
    // Named scopes follow the tracer's NVTX ranges in the same table.
    const int64_t offset = holding_->ranges();
    if (rows.contains("ranges"))
      for (auto item : rows["ranges"].cast<py::list>()) {
        Range r = ToRange(item.cast<py::dict>());
        r.id += offset;
        if (r.parent != kNone) r.parent += offset;
        e.Keep(w.Add(r));
      }
    if (rows.contains("stats"))
      for (auto item : rows["stats"].cast<py::list>()) {
        py::dict d = item.cast<py::dict>();
        stats_.push_back(Stat{d["name"].cast<std::string>(), d["severity"].cast<std::string>(),
                              d["value"].cast<int64_t>(), d["description"].cast<std::string>()});
      }
    for (const auto& s : stats_) e.Keep(w.Add(s));
    energy_series_ = energy_->series_count();
    e.Keep(energy_->Stop(&w));
    RunInfo info = info_;
    if (rows.contains("start_ns")) info.start_ns = rows["start_ns"].cast<int64_t>();  // the measured pass
    info.end_ns = end_ns;
    if (rows.contains("extra"))
      for (auto [k, v] : rows["extra"].cast<py::dict>()) info.extra[k.cast<std::string>()] = v.cast<std::string>();
    e.Keep(w.SetInfo(info));
    e.Keep(w.Close());
    writer_.reset();
    result_ = e.first;
  }

  RunInfo info_;
  std::unique_ptr<RunWriter> writer_;
  std::unique_ptr<KernelHoldingWriter> holding_;
  std::unique_ptr<EnergyCapture> energy_;
  std::unique_ptr<KernelCorrelation> kernels_;
  std::mutex writer_mu_;         // the tracer writes devices under it
  std::vector<Device> devices_;  // the run's device table
  std::vector<int32_t> device_ids_;
  std::vector<Stat> stats_;
  bool traced_ = false;
  int64_t energy_series_ = 0;
  Status result_;
};

}  // namespace
}  // namespace magneton::capture

PYBIND11_MODULE(_jax, m) {
  using magneton::capture::JaxSession;
  m.doc() = "Magneton's JAX run writer (python/magneton/jax_recorder.py drives it)";
  py::class_<JaxSession>(m, "Session")
      .def(py::init<const std::string&, bool, const std::string&, bool, const std::string&, int64_t,
                    const std::vector<py::dict>&>(),
           py::arg("path"), py::arg("overwrite") = false, py::arg("energy") = "none", py::arg("kernels") = true,
           py::arg("command") = "", py::arg("start_ns") = 0, py::arg("devices") = std::vector<py::dict>{})
      .def_property_readonly("device_ids", &JaxSession::device_ids,
                             "Run device ids of the devices passed in, in the same order.")
      .def_property_readonly("kernel_tracer", &JaxSession::kernel_tracer)
      .def("push", &JaxSession::Push, "Kernels launched until pop() belong to this op id.")
      .def("pop", &JaxSession::Pop)
      .def("mark_step", &JaxSession::MarkStep,
           "Marks the end of one of the program's steps (a step mark; nothing without a kernel tracer).")
      .def("stop_kernel_tracing", &JaxSession::StopKernelTracing,
           "Ends kernel tracing; step marks go on (the later calls run untraced).")
      .def("stop_tracing", &JaxSession::StopTracing,
           "Ends kernel tracing; returns the kernels seen (written, linked to their top-level op).")
      .def("write", &JaxSession::Write, py::arg("rows"),
           "Writes rows now (frames, stacks, tensors, ops, config, extra) and the readings so far.")
      .def("stop", &JaxSession::Stop, py::arg("rows"), py::arg("end_ns"),
           py::arg("kernel_ops") = std::vector<int64_t>{},
           "Relinks the kernels (kernel_ops), writes the rest of the rows and the energy series; closes the run file.");
}
