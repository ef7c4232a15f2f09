"""What the demo workloads share: the command line, the device choice, and the
two recording passes."""

from __future__ import annotations

import argparse
import os
import sys
import time


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The options every demo recording takes (one variant, or a pair: __main__.py)."""
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--iterations", type=int, default=0,
                   help="iterations in the measured pass (default: about 1 s of them, at least 20, on a GPU; "
                        "5 on the CPU)")
    p.add_argument("--no-replay", action="store_true",
                   help="on a GPU, do not replay the operators the variants differ in (docs/energy.md, Replay)")
    p.add_argument("--size", choices=("auto", "tiny", "small", "medium", "full"), default="auto",
                   help="model size: small on the CPU; on a GPU medium for the attention pair, else full; "
                        "tiny for test fixtures")
    p.add_argument("--seed", type=int, default=0)


def parse_args(doc: str, variants: tuple[str, ...]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    p.add_argument("--variant", choices=variants, required=True)
    p.add_argument("--out", required=True, help="run file of the recording pass (fingerprints)")
    p.add_argument("--measured", required=True, help="run file of the measured pass")
    add_run_options(p)
    return p.parse_args()


def pick_device(torch, wanted: str) -> str:
    if wanted == "cuda" and not torch.cuda.is_available():
        sys.exit("magneton demo: --device cuda, but torch sees no CUDA device")
    device = ("cuda" if torch.cuda.is_available() else "cpu") if wanted == "auto" else wanted
    if device == "cpu":
        # One intra-op thread: on a shared machine, waking sleeping worker
        # threads costs milliseconds at random ops, which would drown the
        # differences the demo is about in scheduling noise.
        torch.set_num_threads(1)
    return device


def say(msg: str) -> None:
    """A progress line, stamped with the seconds since `magneton demo` started
    (MAGNETON_DEMO_T0, wall-clock seconds it sets) so that the demo's own
    lines and the recorders' share one clock."""
    try:
        stamp = f"[{time.time() - float(os.environ['MAGNETON_DEMO_T0']):5.1f} s] "
    except (KeyError, ValueError):
        stamp = "  "
    print(f"{stamp}{msg}", flush=True)


# GPU replay: the keys of the operators the variants differ in, at most this long in all.
REPLAY_BUDGET_S = 90.0


def record_passes(args, step, device: str, what: str, replay_ops: tuple[str, ...] = ()) -> None:
    """Warms up, then records one iteration with fingerprints (args.out) and
    `iterations` iterations without them, with every energy sensor there is
    (args.measured). On a GPU the measured pass lasts about a second (NVML's
    counter updates every ~100 ms: a shorter pass leaves the diff comparing
    time), and `replay_ops` are replayed after the recording pass: sub-
    millisecond operators whose energy differs by more than their time (a
    GEMM kernel drawing more power) cannot be told apart by attribution."""
    import torch

    import magneton

    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    with torch.no_grad():
        say(f"{what}: warm-up, 3 iterations")
        for _ in range(3):  # warm-up: allocator, cuBLAS handles, autotuning
            step()
        sync()
        iterations = args.iterations
        if not iterations and device == "cuda":
            t0 = time.perf_counter()
            step()
            sync()
            iterations = max(20, int(1.0 / max(time.perf_counter() - t0, 1e-4)) + 1)
        iterations = iterations or 5
        options = {"fingerprints": True, "overwrite": True}
        if device == "cuda" and replay_ops and not args.no_replay:
            options["replay"] = {"ops": list(replay_ops), "budget_s": REPLAY_BUDGET_S}
        replayed = " and replay of " + ", ".join(replay_ops) if "replay" in options else ""
        say(f"{what}: recording pass (fingerprints){replayed} ...")
        t0 = time.perf_counter()
        with magneton.record(args.out, **options):
            step()
        say(f"{what}: recording pass done in {time.perf_counter() - t0:.1f} s -> {args.out}")
        say(f"{what}: measured pass, {iterations} iterations ...")
        t0 = time.perf_counter()
        rec = magneton.record(args.measured, energy="auto", overwrite=True)
        with rec:
            for _ in range(iterations):
                step()
        series = (rec.summary or {}).get("energy_series", 0)
        say(f"{what}: measured pass done in {time.perf_counter() - t0:.1f} s, "
            f"{series} sensor series -> {args.measured}")
