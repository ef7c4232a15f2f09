"""Step schedules (docs/recording.md, "Steps"): what a recording keeps of a
long loop, and one file holding both passes, on the CPU with the real recorder."""
import os
import subprocess
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
magneton = pytest.importorskip("magneton")
ROOT = Path(__file__).resolve().parents[2]


def _loop(rec, steps: int):
    x = torch.randn(8, 8)
    for i in range(steps):
        torch.relu(x + i)  # two operators a step: aten::add, aten::relu
        rec.step()


def test_a_schedule_records_only_its_active_steps(tmp_path):
    sched = magneton.schedule(wait=3, warmup=2, active=4, repeat=1)
    with magneton.record(str(tmp_path / "s.mgt"), schedule=sched) as rec:
        _loop(rec, 20)
    run = magneton.load_run(str(tmp_path / "s.mgt"))
    names = [op["name"] for op in run["ops"] if op["parent"] < 0]
    assert names.count("aten::relu") == 4 and names.count("aten::add") == 4, names


def test_fingerprint_steps_put_both_passes_in_one_file_that_diff_splits(tmp_path):
    path = str(tmp_path / "both.mgt")
    with magneton.record(path, fingerprints=True, fingerprint_steps=1,
                         schedule=magneton.schedule(wait=1, active=6, repeat=1)) as rec:
        _loop(rec, 10)
    run = magneton.load_run(path)
    start = int(run["info"]["extra"]["measured_from_ns"])
    recorded = [op for op in run["ops"] if op["start_ns"] < start]
    measured = [op for op in run["ops"] if op["start_ns"] >= start]
    assert len(recorded) >= 2 and len(measured) >= 10
    by_id = {t["id"]: t for t in run["tensors"]}
    assert all(by_id[t]["fingerprint"] for op in recorded for t in op["outputs"])  # values in the recording pass
    assert not any(by_id[t]["fingerprint"] for op in measured for t in op["outputs"])
    binary = Path(os.environ.get("MAGNETON_BUILD", ROOT / "build")) / "magneton"
    if not binary.is_file():
        pytest.skip("magneton is not built (set MAGNETON_BUILD)")
    p = subprocess.run([str(binary), "diff", path, path], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr  # an A/A pair: no waste
    assert "holds both passes" in p.stdout and "5 repetitions of the recorded step" in p.stdout, p.stdout


def test_step_outside_the_block_and_bad_options_are_refused(tmp_path):
    rec = magneton.record(str(tmp_path / "x.mgt"))
    with pytest.raises(RuntimeError):
        rec.step()
    with pytest.raises(ValueError):
        magneton.record(str(tmp_path / "y.mgt"), fingerprint_steps=1)  # needs fingerprints
    with pytest.raises(ValueError):
        magneton.record(str(tmp_path / "y.mgt"), traced_steps=0)
    with pytest.raises(ValueError):
        magneton.record(str(tmp_path / "y.mgt"), traced_steps="some")
    with pytest.raises(TypeError):
        magneton.record(str(tmp_path / "z.mgt"), schedule=3)


def test_kernel_tracing_stops_after_the_traced_steps(tmp_path, monkeypatch):
    from magneton import recorder
    counted = magneton.record(str(tmp_path / "n.mgt"), traced_steps=3)
    assert [counted._tracing_ends() for _ in range(4)] == [False, False, True, False]
    monkeypatch.setattr(recorder, "TRACE_AUTO_SECONDS", 0.0)
    auto = magneton.record(str(tmp_path / "a.mgt"))  # "auto": at least TRACE_AUTO_STEPS steps and seconds
    ends = [auto._tracing_ends() for _ in range(recorder.TRACE_AUTO_STEPS)]
    assert ends == [False] * (recorder.TRACE_AUTO_STEPS - 1) + [True]
    monkeypatch.setattr(recorder, "TRACE_AUTO_SECONDS", 3600.0)
    slow = magneton.record(str(tmp_path / "s.mgt"))
    assert not any(slow._tracing_ends() for _ in range(2 * recorder.TRACE_AUTO_STEPS))
    assert magneton.record(str(tmp_path / "e.mgt"), traced_steps=None)._tracing is False


def test_the_idle_hold_comes_after_the_runs_window_with_the_samplers_on(tmp_path):
    path = str(tmp_path / "held.mgt")
    from magneton import recorder
    native = recorder.extension().Recorder(path, energy="auto", ops=False)
    torch.relu(torch.randn(8, 8))
    native.stop(idle_hold_s=0.5)
    run = magneton.load_run(path)
    held_from, held_to = map(int, run["info"]["extra"]["idle_held_ns"].split())
    assert held_to - held_from >= 500_000_000
    assert run["info"]["end_ns"] <= held_from  # the hold is outside the run's window
    # The samplers go on reading through the hold (procfs at least, anywhere).
    assert sum(s["points"] for s in run["series"]) > len(run["series"])


def test_the_idle_hold_is_only_for_a_measured_pass_with_energy_on_a_gpu(tmp_path):
    with pytest.raises(ValueError):
        magneton.record(str(tmp_path / "x.mgt"), idle_hold=-1)
    rec = magneton.record(str(tmp_path / "m.mgt"), energy="auto")
    rec._phase = "measured"
    from magneton import recorder
    assert rec._idle_hold_now() == (recorder.IDLE_HOLD_SECONDS if torch.cuda.is_available() else 0.0)
    rec._phase = "recording"
    assert rec._idle_hold_now() == 0.0
    assert magneton.record(str(tmp_path / "n.mgt"))._idle_hold_now() == 0.0  # no energy: nothing to fit
