// `magneton measure [options] -- CMD ARGS`: the energy of one command, like
// `perf stat` for joules. CMD's input, output and exit code are untouched; the
// report goes to stderr (or -o FILE) after it exits.
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "energy/measure_command.h"

namespace magneton::cli {

namespace {

struct MeasureArgs {
  std::string devices = "all";
  double per = 0;
  std::string unit;
  bool json = false;
  double carbon = 0;   // g CO2e per kWh, when carbon_given
  bool carbon_given = false;
  std::string output;
  std::string meter;
  double cpu_watts = 5.0;
  std::vector<std::string> command;
  bool saw_separator = false;
};

constexpr double kJoulesPerWh = 3600.0;

Result<std::vector<int>> ParseDevices(const std::string& list) {
  std::vector<int> out;
  if (list == "all" || list.empty()) return out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0)
      return MakeError(ErrorCode::kInvalidArgument,
                       "--devices '" + list + "': expected 'all' or CUDA ordinals like 0,1");
    out.push_back(static_cast<int>(v));
  }
  return out;
}

nlohmann::json ToJson(const energy::CommandEnergy& m, const MeasureArgs& a) {
  using nlohmann::json;
  json j;
  j["command"] = m.argv;
  j["exit_code"] = m.exit.exit_code;
  j["signal"] = m.exit.signal;
  double seconds = double(m.end_ns - m.start_ns) * 1e-9;
  j["duration_s"] = seconds;
  j["energy_available"] = m.energy_available;
  if (!m.energy_available) j["unavailable_reason"] = m.unavailable_reason;
  json devices = json::array();
  for (const auto& d : m.devices) {
    if (d.estimate) continue;
    devices.push_back({{"label", energy::DeviceLabel(d.device)}, {"kind", d.device.kind}, {"name", d.device.name},
                       {"uuid", d.device.uuid}, {"joules", d.joules}, {"wh", d.joules / kJoulesPerWh},
                       {"avg_w", d.avg_w}, {"peak_w", d.peak_w}, {"method", d.method}, {"source", d.source}});
  }
  j["devices"] = devices;
  double total = energy::AddableJoules(m.devices);
  j["total_j"] = m.energy_available ? json(total) : json(nullptr);
  if (a.per > 0)
    j["per_unit"] = {{"count", a.per}, {"unit", a.unit},
                     {"j_per_unit", m.energy_available ? json(total / a.per) : json(nullptr)}};
  if (a.carbon_given)
    j["co2e"] = {{"g_per_kwh", a.carbon},
                 {"grams", m.energy_available ? json(total / (kJoulesPerWh * 1000) * a.carbon) : json(nullptr)}};
  double cpu_s = m.exit.user_s + m.exit.system_s;
  j["cpu"] = {{"user_s", m.exit.user_s}, {"system_s", m.exit.system_s},
              {"estimate_j", cpu_s * m.cpu_watts_per_core}, {"watts_per_core", m.cpu_watts_per_core},
              {"estimate", true}};
  json problems = json::array();
  for (const Stat& s : m.problems) problems.push_back({{"name", s.name}, {"description", s.description}});
  j["problems"] = problems;
  return j;
}

std::string ToText(const energy::CommandEnergy& m, const MeasureArgs& a) {
  std::string out;
  auto line = [&](const std::string& s) { out += s + "\n"; };
  std::string cmd;
  for (const auto& s : m.argv) cmd += (cmd.empty() ? "" : " ") + s;
  double seconds = double(m.end_ns - m.start_ns) * 1e-9;
  line("");
  line(fmt::format(" Energy of '{}':", cmd));
  line("");
  for (const auto& d : m.devices) {
    if (d.estimate) continue;
    std::string peak = d.peak_w > 0 ? fmt::format("   peak {:7.1f} W", d.peak_w) : "";
    line(fmt::format("  {:<14} {:>12.2f} J  {:>10.4f} Wh   avg {:7.1f} W{}   {} ({})", energy::DeviceLabel(d.device),
                     d.joules, d.joules / kJoulesPerWh, d.avg_w, peak, d.device.name, d.method));
  }
  if (m.energy_available) {
    double total = energy::AddableJoules(m.devices);
    line(fmt::format("  {:<14} {:>12.2f} J  {:>10.4f} Wh   (GPUs and CPU packages)", "total", total,
                     total / kJoulesPerWh));
    if (a.per > 0)
      line(fmt::format("  {:<14} {:>12.4g} J/{}   ({:g} {})", "per " + a.unit, total / a.per, a.unit, a.per, a.unit));
    if (a.carbon_given)
      line(fmt::format("  {:<14} {:>12.4g} g CO2e   (at {:g} g/kWh)", "carbon", total / (kJoulesPerWh * 1000) * a.carbon,
                       a.carbon));
  } else {
    line("  energy unavailable: " + m.unavailable_reason);
  }
  double cpu_s = m.exit.user_s + m.exit.system_s;
  line(fmt::format("  {:<14} {:>12.2f} s CPU time (user {:.2f} + sys {:.2f}); estimate ~{:.1f} J at {:g} W/core, "
                   "not measured",
                   "host CPU", cpu_s, m.exit.user_s, m.exit.system_s, cpu_s * m.cpu_watts_per_core,
                   m.cpu_watts_per_core));
  line("");
  line(fmt::format("  {:>12.3f} s elapsed", seconds));
  line(m.exit.signal ? fmt::format("  killed by signal {} (exit code {})", m.exit.signal, m.exit.exit_code)
                     : fmt::format("  exit code {}", m.exit.exit_code));
  line("");
  return out;
}

int Measure(const MeasureArgs& a) {
  if (a.command.empty() || !a.saw_separator)
    return Fail(MakeError(ErrorCode::kInvalidArgument,
                          "measure: put '--' before the command: magneton measure [options] -- CMD ARGS"));
  if (a.per < 0 || (a.per > 0 && a.unit.empty()))
    return Fail(MakeError(ErrorCode::kInvalidArgument, "measure: --per N needs N > 0 and --unit NAME"));
  if (a.carbon_given && !(a.carbon >= 0 && std::isfinite(a.carbon)))
    return Fail(MakeError(ErrorCode::kInvalidArgument, "measure: --carbon must be >= 0 g/kWh"));
  if (!(a.cpu_watts >= 0))
    return Fail(MakeError(ErrorCode::kInvalidArgument, "measure: --cpu-watts must be >= 0"));
  auto gpus = ParseDevices(a.devices);
  if (!gpus.ok()) return Fail(gpus.error());
  std::FILE* report = stderr;
  if (a.output == "-") {
    report = stdout;
  } else if (!a.output.empty()) {
    report = std::fopen(a.output.c_str(), "w");
    if (!report)
      return Fail(MakeError(ErrorCode::kIo, "measure: cannot write " + a.output + ": " + std::strerror(errno)));
  }
  energy::SamplerOptions options;
  options.gpus = *gpus;
  options.meter = a.meter;
  options.cpu_watts_per_core = a.cpu_watts;
  int exit_code = 0;
  auto m = energy::MeasureCommand(a.command, options, &exit_code);
  if (!m.ok()) {
    fmt::print(stderr, "magneton: {}\n", m.error().message);
    if (report != stderr && report != stdout) std::fclose(report);
    return exit_code;
  }
  std::string text = a.json ? ToJson(*m, a).dump(2) + "\n" : ToText(*m, a);
  std::fputs(text.c_str(), report);
  if (report != stderr && report != stdout) std::fclose(report);
  // The command's own exit code, exactly (128+N when signal N killed it).
  return m->exit.exit_code;
}

}  // namespace

void RegisterMeasure(CLI::App& app, Action& run) {
  auto args = std::make_shared<MeasureArgs>();
  auto* sub = app.add_subcommand("measure", "Run a command and report the energy it used (like perf stat)");
  sub->add_option("--devices", args->devices, "GPUs to measure: 'all' or CUDA ordinals like 0,1")
      ->default_val("all");
  sub->add_option("--per", args->per, "Divide the energy by N units of work (tokens, images)");
  sub->add_option("--unit", args->unit, "Name of the unit for --per (token, image, sample)");
  sub->add_flag("--json", args->json, "Report as JSON");
  auto* carbon = sub->add_option("--carbon", args->carbon, "Grid carbon intensity in g CO2e/kWh, for a CO2e estimate");
  sub->add_option("-o,--output", args->output, "Write the report to FILE (- for stdout) instead of stderr");
  sub->add_option("--meter", args->meter, "CSV stream 't_ns,watts[,channel]' of an external power meter");
  sub->add_option("--cpu-watts", args->cpu_watts, "Watts per busy core for the CPU estimate")->default_val(5.0);
  sub->add_option("command", args->command, "-- CMD ARGS: the command to run");
  sub->prefix_command();
  sub->footer("Exit code: the command's own (128+N if signal N killed it); 2 on bad usage.\n"
              "The report goes to stderr so the command's stdout stays clean.");
  sub->callback([args, sub, carbon, &run] {
    args->carbon_given = carbon->count() > 0;
    for (const auto& r : sub->remaining())
      if (r == "--") args->saw_separator = true;
    run = [args] { return Measure(*args); };
  });
}

}  // namespace magneton::cli
