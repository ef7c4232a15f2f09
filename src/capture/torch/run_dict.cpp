#include "capture/torch/run_dict.h"

#include <pybind11/stl.h>

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

py::dict OpDict(const Op& op) {
  py::dict d;
  d["id"] = op.id;
  d["parent"] = op.parent;
  d["name"] = op.name;
  d["schema"] = op.schema;
  d["framework"] = op.framework;
  d["sequence"] = op.sequence;
  d["forward_op"] = op.forward_op;
  d["thread"] = op.thread;
  d["start_ns"] = op.start_ns;
  d["end_ns"] = op.end_ns;
  d["stack"] = op.stack;
  d["device"] = op.device;
  d["inputs"] = op.inputs;
  d["outputs"] = op.outputs;
  d["args"] = op.args;
  return d;
}

py::dict TensorDict(const Tensor& t) {
  py::dict d;
  d["id"] = t.id;
  d["storage"] = t.storage;
  d["offset"] = t.offset;
  d["version"] = t.version;
  d["shape"] = t.shape;
  d["strides"] = t.strides;
  d["dtype"] = t.dtype;
  d["device"] = t.device;
  d["memory"] = t.memory;
  d["fingerprint"] = t.fingerprint ? py::object(FingerprintDict(*t.fingerprint)) : py::none();
  return d;
}

py::dict KernelDict(const Kernel& k) {
  py::dict d;
  d["id"] = k.id;
  d["name"] = k.name;
  d["device"] = k.device;
  d["stream"] = k.stream;
  d["start_ns"] = k.start_ns;
  d["end_ns"] = k.end_ns;
  d["correlation"] = k.correlation;
  d["op"] = k.op;
  return d;
}

template <class Rows, class F>
py::list ListOf(const Rows& rows, F&& f) {
  py::list l;
  for (const auto& r : rows) l.append(f(r));
  return l;
}

}  // namespace

py::dict ReplayDict(const ReplayMeasurement& m) {
  py::dict x;
  x["id"] = m.id;
  x["op"] = m.op;
  x["key"] = m.key;
  x["device"] = m.device;
  x["calls"] = m.calls;
  x["repeats"] = m.repeats;
  x["seconds_per_call"] = m.seconds_per_call;
  // Negative: replayed without an energy sensor (time only).
  x["joules_per_call"] = m.joules_per_call >= 0 ? py::object(py::float_(m.joules_per_call)) : py::none();
  x["idle_watts"] = m.idle_watts;
  x["cv"] = m.cv;
  x["status"] = m.status;
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
  d["devices"] = ListOf(run.devices, [](const Device& v) {
    py::dict x;
    x["id"] = v.id;
    x["kind"] = v.kind;
    x["name"] = v.name;
    x["uuid"] = v.uuid;
    x["ordinal"] = v.ordinal;
    x["memory_bytes"] = v.memory_bytes;
    return x;
  });
  d["ops"] = ListOf(run.ops, OpDict);
  d["tensors"] = ListOf(run.tensors, TensorDict);
  d["kernels"] = ListOf(run.kernels, KernelDict);
  d["frames"] = ListOf(run.frames, [](const Frame& f) {
    py::dict x;
    x["id"] = f.id;
    x["kind"] = f.kind;
    x["function"] = f.function;
    x["file"] = f.file;
    x["line"] = f.line;
    return x;
  });
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
    py::dict x;
    x["device"] = s.device;
    x["sensor"] = s.sensor;
    x["unit"] = s.unit;
    x["source"] = s.source;
    x["points"] = s.t_ns.size();
    return x;
  });
  return d;
}

}  // namespace magneton::capture
