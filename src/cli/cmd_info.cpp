// `magneton info RUN [--json]`: what a run file holds. The command, host and
// clock; its devices; how many rows of each kind; each device's energy when
// the run has energy or power readings; and the problems counted while
// recording (stats), so a user sees data loss before trusting a diff.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/store.h"
#include "energy/energy_curve.h"
#include "report/format.h"

namespace magneton::cli {
namespace {

struct InfoArgs {
  std::string run;
  bool json = false;
};

struct DeviceEnergy {
  const Device* device;
  double joules;
  double seconds;  // span of the readings the joules cover
  std::string method, source;
};

// Per device: the energy counter's last minus first reading when the run has
// one (exact over the span it covers); else the integral of its power series,
// from the same curve every other command uses (energy/energy_curve.h).
std::vector<DeviceEnergy> EnergyPerDevice(const Run& run) {
  std::vector<DeviceEnergy> out;
  for (const auto& d : run.devices) {
    const SensorSeries* counter = run.FindSeries(d.id, "energy.total");
    if (counter && counter->value.size() >= 2) {
      out.push_back({&d, counter->value.back() - counter->value.front(),
                     (counter->t_ns.back() - counter->t_ns.front()) / 1e9, "energy.total last - first",
                     counter->source});
      continue;
    }
    auto curve = energy::BuildEnergyCurve(run, d.id, run.info.start_ns, run.info.end_ns);
    if (curve.empty()) continue;
    out.push_back({&d, curve.Between(curve.data_from_ns, curve.data_to_ns),
                   (curve.data_to_ns - curve.data_from_ns) / 1e9, curve.method, curve.source});
  }
  return out;
}

struct Count {
  const char* name;
  size_t rows;
  std::string note;
};

std::vector<Count> Counts(const Run& run) {
  size_t edges = 0, fingerprints = 0, samples = 0, stack_frames = 0;
  for (const auto& o : run.ops) edges += o.inputs.size() + o.outputs.size();
  for (const auto& t : run.tensors) fingerprints += t.fingerprint.has_value();
  for (const auto& s : run.series) samples += s.t_ns.size();
  for (const auto& s : run.stacks) stack_frames += s.frames.size();
  return {
      {"devices", run.devices.size(), ""},
      {"ops", run.ops.size(), fmt::format("{} dataflow edges", edges)},
      {"tensors", run.tensors.size(), fmt::format("{} with fingerprints", fingerprints)},
      {"kernels", run.kernels.size(), ""},
      {"transfers", run.transfers.size(), ""},
      {"api_calls", run.api_calls.size(), ""},
      {"ranges", run.ranges.size(), ""},
      {"frames", run.frames.size(), ""},
      {"stacks", run.stacks.size(), fmt::format("{} frame references", stack_frames)},
      {"series", run.series.size(), fmt::format("{} samples", samples)},
      {"replays", run.replays.size(), ""},
      {"config", run.config.size(), ""},
      {"stats", run.stats.size(), ""},
  };
}

double DurationSeconds(const RunInfo& info) {
  return info.end_ns > info.start_ns ? (info.end_ns - info.start_ns) / 1e9 : 0.0;
}

std::string GiB(int64_t bytes) { return bytes > 0 ? fmt::format("{:.0f} GiB", bytes / 1073741824.0) : "-"; }

void PrintText(const std::string& path, const StoreHeader& header, const Run& run) {
  const RunInfo& info = run.info;
  auto field = [](const char* name, const std::string& value) { fmt::print("{:<10}{}\n", name, value); };
  field("run", path);
  field("command", info.command.empty() ? "-" : info.command);
  field("host", fmt::format("{}  pid {}", info.host.empty() ? "-" : info.host, info.pid));
  field("clock", info.clock_domain);
  field("duration", info.end_ns > info.start_ns ? report::FormatSeconds(DurationSeconds(info)) : "- (not recorded)");
  field("schema", fmt::format("{}.{} (written by magneton {})", header.schema_major, header.schema_minor,
                              info.magneton_version.empty() ? "?" : info.magneton_version));
  for (const auto& [k, v] : info.extra) field("", fmt::format("{} = {}", k, v));

  if (!run.devices.empty()) {
    size_t name_w = 4, kind_w = 4;
    for (const auto& d : run.devices) {
      name_w = std::max(name_w, d.name.size());
      kind_w = std::max(kind_w, d.kind.size());
    }
    fmt::print("\ndevices\n  {:>3}  {:<{}}  {:<{}}  {:>8}  {}\n", "id", "kind", kind_w, "name", name_w, "memory",
               "uuid");
    for (const auto& d : run.devices)
      fmt::print("  {:>3}  {:<{}}  {:<{}}  {:>8}  {}\n", d.id, d.kind, kind_w, d.name, name_w, GiB(d.memory_bytes),
                 d.uuid.empty() ? "-" : d.uuid);
  }

  fmt::print("\nrows\n");
  for (const auto& c : Counts(run))
    fmt::print("  {:<10} {:>10}{}\n", c.name, c.rows, c.note.empty() || c.rows == 0 ? "" : "   " + c.note);

  auto energy = EnergyPerDevice(run);
  fmt::print("\nenergy\n");
  if (energy.empty()) fmt::print("  none recorded (no energy or power series)\n");
  size_t name_w = 4;
  for (const auto& e : energy) name_w = std::max(name_w, e.device->name.size());
  for (const auto& e : energy)
    fmt::print("  {:>3}  {:<{}}  {:>10}  over {}   {}, {}\n", e.device->id, e.device->name, name_w,
               report::FormatJoules(e.joules), report::FormatSeconds(e.seconds), e.method, e.source);

  if (!run.stats.empty()) {
    size_t name_w = 4;
    for (const auto& s : run.stats) name_w = std::max(name_w, s.name.size());
    fmt::print("\nstats\n");
    for (const auto& s : run.stats)
      fmt::print("  {:<9}  {:<{}}  {:>8}   {}\n", s.severity, s.name, name_w, s.value, s.description);
  }
}

void PrintJson(const std::string& path, const StoreHeader& header, const Run& run) {
  const RunInfo& info = run.info;
  nlohmann::json j;
  j["run"] = path;
  j["schema"] = {{"major", header.schema_major}, {"minor", header.schema_minor}};
  j["info"] = {{"command", info.command},
               {"host", info.host},
               {"pid", info.pid},
               {"clock_domain", info.clock_domain},
               {"magneton_version", info.magneton_version},
               {"start_ns", info.start_ns},
               {"end_ns", info.end_ns},
               {"duration_s", DurationSeconds(info)},
               {"extra", info.extra}};
  j["devices"] = nlohmann::json::array();
  for (const auto& d : run.devices)
    j["devices"].push_back({{"id", d.id},
                            {"kind", d.kind},
                            {"name", d.name},
                            {"uuid", d.uuid},
                            {"ordinal", d.ordinal},
                            {"memory_bytes", d.memory_bytes}});
  j["counts"] = nlohmann::json::object();
  for (const auto& c : Counts(run)) j["counts"][c.name] = c.rows;
  j["energy"] = nlohmann::json::array();
  for (const auto& e : EnergyPerDevice(run))
    j["energy"].push_back(
        {{"device", e.device->id}, {"name", e.device->name}, {"joules", e.joules}, {"seconds", e.seconds}, {"method", e.method},
         {"source", e.source}});
  j["stats"] = nlohmann::json::array();
  for (const auto& s : run.stats)
    j["stats"].push_back(
        {{"name", s.name}, {"severity", s.severity}, {"value", s.value}, {"description", s.description}});
  fmt::print("{}\n", j.dump(2));
}

int Info(const InfoArgs& args) {
  auto header = ReadHeader(args.run);
  if (!header) return Fail(header.error());
  auto run = LoadRun(args.run);
  if (!run) return Fail(run.error());
  if (args.json)
    PrintJson(args.run, *header, *run);
  else
    PrintText(args.run, *header, *run);
  return kExitOk;
}

}  // namespace

void RegisterInfo(CLI::App& app, Action& run) {
  auto args = std::make_shared<InfoArgs>();
  auto* sub =
      app.add_subcommand("info", "Show what a run file holds: command, devices, row counts, energy, stats");
  sub->add_option("RUN", args->run, "Run file (.mgt)")->required();
  sub->add_flag("--json", args->json, "Print as JSON");
  sub->callback([args, &run] { run = [args] { return Info(*args); }; });
}

}  // namespace magneton::cli
