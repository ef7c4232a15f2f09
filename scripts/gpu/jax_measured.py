"""record_jax(..., measured=K) on a case's two JAX sides, then `magneton diff`
of the two files: each side's per-iteration time from its measured calls next
to the op-level executions' and the program's own loop (no recorder).

    python scripts/gpu/jax_measured.py CASE OUT_DIR MAGNETON [--calls K] [--wait-each]

--wait-each: the own loop reads every result before the next call, and the
measured calls wait for each result (record_jax's wait_each), as the case
suite's ground truth paces JAX.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time

import jax

here = os.path.dirname(os.path.abspath(__file__))
cases = os.path.join(here, "..", "..", "cases")
sys.path.insert(0, cases)
from magneton.jax_recorder import record_jax  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("case")
p.add_argument("out")
p.add_argument("magneton")
p.add_argument("--calls", type=int, default=2000)
p.add_argument("--wait-each", action="store_true")
a = p.parse_args()


def load(side):
    path = os.path.join(cases, a.case, side + ".py")
    spec = importlib.util.spec_from_file_location(f"{a.case}_{side}", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


files = []
for side in ("wasteful", "efficient"):
    m = load(side)
    fn, args = m.program(m.setup("cuda", False))
    jax.block_until_ready(fn(*args))
    t0 = time.perf_counter()
    out = None
    for _ in range(a.calls):
        out = fn(*args)
        if a.wait_each:
            jax.block_until_ready(out)
    jax.block_until_ready(out)
    plain_ms = (time.perf_counter() - t0) / a.calls * 1e3
    path = os.path.join(a.out, f"{side}.mgt")
    t0 = time.perf_counter()
    rec = record_jax(fn, *args, path=path, energy="nvml", overwrite=True, measured=a.calls,
                     wait_each=a.wait_each)
    print(f"{side}: own loop {plain_ms:.3f} ms a call; recorded in {time.perf_counter() - t0:.1f} s, "
          f"kernel tracer {rec.summary.get('kernel_tracer')}", flush=True)
    files.append(path)

r = subprocess.run([a.magneton, "diff", "--json", *files], capture_output=True, text=True, timeout=120)
print("diff exit", r.returncode, r.stderr.strip()[:300])
if r.stdout:
    j = json.loads(r.stdout)
    for s in "ab":
        it = j["runs"][s].get("per_iteration", {})
        print(f"run {s}: {it.get('seconds', 0) * 1e3:.3f} ms, {it.get('total', 0):.4f} J per iteration (diff)")
    for n in j["notes"][:4]:
        print("note:", n[:200])
    for f in j["findings"][:3]:
        print(f"{f['verdict']} {f['evidence_class']} costly {f['costly']} saved/it {f['saved_per_iteration']:.4g}: "
              f"{f['label'][:120]}")
    subprocess.run([a.magneton, "diff", *files, "--color", "never"], stdout=open(os.path.join(a.out, "diff.txt"), "w"))
