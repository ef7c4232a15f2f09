// `magneton demo`: the whole pipeline on a built-in pair of workloads. Records
// both variants with the torch recorder through the project's Python
// (MAGNETON_PYTHON, default python3; python/magneton/demo/*.py), on whatever
// this machine has, then diffs them, prints the findings, says what could not
// be measured here, and writes the HTML and JSON reports (docs/diff.md).
#include <fmt/core.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "cli/cmd_diff.h"
#include "cli/commands.h"
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

struct DemoCase {
  const char* name;
  const char* module;
  const char* variant_a;
  const char* variant_b;
  const char* what;
};

constexpr DemoCase kCases[] = {
    {"gpt2-conv1d", "magneton.demo.gpt2_blocks", "addmm", "mm_add",
     "GPT-2 blocks: HF Conv1D as torch.addmm (a) vs mm + add (b)"},
    {"gpt2-gelu", "magneton.demo.gpt2_blocks", "gelu_new", "gelu_fused",
     "GPT-2 blocks: HF's gelu_new as 8 elementwise operators (a) vs the fused F.gelu (b)"},
    {"unet-tf32", "magneton.demo.unet_tf32", "fp32", "tf32",
     "UNet-like convolutions and linear layers: TF32 off (a) vs on (b)"},
};

// On a GPU the paper's Conv1D case; on a CPU its few percent drown in timing
// noise, so the GELU case, whose difference a CPU shows plainly.
const char* AutoCase(const std::string& python, const std::string& device) {
  if (device == "cpu") return "gpt2-gelu";
  if (device == "cuda") return "gpt2-conv1d";
  return Spawn({python, "-c", "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"}) == 0
             ? "gpt2-conv1d"
             : "gpt2-gelu";
}

struct DemoArgs {
  std::string out = "magneton-demo";
  std::string which = "auto";
  std::string device = "auto";
  std::string size = "auto";
  int iterations = 0;
  bool no_replay = false;
  std::string color = "auto";
};

// Puts this checkout's python/ first on PYTHONPATH, so `-m magneton.demo...`
// finds the demo next to the built extension.
void AddPackageToPythonPath() {
  fs::path pkg = fs::path(ExecutableDir()) / ".." / "python";
  std::error_code ec;
  if (!fs::exists(pkg / "magneton" / "demo" / "__init__.py", ec)) return;
  std::string path = fs::canonical(pkg, ec).string();
  const char* old = std::getenv("PYTHONPATH");
  std::string value = old && *old ? path + ":" + old : path;
  setenv("PYTHONPATH", value.c_str(), 1);
}

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

int Demo(const DemoArgs& args) {
  const char* env_python = std::getenv("MAGNETON_PYTHON");
  std::string python = env_python && *env_python ? env_python : "python3";
  AddPackageToPythonPath();
  std::error_code ec;
  fs::create_directories(args.out, ec);
  if (ec)
    return Fail(MakeError(ErrorCode::kIo,
                          fmt::format("{}: cannot create the output directory: {}", args.out, ec.message())));

  int probe = Spawn({python, "-c", "import torch, transformers, magneton.recorder as r; r.extension()"});
  if (probe != 0)
    return Fail(
        MakeError(ErrorCode::kUnavailable,
                  fmt::format("demo: {} cannot import torch, transformers and magneton._torch (exit {}); set "
                              "MAGNETON_PYTHON to the project's venv python and build magneton_torch "
                              "(scripts/build.sh)",
                              python, probe)));
  std::string which = args.which == "auto" ? AutoCase(python, args.device) : args.which;
  const DemoCase* c = nullptr;
  for (const auto& k : kCases)
    if (which == k.name) c = &k;
  if (!c) return Fail(MakeError(ErrorCode::kInvalidArgument, fmt::format("demo: unknown case '{}'", which)));
  fmt::print("magneton demo: {}\n", c->what);
  std::fflush(stdout);  // before the recorders print
  DiffArgs d;
  d.a = (fs::path(args.out) / fmt::format("{}.mgt", c->variant_a)).string();
  d.b = (fs::path(args.out) / fmt::format("{}.mgt", c->variant_b)).string();
  d.measured_a = (fs::path(args.out) / fmt::format("{}-measured.mgt", c->variant_a)).string();
  d.measured_b = (fs::path(args.out) / fmt::format("{}-measured.mgt", c->variant_b)).string();
  d.html = (fs::path(args.out) / "report.html").string();
  d.color = args.color;
  for (auto [variant, out, measured] :
       {std::tuple{c->variant_a, d.a, d.measured_a}, std::tuple{c->variant_b, d.b, d.measured_b}}) {
    std::vector<std::string> argv = {python,       "-m",     c->module,  "--variant", variant,  "--out",  out,
                                     "--measured", measured, "--device", args.device, "--size", args.size};
    if (args.iterations > 0) argv.insert(argv.end(), {"--iterations", std::to_string(args.iterations)});
    if (args.no_replay) argv.push_back("--no-replay");
    int rc = Spawn(argv);
    if (rc != 0)
      return Fail(MakeError(ErrorCode::kInternal,
                            fmt::format("demo: recording variant {} failed ({} -m {} exited {})", variant,
                                        python, c->module, rc)));
  }

  auto session = RunDiff(d, 0.10);
  if (!session.ok()) return Fail(session.error());
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
                  "auto (gpt2-conv1d on a GPU, gpt2-gelu on a CPU), gpt2-conv1d, gpt2-gelu or unet-tf32")
      ->check(CLI::IsMember({"auto", "gpt2-conv1d", "gpt2-gelu", "unet-tf32"}))
      ->capture_default_str();
  sub->add_option("--device", args->device, "auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  sub->add_option("--size", args->size,
                  "Model size: auto (full on a GPU, small on the CPU), tiny, small, full")
      ->check(CLI::IsMember({"auto", "tiny", "small", "full"}))
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
