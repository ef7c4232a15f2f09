"""`python -m magneton record -o run.mgt [options] script.py [args...]`

Runs a Python script (or `-m module`) as __main__ inside magneton.record(...),
with sys.argv as the script would see it. The script's output and exit code
are its own; bad usage exits 2 with one line on stderr (docs/recording.md)."""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback

from magneton.recorder import ENERGY_CHOICES, record


class _Usage(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        sys.stderr.write(f"magneton: {message}\n")
        sys.exit(2)


def _parser() -> argparse.ArgumentParser:
    p = _Usage(prog="python -m magneton", description="Magneton: record PyTorch workloads.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Usage)
    r = sub.add_parser("record", help="record a Python script's torch ops into a run file")
    r.add_argument("-o", "--output", required=True, help="run file to write (.mgt)")
    r.add_argument("-f", "--force", action="store_true", help="overwrite an existing run file")
    r.add_argument("--energy", default="none", choices=ENERGY_CHOICES, help="energy sensors to sample")
    r.add_argument("--fingerprints", action="store_true", help="fingerprint every tensor (recording pass)")
    r.add_argument("--no-stacks", action="store_true", help="skip Python call sites")
    r.add_argument("--no-kernels", action="store_true", help="skip CUDA kernel tracing")
    r.add_argument("--ops", action="store_true",
                   help="measured pass: record every operator too (slows launch-bound programs; to debug the recorder)")
    r.add_argument("-v", "--verbose", action="store_true", help="print a summary to stderr at the end")
    r.add_argument("-m", dest="module", help="run a module (as python -m) instead of a script")
    r.add_argument("target", nargs=argparse.REMAINDER, help="script.py [args...] (or module args with -m)")
    return p


def _run_target(args) -> int:
    """Runs the script or module; returns its exit status as the interpreter would."""
    try:
        if args.module:
            sys.argv = [args.module] + args.target
            runpy.run_module(args.module, run_name="__main__", alter_sys=True)
        else:
            script = args.target[0]
            sys.argv = list(args.target)
            sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
            runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        sys.stderr.write(f"{code}\n")  # sys.exit("message") prints it and exits 1
        return 1
    except KeyboardInterrupt:
        traceback.print_exc()
        return 130
    except BaseException:  # noqa: BLE001 - reported as the interpreter would
        traceback.print_exc()
        return 1
    return 0


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.target and args.target[0] == "--":
        args.target = args.target[1:]
    if not args.module and not args.target:
        sys.stderr.write("magneton: record: missing the script to run (script.py [args...] or -m module)\n")
        return 2
    if not args.module and not os.path.isfile(args.target[0]):
        sys.stderr.write(f"magneton: record: {args.target[0]}: no such script\n")
        return 2
    command = " ".join(["python"] + (["-m", args.module] if args.module else []) + args.target)
    try:
        rec = record(args.output, energy=args.energy, fingerprints=args.fingerprints,
                     stacks=not args.no_stacks, kernels=not args.no_kernels, overwrite=args.force,
                     ops=True if args.ops else None,
                     command=command)
        rec.__enter__()
    except (ValueError, FileNotFoundError, FileExistsError, RuntimeError, ImportError) as e:
        sys.stderr.write(f"magneton: record: {e}\n")
        return 2
    status = _run_target(args)
    try:
        rec.__exit__(None, None, None)
    except Exception as e:  # noqa: BLE001 - the program's status wins; say what was lost
        sys.stderr.write(f"magneton: record: writing {args.output} failed: {e}\n")
        return status if status else 1
    if args.verbose:
        s = rec.summary or {}
        sys.stderr.write(f"magneton: wrote {rec.path}: {s.get('ops', 0)} ops, {s.get('tensors', 0)} tensors\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
