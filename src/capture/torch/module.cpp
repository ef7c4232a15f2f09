// magneton._torch: the Python face of the torch recorder and fingerprints.
// python/magneton/recorder.py wraps it in `magneton.record(...)`.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include "capture/torch/framework_call.h"
#include "capture/torch/fingerprint.h"
#include "capture/torch/kernel_link.h"
#include "capture/torch/recorder.h"
#include "capture/torch/run_dict.h"
#include "core/store.h"

namespace py = pybind11;

namespace magneton::capture {
void BindReplay(py::module& m);  // replay_bindings.cpp
}
using namespace magneton;
using namespace magneton::capture;

namespace {

[[noreturn]] void Raise(const Error& e) {
  switch (e.code) {
    case ErrorCode::kInvalidArgument: throw py::value_error(e.message);
    case ErrorCode::kNotFound: {
      PyErr_SetString(PyExc_FileNotFoundError, e.message.c_str());
      throw py::error_already_set();
    }
    default: throw std::runtime_error(e.message);
  }
}

template <class T>
T Take(Result<T> r) {
  if (!r.ok()) Raise(r.error());
  return std::move(r.value());
}

py::dict SummaryDict(const RecordSummary& s) {
  py::dict d;
  d["ops"] = s.ops;
  d["tensors"] = s.tensors;
  d["frames"] = s.frames;
  d["stacks"] = s.stacks;
  d["graph_inputs"] = s.graph_inputs;
  d["aliased_inputs"] = s.aliased_inputs;
  d["fingerprints"] = s.fingerprints;
  d["fingerprint_failures"] = s.fingerprint_failures;
  d["skipped_tensors"] = s.skipped_tensors;
  d["kernel_tracer"] = s.kernel_tracer;
  d["kernels"] = s.kernels;
  d["kernels_by_correlation"] = s.kernels_by_correlation;
  d["kernels_by_time"] = s.kernels_by_time;
  d["recorder_kernels"] = s.recorder_kernels;
  d["energy_series"] = s.energy_series;
  d["store_waits"] = s.store_waits;
  return d;
}

FingerprintOptions FingerprintOpts(int quantiles, int spectrum_values, int64_t max_numel, int64_t max_side) {
  FingerprintOptions o;
  o.quantiles = quantiles;
  o.spectrum_values = spectrum_values;
  o.spectra_max_numel = max_numel;
  o.spectra_max_side = max_side;
  return o;
}

RecordPhase PhaseNamed(const std::string& name) {
  if (name == "paused") return RecordPhase::kPaused;
  if (name == "recording") return RecordPhase::kRecording;
  if (name == "measured") return RecordPhase::kMeasured;
  throw py::value_error("phase '" + name + "': expected paused, recording or measured");
}

std::unique_ptr<Recorder> StartRecorder(const std::string& path, bool overwrite, bool fingerprints, bool ops,
                                        const std::string& phase, bool stacks, bool kernels, const std::string& energy,
                                        const std::string& command,
                                        const std::vector<py::dict>& devices, int quantiles,
                                        int spectrum_values, int64_t max_numel, int64_t max_side) {
  RecorderOptions o;
  o.path = path;
  o.overwrite = overwrite;
  o.fingerprints = fingerprints;
  o.ops = ops;  // in the measured phase; the recording phase always records them
  o.first_phase = PhaseNamed(phase);
  o.stacks = stacks;
  o.kernels = kernels;
  o.energy = energy;
  o.fingerprint = FingerprintOpts(quantiles, spectrum_values, max_numel, max_side);
  o.info.command = command;
  for (const auto& d : devices) {
    Device dev;
    dev.kind = d["kind"].cast<std::string>();
    dev.ordinal = d["ordinal"].cast<int32_t>();
    dev.name = d["name"].cast<std::string>();
    dev.uuid = d["uuid"].cast<std::string>();
    dev.memory_bytes = d["memory_bytes"].cast<int64_t>();
    o.devices.push_back(dev);
  }
  return Take(Recorder::Start(o));
}

// Test hook for the time-window kernel linking: writes `kernels` and their
// launching `api_calls` through a LaunchIndex into a new run at `path`, links
// them to `ops` and returns {kernel id: op id}. Rows are tuples:
// ops (id, parent, thread, start, end); api_calls (correlation, thread, start);
// kernels (id, correlation, op); recorder_work (start, end).
py::dict LinkKernelsByTime(const std::string& path, const std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>>& ops,
                           const std::vector<std::tuple<int64_t, int64_t, int64_t>>& api_calls,
                           const std::vector<std::tuple<int64_t, int64_t, int64_t>>& kernels,
                           const std::unordered_map<int64_t, int64_t>& thread_ids,
                           const std::vector<std::pair<int64_t, int64_t>>& recorder_work) {
  auto writer = Take(RunWriter::Create(path, RunInfo{}, true));
  LaunchIndex index(writer.get());
  std::vector<OpSpan> rows;
  for (const auto& [id, parent, thread, start, end] : ops) {
    Op op;
    op.id = id;
    op.parent = parent;
    op.thread = thread;
    op.start_ns = start;
    op.end_ns = end;
    op.name = "op" + std::to_string(id);
    if (Status st = writer->Add(op); !st.ok()) Raise(st.error());
    rows.push_back({parent, thread, start, end});
  }
  int64_t next_call = 0;
  for (const auto& [corr, thread, start] : api_calls) {
    ApiCall a;
    a.id = next_call++;
    a.name = "cudaLaunchKernel";
    a.correlation = corr;
    a.thread = thread;
    a.start_ns = start;
    a.end_ns = start + 1;
    if (Status st = index.Add(a); !st.ok()) Raise(st.error());
  }
  for (const auto& [id, corr, op] : kernels) {
    Kernel k;
    k.id = id;
    k.correlation = corr;
    k.op = op;
    if (Status st = index.Add(k); !st.ok()) Raise(st.error());
  }
  auto counts = Take(index.LinkByTime(rows, thread_ids, recorder_work));
  if (Status st = writer->Close(); !st.ok()) Raise(st.error());
  Run run = Take(LoadRun(path));
  py::dict out;
  for (const auto& k : run.kernels) out[py::int_(k.id)] = k.op;
  out["by_time"] = counts.by_time;
  out["by_correlation"] = counts.by_correlation;
  out["recorder_work"] = counts.recorder_work;
  return out;
}

}  // namespace

PYBIND11_MODULE(_torch, m) {
  m.doc() = "Magneton's PyTorch recorder (ATen ops, dataflow, fingerprints) and run reader";

  py::class_<Recorder>(m, "Recorder")
      .def(py::init(&StartRecorder), py::arg("path"), py::arg("overwrite") = false,
           py::arg("fingerprints") = false, py::arg("ops") = true, py::arg("phase") = "measured",
           py::arg("stacks") = true, py::arg("kernels") = true,
           py::arg("energy") = "none", py::arg("command") = "", py::arg("devices") = std::vector<py::dict>{},
           py::arg("quantiles") = 33, py::arg("spectrum_values") = 6, py::arg("spectra_max_numel") = 1 << 24,
           py::arg("spectra_max_side") = 4096)
      .def("set_config", &Recorder::SetConfig)
      .def("set_info", &Recorder::SetInfoExtra)
      .def("mark_step", &Recorder::MarkStep, "Marks the end of one of the program's steps (the host's period).")
      .def(
          "stop_kernel_tracing",
          [](Recorder& r, double idle_hold_s) {
            py::gil_scoped_release release;
            r.StopKernelTracing(static_cast<int64_t>(idle_hold_s * 1e9));
          },
          py::arg("idle_hold_s") = 0.0,
          "Ends kernel tracing and detaches CUPTI; later steps record marks and energy only. idle_hold_s: "
          "first hold the (synchronized) device idle that long, samplers on.")
      .def("rows_held", &Recorder::RowsHeld, "Operator rows in memory, not yet written to the run file.")
      .def("count_ops", &Recorder::SetOpCounting, py::arg("on"),
           "Counts operator calls that compute (not those that only make, move or view data), without recording "
           "them.")
      .def_static("counted_ops", &Recorder::CountedOps, "Computing operator calls counted so far (count_ops).")
      .def(
          "set_phase",
          [](Recorder& r, const std::string& phase) {
            if (Status st = r.SetPhase(PhaseNamed(phase)); !st.ok()) Raise(st.error());
          },
          py::arg("phase"), "paused, recording (fingerprints) or measured: what is recorded until the next switch.")
      .def(
          "stop",
          [](Recorder& r, double idle_hold_s) {
            Result<RecordSummary> s = [&] {
              py::gil_scoped_release release;
              return r.Stop(static_cast<int64_t>(idle_hold_s * 1e9));
            }();
            return SummaryDict(Take(std::move(s)));
          },
          py::arg("idle_hold_s") = 0.0,
          "Stops recording and writes the run file; returns counts. idle_hold_s: after the run's window, hold "
          "the (synchronized) device idle that long, samplers on.");

  py::class_<FrameworkCall>(m, "FrameworkCall",
                            "A framework's call from Python recorded as an operator (framework_call.h).")
      .def(py::init<std::string, const std::vector<at::Tensor>&>(), py::arg("name"), py::arg("inputs"))
      .def("end", &FrameworkCall::End, py::arg("outputs"));

  m.def(
      "fingerprint",
      [](const at::Tensor& t, int quantiles, int spectrum_values, int64_t max_numel, int64_t max_side) {
        Result<Fingerprint> fp = [&] {
          py::gil_scoped_release release;
          return ComputeFingerprint(t, FingerprintOpts(quantiles, spectrum_values, max_numel, max_side));
        }();
        return FingerprintDict(Take(std::move(fp)));
      },
      py::arg("tensor"), py::arg("quantiles") = 33, py::arg("spectrum_values") = 6,
      py::arg("spectra_max_numel") = 1 << 24, py::arg("spectra_max_side") = 4096,
      "Layout-invariant fingerprint of a tensor (docs/fingerprints.md).");

  m.def(
      "load_run",
      [](const std::string& path) {
        Result<Run> run = [&] {
          py::gil_scoped_release release;
          return LoadRun(path);
        }();
        return RunDict(Take(std::move(run)));
      },
      py::arg("path"), "Loads a .mgt run file into plain Python dicts and lists.");

  BindReplay(m);

  m.def("_link_kernels_by_time", &LinkKernelsByTime, py::arg("path"), py::arg("ops"), py::arg("api_calls"),
        py::arg("kernels"), py::arg("thread_ids"), py::arg("recorder_work") = std::vector<std::pair<int64_t, int64_t>>{},
        "Test hook for kernel-to-op linking by time window.");
}
