// magneton._energy: the C++ Monitor (named energy windows) and the trace
// clock for Python. python/magneton/monitor.py is the public face.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>

#include "energy/clock.h"
#include "energy/measure_command.h"
#include "energy/monitor.h"

namespace py = pybind11;
using namespace magneton;
using namespace magneton::energy;

namespace {

py::dict DeviceDict(const Device& d) {
  py::dict o;
  o["label"] = DeviceLabel(d);
  o["kind"] = d.kind;
  o["name"] = d.name;
  o["uuid"] = d.uuid;
  o["ordinal"] = d.ordinal;
  return o;
}

py::dict MeasurementDict(const Measurement& m) {
  py::dict o;
  o["name"] = m.name;
  o["start_ns"] = m.start_ns;
  o["end_ns"] = m.end_ns;
  o["time_s"] = m.time_s;
  o["available"] = m.available;
  o["reason"] = m.available ? py::object(py::none()) : py::object(py::str(m.reason));
  py::list devices;
  for (const auto& d : m.devices) {
    py::dict e = DeviceDict(d.device);
    e["joules"] = d.joules;
    e["avg_w"] = d.avg_w;
    e["peak_w"] = d.peak_w;
    e["method"] = d.method;
    e["source"] = d.source;
    e["estimate"] = d.estimate;
    devices.append(e);
  }
  o["devices"] = devices;
  o["total_j"] = m.available ? py::object(py::float_(AddableJoules(m.devices))) : py::object(py::none());
  return o;
}

// Holds the Monitor behind a pointer so stop() can end its samplers early.
class PyMonitor {
 public:
  explicit PyMonitor(const SamplerOptions& options) {
    py::gil_scoped_release release;  // opening NVML takes a while
    monitor_ = std::make_unique<Monitor>(options);
  }
  Monitor& get() {
    if (!monitor_) throw py::value_error("the Monitor is stopped");
    return *monitor_;
  }
  void stop() {
    py::gil_scoped_release release;
    monitor_.reset();
  }

 private:
  std::unique_ptr<Monitor> monitor_;
};

}  // namespace

PYBIND11_MODULE(_energy, m) {
  m.doc() = "Magneton energy sampling: named measurement windows over NVML, RAPL, a meter and procfs.";
  m.def("clock_ns", &NowNs, "The trace clock: CLOCK_MONOTONIC in ns (same as time.monotonic_ns()).");

  py::class_<PyMonitor>(m, "Monitor")
      .def(py::init([](bool nvml, bool rapl, bool procfs, std::vector<int> gpus, std::string meter,
                       int poll_interval_us, int energy_poll_interval_us, double cpu_watts_per_core,
                       std::string powercap_root, double retain_s) {
             SamplerOptions o;
             o.nvml = nvml;
             o.rapl = rapl;
             o.procfs = procfs;
             o.gpus = std::move(gpus);
             o.meter = std::move(meter);
             o.poll_interval_us = poll_interval_us;
             o.energy_poll_interval_us = energy_poll_interval_us;
             o.cpu_watts_per_core = cpu_watts_per_core;
             o.powercap_root = std::move(powercap_root);
             o.retain_s = retain_s;
             return std::make_unique<PyMonitor>(o);
           }),
           py::arg("nvml") = true, py::arg("rapl") = true, py::arg("procfs") = true,
           py::arg("gpus") = std::vector<int>{}, py::arg("meter") = "", py::arg("poll_interval_us") = 2000,
           py::arg("energy_poll_interval_us") = 15000, py::arg("cpu_watts_per_core") = 5.0,
           py::arg("powercap_root") = "/sys/class/powercap", py::arg("retain_s") = 3600.0)
      .def("begin_window",
           [](PyMonitor& self, const std::string& name) {
             Status st = self.get().BeginWindow(name);
             if (!st.ok()) throw py::value_error(st.message());
           })
      .def(
          "end_window",
          [](PyMonitor& self, const std::string& name, bool settle) {
            Result<Measurement> r = MakeError(ErrorCode::kInternal, "");
            {
              py::gil_scoped_release release;  // settling may wait up to 0.3 s
              r = self.get().EndWindow(name, settle);
            }
            if (!r.ok()) throw py::value_error(r.error().message);
            return MeasurementDict(*r);
          },
          py::arg("name"), py::arg("settle") = false)
      .def("open_windows", [](PyMonitor& self) { return self.get().OpenWindows(); })
      .def_property_readonly("available", [](PyMonitor& self) { return self.get().available(); })
      .def_property_readonly("reason", [](PyMonitor& self) { return self.get().reason(); })
      .def("problems",
           [](PyMonitor& self) {
             py::list out;
             for (const Stat& s : self.get().problems()) {
               py::dict d;
               d["name"] = s.name;
               d["severity"] = s.severity;
               d["description"] = s.description;
               out.append(d);
             }
             return out;
           })
      .def("series",
           [](PyMonitor& self) {
             Run run = self.get().Snapshot();
             py::list out;
             for (const SensorSeries& s : run.series) {
               if (s.device < 0 || s.device >= static_cast<int32_t>(run.devices.size())) continue;
               py::dict d = DeviceDict(run.devices[static_cast<size_t>(s.device)]);
               d["sensor"] = s.sensor;
               d["unit"] = s.unit;
               d["source"] = s.source;
               d["t_ns"] = s.t_ns;
               d["value"] = s.value;
               out.append(d);
             }
             return out;
           },
           "Every reading so far (changes only, stamped on clock_ns()).")
      .def("stop", &PyMonitor::stop);
}
