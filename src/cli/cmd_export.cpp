// `magneton export --perfetto RUN -o trace.json`: a run as a Chrome JSON
// trace for ui.perfetto.dev: operators, ranges, kernels and transfers as
// slices; power, energy and other series as counter tracks (docs/report.md).
#include <fmt/core.h>

#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "core/store.h"
#include "energy/attribution.h"
#include "report/perfetto.h"

namespace magneton::cli {
namespace {

struct ExportArgs {
  std::string run, out;
  bool perfetto = false;
};

int Export(const ExportArgs& args) {
  if (!args.perfetto)
    return Fail(MakeError(ErrorCode::kInvalidArgument, "export: choose a format: --perfetto"));
  auto run = LoadRun(args.run);
  if (!run.ok()) return Fail(run.error());
  energy::Attribution energy = energy::Attribute(*run);
  report::TraceStats stats;
  if (args.out == "-") {
    stats = report::WritePerfettoTrace(*run, energy, std::cout);
    std::cout.flush();
  } else {
    std::ofstream out(args.out, std::ios::binary | std::ios::trunc);
    if (!out) return Fail(MakeError(ErrorCode::kIo, fmt::format("{}: cannot write the trace", args.out)));
    stats = report::WritePerfettoTrace(*run, energy, out);
    out.close();
    if (!out) return Fail(MakeError(ErrorCode::kIo, fmt::format("{}: writing the trace failed", args.out)));
  }
  fmt::print(stderr,
             "magneton: wrote {}: {} slices on {} tracks, {} counter points{} (open in ui.perfetto.dev)\n",
             args.out == "-" ? "the trace" : args.out, stats.slices, stats.tracks, stats.counters,
             energy.measured ? "" : "; no energy in this run");
  return kExitOk;
}

}  // namespace

void RegisterExport(CLI::App& app, Action& run) {
  auto args = std::make_shared<ExportArgs>();
  auto* sub = app.add_subcommand("export", "Export a run to another tool's format.");
  sub->add_option("RUN", args->run, "Run file (.mgt)")->required();
  sub->add_flag("--perfetto", args->perfetto, "Chrome JSON trace for ui.perfetto.dev / chrome://tracing");
  sub->add_option("-o,--output", args->out, "Output file ('-' for stdout)")->required();
  sub->callback([args, &run] { run = [args] { return Export(*args); }; });
}

}  // namespace magneton::cli
