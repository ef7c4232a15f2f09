"""The case suite's reading of `magneton diff --json` and its verdict per case; and, where a
built magneton and committed run files exist, `magneton diff` on every case (no GPU needed)."""
import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "cases"))

import casekit  # noqa: E402
import findings  # noqa: E402
import run_all  # noqa: E402
from magneton import locate  # noqa: E402

# The shape src/report/json.cpp writes (schema in docs/diff.md): run A is the wasteful side.
DIFF = {
    "schema_version": 1, "tool": "magneton diff", "unit": "J", "energy_measured": True,
    "runs": {"a": {"joules": 12.0, "seconds": 0.05, "replays": False, "energy_measured": True},
             "b": {"joules": 10.0, "seconds": 0.05, "replays": False, "energy_measured": True}},
    "summary": {"waste": 1, "trade_off": 0, "noise": 1, "saved_pct_of_run": 16.7},
    "config_diff": [{"key": "torch.float32_matmul_precision", "a": "highest", "b": "high"}],
    "findings": [
        {"rank": 0, "verdict": "noise", "label": "aten::layer_norm", "costly": "b",
         "a": {"joules": 1.0, "seconds": 0.001, "source": "attributed"},
         "b": {"joules": 1.01, "seconds": 0.001, "source": "attributed"},
         "evidence_class": "none", "evidence": [], "rules": []},
        {"rank": 1, "verdict": "waste", "label": "aten::addmm at modeling_gpt2.py:120", "costly": "a",
         "a": {"joules": 8.0, "seconds": 0.03, "source": "replay"},
         "b": {"joules": 6.0, "seconds": 0.029, "source": "replay"},
         "cost_delta_pct": 33.3, "time_delta_pct": 3.4, "saved_pct_of_run": 16.7, "why": "a spends 33% more",
         "evidence_class": "kernels",
         "evidence": [{"class": "kernels", "summary": "same ops, different GEMM kernels",
                       "only_a": [{"name": "sm90_xmma_gemm_f32f32_f32f32"}],
                       "only_b": [{"name": "sm90_xmma_gemm_tf32f32_f32f32"}],
                       "all_a": [{"name": "aten::addmm"}], "all_b": [{"name": "aten::addmm"}],
                       "config": [{"key": "torch.backends.cuda.matmul.allow_tf32", "a": "false", "b": "true"}],
                       "params": []}],
         "rules": [{"id": "tf32", "title": "TF32 off", "recommendation": "allow TF32"}]},
    ],
}


def _assess(case, doc, gt=None):
    return findings.assess(case, casekit.expected(case), gt, doc, "", ROOT / "cases" / case / "runs")


def test_top_finding_is_the_first_waste_finding():
    f = findings.top_finding(DIFF)
    assert f["verdict"] == "waste" and f["costly"] == "wasteful"
    assert f["class"] == "kernels-config" and f["magneton_class"] == "kernels"
    assert "torch.backends.cuda.matmul.allow_tf32" in f["config_keys"]
    assert f["ratio_w_over_e"] == pytest.approx(8.0 / 6.0)
    assert "aten::addmm" in f["ops"] and f["waste_findings"] == 1


def test_match_needs_side_class_and_key():
    assert _assess("hf-14450", DIFF)["match"] == "yes"
    wrong_side = copy.deepcopy(DIFF)
    wrong_side["findings"][1]["costly"] = "b"
    row = _assess("hf-14450", wrong_side)
    assert row["match"] == "no" and "efficient side" in row["why"]
    no_key = copy.deepcopy(DIFF)
    no_key["findings"][1]["evidence"][0]["config"] = []
    row = _assess("hf-14450", no_key)
    assert row["match"] == "partial" and "allow_tf32" in row["why"]
    # sd-279 expects both TF32 keys; only the matmul one is named here.
    assert _assess("sd-279", DIFF)["match"] == "partial"


def test_ground_truth_overrides_the_expectation():
    # pytorch-141210: expected.json already says the report's efficient side wastes on the H200.
    doc = copy.deepcopy(DIFF)
    doc["findings"][1]["evidence"] = [{"class": "operators", "summary": "", "config": [], "params": [],
                                       "only_a": [{"name": "aten::addmm"}],
                                       "only_b": [{"name": "aten::mm"}, {"name": "aten::add"}]}]
    doc["findings"][1]["evidence_class"] = "operators"
    row = _assess("pytorch-141210", doc)
    assert row["truth"] == "efficient" and row["match"] == "no"
    row = _assess("pytorch-141210", doc, gt={"truth": "wasteful"})
    assert row["truth_source"] == "ground truth" and row["match"] == "yes"
    # Measured no difference end to end: waste findings that save 16.7% of the run are a false positive...
    row = _assess("pytorch-141210", doc, gt={"truth": "none"})
    assert row["match"] == "no" and "16.7% of the run" in row["why"]
    # ... while a real but small region (0.2% of the run, under the 5% margin) agrees with it.
    small = copy.deepcopy(doc)
    small["summary"]["saved_pct_of_run"] = 0.2
    row = _assess("pytorch-141210", small, gt={"truth": "none", "ratio_cv": 0.006})
    assert row["match"] == "yes" and "0.2% of the run" in row["why"]
    # The margin widens with the ground truth's spread: 3 x 6% = 18%, above the 16.7%.
    assert _assess("pytorch-141210", doc, gt={"truth": "none", "ratio_cv": 0.06})["match"] == "yes"
    doc["findings"] = [doc["findings"][0]]
    assert _assess("pytorch-141210", doc, gt={"truth": "none"})["match"] == "yes"


def test_results_markdown_has_a_row_per_case():
    rows = [_assess("hf-14450", DIFF),
            findings.assess("cpu-busy-wait", casekit.expected("cpu-busy-wait"), None, None,
                            "recording wasteful failed (exit 2): no GPU", Path("/nonexistent"))]
    text = findings.results_markdown(rows, {"gpu": "NVIDIA H200", "seconds": 2, "trials": 3}, None, "2026-12-02")
    assert "**1 of 2 cases diagnosed as expected**" in text
    assert "| hf-14450 |" in text and "| cpu-busy-wait |" in text
    assert "recording wasteful failed" in text


def _committed():
    return [c for c in casekit.all_cases()
            if casekit.has_run_files(ROOT / "cases" / c / "runs") and (ROOT / "cases" / c / "runs" / "diff.json").exists()]


@pytest.mark.parametrize("case", _committed() or ["(none committed)"])
def test_diff_of_committed_runs_reproduces_the_gpu_diagnosis(case):
    binary = locate.command()
    if case == "(none committed)":
        pytest.skip("no cases/*/runs/ committed yet (scripts/gpu/cases.sh produces them on the GPU)")
    if binary is None:
        pytest.skip("magneton is not built (set MAGNETON_BUILD or MAGNETON_BIN)")
    runs = ROOT / "cases" / case / "runs"
    with casekit.run_files(runs) as files:
        p = subprocess.run(run_all.diff_command(binary, files), capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 1), p.stderr
    now = findings.top_finding(json.loads(p.stdout))
    then = findings.top_finding(json.loads((runs / "diff.json").read_text()))
    assert (now or {}).get("verdict") == (then or {}).get("verdict")
    assert (now or {}).get("costly") == (then or {}).get("costly")
    assert (now or {}).get("class") == (then or {}).get("class")
