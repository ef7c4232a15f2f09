// magneton._torch bindings of operator replay (python/magneton/op_replay.py wraps them).
#include <pybind11/functional.h>
#include <cmath>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include "capture/torch/replay.h"
#include "capture/torch/run_dict.h"
#include "core/op_signature.h"
#include "core/store.h"

namespace py = pybind11;
using namespace magneton;
using namespace magneton::capture;

namespace magneton::capture {

namespace {

py::dict EntryDict(size_t i, const ReplayEntry& e) {
  py::dict d;
  d["index"] = i;
  d["key"] = e.key;
  d["signature"] = e.signature;
  d["name"] = e.name;
  d["overload"] = e.overload;
  d["ordinal"] = e.ordinal;
  d["top_level"] = e.top_level;
  d["device"] = e.device.str();
  d["random"] = e.random;
  d["unsupported"] = e.unsupported;
  d["recorded_s"] = e.recorded_ns * 1e-9;
  d["outputs"] = e.expected.size();
  bool writes = false;
  for (bool w : e.writes) writes |= w;
  d["in_place"] = writes;
  return d;
}

py::dict ResultDict(const ReplayResult& r) {
  py::dict d = ReplayDict(r.m);
  if (!r.energy) d["joules_per_call"] = py::none();
  d["energy_source"] = r.energy_source;
  d["cuda_graph"] = r.cuda_graph;
  d["detail"] = r.detail;
  return d;
}

// OpSignature over load_run's dicts: only the op's input tensors are read.
std::string DictOpSignature(const py::dict& run, const py::dict& op) {
  const py::list tensors = run["tensors"];
  const auto inputs = op["inputs"].cast<std::vector<int64_t>>();
  std::vector<Tensor> held(inputs.size());
  std::vector<const Tensor*> ptrs(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] < 0 || inputs[i] >= static_cast<int64_t>(tensors.size())) continue;
    const py::dict t = tensors[inputs[i]];
    held[i].dtype = t["dtype"].cast<std::string>();
    held[i].shape = t["shape"].cast<std::vector<int64_t>>();
    ptrs[i] = &held[i];
  }
  return OpSignature(op["name"].cast<std::string>(), ptrs);
}

std::shared_ptr<ReplayEntry> EntryAt(const ReplayCapture& c, size_t i) {
  auto entries = c.entries();
  if (i >= entries.size()) throw py::index_error("replay entry " + std::to_string(i) + " out of range");
  return entries[i];
}

// magneton.op_replay's options dict; absent or None keys keep the defaults.
ReplayOptions OptionsFrom(const py::dict& opts) {
  ReplayOptions o;
  auto num = [&](const char* k, double* v) {
    if (opts.contains(k) && !opts[k].is_none()) *v = opts[k].cast<double>();
  };
  auto integer = [&](const char* k, int* v) {
    if (opts.contains(k) && !opts[k].is_none()) *v = opts[k].cast<int>();
  };
  num("window_s", &o.windows.window_s);
  integer("min_updates", &o.windows.min_updates);
  num("target_rse", &o.windows.target_rse);
  integer("min_repeats", &o.windows.min_repeats);
  integer("max_repeats", &o.windows.max_repeats);
  num("host_window_s", &o.windows.host_window_s);
  num("op_budget_s", &o.op_budget_s);
  num("budget_s", &o.total_budget_s);
  num("idle_s", &o.idle_s);
  num("fingerprint_rtol", &o.fingerprint_rtol);
  if (opts.contains("energy")) o.energy = opts["energy"].cast<std::string>();
  if (opts.contains("progress")) o.progress = opts["progress"].cast<bool>();
  return o;
}

py::dict ReportDict(const ReplayReport& rep) {
  py::dict out;
  py::list results;
  for (const auto& r : rep.results) results.append(ResultDict(r));
  out["results"] = results;
  py::list stats;
  for (const auto& s : rep.stats) {
    py::dict x;
    x["name"] = s.name;
    x["severity"] = s.severity;
    x["value"] = s.value;
    x["description"] = s.description;
    stats.append(x);
  }
  out["stats"] = stats;
  out["idle_watts"] = rep.idle_watts;
  out["energy_reason"] = rep.energy_reason;
  return out;
}

py::dict Replay(const ReplayCapture& c, const py::dict& opts, const RunnerFactory& runners) {
  const ReplayOptions o = OptionsFrom(opts);
  auto entries = c.entries();
  Result<ReplayReport> rep = [&] {
    py::gil_scoped_release release;
    return RunReplay(entries, o, runners);
  }();
  if (!rep.ok()) throw std::runtime_error(rep.error().message);
  return ReportDict(rep.value());
}

std::vector<at::Tensor> EntryInputs(const ReplayCapture& c, size_t i) {
  std::vector<at::Tensor> ts;
  for (const auto& v : EntryAt(c, i)->args) {
    if (v.isTensor() && v.toTensor().defined()) ts.push_back(v.toTensor());
    if (v.isList())
      for (const auto& e : v.toListRef())
        if (e.isTensor() && e.toTensor().defined()) ts.push_back(e.toTensor());
  }
  return ts;
}

void CorruptFingerprint(const ReplayCapture& c, size_t i) {
  auto e = EntryAt(c, i);
  for (auto& fp : e->expected) {
    fp.mean += 1 + std::fabs(fp.mean);
    for (auto& q : fp.quantiles) q += 1 + std::fabs(q);
  }
}

std::unique_ptr<ReplayCapture> StartCapture(bool all, std::vector<std::string> signatures,
                                            std::vector<std::string> names, bool top_level_only) {
  ReplaySelection s;
  s.all = all;
  s.signatures.insert(signatures.begin(), signatures.end());
  s.names.insert(names.begin(), names.end());
  s.top_level_only = top_level_only;
  auto r = ReplayCapture::Start(std::move(s), FingerprintOptions{});
  if (!r.ok()) throw py::value_error(r.error().message);
  return std::move(r.value());
}

// One row of magneton.op_replay's results, as AppendReplays stores it.
ReplayMeasurement MeasurementFrom(const py::dict& d) {
  ReplayMeasurement r;
  r.op = d["op"].cast<int64_t>();
  r.key = d["key"].cast<std::string>();
  r.device = d["device"].cast<int32_t>();
  r.calls = d["calls"].cast<int64_t>();
  r.repeats = d["repeats"].cast<int32_t>();
  r.seconds_per_call = d["seconds_per_call"].cast<double>();
  r.joules_per_call = d["joules_per_call"].is_none() ? -1.0 : d["joules_per_call"].cast<double>();
  r.idle_watts = d["idle_watts"].cast<double>();
  r.cv = d["cv"].cast<double>();
  r.status = d["status"].cast<std::string>();
  return r;
}

void AppendReplayRows(const std::string& path, const std::vector<py::dict>& rows) {
  std::vector<ReplayMeasurement> ms;
  for (const auto& d : rows) ms.push_back(MeasurementFrom(d));
  Status st = [&] {
    py::gil_scoped_release release;
    return AppendReplays(path, ms);
  }();
  if (!st.ok()) throw std::runtime_error(st.error().message);
}

}  // namespace

void BindReplay(py::module& m) {
  py::class_<ReplayCapture>(m, "ReplayCapture")
      .def(py::init(&StartCapture), py::arg("all") = false, py::arg("signatures") = std::vector<std::string>{},
           py::arg("names") = std::vector<std::string>{}, py::arg("top_level_only") = false)
      .def("stop", &ReplayCapture::Stop)
      .def("seen", &ReplayCapture::seen)
      .def("entries",
           [](const ReplayCapture& c) {
             py::list out;
             auto entries = c.entries();
             for (size_t i = 0; i < entries.size(); ++i) out.append(EntryDict(i, *entries[i]));
             return out;
           })
      .def("inputs", &EntryInputs, "The captured (cloned) tensor inputs of entry i.")
      .def("call", [](const ReplayCapture& c, size_t i, int64_t n) { CallEntry(*EntryAt(c, i), n); },
           "n plain calls of entry i (used to capture a CUDA graph).")
      .def("_corrupt_fingerprint", &CorruptFingerprint, "Test hook: makes entry i's recorded output fingerprints wrong.")
      .def("replay", &Replay, py::arg("options"), py::arg("runners") = RunnerFactory{},
           "Replays every captured entry; returns {results, stats, idle_watts, energy_reason}.");
  m.def("op_signature", &DictOpSignature, py::arg("run"), py::arg("op"),
        "The signature replays are keyed by (core/op_signature.h) of an op of load_run's dicts.");
  m.def("append_replays", &AppendReplayRows, py::arg("path"), py::arg("rows"),
        "Adds replay measurements to a finished run file.");
}

}  // namespace magneton::capture
