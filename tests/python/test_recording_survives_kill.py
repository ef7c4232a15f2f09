"""A recording killed with SIGKILL keeps all but about its last second
(docs/recording.md, "What survives a kill"): the recorders stream their rows
to the run store as they go. Each test runs a recording child process, kills
it mid-recording and reads the file with the real store reader (the CUPTI
injection library's test is tests/capture/injection_test.cpp)."""
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON = os.environ.get("MAGNETON_PYTHON", sys.executable)


def _child(code: str, marker: Path, env_extra: dict | None = None) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), PYTHONUNBUFFERED="1", **(env_extra or {}))
    return subprocess.Popen([PYTHON, "-c", textwrap.dedent(code).replace("MARKER", str(marker))], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _kill_after_marker(proc: subprocess.Popen, marker: Path, seconds: float) -> float:
    """Waits until the child wrote `marker` (recording under way), lets it
    record `seconds` more, kills it; returns when it was killed (monotonic ns)."""
    deadline = time.monotonic() + 120
    while not marker.exists():
        if proc.poll() is not None:
            raise AssertionError(f"child ended early ({proc.returncode}): {proc.stderr.read()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("child never started recording")
        time.sleep(0.05)
    time.sleep(seconds)
    killed = time.monotonic_ns()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    return killed


def _rows(path: Path, table: str, where: str = "") -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(f"SELECT count(*) FROM {table} {where}").fetchone()[0]
    finally:
        db.close()


def test_torch_recorder_keeps_all_but_the_last_second(tmp_path):
    torch = pytest.importorskip("torch")  # noqa: F841
    run, marker = tmp_path / "killed.mgt", tmp_path / "started"
    proc = _child("""
        import time, torch, magneton
        torch.set_num_threads(1)
        model = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(8)])
        x = torch.randn(4, 64)
        with torch.no_grad(), magneton.record(r"RUN", energy="auto"):
            open(r"MARKER", "w").close()
            while True:
                model(x)
                print(time.monotonic_ns(), flush=True)  # the last step that certainly ran
    """.replace("RUN", str(run)), marker)
    killed = _kill_after_marker(proc, marker, 4.0)
    steps = [int(x) for x in proc.stdout.read().split()]
    assert steps, "the child printed no step"

    # The store reads it, says it is incomplete, and holds the operators up to about a second before the kill.
    magneton = pytest.importorskip("magneton")
    r = magneton.load_run(str(run))
    assert any(s["name"] == "store.incomplete" for s in r["stats"]), r["stats"]
    assert len(r["ops"]) > 0
    last_op_end = max(op["end_ns"] for op in r["ops"])
    assert killed - last_op_end < 2.0e9, (killed - last_op_end) / 1e9
    # Ops reference tensors that are in the file; the configuration and metadata made it too.
    n_tensors = len(r["tensors"])
    assert all(t < n_tensors for op in r["ops"] for t in op["inputs"] + op["outputs"])
    assert r["config"].get("torch.default_dtype") == "float32"
    assert r["info"]["extra"].get("framework") == "torch"
    # Most steps that ran are there: the child ran for 4 s, at most about 1.5 s is lost.
    ran = (steps[-1] - steps[0]) / 1e9
    kept = (last_op_end - min(op["start_ns"] for op in r["ops"])) / 1e9
    assert kept > ran - 2.0, (kept, ran)


def test_torch_recorder_memory_holds_only_what_runs(tmp_path):
    """Rows leave memory once written: a long recording's op table in the
    process stays small (the recorder's own count of rows held)."""
    torch = pytest.importorskip("torch")
    magneton = pytest.importorskip("magneton")
    model = torch.nn.Sequential(*[torch.nn.Linear(16, 16) for _ in range(4)])
    x = torch.randn(2, 16)
    with torch.no_grad(), magneton.record(str(tmp_path / "long.mgt")) as rec:
        t0 = time.monotonic()
        held = []
        while time.monotonic() - t0 < 3.0:
            model(x)
            held.append(rec.rows_held())
    total = rec.summary["ops"]
    assert total > 2000
    # Rows are written every quarter second: never more than about a second's
    # worth is held (without streaming, the last count would be all of them).
    assert max(held) < 0.6 * total, (max(held), total)
    assert held[-1] < 0.6 * total, (held[-1], total)
    assert len(magneton.load_run(str(tmp_path / "long.mgt"))["ops"]) == total


def test_jax_recorder_keeps_the_executions_that_ended(tmp_path):
    pytest.importorskip("jax")
    magneton = pytest.importorskip("magneton")
    run, marker = tmp_path / "jax.mgt", tmp_path / "started"
    proc = _child("""
        import os
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax, jax.numpy as jnp
        from magneton.jax_recorder import record_jax

        def mlp(w1, w2, x):
            return jnp.tanh(jnp.tanh(x @ w1) @ w2).sum()

        k = jax.random.PRNGKey(0)
        args = (jax.random.normal(k, (64, 64)), jax.random.normal(k, (64, 64)), jax.random.normal(k, (8, 64)))
        open(r"MARKER", "w").close()
        record_jax(mlp, *args, path=r"RUN", energy="auto", repeat=10_000_000)
    """.replace("RUN", str(run)), marker)
    killed = _kill_after_marker(proc, marker, 8.0)
    r = magneton.load_run(str(run))
    assert any(s["name"] == "store.incomplete" for s in r["stats"]), r["stats"]
    ops = r["ops"]
    # Whole executions of the function (each its ops, in the same order), the last ones up to about a second
    # before the kill; their tensors and the metadata are there.
    names = [op["name"] for op in ops]
    n = next(p for p in range(1, len(names) + 1) if all(names[i] == names[i % p] for i in range(len(names))))
    assert len(ops) >= 2 * n and len(ops) % n == 0, (len(ops), n)
    assert killed - max(op["end_ns"] for op in ops) < 2.0e9
    assert r["info"]["extra"].get("framework") == "jax"
    n_tensors = len(r["tensors"])
    assert all(t < n_tensors for op in ops for t in op["inputs"] + op["outputs"])
