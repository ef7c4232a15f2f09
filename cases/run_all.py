"""Runs every case through Magneton and writes cases/RESULTS.md.

Per case: record one iteration of each side (the variants' --record flag, i.e.
magneton.record(..., fingerprints=True); or `magneton record -- CMD` for cases whose
program is not a PyTorch one), `magneton diff wasteful.mgt efficient.mgt --json`, and a
comparison of the top finding with the expectation: the side that truly wastes (from the
ground truth, groundtruth.json, where it was measured; else expected.json), the
root-cause class, the configuration keys and the operators named.

    python cases/run_all.py --groundtruth OUT/groundtruth.json      # record + diff + RESULTS.md
    python cases/run_all.py --diff-only                             # re-diff committed run files
                                                                    # (cases with only diff.json: read it)

Run files go to cases/<case>/runs/ (one iteration each, small, committed so that
`magneton diff` on each case runs in CI without a GPU; those of several MB packed in
runs/runs.tar.xz, which --diff-only unpacks to a temporary folder).
Exit codes: 0 every case ran and matched (or was skipped on this machine), 1 some case failed or
did not match, 2 bad usage.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import casekit  # noqa: E402
import findings  # noqa: E402


def find_magneton(given: str) -> str | None:
    for cand in (given, os.environ.get("MAGNETON_BIN", ""), ROOT / "build-gpu" / "magneton",
                 ROOT / "build" / "magneton"):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return shutil.which("magneton")


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "python"), env.get("PYTHONPATH", "")) if p)
    return env


# time.monotonic() by which every command must have ended (--budget), so that one hang
# cannot outlast the budget; None: no budget.
DEADLINE: float | None = None


def _run(cmd: list[str], timeout: float) -> tuple[int, str, str]:
    if DEADLINE is not None:
        timeout = max(5.0, min(timeout, DEADLINE - time.monotonic()))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env())
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout:.0f} s"
    except OSError as e:
        return 127, "", str(e)


def _tail(text: str, n: int = 3) -> str:
    return " | ".join(text.strip().splitlines()[-n:])


def measured_file(run_file: Path) -> Path:
    """Where a side's measured pass goes (wasteful.mgt -> wasteful-measured.mgt)."""
    return run_file.with_name(run_file.stem + "-measured.mgt")


def side_command(case: str, side: str, exp: dict, run_file: Path, args) -> list[str]:
    """The command that records one side: the variant's own --record, or the CLI around it."""
    if exp["program"] == "cuda-binary":
        compute = "fp32" if side == "wasteful" else "tf32"
        # Only the measured iterations (the warm-up's cuBLAS handle and first launches stay out),
        # about a second of them, so that the energy rests on ~10 NVML counter updates per side.
        # --api all: each kernel's launch record places it in the range that launched it (under
        # --only-ranges the default launch-only selection recorded none).
        return [args.magneton, "record", "-o", str(run_file), "--only-ranges", "magneton.case/measured",
                "--api", "all", "--",
                args.engine, "--compute", compute, "--seconds", "1", "--warmup", "1"]
    program = [sys.executable, str(HERE / case / f"{side}.py"), "--device", args.device]
    if args.small:
        program.append("--small")
    if exp["record_with"] == "cli":
        return [args.magneton, "record", "-o", str(run_file), "--", *program, "--iters", "1"]
    cmd = [*program, "--record", str(run_file), "--measured", str(measured_file(run_file))]
    if args.replay:
        cmd.append("--replay")
    return cmd


def record_case(case: str, exp: dict, runs: Path, args) -> str:
    if exp["program"] == "cuda-binary" and not (args.engine and Path(args.engine).exists()):
        return f"the compiled engine was not found ({args.engine or 'pass --engine or set CASES_ENGINE'})"
    runs.mkdir(parents=True, exist_ok=True)
    for side in casekit.SIDES:
        run_file = runs / f"{side}.mgt"
        run_file.unlink(missing_ok=True)
        measured_file(run_file).unlink(missing_ok=True)
        cmd = side_command(case, side, exp, run_file, args)
        rc, out, err = _run(cmd, args.timeout)
        if rc != 0 or not run_file.exists():
            return f"recording {side} failed (exit {rc}): {_tail(err or out)}"
    return ""


def diff_command(magneton: str, runs: Path, extra: str = "") -> list[str]:
    """`magneton diff --json` of a case's runs (wasteful = a), with the measured passes that exist."""
    cmd = [magneton, "diff", str(runs / "wasteful.mgt"), str(runs / "efficient.mgt"), "--json"]
    for side, flag in (("wasteful", "--measured-a"), ("efficient", "--measured-b")):
        if measured_file(runs / f"{side}.mgt").exists():  # JAX programs and the CLI-recorded cases have none
            cmd += [flag, str(measured_file(runs / f"{side}.mgt"))]
    return cmd + shlex.split(extra)


def diff_case(runs: Path, args) -> tuple[dict | None, str]:
    with casekit.run_files(runs) as files:
        rc, out, err = _run(diff_command(args.magneton, files, args.diff_args), args.timeout)
    if rc not in (0, 1):  # 1: a finding, by the CLI's convention
        return None, f"magneton diff failed (exit {rc}): {_tail(err or out)}"
    try:
        doc = json.loads(out)
    except json.JSONDecodeError as e:
        return None, f"magneton diff --json printed no JSON ({e}): {_tail(out or err)}"
    for run in doc.get("runs", {}).values():  # where they stay, not the folder they were unpacked into
        if isinstance(run, dict) and "path" in run:
            run["path"] = str(runs / Path(run["path"]).name)
    (runs / "diff.json").write_text(json.dumps(doc, indent=1) + "\n")
    return doc, ""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--groundtruth", default="", help="groundtruth.json from groundtruth.py")
    p.add_argument("--diff-only", action="store_true", help="do not record; diff the committed run files")
    p.add_argument("--magneton", default="", help="the magneton command (default: build-gpu/magneton, PATH)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--small", action="store_true", help="tiny shapes (a pipeline check, not the suite)")
    p.add_argument("--replay", action="store_true", help="ask the recorder to replay operators for energy")
    p.add_argument("--diff-args", default="", help="extra arguments for magneton diff (e.g. '--threshold 5')")
    p.add_argument("--runs-root", default=str(HERE), help="where <case>/runs/ folders go")
    p.add_argument("--results", default=str(HERE / "RESULTS.md"))
    p.add_argument("--timeout", type=float, default=300, help="seconds allowed per command")
    casekit.harness_arguments(p)
    args = p.parse_args()
    wanted = casekit.selected_cases(args.cases, "run_all")
    given = args.magneton
    args.magneton = find_magneton(given)
    no_cli = "" if args.magneton else f"the magneton command was not found ({given or 'build it, or pass --magneton PATH'})"
    if no_cli:
        print(f"run_all: {no_cli}", file=sys.stderr)
    gt = {}
    if args.groundtruth:
        try:
            gt = json.loads(Path(args.groundtruth).read_text())
        except (OSError, json.JSONDecodeError) as e:
            print(f"run_all: {args.groundtruth}: cannot be read as JSON ({e})", file=sys.stderr)
            return 2

    rows = []
    begun = time.monotonic()
    global DEADLINE
    DEADLINE = begun + args.budget if args.budget else None
    for case in wanted:
        exp = casekit.expected(case)
        runs = Path(args.runs_root) / case / "runs"
        print(f"run_all: {case} ...", file=sys.stderr, flush=True)
        error = no_cli
        if error:
            pass  # every case says why: RESULTS.md still shows the ground truth
        elif args.budget and time.monotonic() - begun + 30 > args.budget:
            error = f"not run: the {args.budget:.0f} s budget was spent"
        elif args.device == "cpu" and exp.get("gpu_only"):
            error = f"skipped on a CPU: {exp['gpu_only_reason']}"
        elif exp["program"] == "distributed":
            error = f"skipped: {exp['distributed_reason']}"
        elif not args.diff_only:
            error = record_case(case, exp, runs, args)
        doc = None
        if not error and args.diff_only and not casekit.has_run_files(runs) and (runs / "diff.json").exists():
            doc = findings.load(runs / "diff.json")  # run files too large to commit: the GPU's diff stands
        elif not error:
            doc, error = diff_case(runs, args)
        rows.append(findings.assess(case, exp, gt.get("cases", {}).get(case), doc, error, runs))
        # After every case, so that a run stopped from outside still leaves the cases done.
        Path(args.results).write_text(findings.results_markdown(rows, gt, args, datetime.date.today()))

    print(findings.summary_table(rows))
    print(f"\nwrote {args.results}", file=sys.stderr)
    if no_cli:
        return 2
    return 0 if all(r["match"] in ("yes", "skipped") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
