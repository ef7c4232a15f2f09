#include "capture/torch/run_dict.h"

namespace py = pybind11;

namespace magneton::capture {

py::dict FingerprintDict(const Fingerprint& fp) {
  py::dict d;
  d["numel"] = fp.numel;
  d["mean"] = fp.mean;
  d["stddev"] = fp.stddev;
  d["min"] = fp.min;
  d["max"] = fp.max;
  d["l1"] = fp.l1;
  d["l2"] = fp.l2;
  d["quantiles"] = fp.quantiles;
  d["spectra"] = fp.spectra;
  return d;
}

namespace {

template <class T>
T Get(const py::dict& d, const char* key, T fallback) {
  return d.contains(key) && !d[key].is_none() ? d[key].cast<T>() : fallback;
}

template <class Rows, class F>
py::list ListOf(const Rows& rows, F&& f) {
  py::list l;
  for (const auto& r : rows) l.append(f(r));
  return l;
}

template <class T>
py::list TableList(const T& table, const std::vector<typename T::Row>& rows) {
  return ListOf(rows, [&](const auto& row) { return RowDict(table, row); });
}

}  // namespace

Fingerprint FingerprintFromDict(const py::dict& d) {
  Fingerprint fp;
  fp.numel = Get<int64_t>(d, "numel", 0);
  fp.mean = Get<double>(d, "mean", 0);
  fp.stddev = Get<double>(d, "stddev", 0);
  fp.min = Get<double>(d, "min", 0);
  fp.max = Get<double>(d, "max", 0);
  fp.l1 = Get<double>(d, "l1", 0);
  fp.l2 = Get<double>(d, "l2", 0);
  fp.quantiles = Get<std::vector<float>>(d, "quantiles", {});
  fp.spectra = Get<std::vector<std::vector<float>>>(d, "spectra", {});
  return fp;
}

py::dict ReplayDict(const ReplayMeasurement& m) {
  py::dict x = RowDict(tables::kReplays, m);
  // Negative: replayed without an energy sensor (time only).
  if (m.joules_per_call < 0) x["joules_per_call"] = py::none();
  return x;
}

py::dict RunDict(const Run& run) {
  py::dict d;
  py::dict info;
  info["command"] = run.info.command;
  info["host"] = run.info.host;
  info["clock_domain"] = run.info.clock_domain;
  info["magneton_version"] = run.info.magneton_version;
  info["pid"] = run.info.pid;
  info["start_ns"] = run.info.start_ns;
  info["end_ns"] = run.info.end_ns;
  info["extra"] = run.info.extra;
  d["info"] = info;
  d["devices"] = TableList(tables::kDevices, run.devices);
  d["ops"] = ListOf(run.ops, [](const Op& op) {
    py::dict x = RowDict(tables::kOps, op);
    x["inputs"] = op.inputs;
    x["outputs"] = op.outputs;
    return x;
  });
  d["tensors"] = TableList(tables::kTensors, run.tensors);
  d["kernels"] = TableList(tables::kKernels, run.kernels);
  d["api_calls"] = TableList(tables::kApiCalls, run.api_calls);
  d["frames"] = TableList(tables::kFrames, run.frames);
  d["stacks"] = ListOf(run.stacks, [](const Stack& s) { return py::cast(s.frames); });
  d["config"] = run.config;
  d["stats"] = ListOf(run.stats, [](const Stat& s) {
    py::dict x;
    x["name"] = s.name;
    x["severity"] = s.severity;
    x["value"] = s.value;
    x["description"] = s.description;
    return x;
  });
  d["replays"] = ListOf(run.replays, ReplayDict);
  d["series"] = ListOf(run.series, [](const SensorSeries& s) {
    py::dict x = RowDict(tables::kSeries, s);
    x["points"] = s.t_ns.size();
    return x;
  });
  return d;
}

}  // namespace magneton::capture
