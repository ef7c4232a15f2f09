"""The committed torch fixtures (tests/data/torch, from scripts/record_fixture.py)
load, and hold what analysis tests rely on: a values pass with fingerprints and
a measured pass of the same forward with the same ops, and a training step."""

from pathlib import Path

import pytest

magneton = pytest.importorskip("magneton")
pytest.importorskip("magneton._torch", reason="magneton._torch is not built (ninja magneton_torch)")

from magneton.dataflow import completeness  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data" / "torch"


def test_gpt2_values_and_measured_passes_line_up():
    values = magneton.load_run(DATA / "gpt2_2l_values.mgt")
    measured = magneton.load_run(DATA / "gpt2_2l_measured.mgt")
    assert [op["name"] for op in values["ops"]] == [op["name"] for op in measured["ops"]]
    assert all(t["fingerprint"] is not None for t in values["tensors"])
    assert all(t["fingerprint"] is None for t in measured["tensors"])
    assert values["info"]["extra"]["fingerprints"] == "true"
    for run in (values, measured):
        assert completeness(run)["fraction"] == 1.0
        assert "torch.backends.cuda.matmul.allow_tf32" in run["config"]


def test_cnn_training_step_has_linked_backward():
    run = magneton.load_run(DATA / "cnn_train_values.mgt")
    ops = run["ops"]
    nodes = [op for op in ops if op["name"] == "ConvolutionBackward0"]
    assert len(nodes) == 1 and ops[nodes[0]["forward_op"]]["sequence"] == nodes[0]["sequence"]
    assert any(op["name"] == "aten::add_" for op in ops)  # the SGD update
    assert completeness(run)["fraction"] >= 0.99
