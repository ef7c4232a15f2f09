// `magneton diff`, `check`, `export` and `demo` end to end: the built command
// on the committed recordings (tests/data/diff/), exit codes, outputs, errors.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "../analysis/kernel_program.h"
#include "core/store.h"
#include "recorded_runs.h"
#include "run_magneton.h"

namespace magneton::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::CommandResult;
using testing::RunMagneton;

const std::string kData = std::string(MAGNETON_TEST_DATA) + "/diff/";

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path TempDir() {
  fs::path d = fs::temp_directory_path() / ("magneton_cli_test_" + std::to_string(getpid()));
  fs::create_directories(d);
  return d;
}

// `magneton ARGS`, with ARGS written as one line of words (no argument here holds a space).
CommandResult Magneton(const std::string& args) {
  std::istringstream words(args);
  std::vector<std::string> argv;
  for (std::string w; words >> w;) argv.push_back(w);
  return RunMagneton(argv);
}

// "a b" -> the run files and measured passes of both stems.
std::string Pair(const std::string& a, const std::string& b) {
  return kData + a + ".mgt " + kData + b + ".mgt --measured-a " + kData + a + "-measured.mgt --measured-b " +
         kData + b + "-measured.mgt";
}

TEST(DiffCli, WasteExitsOneAndNamesTheFinding) {
  CommandResult r = Magneton("diff " + Pair("gelu_new", "gelu_fused") + " --color never");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("waste"), std::string::npos);
  EXPECT_NE(r.out.find("aten::gelu"), std::string::npos);
  EXPECT_NE(r.out.find("[operators]"), std::string::npos);
  EXPECT_NE(r.out.find("energy unmeasured"), std::string::npos);
  EXPECT_EQ(r.out.find("\033["), std::string::npos) << "no colors when stdout is not a terminal";
}

TEST(DiffCli, SameProgramTwiceExitsZero) {
  CommandResult r = Magneton("diff " + Pair("gelu_new", "gelu_new_again"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("no waste found"), std::string::npos);
}

// Recording passes alone time the fingerprinting, not the programs: refused,
// with what to give instead.
TEST(DiffCli, RecordingPassesWithoutMeasuredPassesAreRefused) {
  CommandResult r = Magneton("diff " + kData + "gelu_new.mgt " + kData + "gelu_fused.mgt");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("both runs are recording passes"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--measured-a"), std::string::npos) << r.err;
}

// Two programs with no value in common: nothing is compared, which is neither
// "no waste" nor a finding.
TEST(DiffCli, RunsWithNothingInCommonExitThreeAndSaySo) {
  const std::string data = std::string(MAGNETON_TEST_DATA);
  CommandResult r = Magneton("diff " + data + "/jax_dtype/x64.mgt " + data + "/dispatch/jax_jit.mgt --color never");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("nothing compared: no region of the two runs matched"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("no waste found"), std::string::npos) << r.out;
}

// A C++ engine recorded by `magneton record` (no operators): matched by NVTX range.
TEST(DiffCli, RunsWithoutOperatorsAreDiffedByNvtxRange) {
  const std::string fp32 = testing::GpuRuns() + "engine_fp32.mgt", tf32 = testing::GpuRuns() + "engine_tf32.mgt";
  if (!fs::exists(fp32) || !fs::exists(tf32)) GTEST_SKIP() << "the cublas-engine recordings are not in the tree";
  CommandResult r = Magneton("diff " + fp32 + " " + tf32 + " --color never");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("matched by NVTX range name"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[kernels]"), std::string::npos) << r.out;
  CommandResult same = Magneton("diff " + fp32 + " " + fp32 + " --color never");
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
}

// Any CUDA program recorded whole (`magneton record -- prog`): no operators,
// no NVTX ranges. Programs built here, and the cublas-engine case's H200
// recordings with their NVTX ranges taken out, written as run files.
TEST(DiffCli, RunsWithOnlyKernelsAreDiffedKernelByKernel) {
  fixture::Variant tf32;
  tf32.gemm = fixture::kTf32Gemm;
  tf32.gemm_ns = 10'000;
  fs::path dir = TempDir();
  const std::string a = (dir / "fp32.mgt").string(), b = (dir / "tf32.mgt").string();
  ASSERT_TRUE(SaveRun(fixture::Program("prog --tf32 off", {}, 8), a, true).ok());
  ASSERT_TRUE(SaveRun(fixture::Program("prog --tf32 on", tf32, 8), b, true).ok());
  CommandResult r = Magneton("diff " + a + " " + b + " --color never");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("matched by kernel sequence"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[kernels] same place in the step, different kernels"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fix FP32 GEMM or convolution kernels where the other side uses TF32"), std::string::npos)
      << r.out;
  json j = json::parse(Magneton("diff " + a + " " + b + " --json").out);
  EXPECT_EQ(j["summary"]["matched_by"], "kernels");
  EXPECT_EQ(j["findings"][0]["outputs_compared"], false);
  CommandResult same = Magneton("diff " + a + " " + a + " --color never");
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;

  const std::string runs = testing::GpuRuns();
  for (auto [from, to] : {std::pair{runs + "engine_fp32.mgt", a}, std::pair{runs + "engine_tf32.mgt", b}}) {
    auto run = LoadRun(from);
    ASSERT_TRUE(run.ok()) << run.error().message;
    run->ranges.clear();
    ASSERT_TRUE(SaveRun(*run, to, true).ok());
  }
  CommandResult engine = Magneton("diff " + a + " " + b + " --color never");
  EXPECT_EQ(engine.exit_code, 1) << engine.out << engine.err;
  EXPECT_NE(engine.out.find("matched by kernel sequence"), std::string::npos) << engine.out;
  EXPECT_NE(engine.out.find("gemm_f32f32_f32f32_f32"), std::string::npos) << engine.out;
}

TEST(DiffCli, JsonFollowsTheSchema) {
  CommandResult r = Magneton("diff " + Pair("gelu_new", "gelu_fused") + " --json");
  EXPECT_EQ(r.exit_code, 1);
  json j = json::parse(r.out);  // stdout is the JSON and nothing else
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["unit"], "s");
  EXPECT_EQ(j["summary"]["waste"], 1);
  EXPECT_EQ(j["findings"][0]["evidence"][0]["kind"], "operators");
  EXPECT_EQ(j["runs"]["a"]["measured_repeats"], 3);
  EXPECT_EQ(j["findings"][0]["rules"][0]["id"], "unfused-gelu");
}

TEST(DiffCli, HtmlReportIsWrittenAndSelfContained) {
  fs::path html = TempDir() / "report.html";
  CommandResult r = Magneton("diff " + Pair("gelu_new", "gelu_fused") + " --html " + html.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("wrote " + html.string()), std::string::npos) << r.err;
  std::string text = Slurp(html);
  EXPECT_NE(text.find("id=\"finding-1\""), std::string::npos);
  EXPECT_EQ(text.find("http"), std::string::npos);
  EXPECT_NE(text.find("id=\"power-a-missing\""), std::string::npos);  // CPU: no power series
}

// A measured pass whose later steps ran untraced (record(traced_steps=N)):
// the H200 fixture with 10 steps of 110 ms at 300 W appended after its end.
TEST(DiffCli, UntracedStepsAreReportedBesideTheTracedOnes) {
  const std::string gpu = kData + "gpu/";
  auto loaded = LoadRun(gpu + "gpt2_addmm-measured.mgt");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  magneton::Run run = std::move(*loaded);
  constexpr int64_t kMs = 1'000'000;
  const int64_t cut = run.info.end_ns;
  run.info.extra[kTracedUntilKey] = std::to_string(cut);
  for (int i = 1; i <= 11; ++i)
    run.ranges.push_back({static_cast<int64_t>(run.ranges.size()), kStepMark, kMagnetonDomain, 1, cut + i * 110 * kMs,
                          cut + i * 110 * kMs, kNone});
  for (auto& series : run.series) {
    if (run.devices[series.device].kind != "gpu" || series.t_ns.empty()) continue;
    const int64_t t0 = series.t_ns.back();
    const double v0 = series.value.back();
    for (int64_t t = cut + kMs; t <= cut + 1300 * kMs; t += 10 * kMs) {
      if (series.unit == "J") series.value.push_back(v0 + 300.0 * (t - t0) * 1e-9);
      else if (series.unit == "W") series.value.push_back(300.0);
      else continue;
      series.t_ns.push_back(t);
    }
  }
  run.info.end_ns = cut + 1301 * kMs;
  const fs::path untraced = TempDir() / "gpt2_addmm-untraced.mgt";
  ASSERT_TRUE(SaveRun(run, untraced.string(), true).ok());

  auto diff = [&](const std::string& measured_a) {
    return Magneton("diff " + gpu + "gpt2_addmm.mgt " + gpu + "gpt2_mm_add.mgt --measured-a " + measured_a +
                    " --measured-b " + gpu + "gpt2_mm_add-measured.mgt --json");
  };
  CommandResult base = diff(gpu + "gpt2_addmm-measured.mgt"), with = diff(untraced.string());
  ASSERT_EQ(with.exit_code, base.exit_code) << with.err;
  json b = json::parse(base.out), w = json::parse(with.out);
  ASSERT_TRUE(w["runs"]["a"]["untraced"].is_object()) << w["runs"]["a"].dump();
  EXPECT_EQ(w["runs"]["a"]["untraced"]["steps"], 10);
  EXPECT_NEAR(w["runs"]["a"]["untraced"]["seconds"].get<double>(), 0.110, 1e-9);
  EXPECT_NEAR(w["runs"]["a"]["untraced"]["joules"].get<double>(), 33.0, 1e-6);  // 300 W x 110 ms
  EXPECT_TRUE(w["runs"]["b"]["untraced"].is_null());
  EXPECT_TRUE(b["runs"]["a"]["untraced"].is_null());
  // The traced steps are read as before: the same repetitions and findings.
  EXPECT_EQ(w["runs"]["a"]["per_iteration"]["repetitions"], b["runs"]["a"]["per_iteration"]["repetitions"]);
  ASSERT_EQ(w["findings"].size(), b["findings"].size());
  for (size_t i = 0; i < b["findings"].size(); ++i) {
    EXPECT_EQ(w["findings"][i]["label"], b["findings"][i]["label"]);
    EXPECT_EQ(w["findings"][i]["verdict"], b["findings"][i]["verdict"]);
  }
}

TEST(DiffCli, CheckGatesRegressions) {
  // The 8-operator GELU as the new run against the fused baseline: a regression.
  CommandResult bad = Magneton("check --baseline " + kData + "gelu_fused.mgt " + kData +
                        "gelu_new.mgt --measured-a " + kData + "gelu_fused-measured.mgt --measured-b " +
                        kData + "gelu_new-measured.mgt --max-regression 5%");
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("REGRESSED"), std::string::npos);
  EXPECT_NE(bad.out.find("aten::gelu"), std::string::npos);
  // The same program again: nothing regressed.
  CommandResult ok = Magneton("check --baseline " + kData + "gelu_new.mgt " + kData +
                       "gelu_new_again.mgt --measured-a " + kData + "gelu_new-measured.mgt --measured-b " +
                       kData + "gelu_new_again-measured.mgt --max-regression 5% --json");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  json j = json::parse(ok.out);
  EXPECT_FALSE(j["regressed"].get<bool>());
  EXPECT_EQ(j["tool"], "magneton check");
}

TEST(DiffCli, ExportPerfettoWritesATrace) {
  fs::path trace = TempDir() / "trace.json";
  CommandResult r = Magneton("export --perfetto " + kData + "gelu_new-measured.mgt -o " + trace.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("slices"), std::string::npos);
  json t = json::parse(Slurp(trace));
  int slices = 0;
  for (const auto& e : t["traceEvents"]) slices += e["ph"] == "X";
  EXPECT_GT(slices, 100);
  EXPECT_EQ(Magneton("export " + kData + "gelu_new.mgt -o " + trace.string()).exit_code, 2);  // no format chosen
}

TEST(DiffCli, GpuRunExportsPowerCountersAndKernels) {
  std::string run = kData + "gpu/unet_fp32-measured.mgt";
  if (!fs::exists(run))
    GTEST_SKIP() << run << " is not in the tree: record it on a GPU with scripts/gpu/diff.sh";
  fs::path trace = TempDir() / "gpu_trace.json";
  CommandResult r = Magneton("export --perfetto " + run + " -o " + trace.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json t = json::parse(Slurp(trace));
  int kernels = 0, power = 0, attributed = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "kernel") ++kernels;
    if (e["ph"] == "C" && e["name"].get<std::string>().rfind("power.", 0) == 0) ++power;
    if (e["ph"] == "C" && e["name"] == "energy attributed to kernels (J)") ++attributed;
  }
  EXPECT_GT(kernels, 0);
  EXPECT_GT(power, 0);
  EXPECT_GT(attributed, 0);
}

TEST(DiffCli, BadInputIsOneLineAndExitTwo) {
  auto one_line = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n') == 1; };
  CommandResult missing = Magneton("diff /nonexistent/a.mgt " + kData + "gelu_new.mgt");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/a.mgt"), std::string::npos) << missing.err;
  EXPECT_TRUE(one_line(missing.err)) << missing.err;
  CommandResult low = Magneton("diff " + Pair("gelu_new", "gelu_fused") + " --threshold 3%");
  EXPECT_EQ(low.exit_code, 2);
  EXPECT_NE(low.err.find("--threshold 3%: below 5%"), std::string::npos) << low.err;
  CommandResult junk = Magneton("diff " + Pair("gelu_new", "gelu_fused") + " --threshold ten");
  EXPECT_EQ(junk.exit_code, 2);
  EXPECT_NE(junk.err.find("--threshold ten"), std::string::npos);
  CommandResult wrong = Magneton("diff " + kData + "gelu_new.mgt " + kData + "gelu_fused.mgt --measured-a " + kData +
                          "gelu_fused-measured.mgt");
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("gelu_fused-measured.mgt: measured pass of run a"), std::string::npos)
      << wrong.err;
  EXPECT_TRUE(one_line(wrong.err)) << wrong.err;
  fs::path not_run = TempDir() / "not_a_run.mgt";
  std::ofstream(not_run) << "hello";
  CommandResult garbage = Magneton("check --baseline " + not_run.string() + " " + kData + "gelu_new.mgt");
  EXPECT_EQ(garbage.exit_code, 2);
  EXPECT_NE(garbage.err.find(not_run.string()), std::string::npos) << garbage.err;
}

// A file of both passes (the one-command route) whose measured pass is another
// program's: the error names that file, from which the measured pass was split.
TEST(DiffCli, AFileOfBothPassesThatDoNotMatchIsNamed) {
  auto rec = LoadRun(kData + "gelu_new.mgt");
  auto other = LoadRun(kData + "gelu_fused-measured.mgt");
  ASSERT_TRUE(rec.ok() && other.ok());
  magneton::Run both = std::move(*rec);
  const int64_t shift = both.info.end_ns + 1'000 - other->info.start_ns;
  const auto op0 = static_cast<int64_t>(both.ops.size()), t0 = static_cast<int64_t>(both.tensors.size());
  for (auto t : other->tensors) {
    t.id += t0;
    both.tensors.push_back(std::move(t));
  }
  for (auto op : other->ops) {
    op.id += op0;
    if (op.parent != kNone) op.parent += op0;
    if (op.forward_op != kNone) op.forward_op += op0;
    for (auto* ids : {&op.inputs, &op.outputs})
      for (auto& t : *ids) t += t0;
    op.start_ns += shift, op.end_ns += shift;
    op.stack = kNone;
    both.ops.push_back(std::move(op));
  }
  both.info.extra["measured_from_ns"] = std::to_string(both.info.end_ns + 500);
  both.info.end_ns = other->info.end_ns + shift;
  const std::string path = (TempDir() / "both_passes.mgt").string();
  ASSERT_TRUE(SaveRun(both, path, true).ok());
  CommandResult r = Magneton("diff " + path + " " + kData + "gelu_fused.mgt --measured-b " + kData +
                             "gelu_fused-measured.mgt");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.err.rfind("magneton: " + path + ": measured pass of run a", 0), 0u) << r.err;
}

// A run file that holds nothing (a script whose step loop was not found: the
// one-command route still writes its file): named, not asked for passes.
TEST(DiffCli, ARunOfNothingIsNamed) {
  auto rec = LoadRun(kData + "gelu_new.mgt");
  ASSERT_TRUE(rec.ok());
  magneton::Run empty;
  empty.info = rec->info;
  empty.info.command = "python jx.py";
  const std::string path = (TempDir() / "nothing.mgt").string();
  ASSERT_TRUE(SaveRun(empty, path, true).ok());
  CommandResult r = Magneton("diff " + kData + "gelu_new.mgt " + path);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.err, "magneton: " + path +
                       ": run b holds no operators, kernels, copies or ranges: nothing was recorded (`python jx.py`), "
                       "so there is nothing to compare\n");
}

// The main-job command, live: records with the project's Python on this machine.
TEST(DiffCli, DemoRecordsDiffsAndWritesTheReports) {
  const char* py = std::getenv("MAGNETON_PYTHON");
  std::string python = py && *py ? py
                                 : std::string(std::getenv("HOME") ? std::getenv("HOME") : "") +
                                       "/.cache/magneton/venv-py312/bin/python";
  std::string probe =
      "PYTHONPATH=" + std::string(MAGNETON_TEST_DATA) + "/../../python " + python +
      " -c 'import torch, transformers, magneton.recorder as r; r.extension()' >/dev/null 2>&1";
  if (!fs::exists(python) || std::system(probe.c_str()) != 0)
    GTEST_SKIP() << python << " lacks torch, transformers or the built magneton._torch: set MAGNETON_PYTHON "
                 << "and build magneton_torch to run the demo";
  setenv("MAGNETON_PYTHON", python.c_str(), 1);
  fs::path out = TempDir() / "demo";
  CommandResult r = Magneton("demo --size tiny --iterations 3 --device cpu --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("magneton demo: GPT-2 blocks"), std::string::npos);
  EXPECT_NE(r.out.find("could not measure here: energy"), std::string::npos);
  EXPECT_TRUE(fs::exists(out / "report.html"));
  json j = json::parse(Slurp(out / "diff.json"));
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_GT(j["summary"]["regions"].get<int>(), 20);
  // On the CPU the demo is the GELU pair: its finding is the fused GELU.
  EXPECT_NE(j["findings"][0]["label"].get<std::string>().find("aten::gelu"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(out / "pair.json"));
}

// A Python that cannot run the demo: one line naming the import or the
// interpreter, exit 2, and no stale pair.json taken for this demo's runs.
TEST(DiffCli, DemoWithAPythonLackingTorchSaysWhich) {
  if (std::system("python3 -c 'import torch' >/dev/null 2>&1") == 0)
    GTEST_SKIP() << "this machine's python3 has torch";
  fs::path out = TempDir() / "demo-no-torch";
  fs::create_directories(out);
  std::ofstream(out / "pair.json") << R"({"a": "x.mgt", "b": "y.mgt", "measured_a": "x.mgt", "measured_b": "y.mgt"})";
  setenv("MAGNETON_PYTHON", "python3", 1);
  CommandResult r = Magneton("demo --out " + out.string());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("No module named 'torch'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out / "pair.json"));
  setenv("MAGNETON_PYTHON", "/nonexistent/python", 1);
  CommandResult gone = Magneton("demo --out " + out.string());
  EXPECT_EQ(gone.exit_code, 2);
  EXPECT_NE(gone.err.find("/nonexistent/python could not be started"), std::string::npos) << gone.err;
  unsetenv("MAGNETON_PYTHON");
}

}  // namespace
}  // namespace magneton::report
