// `magneton doctor`: what this machine can measure, each part "usable" or
// "not usable: why". Always exits 0: it reports, it does not judge.
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <memory>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/python_env.h"
#include "energy/child_process.h"
#include "energy/nvml_sampler.h"
#include "energy/procfs_sampler.h"
#include "energy/rapl_sampler.h"

namespace magneton::cli {

namespace {

struct DoctorArgs {
  bool json = false;
  std::string powercap_root = "/sys/class/powercap";
  std::string perf_power_root = "/sys/bus/event_source/devices/power";
};

// One line of the report: a part, whether it is usable, and the detail or why not.
struct Check {
  explicit Check(std::string p) : part(std::move(p)) {}
  std::string part;
  bool usable = false;
  std::string detail;
  std::vector<std::string> notes;  // indented lines under it
};

Check CheckNvml(nlohmann::json* gpus_json) {
  Check c{"GPUs (NVML)"};
  auto probe = energy::ProbeNvml();
  if (!probe.ok()) {
    c.detail = probe.error().message;
    return c;
  }
  c.usable = !probe->gpus.empty();
  c.detail = fmt::format("driver {}, NVML {}, {} GPU(s)", probe->driver_version, probe->nvml_version, probe->gpus.size());
  if (!c.usable) c.detail += ": none visible (CUDA_VISIBLE_DEVICES?)";
  auto state = [](const std::string& why) { return why.empty() ? std::string("usable") : "not usable: " + why; };
  for (const auto& g : probe->gpus) {
    c.notes.push_back(fmt::format("gpu{} {} ({}, pci {}, {:.0f} GiB, power limit {:.0f} W)", g.device.ordinal,
                                  g.device.name, g.device.uuid, g.pci_bus_id, g.device.memory_bytes / 1073741824.0,
                                  g.power_limit_w));
    c.notes.push_back("  energy counter: " + state(g.energy_counter));
    c.notes.push_back("  instant power (field 186): " + state(g.power_instant));
    c.notes.push_back("  power usage: " + state(g.power_usage));
    gpus_json->push_back({{"ordinal", g.device.ordinal}, {"name", g.device.name}, {"uuid", g.device.uuid},
                          {"pci_bus_id", g.pci_bus_id}, {"memory_bytes", g.device.memory_bytes},
                          {"power_limit_w", g.power_limit_w}, {"energy_counter", state(g.energy_counter)},
                          {"power_instant", state(g.power_instant)}, {"power_usage", state(g.power_usage)}});
  }
  return c;
}

// CUPTI is loaded into the workload by the injection library; here only
// whether it can be found and which version it is.
Check CheckCupti() {
  Check c{"CUPTI"};
  std::vector<std::string> candidates = {"libcupti.so.13", "libcupti.so"};
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* home = std::getenv(env)) {
      candidates.push_back(std::string(home) + "/extras/CUPTI/lib64/libcupti.so");
      candidates.push_back(std::string(home) + "/lib64/libcupti.so");
    }
  candidates.push_back("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so");
  candidates.push_back("/usr/local/cuda/lib64/libcupti.so");
  std::string first_error;
  for (const std::string& name : candidates) {
    // RTLD_NODELETE: libcupti links its own static libstdc++, whose initializer
    // mallocs the exception emergency pool (72 KiB) and keeps it only in
    // libcupti's data; unloading it would leak that block (LeakSanitizer
    // reports it, and the sanitizer build then exits 1).
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib) {
      if (first_error.empty()) first_error = dlerror();
      continue;
    }
    using GetVersion = int (*)(uint32_t*);
    auto get_version = reinterpret_cast<GetVersion>(dlsym(lib, "cuptiGetVersion"));
    uint32_t version = 0;
    if (get_version && get_version(&version) == 0) {
      c.usable = true;
      c.detail = fmt::format("{}, CUPTI API version {}", name, version);
    } else {
      c.detail = name + ": loaded, but cuptiGetVersion failed";
    }
    dlclose(lib);
    return c;
  }
  c.detail = "libcupti not found (" + first_error + "); add the CUDA toolkit's CUPTI lib folder to LD_LIBRARY_PATH";
  return c;
}

Check CheckRapl(const std::string& root) {
  Check c{"RAPL (powercap)"};
  auto zones = energy::ScanPowercap(root);
  if (!zones.ok()) {
    c.detail = zones.error().message;
    return c;
  }
  int readable = 0;
  for (const auto& z : *zones) {
    if (z.problem.empty()) ++readable;
    c.notes.push_back(fmt::format("{} ({}): {}", z.name, z.dir, z.problem.empty() ? "usable" : "not usable: " + z.problem));
  }
  c.usable = readable > 0;
  c.detail = fmt::format("{} of {} zones readable", readable, zones->size());
  return c;
}

Check CheckPerfPower(const std::string& root) {
  Check c{"perf power PMU"};
  auto pmu = energy::ProbePerfPower(root);
  if (!pmu.ok()) {
    c.detail = pmu.error().message;
    return c;
  }
  c.usable = true;
  std::string events;
  for (const auto& e : pmu->events) events += (events.empty() ? "" : ", ") + e.name;
  c.detail = fmt::format("type {}, events {}", pmu->type, events);
  return c;
}

Check CheckProcfs() {
  Check c{"CPU activity (procfs)"};
  auto sampler = energy::OpenProcfsSampler(energy::SamplerOptions{});
  c.usable = sampler.ok();
  c.detail = sampler.ok() ? "per-process and per-thread CPU time; CPU energy only as an estimate"
                          : sampler.error().message;
  return c;
}

// Imports a framework in a fresh interpreter and reports its version and devices.
Check CheckPython(const std::string& python, const std::string& part, const std::string& code,
                  nlohmann::json* out) {
  Check c{part};
  auto r = energy::RunCaptured({python, "-c", code}, 90);
  if (!r.ok()) {
    c.detail = r.error().message + " (set MAGNETON_PYTHON)";
    return c;
  }
  if (r->timed_out) {
    c.detail = "importing it took more than 90 s";
    return c;
  }
  nlohmann::json j = nlohmann::json::parse(r->out, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    c.detail = fmt::format("{} exited with {} and no report", python, r->exit_code);
    return c;
  }
  *out = j;
  if (j.contains("error")) {
    // Not installed for this interpreter: most often another one has it (a venv).
    c.detail = fmt::format("{} (checked with {}; set MAGNETON_PYTHON to the interpreter that has it)",
                           j["error"].get<std::string>(), python);
    return c;
  }
  c.usable = true;
  c.detail = j.value("summary", "");
  return c;
}

const char* kTorchProbe = R"PY(
import json
try:
    import torch
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    names = [torch.cuda.get_device_name(i) for i in range(n)]
    try:
        import magneton.recorder
        magneton.recorder.extension()
        recorder = "the recorder (magneton._torch) loads"
    except Exception as e:
        recorder = "the recorder does not load: %s" % e
    print(json.dumps({"version": torch.__version__, "cuda": torch.version.cuda, "cuda_available": n > 0,
                      "devices": names, "recorder": recorder, "summary": "%s (CUDA %s), CUDA available: %s%s; %s" % (
                          torch.__version__, torch.version.cuda, "yes" if n else "no",
                          (", " + ", ".join(names)) if names else "", recorder)}))
except Exception as e:
    print(json.dumps({"error": "import torch failed: %s: %s" % (type(e).__name__, e)}))
)PY";

const char* kJaxProbe = R"PY(
import json, os
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
try:
    import jax
    devs = jax.devices()
    backend = jax.default_backend()
    print(json.dumps({"version": jax.__version__, "backend": backend, "devices": [str(d) for d in devs],
                      "cuda_available": backend == "gpu",
                      "summary": "%s, backend %s, %d device(s)" % (jax.__version__, backend, len(devs))}))
except Exception as e:
    print(json.dumps({"error": "import jax failed: %s: %s" % (type(e).__name__, e)}))
)PY";

int Doctor(const DoctorArgs& a) {
  const std::string python = ProjectPython();
  AddCheckoutToPythonPath();
  nlohmann::json gpus = nlohmann::json::array(), torch_json, jax_json;
  std::vector<Check> checks = {CheckNvml(&gpus), CheckCupti(), CheckRapl(a.powercap_root),
                               CheckPerfPower(a.perf_power_root), CheckProcfs(),
                               CheckPython(python, "torch", kTorchProbe, &torch_json),
                               CheckPython(python, "JAX", kJaxProbe, &jax_json)};
  if (a.json) {
    nlohmann::json j;
    j["python"] = python;
    for (const auto& c : checks)
      j["checks"].push_back({{"part", c.part}, {"usable", c.usable}, {"detail", c.detail}, {"notes", c.notes}});
    j["gpus"] = gpus;
    j["torch"] = torch_json;
    j["jax"] = jax_json;
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }
  fmt::print("magneton doctor: what this machine can measure (python: {})\n\n", python);
  for (const auto& c : checks) {
    fmt::print("  {:<22} {}: {}\n", c.part, c.usable ? "usable" : "not usable", c.detail);
    for (const auto& n : c.notes) fmt::print("  {:<22}   {}\n", "", n);
  }
  bool energy = checks[0].usable || checks[2].usable || checks[3].usable;
  fmt::print("\n  {}\n", energy ? "Energy can be measured here."
                                : "No energy sensor here: `measure` and recordings report time and CPU activity only.");
  return kExitOk;
}

}  // namespace

void RegisterDoctor(CLI::App& app, Action& run) {
  auto args = std::make_shared<DoctorArgs>();
  auto* sub = app.add_subcommand("doctor", "Show what this machine can measure (GPUs, CUPTI, RAPL, frameworks)");
  sub->add_flag("--json", args->json, "Report as JSON");
  sub->add_option("--powercap-root", args->powercap_root, "Where powercap zones live (testing)")
      ->default_val(args->powercap_root);
  sub->add_option("--perf-power-root", args->perf_power_root, "Where the perf power PMU lives (testing)")
      ->default_val(args->perf_power_root);
  sub->footer("Python frameworks are checked with $MAGNETON_PYTHON, else python3.");
  sub->callback([args, &run] { run = [args] { return Doctor(*args); }; });
}

}  // namespace magneton::cli
