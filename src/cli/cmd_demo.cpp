// `magneton demo`: the whole pipeline on a built-in pair of workloads. Records
// both variants with the torch recorder through the project's Python
// (MAGNETON_PYTHON, default python3; python/magneton/demo/*.py), on whatever
// this machine has, then diffs them, prints the findings, says what could not
// be measured here, and writes the HTML and JSON reports (docs/diff.md).
#include <fmt/core.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "cli/cmd_diff.h"
#include "cli/commands.h"
#include "cli/python_env.h"
#include "report/json.h"
#include "report/table.h"

namespace magneton::cli {
namespace {

namespace fs = std::filesystem;

// Runs argv with the environment as is; returns its exit status, or -1 when it could not start.
int Spawn(const std::vector<std::string>& argv) {
  std::vector<char*> c;
  for (const auto& a : argv) c.push_back(const_cast<char*>(a.c_str()));
  c.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    execvp(c[0], c.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Seconds since the demo started, on the wall clock its recorders share
// (MAGNETON_DEMO_T0), so every progress line carries one clock.
class Progress {
 public:
  Progress() : t0_(Now()) { setenv("MAGNETON_DEMO_T0", fmt::format("{:.3f}", t0_).c_str(), 1); }
  template <class... T>
  void Say(fmt::format_string<T...> f, T&&... args) const {
    fmt::print("[{:5.1f} s] {}\n", Now() - t0_, fmt::format(f, std::forward<T>(args)...));
    std::fflush(stdout);  // before the recorders print
  }

 private:
  static double Now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  }
  double t0_;
};

struct DemoArgs {
  std::string out = "magneton-demo";
  std::string which = "auto";
  std::string device = "auto";
  std::string size = "auto";
  int iterations = 0;
  bool no_replay = false;
  std::string color = "auto";
};

// Lines on what this machine could not measure, from what the runs hold.
std::vector<std::string> Unmeasured(const analysis::DiffReport& r) {
  std::vector<std::string> out;
  bool gpu = false;
  for (const auto& d : r.a.devices) gpu |= d.rfind("gpu", 0) == 0;
  if (!gpu) out.push_back("no CUDA GPU here: the models ran on the CPU");
  if (!r.energy_measured)
    out.push_back(
        "energy: not measured (no NVML GPU, no RAPL, no meter on this machine); time stands in for "
        "energy, so the findings rank by seconds, not joules");
  if (!r.a.has_kernels)
    out.push_back("kernels: none recorded, so no kernel-level evidence (CPU run or no CUPTI)");
  return out;
}

// The four run files the recordings wrote (python/magneton/demo/__main__.py's pair.json).
Result<DiffArgs> ReadPair(const fs::path& out) {
  const fs::path path = out / "pair.json";
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  DiffArgs d;
  for (auto [key, field] : {std::pair{"a", &d.a}, std::pair{"b", &d.b}, std::pair{"measured_a", &d.measured_a},
                            std::pair{"measured_b", &d.measured_b}}) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_string())
      return MakeError(ErrorCode::kCorrupt, fmt::format("{}: no run file '{}' (the recordings did not finish)",
                                                        path.string(), key));
    *field = j[key].get<std::string>();
  }
  return d;
}

int Demo(const DemoArgs& args) {
  Progress progress;
  const std::string python = ProjectPython();
  AddCheckoutToPythonPath();
  std::error_code ec;
  fs::create_directories(args.out, ec);
  if (ec)
    return Fail(MakeError(ErrorCode::kIo,
                          fmt::format("{}: cannot create the output directory: {}", args.out, ec.message())));
  fs::remove(fs::path(args.out) / "pair.json", ec);  // a pair.json left by an earlier demo is not this one's

  // Both variants in one Python process: torch, transformers and CUDA start once.
  progress.Say("starting {}: torch, transformers, then each variant's model and passes", python);
  std::vector<std::string> argv = {python, "-m", "magneton.demo", "--case", args.which, "--out", args.out,
                                   "--device", args.device, "--size", args.size};
  if (args.iterations > 0) argv.insert(argv.end(), {"--iterations", std::to_string(args.iterations)});
  if (args.no_replay) argv.push_back("--no-replay");
  const int rc = Spawn(argv);
  if (rc == 127 || rc < 0)
    return Fail(MakeError(ErrorCode::kUnavailable,
                          fmt::format("demo: {} could not be started; set MAGNETON_PYTHON to the project's venv "
                                      "python, or install the package (pip install .)",
                                      python)));
  if (rc == 3)  // its own line above says which import failed
    return Fail(MakeError(ErrorCode::kUnavailable,
                          fmt::format("demo: {} lacks torch, transformers or magneton._torch", python)));
  if (rc != 0)
    return Fail(MakeError(ErrorCode::kInternal,
                          fmt::format("demo: recording failed ({} -m magneton.demo exited {})", python, rc)));
  auto pair = ReadPair(args.out);
  if (!pair.ok()) return Fail(pair.error());
  DiffArgs d = std::move(pair.value());
  d.html = (fs::path(args.out) / "report.html").string();
  d.color = args.color;

  progress.Say("diff: matching the two recordings' values, costing the matched regions");
  auto session = RunDiff(d, 0.10);
  if (!session.ok()) return Fail(session.error());
  progress.Say("diff: done");
  const DiffSession& s = **session;
  report::TableOptions t;
  t.color = UseColor(args.color);
  t.path_a = d.a;
  t.path_b = d.b;
  fmt::print("\n{}", report::RenderDiffTable(s.report, t));
  std::fflush(stdout);
  for (const auto& line : Unmeasured(s.report)) fmt::print("could not measure here: {}\n", line);
  std::string json_path = (fs::path(args.out) / "diff.json").string();
  std::ofstream(json_path) << report::DiffToJson(s.report, {d.a, d.b}).dump(2) << "\n";
  if (auto st = WriteHtml(s, d); !st.ok()) return Fail(st.error());
  fmt::print("reports: {} and {}\n", d.html, json_path);
  return kExitOk;
}

}  // namespace

void RegisterDemo(CLI::App& app, Action& run) {
  auto args = std::make_shared<DemoArgs>();
  auto* sub =
      app.add_subcommand("demo",
                         "Record two built-in variants of one model, diff them and write the report.\n"
                         "Uses $MAGNETON_PYTHON (default python3) with torch and transformers.");
  sub->add_option("--out", args->out, "Directory for the runs and reports")->capture_default_str();
  sub->add_option("--case", args->which,
                  "auto (gpt2-attention on a GPU, gpt2-gelu on a CPU), gpt2-attention, gpt2-conv1d, gpt2-gelu "
                  "or unet-tf32")
      ->check(CLI::IsMember({"auto", "gpt2-attention", "gpt2-conv1d", "gpt2-gelu", "unet-tf32"}))
      ->capture_default_str();
  sub->add_option("--device", args->device, "auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  sub->add_option("--size", args->size,
                  "Model size: auto (small on the CPU; on a GPU medium for gpt2-attention, else full), tiny, "
                  "small, medium, full")
      ->check(CLI::IsMember({"auto", "tiny", "small", "medium", "full"}))
      ->capture_default_str();
  sub->add_option("--iterations", args->iterations,
                  "Iterations of the measured pass (default: about 1 s of them on a GPU, 5 on the CPU)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--no-replay", args->no_replay,
                "On a GPU, skip the replay of the operators the two variants differ in (faster, energy from "
                "attribution only)");
  sub->add_option("--color", args->color, "auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  sub->callback([args, &run] { run = [args] { return Demo(*args); }; });
}

}  // namespace magneton::cli
