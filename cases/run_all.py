"""Runs every case through Magneton and writes cases/RESULTS.md, all of it.

Per case: record one iteration of each side (the variants' --record flag, i.e.
magneton.record(..., fingerprints=True), and a measured pass; or `magneton record -- CMD`
for cases whose program is not a PyTorch one), `magneton diff wasteful.mgt efficient.mgt
--json`, and the suite's one rule (findings.judge, stated in cases/README.md) against
the ground truth.

    python cases/run_all.py --groundtruth OUT/groundtruth.json      # record + diff + RESULTS.md
    python cases/run_all.py --diff-only                             # re-derive every row from the
                                                                    # committed run files (no GPU)

Run files go to cases/<case>/runs/, packed as runs/runs.tar.xz (with provenance.json:
when, where and by which Magneton they were recorded) so that `magneton diff` on each
case runs in CI without a GPU; --diff-only unpacks them to a temporary folder. A case
without committed run files cannot be re-derived, and its row says so.
Exit codes: 0 every case ran and matched (or was skipped on this machine), 1 some case failed or
did not match, 2 bad usage.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import time
from contextlib import closing
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
COMMITTED_GROUNDTRUTH = HERE / "groundtruth-h200.json"
PROVENANCE = "provenance.json"
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


# The A/A run: the wasteful side recorded again; and where each pair's diff is kept.
AGAIN = "again"
DIFF_FILES = {"efficient": "diff.json", AGAIN: "aa.json"}


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


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def magneton_version(magneton: str) -> str:
    rc, out, err = _run([magneton, "--version"], 30)
    return (out or err).strip() if rc == 0 else "version unknown"


def repository_state() -> str:
    """"abc1234 (2026-12-05T10:00:00+00:00)", and whether the working tree differs from it."""
    head = _git("log", "-1", "--format=%h (%cI)")
    if not head:
        return "unknown (not a git checkout)"
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    return head + (", with uncommitted changes" if dirty else "")


def pack_runs(runs: Path) -> None:
    """Replaces a case's .mgt files by runs/runs.tar.xz (xz shrinks SQLite run files ~5x)."""
    files = sorted(runs.glob("*.mgt"))
    if not files:
        return
    with tarfile.open(runs / casekit.PACKED_RUNS, "w:xz") as tar:
        for f in files:
            tar.add(f, arcname=f.name)
    for f in files:
        f.unlink()


def write_provenance(runs: Path, args) -> None:
    """When, where and by which Magneton a case's run files were recorded (RESULTS.md reads it)."""
    device = "cpu"
    if args.device == "cuda":  # from nvidia-smi: importing torch here would open a CUDA context
        rc, out, _ = _run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"], 30)
        device = out.strip() if rc == 0 and out.strip() else "cuda (name unknown)"
    doc = {"recorded": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "host": platform.node(), "device": device, "magneton": magneton_version(args.magneton),
           "commit": repository_state(), "small": args.small, "replay": args.replay}
    (runs / PROVENANCE).write_text(json.dumps(doc, indent=1) + "\n")


def record_case(case: str, exp: dict, runs: Path, args) -> str:
    if exp["program"] == "cuda-binary" and not (args.engine and Path(args.engine).exists()):
        return f"the compiled engine was not found ({args.engine or 'pass --engine or set CASES_ENGINE'})"
    runs.mkdir(parents=True, exist_ok=True)
    for old in (*runs.glob("*.mgt"), runs / casekit.PACKED_RUNS, runs / PROVENANCE):
        old.unlink(missing_ok=True)
    # The A/A pair: the wasteful side recorded a second time, as `again` (cases/README.md).
    recordings = [(side, side) for side in casekit.SIDES] + ([] if args.no_aa else [("wasteful", AGAIN)])
    for side, name in recordings:
        run_file = runs / f"{name}.mgt"
        cmd = side_command(case, side, exp, run_file, args)
        rc, out, err = _run(cmd, args.timeout)
        if rc != 0 or not run_file.exists():
            what = side if name == side else f"{side} again (the A/A run)"
            return f"recording {what} failed (exit {rc}): {_tail(err or out)}"
    pack_runs(runs)
    write_provenance(runs, args)
    return ""


def diff_command(magneton: str, runs: Path, extra: str = "", b: str = "efficient") -> list[str]:
    """`magneton diff --json` of a case's runs (wasteful = a; b: efficient, or AGAIN for the A/A
    pair), with the measured passes that exist."""
    cmd = [magneton, "diff", str(runs / "wasteful.mgt"), str(runs / f"{b}.mgt"), "--json"]
    for side, flag in (("wasteful", "--measured-a"), (b, "--measured-b")):
        if measured_file(runs / f"{side}.mgt").exists():  # JAX programs and the CLI-recorded cases have none
            cmd += [flag, str(measured_file(runs / f"{side}.mgt"))]
    return cmd + shlex.split(extra)


def _writers(folder: Path) -> list[str]:
    """meta.writer and schema version of each run file ("magneton 0.1.0, schema 1.0")."""
    out = []
    for f in sorted(folder.glob("*.mgt")):
        try:
            with closing(sqlite3.connect(f"file:{f}?mode=ro", uri=True)) as db:
                meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            out.append(f"{meta.get('writer', '?')}, schema {meta.get('schema_major', '?')}.{meta.get('schema_minor', '?')}")
        except sqlite3.Error as e:
            out.append(f"{f.name}: unreadable ({e})")
    return out


def run_provenance(runs: Path, folder: Path) -> dict:
    """What RESULTS.md says of a case's run files: names and sizes, when and by what they were recorded."""
    stored = [p for p in (*runs.glob("*.mgt"), runs / casekit.PACKED_RUNS) if p.exists()]
    doc = {}
    if (runs / PROVENANCE).exists():
        doc = findings.load(runs / PROVENANCE)
    recorded = doc.get("recorded_note") or (
        f"{doc['recorded']} on {doc.get('device', '?')} ({doc.get('magneton', '?')}, commit {doc.get('commit', '?')})"
        if doc.get("recorded") else "")
    if not recorded:
        commit = _git("log", "-1", "--format=%h %cI", "--", *[str(p) for p in stored])
        recorded = f"by commit {commit} (the recording date is not stored)" if commit else ""
    return {"files": [(p.name, round(p.stat().st_size / 1024)) for p in stored], "recorded": recorded,
            "writers": _writers(folder)}


def _diff(runs: Path, files: Path, args, b: str, write: bool) -> tuple[dict | None, str]:
    """`magneton diff --json` of wasteful against `b`, kept as runs/<DIFF_FILES[b]>, or its error."""
    rc, out, err = _run(diff_command(args.magneton, files, args.diff_args, b), args.timeout)
    what = "magneton diff" if b == "efficient" else "magneton diff of the A/A pair"
    if rc not in (0, 1, 3):  # 1: a finding, 3: nothing matched, by the CLI's convention
        return None, f"{what} failed (exit {rc}): {_tail(err or out)}"
    try:
        doc = json.loads(out)
    except json.JSONDecodeError as e:
        return None, f"{what} --json printed no JSON ({e}): {_tail(out or err)}"
    # Where the files stay, not the folder they were unpacked into (a new one each time).
    stay = os.path.relpath(runs, ROOT)
    for run in doc.get("runs", {}).values():
        if isinstance(run, dict) and "path" in run:
            run["path"] = os.path.join(stay, Path(run["path"]).name)
    doc["notes"] = [n.replace(str(files), stay) for n in doc.get("notes", [])]
    if write:
        (runs / DIFF_FILES[b]).write_text(json.dumps(doc, indent=1) + "\n")
    return doc, ""


def diff_case(runs: Path, args, write: bool = True) -> tuple[dict | None, str, dict, dict | None]:
    """The diff of a case's run files, its error, the files' provenance, and the A/A pair's diff
    (None where no A/A run was recorded)."""
    with casekit.run_files(runs) as files:
        provenance = run_provenance(runs, files)
        doc, error = _diff(runs, files, args, "efficient", write)
        aa = None
        if not error and (files / f"{AGAIN}.mgt").exists():
            aa, error = _diff(runs, files, args, AGAIN, write)
    return doc, error, provenance, aa


def case_error(exp: dict, runs: Path, args, begun: float) -> str:
    """Why a case is not diffed on this call ("" when it is), recording it first unless --diff-only."""
    if not args.magneton:
        return "the magneton command was not found (build it, or pass --magneton PATH)"
    if args.budget and time.monotonic() - begun + 30 > args.budget:
        return f"not run: the {args.budget:.0f} s budget was spent"
    if args.device == "cpu" and exp.get("gpu_only"):
        return f"skipped on a CPU: {exp['gpu_only_reason']}"
    if exp["program"] == "distributed":
        return f"skipped: {exp['distributed_reason']}"
    if args.diff_only:
        return "" if casekit.has_run_files(runs) else (
            "run files not committed: the row cannot be re-derived (record it on the GPU: scripts/gpu/cases.sh)")
    return record_case(exp["case"], exp, runs, args)


def derive_rows(args, gt: dict, write: bool = True, on_row=None) -> list[dict]:
    """Every selected case judged: recorded and diffed, or re-diffed from committed run files."""
    rows = []
    begun = time.monotonic()
    global DEADLINE
    DEADLINE = begun + args.budget if args.budget else None
    for case in casekit.selected_cases(args.cases, "run_all"):
        exp = casekit.expected(case)
        runs = Path(args.runs_root) / case / "runs"
        print(f"run_all: {case} ...", file=sys.stderr, flush=True)
        error = case_error(exp, runs, args, begun)
        doc, provenance, aa = None, {}, None
        if not error:
            doc, error, provenance, aa = diff_case(runs, args, write)
        rows.append(findings.assess(case, exp, gt.get("cases", {}).get(case), doc, error, provenance, aa))
        if on_row:
            on_row(rows)
    return rows


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--groundtruth", default="",
                   help=f"groundtruth.json from groundtruth.py (--diff-only: default {COMMITTED_GROUNDTRUTH.name})")
    p.add_argument("--diff-only", action="store_true", help="do not record; re-derive from the committed run files")
    p.add_argument("--magneton", default="", help="the magneton command (default: build-gpu/magneton, PATH)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--small", action="store_true", help="tiny shapes (a pipeline check, not the suite)")
    p.add_argument("--replay", action="store_true", help="ask the recorder to replay operators for energy")
    p.add_argument("--no-aa", action="store_true",
                   help="do not record the A/A run (the wasteful side a second time, diffed against the first)")
    p.add_argument("--diff-args", default="", help="extra arguments for magneton diff (e.g. '--threshold 5')")
    p.add_argument("--runs-root", default=str(HERE), help="where <case>/runs/ folders go")
    p.add_argument("--results", default=str(HERE / "RESULTS.md"))
    p.add_argument("--timeout", type=float, default=300, help="seconds allowed per command")
    casekit.harness_arguments(p)
    return p


def provenance(args, gt_path: str) -> dict:
    """How RESULTS.md was produced: the call, the repository, the Magneton, the ground truth."""
    how = ("`run_all.py --diff-only`: every row re-derived from the run files committed under cases/*/runs/"
           if args.diff_only else f"`run_all.py`: both sides recorded here ({args.device}"
           f"{', small shapes' if args.small else ''}) and diffed")
    binary = os.path.relpath(args.magneton, ROOT) if args.magneton else "not found"
    return {"produced": f"{how}, {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M')} UTC on "
                        f"{platform.node()}",
            "commit": repository_state(),
            "magneton": f"`{binary}` ({magneton_version(args.magneton) if args.magneton else '–'})",
            "groundtruth": f"`{os.path.relpath(gt_path, ROOT)}`" if gt_path else "none given"}


def main() -> int:
    args = parser().parse_args()
    casekit.selected_cases(args.cases, "run_all")  # exit 2 on an unknown name, before any work
    given = args.magneton
    args.magneton = find_magneton(given)
    if not args.magneton:
        print(f"run_all: the magneton command was not found ({given or 'build it, or pass --magneton PATH'})",
              file=sys.stderr)
    gt_path = args.groundtruth or (str(COMMITTED_GROUNDTRUTH) if args.diff_only else "")
    gt = {}
    if gt_path:
        try:
            gt = findings.load(Path(gt_path))
        except (OSError, json.JSONDecodeError) as e:
            print(f"run_all: {gt_path}: cannot be read as JSON ({e})", file=sys.stderr)
            return 2
    how = provenance(args, gt_path)
    # After every case, so that a run stopped from outside still leaves the cases done.
    write = lambda rows: Path(args.results).write_text(findings.results_markdown(rows, gt, how) + "\n")  # noqa: E731
    rows = derive_rows(args, gt, on_row=write)
    print(findings.summary_table(rows))
    print(f"\nwrote {args.results}", file=sys.stderr)
    if not args.magneton:
        return 2
    return 0 if all(r["match"] in ("yes", "skipped") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
