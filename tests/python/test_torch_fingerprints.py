"""Fingerprints computed by the C++ extension: exact against NumPy, invariant
under permute / contiguous copies / reshape (as documented), distinct for
different values, and stored with the tensors of a recording."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
magneton = pytest.importorskip("magneton")
pytest.importorskip("magneton._torch", reason="magneton._torch is not built (ninja magneton_torch)")


def _spectra_multiset(fp):
    return sorted(tuple(round(v, 5) for v in s) for s in fp["spectra"])


def _assert_same_values(a, b, rel=1e-9):
    assert a["numel"] == b["numel"]
    for k in ("mean", "stddev", "min", "max", "l1", "l2"):
        assert a[k] == pytest.approx(b[k], rel=rel, abs=1e-12), k
    assert a["quantiles"] == b["quantiles"]  # the same sorted values


@pytest.mark.parametrize("n", [1, 2, 33, 1000, 100_003])
def test_quantiles_are_the_sorted_values_at_their_ranks_with_nan_last(n):
    torch.manual_seed(n)
    t = torch.randn(n)
    t[torch.rand(n) < 0.1] = float("nan")
    fp = magneton.fingerprint(t)
    s = np.sort(t.double().numpy())  # NaN last, as the quantiles order them
    q = len(fp["quantiles"])
    ranks = [0 if q == 1 else (k * (n - 1) + (q - 1) // 2) // (q - 1) for k in range(q)]
    np.testing.assert_array_equal(np.array(fp["quantiles"]), s[ranks])
    np.testing.assert_array_equal(np.array([fp["min"], fp["max"]]), s[[0, n - 1]])


def test_matches_numpy():
    torch.manual_seed(1)
    t = torch.randn(6, 10, 4)
    fp = magneton.fingerprint(t)
    x = t.double().numpy()
    assert fp["numel"] == 240
    assert fp["mean"] == pytest.approx(x.mean(), rel=1e-12)
    assert fp["stddev"] == pytest.approx(x.std(), rel=1e-12)  # population stddev
    assert fp["min"] == x.min() and fp["max"] == x.max()
    assert fp["l1"] == pytest.approx(np.abs(x).sum(), rel=1e-12)
    assert fp["l2"] == pytest.approx(np.linalg.norm(x), rel=1e-12)
    flat = np.sort(x.ravel())
    ranks = [round(k * (flat.size - 1) / 32) for k in range(33)]
    assert fp["quantiles"] == pytest.approx(flat[ranks].astype(np.float32).tolist(), rel=1e-7)
    assert len(fp["spectra"]) == 3
    for mode, spectrum in enumerate(fp["spectra"]):
        unfolding = np.moveaxis(x, mode, 0).reshape(x.shape[mode], -1)
        sv = np.linalg.svd(unfolding, compute_uv=False) / np.linalg.norm(x)
        schatten = [float((sv ** (2 * k)).sum() ** (1 / (2 * k))) for k in range(2, 8)]
        assert spectrum == pytest.approx(schatten, rel=1e-6)


def test_permuted_and_contiguous_copies_fingerprint_equal():
    torch.manual_seed(2)
    t = torch.randn(5, 7, 9)
    base = magneton.fingerprint(t)
    for copy in (t.permute(2, 0, 1), t.permute(1, 2, 0).contiguous(), t.transpose(0, 2).clone(),
                 t.unsqueeze(1)):  # size-1 dims are dropped
        fp = magneton.fingerprint(copy)
        _assert_same_values(base, fp)
        assert _spectra_multiset(fp) == _spectra_multiset(base)


def test_reshape_keeps_value_summary_but_not_spectra():
    t = torch.randn(8, 12)
    a, b = magneton.fingerprint(t), magneton.fingerprint(t.reshape(4, 24))
    _assert_same_values(a, b)
    assert _spectra_multiset(a) != _spectra_multiset(b)  # documented: reshapes change unfoldings


def test_different_values_differ():
    torch.manual_seed(3)
    t = torch.randn(16, 16)
    fps = [magneton.fingerprint(x) for x in (t, t + 1e-3, t * 1.01, torch.randn(16, 16), t.flip(0)[:8])]
    base = fps[0]
    for other in fps[1:4]:
        assert other["quantiles"] != base["quantiles"]
    # Same multiset of values in another order: equal summaries, different spectra.
    shuffled = magneton.fingerprint(t.flatten()[torch.randperm(256)].reshape(16, 16))
    _assert_same_values(base, shuffled)
    assert _spectra_multiset(shuffled) != _spectra_multiset(base)


def test_dtypes_and_edge_cases():
    ints = magneton.fingerprint(torch.arange(10, dtype=torch.int64))
    assert ints["mean"] == 4.5 and ints["min"] == 0 and ints["max"] == 9 and ints["spectra"] == []
    half = magneton.fingerprint(torch.ones(4, 4, dtype=torch.bfloat16) * 3)
    assert half["stddev"] == 0 and half["l1"] == 48
    assert magneton.fingerprint(torch.tensor([True, False, True]))["mean"] == pytest.approx(2 / 3)
    assert magneton.fingerprint(torch.empty(0, 3))["numel"] == 0
    scalar = magneton.fingerprint(torch.tensor(2.5))
    assert scalar["numel"] == 1 and scalar["quantiles"] == [2.5] * 33
    zeros = magneton.fingerprint(torch.zeros(3, 3))
    assert zeros["spectra"] == [[0.0] * 6, [0.0] * 6]
    with pytest.raises(RuntimeError, match="unsupported"):
        magneton.fingerprint(torch.randn(2, 2, dtype=torch.complex64))


def test_size_caps():
    t = torch.randn(40, 50)
    assert magneton.fingerprint(t, spectra_max_side=30)["spectra"] == [[], []]
    assert magneton.fingerprint(t, spectra_max_numel=100)["spectra"] == []
    assert len(magneton.fingerprint(t, quantiles=5)["quantiles"]) == 5
    assert [len(s) for s in magneton.fingerprint(t, spectrum_values=3)["spectra"]] == [3, 3]
    assert magneton.fingerprint(t, spectrum_values=0)["spectra"] == []


def test_recorded_fingerprints_match_direct_ones(tmp_path):
    torch.manual_seed(4)
    lin = torch.nn.Linear(32, 16)
    x = torch.randn(8, 32)
    with torch.no_grad(), magneton.record(tmp_path / "f.mgt", fingerprints=True) as rec:
        y = torch.relu(lin(x))
    run = magneton.load_run(tmp_path / "f.mgt")
    assert rec.summary["fingerprints"] == len(run["tensors"])
    relu = next(op for op in run["ops"] if op["name"] == "aten::relu")
    stored = run["tensors"][relu["outputs"][0]]["fingerprint"]
    direct = magneton.fingerprint(y)
    _assert_same_values(stored, direct)
    assert _spectra_multiset(stored) == _spectra_multiset(direct)
    # The graph input x is fingerprinted when first read.
    linear = next(op for op in run["ops"] if op["name"] == "aten::linear")
    _assert_same_values(run["tensors"][linear["inputs"][0]]["fingerprint"], magneton.fingerprint(x))


def test_measured_pass_has_no_fingerprints(tmp_path):
    with magneton.record(tmp_path / "m.mgt"):
        torch.randn(4, 4).relu()
    assert all(t["fingerprint"] is None for t in magneton.load_run(tmp_path / "m.mgt")["tensors"])


class _Attention(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(d, 3 * d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def test_every_module_output_fingerprint_is_the_true_output(tmp_path):
    """Outputs are fingerprinted when the op returning them ends: addmm's
    nested bias copy_ or native_layer_norm's rows, whose keys equal the outer
    op's output (kernels write without moving the version counter), must not
    stand in for the outer op's value."""
    torch.manual_seed(7)
    d = 32
    modules = {
        "aten::linear": torch.nn.Linear(d, d),
        "aten::layer_norm": torch.nn.LayerNorm(d),
        "aten::gelu": torch.nn.GELU(),
        "aten::scaled_dot_product_attention": _Attention(d, 4),
    }
    model = torch.nn.Sequential(modules["aten::linear"], modules["aten::layer_norm"], modules["aten::gelu"],
                                modules["aten::scaled_dot_product_attention"])
    true = {}

    def keep(name):
        return lambda mod, args, out: true.setdefault(name, []).append(out.detach().clone())

    for name, mod in modules.items():
        mod.register_forward_hook(keep(name))
    x = torch.randn(2, 6, d)
    with torch.no_grad():
        model(x)  # warm; hooks run
        true.clear()
        with magneton.record(tmp_path / "m.mgt", fingerprints=True):
            model(x)
    run = magneton.load_run(tmp_path / "m.mgt")
    checked = 0
    for name, outs in true.items():
        ops = [op for op in run["ops"] if op["name"] == name and op["parent"] == -1]
        if name == "aten::linear":  # the attention block's qkv Linear comes second
            ops = ops[:1]
        assert len(ops) == len(outs), (name, len(ops), len(outs))
        for op, out in zip(ops, outs):
            stored = run["tensors"][op["outputs"][0]]["fingerprint"]
            direct = magneton.fingerprint(out)
            for key in ("mean", "stddev", "l2", "min", "max"):
                assert stored[key] == pytest.approx(direct[key], rel=1e-5, abs=1e-7), (name, key)
            checked += 1
    assert checked == 4
