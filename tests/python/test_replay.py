"""Operator replay on the CPU (docs/energy.md, "Replay"): one measurement per
distinct operator key, in-place and random operators replayed on copies,
mismatch, budget and host statuses, the costliest keys first, windows bounded
by their call count, storage in the run file and the diff's use of it.
No energy sensor here: time per call and its spread only, energy unavailable.
Windows are kept tiny and the CV target loose, so nothing depends on timing."""

import importlib
import json
import subprocess
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
magneton = pytest.importorskip("magneton")
ext = pytest.importorskip("magneton._torch", reason="magneton._torch is not built (ninja magneton_torch)")
if not hasattr(ext, "ReplayCapture"):
    pytest.skip("magneton._torch predates replay: rebuild magneton_torch", allow_module_level=True)

replay_mod = importlib.import_module("magneton.op_replay")
from magneton import locate  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

# Tiny windows, a CV target any spread meets: statuses do not depend on timing.
FAST = {"window_s": 0.005, "min_repeats": 2, "max_repeats": 3, "target_rse": 1e9, "idle_s": 0.0,
        "op_budget_s": 5.0, "budget_s": 120.0, "progress": False}


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8)).eval()


def _record(path, fn, replay=FAST, **kw):
    with torch.no_grad():
        with magneton.record(path, fingerprints=True, replay=replay, **kw) as rec:
            out = fn()
    return rec, out


def test_mlp_one_measurement_per_distinct_key(tmp_path):
    model, x = _mlp(), torch.randn(4, 16)
    path = tmp_path / "mlp.mgt"
    rec, _ = _record(path, lambda: model(x))
    res = rec.replay_result
    keys = [r["key"] for r in res["results"]]
    assert len(keys) == len(set(keys)) > 0
    # The two Linear layers differ in shapes: two keys each for linear and addmm.
    names = [r["name"] for r in res["results"]]
    assert names.count("aten::linear") == 2 and names.count("aten::addmm") == 2
    assert "aten::relu" in names
    run = magneton.load_run(path)
    ops = run["ops"]
    for r in res["results"]:
        assert r["status"] == "ok", r
        assert r["repeats"] >= FAST["min_repeats"] and r["calls"] > 0
        op = ops[r["op"]]
        assert replay_mod.op_signature(run, op) == r["signature"]
        # Replayed time per call within a sane factor of the recorded call
        # (which also paid for cloning and fingerprints).
        recorded = (op["end_ns"] - op["start_ns"]) * 1e-9
        assert 0 < r["seconds_per_call"] < 1000 * recorded + 1e-3, (r, recorded)
        # No energy sensor on this machine: energy unavailable, time measured.
        if res["energy_reason"]:
            assert r["joules_per_call"] is None
    stored = run["replays"]
    assert len(stored) == len(res["results"])
    assert {s["key"] for s in stored} == set(keys)
    assert all(s["status"] == "ok" and s["seconds_per_call"] > 0 for s in stored)
    if res["energy_reason"]:
        assert all(s["joules_per_call"] is None for s in stored)


def test_in_place_op_replays_on_copies(tmp_path):
    x, y = torch.randn(64), torch.randn(64)
    x0 = x.clone()
    rec, _ = _record(tmp_path / "inplace.mgt", lambda: x.add_(y))
    assert torch.equal(x, x0 + y)  # the workload's tensor was written once, by the workload
    res = rec.replay_result
    [r] = [r for r in res["results"] if r["name"] == "aten::add_"]
    assert r["in_place"] and r["status"] == "ok" and r["calls"] > 0
    entries = rec.replay_capture.entries()
    i = next(e["index"] for e in entries if e["name"] == "aten::add_")
    kept_x, kept_y = rec.replay_capture.inputs(i)
    # Many replayed calls later, the kept inputs still hold the recorded values.
    assert torch.equal(kept_x, x0) and torch.equal(kept_y, y)
    assert kept_x.data_ptr() != x.data_ptr()


def test_random_ops_replay_with_the_recorded_generator_state(tmp_path):
    p = torch.full((256,), 0.5)

    def work():
        a = torch.bernoulli(p)
        b = torch.nn.functional.dropout(torch.ones(256), 0.5, training=True)
        return a, b

    torch.manual_seed(7)
    work()
    expected_next = torch.rand(4)
    torch.manual_seed(7)
    rec, _ = _record(tmp_path / "random.mgt", work)
    # Replaying random ops many times leaves the workload's random stream as it was.
    assert torch.equal(torch.rand(4), expected_next)
    res = rec.replay_result
    by_name = {r["name"]: r for r in res["results"]}
    assert by_name["aten::bernoulli"]["random"] and by_name["aten::dropout"]["random"]
    # The check call restored the recorded state, so the outputs matched.
    assert by_name["aten::bernoulli"]["status"] == "ok"
    assert by_name["aten::dropout"]["status"] == "ok"


def test_mismatch_when_recorded_fingerprint_is_wrong(tmp_path):
    model, x = _mlp(), torch.randn(4, 16)
    path = tmp_path / "mm.mgt"
    with torch.no_grad():
        with magneton.record(path, fingerprints=True):
            model(x)
        cap = ext.ReplayCapture(all=True)
        try:
            model(x)
        finally:
            cap.stop()
    entries = cap.entries()
    relu = next(e["index"] for e in entries if e["name"] == "aten::relu")
    cap._corrupt_fingerprint(relu)
    res = replay_mod._run_and_store(str(path), cap, FAST)
    status = {r["name"]: r["status"] for r in res["results"]}
    assert status["aten::relu"] == "mismatch"
    assert status["aten::addmm"] == "ok"
    assert any(s["name"] == "replay_mismatch" for s in res["stats"])
    stored = {s["key"]: s["status"] for s in magneton.load_run(path)["replays"]}
    assert stored[entries[relu]["key"]] == "mismatch"
    detail = next(r["detail"] for r in res["results"] if r["name"] == "aten::relu")
    assert "output 0:" in detail and " vs " in detail, detail  # names the statistic that differs


def test_outputs_holding_nan_and_huge_values_agree_with_themselves(tmp_path):
    # Uninitialized buffers (the output mm hands to resolve_conj) hold NaNs and
    # values near 3e38: equal outputs must still agree, whatever their scale.
    x = torch.randn(96, 96)
    x[3, 5], x[7, 1], x[0, 0] = float("nan"), -3.2e38, 3.1e38

    rec, _ = _record(tmp_path / "nan.mgt", lambda: (torch.neg(x), x.resolve_conj()))
    results = rec.replay_result["results"]
    assert {r["name"] for r in results} >= {"aten::neg"}
    for r in results:
        assert r["status"] == "ok", r


def test_budget_exhaustion(tmp_path):
    model, x = _mlp(), torch.randn(4, 16)
    rec, _ = _record(tmp_path / "budget.mgt", lambda: model(x), replay=dict(FAST, budget_s=0.0))
    results = rec.replay_result["results"]
    assert results and all(r["status"] == "budget" for r in results)
    # A window longer than the per-operator budget: measured nothing, status budget.
    rec, _ = _record(tmp_path / "budget2.mgt", lambda: model(x), replay=dict(FAST, window_s=5.0, op_budget_s=0.5))
    assert all(r["status"] == "budget" and r["repeats"] == 0 for r in rec.replay_result["results"])


def test_module_is_op_replay_and_magneton_replay_the_function():
    import magneton.op_replay as rp
    from magneton import replay

    assert callable(replay) and replay is rp.replay is magneton.replay
    assert callable(rp.format_table) and "budget_s" in rp.DEFAULTS


def test_costliest_recorded_key_is_measured_first(tmp_path):
    small = torch.randn(4)
    a, b = torch.randn(384, 384), torch.randn(384, 384)

    def work():
        torch.relu(small)  # cheap, first in op order
        return torch.mm(a, b)  # milliseconds per call

    # Never converges (target_rse 0): the first key measured takes the whole
    # budget, the other one is left with none (1 s: on a loaded 2-core machine
    # 0.3 s went before the first repeat of the mm).
    opts = dict(FAST, ops=["aten::relu", "aten::mm"], target_rse=0.0, max_repeats=100000, budget_s=1.0)
    rec, _ = _record(tmp_path / "order.mgt", work, replay=opts)
    results = rec.replay_result["results"]
    assert [r["name"] for r in results] == ["aten::relu", "aten::mm"]  # reported in op order
    relu, mm = results
    assert mm["recorded_s"] > relu["recorded_s"]
    assert mm["repeats"] > 0, mm
    assert relu["status"] == "budget" and relu["repeats"] == 0, relu


def test_cost_order_is_not_fooled_by_recording_work(tmp_path):
    # In the recording pass a view of a large tensor takes longer than a small
    # matmul (its output is fingerprinted), but a replayed call of it costs
    # nothing: the matmul must be measured first.
    big = torch.randn(1500, 1500)
    a, b = torch.randn(96, 96), torch.randn(96, 96)

    def work():
        torch.flatten(big)  # a view: first in op order, slow only while recorded
        return torch.mm(a, b)

    opts = dict(FAST, ops=["aten::flatten", "aten::mm"], target_rse=0.0, max_repeats=100000, budget_s=1.0)
    rec, _ = _record(tmp_path / "order.mgt", work, replay=opts)
    flatten, mm = rec.replay_result["results"]
    assert flatten["recorded_s"] > mm["recorded_s"], (flatten, mm)  # the trap is set
    assert mm["repeats"] > 0, mm
    assert flatten["status"] == "budget" and flatten["repeats"] == 0, flatten


def test_window_holds_about_window_s_of_calls(tmp_path):
    a, b = torch.randn(96, 96), torch.randn(96, 96)
    x = torch.randn(4096)
    window = 0.05

    def work():
        torch.mm(a, b)
        return torch.tanh(x)

    # The calls of a window at the measured time per call fill about one
    # window: bounded by the count the estimate expects, not overshooting it.
    # The count comes from a first estimate of the time per call, which other
    # work on a loaded machine (a build beside the tests) can make 8x too low
    # for the calls that follow: a wrong windowing fails every try, such a
    # machine one of three.
    for attempt in range(3):
        rec, _ = _record(tmp_path / f"window{attempt}.mgt", work, replay=dict(FAST, window_s=window))
        results = rec.replay_result["results"]
        assert all(r["status"] == "ok" for r in results), results
        if all(0.4 * window < r["calls"] * r["seconds_per_call"] < 4 * window for r in results):
            return
    raise AssertionError(f"three tries, the last: {results}")


def test_ops_with_no_device_work_are_timed_on_the_host(tmp_path, monkeypatch):
    x = torch.randn(8, 16)

    def work():
        return torch.relu(x.view(16, 8))

    # On CUDA an empty graph capture says so (_captures_nothing); here a runner
    # reports it for the view, as the CUDA one does.
    def runners(capture, entries, options, stats):
        return lambda i: replay_mod._no_device_work if entries[i]["name"] == "aten::view" else None

    monkeypatch.setattr(replay_mod, "_graph_runners", runners)
    path = tmp_path / "host.mgt"
    rec, _ = _record(path, work, replay=dict(FAST, window_s=0.05, host_window_s=0.002))
    res = rec.replay_result
    by_name = {r["name"]: r for r in res["results"]}
    view, relu = by_name["aten::view"], by_name["aten::relu"]
    assert view["status"] == "host" and not view["cuda_graph"], view
    assert view["repeats"] >= FAST["min_repeats"] and view["calls"] > 0 and view["seconds_per_call"] > 0
    assert view["calls"] * view["seconds_per_call"] < 0.02, view  # host windows, not the 0.05 s ones
    assert view["joules_per_call"] is None  # no idle power without an energy sensor
    assert relu["status"] == "ok"
    assert any(s["name"] == "replay_host_ops" and s["value"] == 1 for s in res["stats"])
    stored = {s["key"]: s["status"] for s in magneton.load_run(path)["replays"]}
    assert stored[view["key"]] == "host"
    assert "host" in replay_mod.format_table(res)


def test_empty_graph_warning_is_detected_and_not_shown():
    import warnings

    def empty_capture():
        warnings.warn("The CUDA Graph is empty. This usually means that the graph was attempted to be "
                      "captured on wrong device or stream.", UserWarning)

    def other_capture():
        warnings.warn("something else", UserWarning)

    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        assert replay_mod._captures_nothing(empty_capture)
        assert not replay_mod._captures_nothing(other_capture)
        assert not replay_mod._captures_nothing(lambda: None)
    assert [str(w.message) for w in shown] == ["something else"]


def test_selection_by_name_and_replay_of_a_recorded_run(tmp_path):
    model, x = _mlp(), torch.randn(4, 16)
    path = tmp_path / "sel.mgt"
    with torch.no_grad():
        with magneton.record(path, fingerprints=True):
            model(x)
        with pytest.raises(ValueError):
            magneton.replay(str(path), model, x)  # no selection and no diff
        res = magneton.replay(str(path), model, x, ops=["aten::relu"], **FAST)
    assert [r["name"] for r in res["results"]] == ["aten::relu"]
    assert res["results"][0]["status"] == "ok"
    run = magneton.load_run(path)
    assert [run["ops"][s["op"]]["name"] for s in run["replays"]] == ["aten::relu"]


def test_selection_from_diff_json():
    diff = {"findings": [{"verdict": "waste"}, {"verdict": "noise"}],
            "regions": [{"finding": 0, "ops_a": ["aten::addmm"], "ops_b": ["aten::mm", "aten::add"]},
                        {"finding": 1, "ops_a": ["aten::relu"], "ops_b": ["aten::relu"]}]}
    assert replay_mod.selection_from_diff(diff, "a") == ["aten::addmm"]
    assert replay_mod.selection_from_diff(diff, "b") == ["aten::add", "aten::mm"]
    with pytest.raises(ValueError):
        replay_mod.selection_from_diff(diff, "c")


def _magneton():
    return locate.command() or pytest.skip("magneton is not built (set MAGNETON_BUILD or MAGNETON_BIN)")


def test_diff_reports_replay_source(tmp_path):
    binary = _magneton()
    torch.manual_seed(0)
    lin = torch.nn.Linear(16, 16).eval()
    x = torch.randn(8, 16)

    def a():
        h = lin(x)
        return 0.5 * h * (1.0 + torch.tanh(0.7978845608028654 * (h + 0.044715 * torch.pow(h, 3.0))))

    def b():
        return torch.nn.functional.gelu(lin(x), approximate="tanh")

    _record(tmp_path / "a.mgt", a)
    _record(tmp_path / "b.mgt", b)
    p = subprocess.run([binary, "diff", str(tmp_path / "a.mgt"), str(tmp_path / "b.mgt"), "--json"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 1), p.stderr
    report = json.loads(p.stdout)
    assert report["regions"], report
    assert any(r["a"]["source"] == "replay" and r["b"]["source"] == "replay" for r in report["regions"]), \
        [(r["ops_a"], r["a"]["source"], r["b"]["source"]) for r in report["regions"]]
    assert report["runs"]["a"]["replays"] and report["runs"]["b"]["replays"]
