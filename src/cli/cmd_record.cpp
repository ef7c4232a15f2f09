// `magneton record [options] -- CMD ARGS`: records the kernels, copies, CUDA
// API calls and NVTX ranges of every process of CMD that uses CUDA, through
// the CUPTI injection library (docs/tracing.md). CMD's output and exit code
// are untouched; Magneton's own lines go to stderr after it exits.
#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>

#include <fmt/core.h>

#include "capture/cupti/record_env.h"
#include "cli/commands.h"
#include "core/run.h"
#include "core/sqlite_util.h"
#include "core/stats_registry.h"
#include "energy/child_process.h"
#include "energy/clock.h"

namespace magneton::cli {
namespace {

namespace fs = std::filesystem;
namespace env = capture::env;

struct RecordArgs {
  std::string output = "magneton";
  bool stacks = false;
  std::string api = "launches";
  std::string only_ranges;
  bool only_ranges_given = false;
  double delay = 0, duration = -1;
  bool start_paused = false;
  bool no_energy = false;
  std::string energy = "all";
  bool no_nvtx = false;
  bool force = false;
  std::vector<std::string> command;
  bool saw_separator = false;
};

// The injection library: $MAGNETON_CUPTI_LIB, else next to the magneton
// command (the build tree) or in ../lib[/magneton] (an install).
std::string FindLibrary() {
  if (const char* v = std::getenv(env::kLibrary); v && *v) return v;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  fs::path dir = exe.parent_path();
  for (const fs::path& p : {dir / "libmagneton_cupti.so", dir / "../lib/libmagneton_cupti.so",
                            dir / "../lib/magneton/libmagneton_cupti.so"})
    if (fs::exists(p, ec)) return fs::weakly_canonical(p, ec).string();
  return {};
}

// Why this library cannot be injected, or "" when it can. Loading it here
// runs no CUDA code; a library that failed to load in the program could
// instead fail its cuInit.
std::string LibraryProblem(const std::string& lib) {
  if (lib.empty())
    return "the injection library libmagneton_cupti.so was not found next to magneton "
           "(build with the CUDA toolkit present, or set MAGNETON_CUPTI_LIB)";
  // RTLD_NODELETE: the library links libcupti, which cannot be unloaded
  // without leaking the block its static libstdc++ allocates at load (72 KiB;
  // LeakSanitizer reports it and the sanitizer build then exits 1).
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!h) return fmt::format("{} cannot be loaded: {}", lib, dlerror());
  bool ok = dlsym(h, "InitializeInjection") != nullptr;
  dlclose(h);
  return ok ? "" : lib + " is not a Magneton injection library (no InitializeInjection)";
}

// Why a program that ran produced no run file.
std::string NoRunReason(const std::string& library_problem, const energy::ChildExit& done) {
  if (!library_problem.empty()) return library_problem;
  void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!cuda)
    return "this machine has no NVIDIA driver (libcuda.so.1 not found), so no GPU; a PyTorch program on the CPU "
           "records with python -m magneton record -o FILE script.py (docs/recording.md)";
  dlclose(cuda);
  // Killed early (a timeout, Ctrl-C): the likely reason, not the program's code.
  if (done.signal != 0)
    return fmt::format("the program was ended by signal {} ({}) before it initialized CUDA", done.signal,
                       strsignal(done.signal));
  return "the program did not initialize CUDA";
}

std::string Join(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

// What one run file holds, counted with SQL (docs/run-format.md) rather than
// loaded, so a long recording is summarized at once.
struct Written {
  std::string path;
  int64_t pid = 0;
  int64_t kernels = 0, transfers = 0, ranges = 0, nvml_series = 0;
  std::vector<Stat> stats;
  std::string error;
};

void Count(Written& w) {
  sqlite::Db db;
  std::string err;
  if (db.Open(w.path, SQLITE_OPEN_READONLY, &err) != SQLITE_OK) {
    w.error = err;
    return;
  }
  auto one = [&](const char* sql) -> int64_t {
    sqlite::Stmt q;
    if (q.Prepare(db, sql) != SQLITE_OK || q.Step() != SQLITE_ROW) {
      if (w.error.empty()) w.error = db.errmsg();
      return 0;
    }
    return q.Int64(0);
  };
  w.kernels = one("SELECT count(*) FROM kernels");
  w.transfers = one("SELECT count(*) FROM transfers");
  w.ranges = one("SELECT count(*) FROM ranges");
  w.nvml_series = one("SELECT count(*) FROM series WHERE source IN (SELECT id FROM strings WHERE value = 'nvml')");
  sqlite::Stmt q;
  if (q.Prepare(db, "SELECT name, severity, value, description FROM stats") == SQLITE_OK)
    while (q.Step() == SQLITE_ROW)
      w.stats.push_back(Stat{std::string(q.Text(0)), std::string(q.Text(1)), q.Int64(2), std::string(q.Text(3))});
}

// The run files this recording wrote: <base>.<pid>.mgt, newer than its start.
std::vector<Written> FindRuns(const fs::path& base, fs::file_time_type since) {
  std::vector<Written> out;
  std::error_code ec;
  std::regex name("^" + std::regex_replace(base.filename().string(), std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                  R"(\.(\d+)\.mgt$)");
  for (const auto& e : fs::directory_iterator(base.parent_path(), ec)) {
    std::smatch m;
    std::string file = e.path().filename().string();
    if (!std::regex_match(file, m, name) || e.last_write_time(ec) < since) continue;
    Written w;
    w.path = e.path().string();
    w.pid = std::stoll(m[1].str());
    Count(w);
    out.push_back(std::move(w));
  }
  std::sort(out.begin(), out.end(), [](const Written& a, const Written& b) { return a.pid < b.pid; });
  return out;
}

// Why a run has no kernels, from what the recording wrote down.
std::string NoKernelReason(const Written& w) {
  for (const Stat& st : w.stats)
    if (Is(st, stats::kCuptiUnavailable) || Is(st, stats::kCuptiTracingDisabled)) return st.description;
  return "no kernel ran while recording was on";
}

void SetEnv(const char* name, const std::string& value) { setenv(name, value.c_str(), 1); }

int Record(const RecordArgs& a) {
  if (a.command.empty() || !a.saw_separator)
    return Fail(MakeError(ErrorCode::kInvalidArgument,
                          "record: put '--' before the command: magneton record [options] -- CMD ARGS"));
  if (!(a.delay >= 0) || !std::isfinite(a.delay))
    return Fail(MakeError(ErrorCode::kInvalidArgument, "record: --delay must be a number of seconds >= 0"));
  if (a.duration != -1 && (!(a.duration > 0) || !std::isfinite(a.duration)))
    return Fail(MakeError(ErrorCode::kInvalidArgument, "record: --duration must be a number of seconds > 0"));
  if (a.only_ranges_given && a.only_ranges.empty())
    return Fail(MakeError(ErrorCode::kInvalidArgument, "record: --only-ranges needs a name prefix, e.g. magneton:"));
  if (a.only_ranges_given && a.no_nvtx)
    return Fail(MakeError(ErrorCode::kInvalidArgument, "record: --only-ranges follows NVTX ranges; drop --no-nvtx"));
  if (const char* v = std::getenv(env::kCudaInjection); v && *v)
    return Fail(MakeError(ErrorCode::kInvalidArgument,
                          fmt::format("record: CUDA_INJECTION64_PATH is already set ({}): another CUDA tool is "
                                      "injected; unset it to record with Magneton",
                                      v)));
  // -o run.mgt and -o run both give run.<pid>.mgt; absolute, since CMD may change directory.
  std::string out = a.output;
  if (out.size() > 4 && out.ends_with(".mgt")) out.resize(out.size() - 4);
  std::error_code ec;
  fs::path base = fs::absolute(out, ec);
  if (ec || base.filename().empty())
    return Fail(MakeError(ErrorCode::kInvalidArgument, fmt::format("record: -o {}: not a file name", a.output)));
  if (!fs::is_directory(base.parent_path(), ec) || access(base.parent_path().c_str(), W_OK) != 0)
    return Fail(MakeError(ErrorCode::kInvalidArgument,
                          fmt::format("record: -o {}: directory {} is missing or not writable", a.output,
                                      base.parent_path().string())));

  std::string lib = FindLibrary();
  std::string problem = LibraryProblem(lib);
  if (problem.empty()) {
    SetEnv(env::kCudaInjection, lib);
    SetEnv(env::kLibrary, lib);
    // NVTX finds CUPTI's NVTX hooks through this library (injection.cpp).
    if (!a.no_nvtx && !std::getenv(env::kNvtxInjection)) SetEnv(env::kNvtxInjection, lib);
  }
  SetEnv(env::kOutput, base.string());
  SetEnv(env::kCommand, Join(a.command));
  SetEnv(env::kStacks, a.stacks ? "1" : "0");
  SetEnv(env::kApi, a.api);
  SetEnv(env::kEnergy, a.no_energy ? "none" : a.energy);
  SetEnv(env::kNvtx, a.no_nvtx ? "0" : "1");
  SetEnv(env::kStartPaused, a.start_paused ? "1" : "0");
  if (a.only_ranges_given) SetEnv(env::kOnlyRanges, a.only_ranges);
  if (a.delay > 0) SetEnv(env::kDelay, fmt::format("{}", a.delay));
  if (a.duration > 0) SetEnv(env::kDuration, fmt::format("{}", a.duration));

  // File times are compared with a margin: some filesystems keep whole seconds.
  const auto since = fs::file_time_type::clock::now() - std::chrono::seconds(2);
  int exit_code = 0;
  auto child = energy::ChildProcess::Spawn(a.command, &exit_code);
  if (!child.ok()) {
    fmt::print(stderr, "magneton: {}\n", child.error().message);
    return exit_code;
  }
  energy::ChildExit done = child->Wait();

  std::vector<Written> runs = FindRuns(base, since);
  if (runs.empty()) {
    fmt::print(stderr, "magneton: no kernels recorded: {}\n", NoRunReason(problem, done));
    return done.exit_code;
  }
  // One process and -o NAME.mgt: the file gets exactly that name.
  if (runs.size() == 1 && a.output.ends_with(".mgt")) {
    fs::path want = fs::absolute(a.output, ec);
    if (fs::exists(want, ec) && !a.force) {
      fmt::print(stderr, "magneton: {} exists; the run stays in {} (-f replaces it)\n", want.string(), runs[0].path);
    } else {
      fs::rename(runs[0].path, want, ec);
      if (!ec) runs[0].path = want.string();
    }
  }
  fmt::print(stderr, "magneton: recorded {} process{}:\n", runs.size(), runs.size() == 1 ? "" : "es");
  for (const Written& w : runs) {
    if (!w.error.empty()) {
      fmt::print(stderr, "  {}  (pid {}): cannot read: {}\n", w.path, w.pid, w.error);
      continue;
    }
    fmt::print(stderr, "  {}  (pid {}): {} kernels, {} copies/syncs, {} NVTX ranges, {}\n", w.path, w.pid, w.kernels,
               w.transfers, w.ranges, w.nvml_series ? "NVML energy" : "no GPU energy");
    if (w.kernels == 0) fmt::print(stderr, "    no kernels: {}\n", NoKernelReason(w));
    for (const Stat& st : w.stats)
      if (st.severity == SeverityName(Severity::kDataLoss)) fmt::print(stderr, "    data loss: {} ({} {})\n", st.description, st.value, st.name);
  }
  return done.exit_code;
}

}  // namespace

void RegisterRecord(CLI::App& app, Action& run) {
  auto args = std::make_shared<RecordArgs>();
  auto* sub = app.add_subcommand("record", "Run a command and record its GPU kernels, copies and NVTX ranges (CUPTI)");
  sub->add_option("-o,--output", args->output,
                  "Base name of the run files: BASE.<pid>.mgt per process (-o x.mgt with one process gives x.mgt)");
  sub->add_flag("--stacks", args->stacks, "Record native call stacks at kernel launches");
  sub->add_option("--api", args->api,
                  "CUDA API calls to record: launches (launches, copies, syncs, allocations; default), waits (copies, "
                  "syncs, allocations: no launches, cheaper on launch-bound programs), all, none")
      ->check(CLI::IsMember({"launches", "waits", "all", "none"}));
  auto* only = sub->add_option("--only-ranges", args->only_ranges,
                               "Record only inside NVTX push/pop ranges whose name starts with PREFIX "
                               "(e.g. magneton:)");
  sub->add_option("--delay", args->delay, "Start recording S seconds after CUDA initializes");
  sub->add_option("--duration", args->duration, "Record for S seconds, then stop");
  sub->add_flag("--start-paused", args->start_paused, "Record nothing until the program calls magneton.start()");
  sub->add_option("--energy", args->energy,
                  "Energy samplers to run: all (default: those the machine has), none, or a list of nvml, rapl, procfs")
      ->check([](const std::string& v) {
        env::EnergySources s;
        return env::ParseEnergySources(v, &s) ? std::string() : "expected all, none or a list of nvml, rapl, procfs";
      });
  sub->add_flag("--no-energy", args->no_energy, "Do not sample energy during the recording (--energy none)");
  sub->add_flag("--no-nvtx", args->no_nvtx, "Do not record NVTX ranges");
  sub->add_flag("-f,--force", args->force, "Replace an existing -o file");
  sub->add_option("command", args->command, "-- CMD ARGS: the command to run");
  sub->prefix_command();
  sub->footer("Exit code: the command's own (128+N if signal N killed it); 2 on bad usage.\n"
              "Magneton's lines go to stderr so the command's stdout stays clean.");
  sub->callback([args, sub, only, &run] {
    args->only_ranges_given = only->count() > 0;
    for (const auto& r : sub->remaining())
      if (r == "--") args->saw_separator = true;
    run = [args] { return Record(*args); };
  });
}

}  // namespace magneton::cli
