"""cases/merge_groundtruth.py: a case measured in another call, perhaps on another GPU, keeps
when and where it was measured, and only the cases asked for are merged."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "cases"))

import merge_groundtruth  # noqa: E402


def test_a_merged_case_keeps_its_date_and_gpu_and_only_the_cases_asked_for_are_merged():
    base = {"gpu": "NVIDIA H200", "date": "2026-12-03", "cases": {"a": {"truth": "none"}}}
    new = {"gpu": "NVIDIA H100 80GB HBM3", "date": "2026-12-06", "seconds": 1.0, "trials": 2,
           "cases": {"a": {"truth": "wasteful"}, "b": {"truth": "none"}}}
    assert merge_groundtruth.merge(base, new, ["a"]) == ["a"]
    assert base["gpu"] == "NVIDIA H200"  # the file's header stays the first call's
    assert base["cases"]["a"]["truth"] == "wasteful"
    assert base["cases"]["a"]["measured"] == {"date": "2026-12-06", "seconds": 1.0, "trials": 2,
                                              "gpu": "NVIDIA H100 80GB HBM3"}
    assert "b" not in base["cases"]
