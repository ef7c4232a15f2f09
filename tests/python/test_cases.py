"""The known-inefficiency suite's premise, checked on a CPU: the two sides of every case
compute the same values (so any energy difference between them is waste, not a
different answer). Tiny shapes (the variants' --small); GPU-only cases are skipped."""
import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "cases"
sys.path.insert(0, str(CASES))

import casekit  # noqa: E402

ALL = casekit.all_cases()


def test_every_case_is_complete():
    assert len(ALL) >= 13, ALL
    for case in ALL:
        exp = casekit.expected(case)
        assert exp["root_cause"] in {"operators", "kernels-config", "launch-layout", "cpu-side",
                                     "collective-wait", "timeline", "arguments"}, case
        assert exp["expected_waste_side"] in {"wasteful", "efficient", "none"}, case
        assert (CASES / case / "README.md").exists(), case
        if exp["program"] in ("python", "distributed"):
            for side in casekit.SIDES:
                assert (CASES / case / f"{side}.py").exists(), (case, side)


def _python_cases():
    for case in ALL:
        exp = casekit.expected(case)
        marks = []
        if exp.get("gpu_only"):
            marks.append(pytest.mark.skip(reason=f"GPU only: {exp['gpu_only_reason']}"))
        elif exp["program"] == "distributed":
            marks.append(pytest.mark.skip(reason=f"distributed: {exp['distributed_reason']}"))
        yield pytest.param(case, marks=marks, id=case)


@pytest.mark.parametrize("case", list(_python_cases()))
def test_both_sides_compute_the_same_values(case):
    exp = casekit.expected(case)
    outs = {}
    for side in casekit.SIDES:
        module = casekit.load_variant(case, side)
        casekit._prepare_device(module, "cpu")
        state = module.setup("cpu", True)
        casekit.configure(module, state)
        outs[side] = module.step(state)
    arrays = casekit.to_arrays(outs["wasteful"])
    assert arrays and all(a.size > 0 for a in arrays)
    tol = exp["cpu_tolerance"]
    ok, rel = casekit.outputs_close(outs["wasteful"], outs["efficient"], tol["rtol"], tol["atol"])
    assert ok, f"{case}: outputs differ (max relative difference {rel:.3g})"


def test_comparison_can_fail():
    # Same seed, same numbers; a perturbed output must not pass for equal.
    module = casekit.load_variant("pytorch-141210", "wasteful")
    a = module.step(module.setup("cpu", True))
    b = module.step(module.setup("cpu", True))
    assert casekit.outputs_close(a, b, 1e-4, 1e-5)[0]
    assert not casekit.outputs_close(a, a + 1e-2, 1e-4, 1e-5)[0]
    assert not casekit.outputs_close(a, a[:1], 1e-4, 1e-5)[0]


def test_variant_command_line_prints_a_window_record():
    out = subprocess.run(
        [sys.executable, str(CASES / "pytorch-141822" / "efficient.py"), "--device", "cpu", "--small",
         "--seconds", "0.2"],
        capture_output=True, text=True, timeout=120, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith(casekit.TAG))
    rec = json.loads(line[len(casekit.TAG):])
    assert rec["case"] == "pytorch-141822" and rec["side"] == "efficient"
    assert rec["iters"] >= 1 and rec["t1_ns"] > rec["t0_ns"] and rec["cpu_s"] >= 0


def test_groundtruth_reads_window_energy_between_counter_updates():
    import groundtruth
    watch = groundtruth.CounterWatch(nvml=None)
    # The counter moved every 100 ms at a steady 500 W: 50 J per update.
    watch.points = [(i * 100_000_000, 1000.0 + 50.0 * i) for i in range(30)]
    assert watch.energy(250_000_000, 2_250_000_000) == pytest.approx(1000.0)  # 2 s x 500 W
    assert watch.energy(0, 5_000_000_000) is None  # past the last update: unknown, not guessed


def test_groundtruth_truth_needs_a_margin_beyond_the_spread():
    import groundtruth
    assert groundtruth.truth(1.20, 0.01) == "wasteful"
    assert groundtruth.truth(1 / 1.20, 0.01) == "efficient"
    assert groundtruth.truth(1.04, 0.005) == "none"
    assert groundtruth.truth(1.20, 0.10) == "none"  # a 10% spread hides a 20% difference
    assert groundtruth.truth(None, 0) is None


def test_cublas_engine_compiles_and_rejects_bad_usage(tmp_path):
    import shutil
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if nvcc is None:
        pytest.skip("no CUDA toolkit (nvcc) on this machine")
    engine = tmp_path / "engine"
    build = subprocess.run([nvcc, "-O2", "-std=c++17", "-Xcompiler", "-Wall,-Wextra", "-o", str(engine),
                            str(CASES / "cublas-engine" / "engine.cu"), "-lcublas", "-ldl"],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    assert "warning" not in build.stderr.lower(), build.stderr
    bad = subprocess.run([str(engine), "--compute", "fp16"], capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and bad.stderr.startswith("engine: --compute must be fp32 or tf32")


def test_distributed_case_runs_both_sides_on_two_gloo_ranks(tmp_path):
    """pytorch-181115 on the CPU: two gloo ranks, 13 and 10 batches. dist.Join trains every
    batch (13 steps on each rank: the finished rank shadows); the early exit stops both at 10."""
    pytest.importorskip("torch")
    steps = {}
    for side in casekit.SIDES:
        p = subprocess.run([sys.executable, str(CASES / "pytorch-181115" / f"{side}.py"), "--device", "cpu",
                            "--small"], capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, f"{side}: exit {p.returncode}\n{p.stderr[-3000:]}"  # the ranks' own words
        out = p.stdout
        recs = [json.loads(l[len(casekit.TAG):]) for l in out.splitlines() if l.startswith(casekit.TAG)]
        assert sorted(r["rank"] for r in recs) == [0, 1], out
        steps[side] = {r["rank"]: (r["steps"], r["batches"]) for r in recs}
    assert steps["wasteful"] == {0: (13, 13), 1: (10, 10)}
    assert steps["efficient"] == {0: (10, 13), 1: (10, 10)}


def test_a_case_recorded_twice_on_the_cpu_gives_a_clean_a_a_pair(tmp_path):
    """run_all records the wasteful side a second time and diffs the two: the same program
    against itself, real recordings, only noise apart; no finding may come of it."""
    pytest.importorskip("torch")
    from magneton import locate
    import findings
    import run_all

    binary = locate.command()
    if binary is None:
        pytest.skip("magneton is not built (set MAGNETON_BUILD or MAGNETON_BIN)")
    args = run_all.parser().parse_args(["--device", "cpu", "--small", "--cases", "pytorch-141210",
                                        "--magneton", binary, "--runs-root", str(tmp_path)])
    row = run_all.derive_rows(args, {})[0]
    assert row["aa"] is not None, row["why"]  # no ground truth here: the pair is judged "no", the A/A still runs
    assert row["aa"]["findings"] == 0, row["aa"]
    assert (tmp_path / "pytorch-141210" / "runs" / "aa.json").exists()
    assert "A/A pair" not in row["why"]
    assert findings.parse_summary(findings.summary_table([row]))["pytorch-141210"]["aa"] == "clean"


def test_sensor_updates_are_the_gpus_where_a_gpu_has_a_counter(tmp_path):
    """A platform counter that never moves (a virtual machine's) must not count: the
    measured pass would be lengthened again and again for updates that never come."""
    import shutil
    import sqlite3
    run = tmp_path / "run.mgt"
    shutil.copy(ROOT / "tests/data/diff/gpu/engine_tf32.mgt", run)
    gpu = casekit.sensor_updates(str(run))
    assert gpu and gpu >= 10
    with contextlib.closing(sqlite3.connect(run)) as db, db:
        sensor = db.execute("SELECT id FROM strings WHERE value = 'energy.total'").fetchone()[0]
        platform = db.execute("SELECT id FROM devices WHERE kind = 'platform'").fetchone()[0]
        db.execute("INSERT INTO series (id, device, sensor, unit, source) "
                   "SELECT 1000, ?, sensor, unit, source FROM series WHERE sensor = ? LIMIT 1", (platform, sensor))
        db.execute("INSERT INTO samples VALUES (1000, 1, 5.0)")
    assert casekit.sensor_updates(str(run)) == gpu
    with contextlib.closing(sqlite3.connect(run)) as db, db:
        db.execute("DELETE FROM series WHERE device = (SELECT id FROM devices WHERE kind = 'gpu')")
    assert casekit.sensor_updates(str(run)) == 0  # no GPU counter: the others count
