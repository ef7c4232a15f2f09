"""PyTorch against JAX: `magneton diff --json` on the committed CPU fixtures
(tests/data/jax/<model>_{torch,torch_measured,jax}.mgt, recorded by
make_fixtures.py --torch-measured from the same weights and inputs) matches the
regions that compute the same values.

The CLI is found through $MAGNETON_BIN, else build*/magneton in the repository.
Skips only when no CLI is built or the CLI has no `diff` subcommand yet."""

import glob
import json
import os
import re
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "jax")


def has_diff(path) -> bool:
    """True when the CLI at `path` has the `diff` subcommand (its help names it)."""
    res = subprocess.run([path, "diff", "--help"], capture_output=True, text=True)
    return res.returncode == 0 and re.search(r"Usage: \S+ diff\b", res.stdout) is not None


@pytest.fixture(scope="module")
def cli():
    env = os.environ.get("MAGNETON_BIN")
    found = [env] if env else sorted((p for p in glob.glob(os.path.join(ROOT, "build*", "magneton"))
                                      if os.access(p, os.X_OK)), key=os.path.getmtime, reverse=True)
    if not found:
        pytest.skip("no magneton CLI built (build*/magneton) and $MAGNETON_BIN unset")
    with_diff = [p for p in found if has_diff(p)]
    if not with_diff:
        pytest.skip(f"the 'diff' subcommand does not exist yet in {', '.join(found)}")
    return with_diff[0]


def diff(cli, model):
    """The diff of the torch run (values; its measured pass without fingerprints
    gives the costs) against the JAX run (one file: values and measured pass)."""
    a, b, measured = (os.path.join(DATA, f"{model}_{side}.mgt") for side in ("torch", "jax", "torch_measured"))
    res = subprocess.run([cli, "diff", a, b, "--measured-a", measured, "--json"], capture_output=True, text=True)
    assert res.returncode in (0, 1), res.stderr  # 1: findings, still a report
    return json.loads(res.stdout)


def region_names(report):
    return [(list(r["ops_a"]), list(r["ops_b"])) for r in report["regions"]]


# (model, torch op, a JAX primitive its matched region must contain)
CORRESPONDING = [
    ("mlp", "aten::gelu", "jax:tanh"),
    ("mlp", "aten::linear", "jax:dot_general"),
    ("conv", "aten::conv2d", "jax:conv_general_dilated"),
    ("conv", "aten::relu", "jax:max"),
    ("attention", "aten::scaled_dot_product_attention", "jax:exp"),
    ("attention", "aten::linear", "jax:dot_general"),
]


@pytest.mark.parametrize("model", ["mlp", "conv", "attention"])
def test_torch_and_jax_runs_match_in_regions(cli, model):
    report = diff(cli, model)
    regions = region_names(report)
    assert len(regions) >= 2, regions  # finer than the whole model
    for ops_a, ops_b in regions:
        assert ops_a and ops_b
        assert all(n.startswith("aten::") for n in ops_a), ops_a
        assert all(n.startswith("jax:") for n in ops_b), ops_b
    assert report["summary"]["regions"] == len(regions)


@pytest.mark.parametrize("model,torch_op,jax_op", CORRESPONDING)
def test_matched_regions_pair_the_same_computation(cli, model, torch_op, jax_op):
    regions = region_names(diff(cli, model))
    pairs = [(a, b) for a, b in regions if torch_op in a]
    assert pairs, f"no region holds {torch_op}: {regions}"
    assert any(jax_op in b for _, b in pairs), pairs


def test_diff_names_the_framework_configuration(cli):
    report = diff(cli, "mlp")
    keys = {d["key"] for d in report["config_diff"]}
    assert any(k.startswith("jax.") for k in keys) and any(k.startswith("torch.") for k in keys), keys
