"""`python -m magneton record -o run.mgt [options] script.py [args...]`

Runs a Python script (or `-m module`) as __main__ inside magneton.record(...),
with sys.argv as the script would see it. By default one run of the script
gives both passes (docs/recording.md, "One command"): its step loop is found
as it runs, two iterations warm up, the next is the recording pass
(fingerprints) and the rest the measured pass, in one file that `magneton
diff` splits. `--pass recording` / `--pass measured` record the whole script
as one pass (the two-pass route). The script's output and exit code are its
own; bad usage exits 2 with one line on stderr (docs/recording.md)."""

from __future__ import annotations

import argparse
import builtins
import importlib.util
import os
import sys
import traceback
import types

from magneton.recorder import ENERGY_CHOICES, IDLE_HOLD_SECONDS, record

PASSES = ("both", "recording", "measured")


class _Usage(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        sys.stderr.write(f"magneton: {message}\n")
        sys.exit(2)


# Options of record's that take a value: the word after one is no script.
_VALUED = {"-o", "--output", "--pass", "--warmup", "--steps", "--step-line", "--traced-steps", "--idle-hold",
           "--energy", "-m"}


def _parser() -> argparse.ArgumentParser:
    p = _Usage(prog="python -m magneton", description="Magneton: record PyTorch and JAX workloads.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Usage)
    r = sub.add_parser("record", help="record a Python script's torch ops (or its jitted JAX steps) into a run file")
    r.add_argument("-o", "--output", required=True, help="run file to write (.mgt)")
    r.add_argument("-f", "--force", action="store_true", help="overwrite an existing run file")
    r.add_argument("--pass", dest="passes", choices=PASSES, default="both",
                   help="both (default): one run gives the recording pass (one step of the script's loop) and "
                        "the measured pass (the rest); recording or measured: the whole script as that pass")
    r.add_argument("--fingerprints", action="store_true", help="the same as --pass recording")
    r.add_argument("--warmup", type=int, default=2,
                   help="--pass both: iterations of the step loop run before the recording pass (default 2, "
                        "at least 2: the loop is found by its first two)")
    r.add_argument("--steps", type=int, default=0,
                   help="--pass both: measure this many steps after the recording pass, then stop (default: all)")
    r.add_argument("--step-line", default=None, metavar="[FILE:]N",
                   help="--pass both: the line where the step loop begins, in the script or FILE (default: the "
                        "first loop with 10 or more computing operators per iteration)")
    r.add_argument("--traced-steps", default="auto", metavar="N|auto|all",
                   help="GPU: trace kernels in the first N measured steps only; the rest run untraced, with "
                        "energy and step times as the program runs (default auto: 20 steps and 2 s; all: every step)")
    r.add_argument("--idle-hold", type=float, default=IDLE_HOLD_SECONDS, metavar="S",
                   help=f"GPU measured pass with energy: hold the device idle S seconds where its traced steps end, "
                        f"for the attribution's idle level (default {IDLE_HOLD_SECONDS}; 0: off)")
    r.add_argument("--energy", default="auto", choices=ENERGY_CHOICES, help="energy sensors to sample (default auto)")
    r.add_argument("--no-stacks", action="store_true", help="skip Python call sites")
    r.add_argument("--no-kernels", action="store_true", help="skip CUDA kernel tracing")
    r.add_argument("--ops", action="store_true",
                   help="measured pass: record every operator too (slows launch-bound programs; to debug the recorder)")
    r.add_argument("--framework", choices=("auto", "torch", "jax"), default="auto",
                   help="what the script computes with (default auto: jax where the script imports jax, flax, "
                        "optax, equinox or haiku; else torch)")
    r.add_argument("-v", "--verbose", action="store_true", help="print a summary to stderr at the end")
    r.add_argument("-m", dest="module", help="run a module (as python -m) instead of a script")
    r.add_argument("target", nargs=argparse.REMAINDER, help="script.py [args...] (or module args with -m)")
    return p


def _compile_target(args) -> tuple:
    """(code object, file, argv) of the script or module, compiled here so that
    its loops can be watched before it runs."""
    if args.module:
        spec = importlib.util.find_spec(args.module)
        if spec is None or spec.loader is None:
            raise FileNotFoundError(f"{args.module}: no such module")
        if spec.submodule_search_locations:  # a package runs its __main__
            spec = importlib.util.find_spec(args.module + ".__main__")
            if spec is None or spec.loader is None:
                raise FileNotFoundError(f"{args.module}: a package without __main__")
        return spec.loader.get_code(spec.name), spec.origin, [spec.origin] + args.target
    script = args.target[0]
    with open(script, "rb") as f:
        source = f.read()
    return compile(source, script, "exec", dont_inherit=True), os.path.abspath(script), list(args.target)


def _print_users_traceback(e: BaseException) -> None:
    """The traceback as `python script.py` prints it: from the script's frames, without _run_code's."""
    tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
    traceback.print_exception(type(e), e, tb)


def _run_code(code: types.CodeType, file: str, argv: list, module: bool) -> int:
    """Runs `code` as __main__, as the interpreter would; returns its exit status."""
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=file, __builtins__=builtins, __cached__=None, __loader__=None,
                         __package__=None, __spec__=None)
    saved_main, saved_argv = sys.modules.get("__main__"), sys.argv
    sys.modules["__main__"] = main
    sys.argv = argv
    if not module:
        sys.path.insert(0, os.path.dirname(file))
    try:
        exec(code, main.__dict__)  # noqa: S102 - running the user's script is the point
    except SystemExit as e:
        code_ = e.code
        if code_ is None:
            return 0
        if isinstance(code_, int):
            return code_
        sys.stderr.write(f"{code_}\n")  # sys.exit("message") prints it and exits 1
        return 1
    except KeyboardInterrupt as e:
        _print_users_traceback(e)
        return 130
    except BaseException as e:  # noqa: BLE001 - reported as the interpreter would
        _print_users_traceback(e)
        return 1
    finally:
        sys.argv = saved_argv
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
    return 0


def _recording(args, command: str) -> record:
    common = dict(energy=args.energy, stacks=not args.no_stacks, kernels=not args.no_kernels, overwrite=args.force,
                  command=command, ops=True if args.ops else None, idle_hold=args.idle_hold)
    if args.passes != "recording":
        common["traced_steps"] = None if args.traced_steps == "all" else \
            "auto" if args.traced_steps == "auto" else int(args.traced_steps)
    if args.passes == "recording":
        return record(args.output, fingerprints=True, **common)
    if args.passes == "measured":
        return record(args.output, **common)
    # Both passes: paused through the warm-up iterations (the first two find the
    # step loop, and its first step() call ends the second), one step of values,
    # then measured steps.
    from torch.profiler import ProfilerAction

    first = args.warmup - 1
    last = first + args.steps if args.steps > 0 else None
    paused = lambda step: ProfilerAction.NONE if step < first or (last and step > last) else ProfilerAction.RECORD  # noqa: E731
    return record(args.output, fingerprints=True, fingerprint_steps=1, schedule=paused, **common)


def _split_module_args(argv: list) -> tuple:
    """(record's own arguments, the module's): everything after `-m MODULE` is the module's, as with
    python -m (argparse would take `--iters 10` there for an unknown option of record's)."""
    if "record" not in argv:
        return argv, None
    for i in range(argv.index("record") + 1, len(argv) - 1):
        if argv[i] == "-m":
            return argv[:i + 2], argv[i + 2:]
        if not argv[i].startswith("-") and argv[i - 1] not in _VALUED:
            break  # the script: what follows is its own
    return argv, None


def main(argv=None) -> int:
    argv, module_args = _split_module_args(list(sys.argv[1:] if argv is None else argv))
    args = _parser().parse_args(argv)
    if module_args is not None:
        args.target = module_args
    if args.target and args.target[0] == "--":
        args.target = args.target[1:]
    if args.fingerprints:
        args.passes = "recording"
    if not args.module and not args.target:
        sys.stderr.write("magneton: record: missing the script to run (script.py [args...] or -m module)\n")
        return 2
    if not args.module and not os.path.isfile(args.target[0]):
        sys.stderr.write(f"magneton: record: {args.target[0]}: no such script\n")
        return 2
    if os.path.exists(args.output) and not args.force:  # before the script's set-up runs
        sys.stderr.write(f"magneton: record: {args.output}: already exists; not overwriting it (-f to overwrite)\n")
        return 2
    if args.steps < 0:
        sys.stderr.write(f"magneton: record: --steps {args.steps}: expected 0 (all) or more\n")
        return 2
    if args.warmup < 2:
        sys.stderr.write(f"magneton: record: --warmup {args.warmup}: expected 2 or more (the step loop is found "
                         "by its first two iterations)\n")
        return 2
    if args.traced_steps not in ("auto", "all") and not (args.traced_steps.isdigit() and int(args.traced_steps) >= 1):
        sys.stderr.write(f"magneton: record: --traced-steps {args.traced_steps}: expected a count of 1 or more, "
                         "auto or all\n")
        return 2
    if not 0 <= args.idle_hold <= 10:
        sys.stderr.write(f"magneton: record: --idle-hold {args.idle_hold}: expected seconds from 0 to 10\n")
        return 2
    if args.step_line is not None and not args.step_line.rpartition(":")[2].isdigit():
        sys.stderr.write(f"magneton: record: --step-line {args.step_line}: expected a line number, N or FILE:N\n")
        return 2
    command = " ".join(["python"] + (["-m", args.module] if args.module else []) + args.target)
    try:
        code, file, target_argv = _compile_target(args)
    except (OSError, SyntaxError, ImportError) as e:
        sys.stderr.write(f"magneton: record: {e}\n")
        return 2
    from magneton.jax_script import imports_jax

    if args.framework == "jax" or (args.framework == "auto" and imports_jax(code)):
        if args.passes != "both":
            sys.stderr.write(f"magneton: record: --pass {args.passes}: a JAX script records both passes from one "
                             "run (the default); for one function use magneton.record_jax (docs/jax.md)\n")
            return 2
        return _record_jax_script(args, code, file, target_argv)
    try:
        rec = _recording(args, command)
        rec.__enter__()
    except (ValueError, FileNotFoundError, FileExistsError, RuntimeError, ImportError) as e:
        sys.stderr.write(f"magneton: record: {e}\n")
        return 2
    steps = None
    if args.passes != "both":  # the whole script is one run: the diff cuts its loop's step out of it
        rec.set_info("whole_script", "true")
    else:
        from magneton.script_steps import ScriptSteps

        native = rec._native
        native.count_ops(True)

        said = []

        def on_step():
            native.count_ops(False)
            if not said:  # the loop is found: say which, before the script's long run goes on
                said.append(steps.iterations + args.warmup - 1)  # the loop's iteration recorded with values
                measured = f"the next {args.steps}" if args.steps > 0 else "every later one"
                first = "the next" if args.warmup == 2 else f"after {args.warmup - 2} more warm-up iterations, one"
                sys.stderr.write(f"magneton: record: step loop: {steps.describe(short=True)}"
                                 f"{', found by sampling' if steps.sampled else ''}; {first} is recorded with "
                                 f"values, {measured} measured\n")
            rec.step()

        steps = ScriptSteps(code, native.counted_ops, on_step, args.step_line)
        if not steps.start():
            sys.stderr.write("magneton: record: cannot watch the script's loops (no free sys.monitoring tool id); "
                             "use --pass recording and --pass measured\n")
            rec.__exit__(None, None, None)
            return 2
    status = _run_code(code, file, target_argv, bool(args.module))
    if steps is not None:
        steps.stop()
        if steps.loop is not None:
            rec.set_info("step_loop", steps.describe(short=True))
            if said:
                rec.set_info("step_iteration", str(said[0]))
        if steps.sampled:
            rec.set_info("step_loop_sampled", "true")
    try:
        rec.__exit__(None, None, None)
    except Exception as e:  # noqa: BLE001 - the program's status wins; say what was lost
        sys.stderr.write(f"magneton: record: writing {args.output} failed: {e}\n")
        return status if status else 1
    jax_ran = "jax" in sys.modules  # its loops run no operator this route counts
    if steps is not None and steps.loop is None and status and not jax_ran:
        sys.stderr.write(f"magneton: record: {args.output}: the script exited with status {status} before any loop "
                         f"of it ran three times, so there is no step to record\n")
    elif steps is not None and steps.loop is None:
        which = (f"no loop at line {args.step_line}" if args.step_line is not None
                 else f"no loop of {steps_min()} or more computing operators per iteration")
        how = ("the script ran JAX, whose operations this route sees only as a JAX script's: record it with "
               "--framework jax (the script's own code imports no JAX, so torch was assumed)" if jax_ran else
               ("" if args.step_line is not None else "operators that only make, move or view data do not count: "
                "name a loop with --step-line N, ") +
               "record around the loop with magneton.record(...) and rec.step(), or use --pass recording and "
               "--pass measured")
        sys.stderr.write(f"magneton: record: {args.output}: {which} ran three times or more in {file}, so there is no "
                         f"step to record ({how})\n")
    elif steps is not None and (hint := steps.sampled_hint() or steps.inner_loop_hint() or steps.early_loop_hint()):
        sys.stderr.write(f"magneton: record: {args.output}: {hint}\n")
    if args.verbose and not (steps is not None and steps.loop is None):
        s = rec.summary or {}
        where = f"; steps: {steps.describe()}, {steps.iterations} iterations" if steps is not None else ""
        sys.stderr.write(f"magneton: wrote {rec.path}: {s.get('ops', 0)} ops, {s.get('tensors', 0)} tensors{where}\n")
    return status


def _record_jax_script(args, code, file: str, target_argv: list) -> int:
    """The one-command route for a script that computes with JAX (jax_script.py)."""
    from magneton.jax_script import JaxScript
    from magneton.script_steps import ScriptSteps

    route = JaxScript(args.output, warmup=args.warmup, steps=args.steps, energy=args.energy,
                      kernels=not args.no_kernels, stacks=not args.no_stacks, overwrite=args.force)

    def on_step():
        route.on_step()
        if route.steps == args.warmup - 1:  # the loop is found and its step function chosen: say which
            what = (f"the next call of {route.target.name} (the heaviest jitted function it calls) is recorded with "
                    f"values, {f'the next {args.steps}' if args.steps > 0 else 'every later'} iteration measured"
                    if route.target is not None else "it calls no jitted function, so nothing is recorded")
            sys.stderr.write(f"magneton: record: step loop: {steps.describe(short=True)}"
                             f"{', found by sampling' if steps.sampled else ''}; {what}\n")

    steps = ScriptSteps(code, route.counted_ops, on_step, args.step_line)
    if not steps.start():
        sys.stderr.write("magneton: record: cannot watch the script's loops (no free sys.monitoring tool id); "
                         "record the step function with magneton.record_jax (docs/jax.md)\n")
        return 2
    route.start()
    try:
        status = _run_code(code, file, target_argv, bool(args.module))
    finally:
        steps.stop()
        route.stop()
    try:
        result = route.finish()
    except Exception as e:  # noqa: BLE001 - the program's status wins; say what was lost
        sys.stderr.write(f"magneton: record: writing {args.output} failed: {e}\n")
        return status if status else 1
    if result is None and route.error is None:
        if steps.loop is None:
            why = (f"no loop at line {args.step_line} ran three times" if args.step_line is not None else
                   f"no loop calling jitted functions of {steps_min()} or more equations per iteration ran three "
                   "times")
            if status and route.watched:  # it called jitted functions: perhaps too few times before it failed
                why = f"the script exited with status {status} before any loop of it ran three times"
        else:
            why = "its step loop called no jitted function after the warm-up"
        sys.stderr.write(f"magneton: record: {args.output}: not written: {why} in {file} (steps are found by their "
                         "calls of jax.jit functions: jit the step, name its loop with --step-line N, or record the "
                         "step function with magneton.record_jax, docs/jax.md)\n")
    elif args.verbose and result is not None:
        s = result.summary
        sys.stderr.write(f"magneton: wrote {args.output}: {s.get('ops', 0)} ops, {s.get('tensors', 0)} tensors; "
                         f"steps: {steps.describe()}, {route.measured} measured\n")
    return status


def steps_min() -> int:
    from magneton.script_steps import MIN_OPS_PER_STEP

    return MIN_OPS_PER_STEP


if __name__ == "__main__":
    sys.exit(main())
