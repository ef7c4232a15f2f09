"""The JAX recorder on the CPU: ops and dataflow from the jaxpr walk, fingerprints
by the torch extension's C++ code, jit functions, loops, the run file.

Run: PYTHONPATH=python pytest tests/python/test_jax_recorder.py
Tests that write or fingerprint need magneton._torch (ninja magneton_torch)."""

import os
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
torch = pytest.importorskip("torch")
import jax.numpy as jnp  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "data", "jax"))
import models  # noqa: E402

from magneton.jax import kernels, native  # noqa: E402
from magneton.jax.graph import NONE  # noqa: E402
from magneton.jax_recorder import _compiled_hlo, _donated_inputs, dataflow_completeness, record_jax  # noqa: E402

needs_extension = pytest.mark.skipif(native.torch_extension() is None,
                                     reason="magneton._torch is not built (ninja magneton_torch)")
STRUCTURED = {"jit", "pjit", "custom_jvp_call", "custom_vjp_call", "closed_call", "remat2", "checkpoint"}


def count_equations(jaxpr) -> int:
    """Equations of a jaxpr, counting those inside call-like sub-jaxprs too."""
    n = 0
    for eqn in jaxpr.eqns:
        n += 1
        if eqn.primitive.name in STRUCTURED:
            sub = eqn.params.get("jaxpr", eqn.params.get("call_jaxpr"))
            n += count_equations(getattr(sub, "jaxpr", sub))
    return n


def ancestors(g, tensor_ids) -> set:
    """Tensor ids reachable backwards from `tensor_ids` through producers."""
    seen, todo = set(), list(tensor_ids)
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen.add(t)
        p = g.tensors[t].producer
        if p != NONE:
            todo.extend(g.ops[p].inputs)
    return seen


def leaf_outputs(g):
    kids = g.children()
    return [t for op in g.ops if not kids[op.id] for t in op.outputs]


@pytest.mark.parametrize("name", models.MODELS)
def test_every_equation_becomes_an_op_with_connected_inputs(name):
    _, _, jf, ja = models.pair(name)
    rec = record_jax(jf, *ja, fingerprints=False)
    g = rec.graph
    assert len(g.ops) == count_equations(jax.make_jaxpr(jf)(*ja).jaxpr)
    assert all(op.framework == "jax" and op.name.startswith("jax:") for op in g.ops)
    assert dataflow_completeness(g) >= 0.99
    # The model's output is computed from its input: x's row is among its ancestors.
    x_row = next(t.id for t in g.tensors if t.producer == NONE and tuple(t.shape) == tuple(ja[-1].shape))
    final = leaf_outputs(g)[-1]
    assert g.tensors[final].shape == list(np.shape(rec.outputs))
    assert x_row in ancestors(g, [final])


def test_op_names_schemas_and_dataflow_of_an_mlp():
    _, _, jf, ja = models.pair("mlp")
    g = record_jax(jf, *ja, fingerprints=False).graph
    dots = [op for op in g.ops if op.name == "jax:dot_general"]
    assert len(dots) == 3
    assert dots[0].schema.startswith("dot_general(f32[8,64], f32[64,128]) -> (f32[8,128])")
    # Each layer's matmul reads the previous layer's activation, not a graph input.
    for prev, nxt in zip(dots, dots[1:]):
        assert g.tensors[nxt.inputs[0]].producer > prev.id
    assert all(g.stacks[op.stack] for op in dots)
    frame = g.frames[g.stacks[dots[0].stack].frames[0]]
    assert frame.file.endswith("models.py") and frame.function == "mlp_jax"


def test_jit_function_is_a_scope_around_its_equations_timed_as_executed():
    _, _, jf, ja = models.pair("attention")
    rec = record_jax(jf, *ja, fingerprints=False)
    g = rec.graph
    top = [op for op in g.ops if op.parent == NONE]
    assert len(top) == 1 and top[0].name == "jax:jit(attention_jax)"
    assert top[0].inputs == [] and top[0].outputs == []  # matching sees the equations inside
    kids = g.children()
    for op in g.ops[1:]:
        parent = g.ops[op.parent]
        assert parent.start_ns <= op.start_ns <= op.end_ns <= parent.end_ns
    leaves = [op for op in g.ops if not kids[op.id]]
    assert sum(op.end_ns - op.start_ns for op in leaves) <= top[0].end_ns - top[0].start_ns + len(leaves)
    np.testing.assert_allclose(np.asarray(rec.outputs), np.asarray(jf(*ja)), rtol=1e-6)


def test_loops_are_unrolled_and_conditionals_follow_the_taken_branch():
    def f(x, xs):
        def body(c, a):
            return c * 2.0 + a, jnp.sin(c)
        c, ys = jax.lax.scan(body, x, xs)
        c = jax.lax.while_loop(lambda v: v.sum() < 1e4, lambda v: v * 3.0, c)
        return jax.lax.cond(c.sum() > 0, lambda v: v + 1.0, lambda v: v - 1.0, c), ys

    x, xs = jnp.ones(4), jnp.arange(3.0)
    rec = record_jax(f, x, xs, fingerprints=False)
    g = rec.graph
    names = [op.name for op in g.ops]
    assert names.count("jax:sin") == 3
    assert names.count("jax:scan.slice") == 3 and names.count("jax:scan.stack") == 1
    iterations = names.count("jax:mul") - 3  # 3 from scan bodies, the rest from the while body
    assert iterations >= 1 and names.count("jax:lt") == iterations + 1
    assert "jax:add" in names and "jax:sub" not in names[names.index("jax:cond"):]
    assert dataflow_completeness(g) == 1.0
    want = f(x, xs)
    for got, ref in zip(jax.tree_util.tree_leaves(rec.outputs), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-6)


def test_loops_longer_than_max_unroll_are_one_op():
    f = lambda x: jax.lax.scan(lambda c, _: (c + 1.0, None), x, None, length=5)[0]
    g = record_jax(f, jnp.zeros(2), fingerprints=False, max_unroll=2).graph
    assert [op.name for op in g.ops] == ["jax:scan"]
    assert len(g.ops[0].inputs) == 1 and len(g.ops[0].outputs) == 1


def test_named_scopes_become_ranges():
    def f(x):
        with jax.named_scope("encoder"):
            x = jnp.tanh(x) * 2.0
        with jax.named_scope("head"):
            return x.sum()

    g = record_jax(f, jnp.ones(3), fingerprints=False).graph
    assert [r.name for r in g.ranges] == ["encoder", "head"]
    enc = g.ranges[0]
    tanh = next(op for op in g.ops if op.name == "jax:tanh")
    assert enc.start_ns <= tanh.start_ns and tanh.end_ns <= enc.end_ns


def test_repeat_records_each_execution_over_shared_inputs():
    _, _, jf, ja = models.pair("mlp")
    g = record_jax(jf, *ja, fingerprints=False, repeat=2).graph
    n = len(g.ops) // 2
    assert len(g.ops) == 2 * n
    for a, b in zip(g.ops[:n], g.ops[n:]):
        assert a.name == b.name and (a.parent == b.parent == NONE or b.parent == a.parent + n)
        for ta, tb in zip(a.inputs, b.inputs):
            produced = g.tensors[ta].producer != NONE
            assert (tb != ta) == produced  # weights and x shared, activations per execution
    assert g.ops[n].start_ns >= g.ops[0].end_ns
    assert dataflow_completeness(g) == 1.0


def test_bad_arguments_say_what_is_wrong(tmp_path):
    with pytest.raises(ValueError, match="repeat=0"):
        record_jax(jnp.sin, jnp.ones(2), repeat=0)
    with pytest.raises(ValueError, match="energy='nvm'"):
        record_jax(jnp.sin, jnp.ones(2), energy="nvm")
    with pytest.raises(ValueError, match="measured=2"):
        record_jax(jnp.sin, jnp.ones(2), measured=2)  # the calls need a file to go to
    with pytest.raises(ValueError, match="measured=-1"):
        record_jax(jnp.sin, jnp.ones(2), path=str(tmp_path / "neg.mgt"), measured=-1)
    kept = tmp_path / "kept.mgt"
    kept.write_bytes(b"x")
    with pytest.raises(FileExistsError, match="kept.mgt: already exists"):
        record_jax(jnp.sin, jnp.ones(2), path=str(kept))


def test_a_function_that_donates_its_inputs_leaves_them_to_the_program():
    # A jitted step that donates its parameters (donate_argnums, as training
    # loops do) would invalidate them at the first op-level execution; the
    # recorder's executions run the program's donating executable on copies,
    # so every repetition and the program's own calls after them still have
    # their inputs, and its kernels are the program's (the aliasing's copies too).
    from functools import partial

    step = partial(jax.jit, donate_argnums=0)(lambda w, x: w - 0.1 * jnp.tanh(x.T @ (x @ w)))
    w, x = jnp.ones((64, 64)) / 64, jnp.ones((8, 64))
    rec = record_jax(step, w, x, repeat=2)
    assert not w.is_deleted()
    assert jnp.allclose(rec.outputs, w - 0.1 * jnp.tanh(x.T @ (x @ w)))
    assert jnp.allclose(step(w, x), rec.outputs)  # the program's own call, donating as it was written to
    closed = jax.make_jaxpr(step)(w, x)
    assert _donated_inputs(closed) == [0]
    eqn = closed.jaxpr.eqns[0]
    assert "input_output_alias" in _compiled_hlo(eqn.params["jaxpr"], eqn.params["donated_invars"])
    assert "input_output_alias" not in _compiled_hlo(eqn.params["jaxpr"])


def test_kernels_of_a_jit_executable_go_to_the_equations_of_their_hlo_instructions():
    """Kernel names of XLA:GPU are its HLO instruction names; on the CPU the same
    HLO is read and kernels are made up from its thunks in schedule order."""
    _, _, jf, ja = models.pair("mlp")
    g = record_jax(jf, *ja, fingerprints=False).graph
    hlo = _compiled_hlo(jax.make_jaxpr(jf)(*ja).jaxpr.eqns[0].params["jaxpr"])
    thunks = kernels.plan(hlo, g, 0)
    assert thunks
    made_up = [{"name": t.name, "op": 0, "start_ns": i} for i, t in enumerate(thunks)]
    made_up.append({"name": "sm90_xmma_gemm_f32f32", "op": 0, "start_ns": 99})  # no library call: stays
    made_up.append({"name": "elsewhere", "op": 7, "start_ns": 5})                # not this executable's
    linked = kernels.link(made_up, {0: thunks})
    dots = [op.id for op in g.ops if op.name == "jax:dot_general"]
    assert sorted(op for op in linked[:-2] if g.ops[op].name == "jax:dot_general") == dots
    assert linked[-1] == 7
    assert all(g.ops[op].parent == 0 for op in linked[:-2])


def test_library_helper_kernels_stay_with_the_call_they_serve():
    """cuDNN launches a workspace kernel before each convolution (as recorded on
    the H200 for a jitted conv stack); it must not shift the later convolutions
    onto the next layer's equation."""
    thunks = [kernels.Thunk("conv_1", 10, True), kernels.Thunk("fusion_1", 11, False),
              kernels.Thunk("conv_2", 20, True), kernels.Thunk("conv_3", 30, True)]
    init = "void cask_plugin__5x_cudnn::xmma__5x_cudnn::init_device_workspace_kernel<...>"
    conv = "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_kernel__5x_cudnn"
    names = [conv, "fusion_1", init, conv, init, conv, "splitKreduce_kernel"]
    ks = [{"name": n, "op": 0, "start_ns": t} for t, n in enumerate(names)]
    assert kernels.link(ks, {0: thunks}) == [10, 11, 20, 20, 30, 30, 30]


def test_kernels_without_an_external_id_go_to_the_window_they_ran_in():
    ks = [{"op": -1, "start_ns": 15}, {"op": -1, "start_ns": 25}, {"op": 3, "start_ns": 100},
          {"op": -1, "start_ns": 40}, {"op": -1, "start_ns": 5}]
    assert kernels.in_windows(ks, {0: (10, 20), 1: (21, 30)}) == [0, 1, 3, -1, -1]


def test_hlo_parser_reads_fusions_metadata_and_tuple_types():
    text = """HloModule m, is_scheduled=true

%fused (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0)
  ROOT %t = f32[2]{0} tanh(%p), metadata={op_name="jit(f)/tanh" source_file="/a.py" source_line=7}
}

ENTRY %main (a: f32[2]) -> (f32[2], f32[2]) {
  %a = f32[2]{0} parameter(0)
  %fusion.1 = f32[2]{0} fusion(%a), kind=kLoop, calls=%fused, metadata={op_name="jit(f)/tanh" source_file="/a.py" source_line=7}
  %cc = (f32[2]{0}, s8[16]{0}) custom-call(%a), custom_call_target="__cublas$gemm", metadata={op_name="jit(f)/dot_general" source_file="/a.py" source_line=9}
  ROOT %out = (f32[2]{0}, f32[2]{0}) tuple(%fusion.1, %a)
}
"""
    comps, entry = kernels.parse_hlo(text)
    assert entry == "main"
    ops = {i.name: i for i in comps["main"]}
    assert ops["fusion.1"].calls == ["fused"] and ops["fusion.1"].line == 7
    assert ops["cc"].opcode == "custom-call" and ops["cc"].primitive == "dot_general"
    assert comps["fused"][-1].root and comps["fused"][-1].primitive == "tanh"
    assert kernels.sanitize("fusion.1") == "fusion_1"


@needs_extension
def test_fingerprint_of_a_jax_array_is_the_torch_fingerprint_of_its_values():
    fp = native.Fingerprinter()
    ext = native.torch_extension()
    rng = np.random.default_rng(0)
    values = rng.standard_normal((6, 5, 4)).astype(np.float32)
    for dtype, tdtype in [(jnp.float32, torch.float32), (jnp.bfloat16, torch.bfloat16), (jnp.int32, torch.int32)]:
        a = jnp.asarray(values * 10).astype(dtype)
        t = torch.from_numpy(np.array(a.astype(jnp.float32))).to(tdtype)
        assert fp(a) == dict(ext.fingerprint(t)), dtype
    a = jnp.asarray(values)
    assert fp(jnp.transpose(a, (2, 0, 1)))["quantiles"] == fp(a)["quantiles"]
    assert fp(a) != fp(a + 1e-3)


@needs_extension
def test_recorded_values_are_the_programs_values():
    _, _, jf, ja = models.pair("conv")
    rec = record_jax(jf, *ja)
    g = rec.graph
    assert all(t.fingerprint is not None for t in g.tensors)
    final = g.tensors[leaf_outputs(g)[-1]].fingerprint
    want = native.Fingerprinter()(jf(*ja))
    assert final["numel"] == want["numel"]
    np.testing.assert_allclose([final[k] for k in ("mean", "l2", "min", "max")],
                               [want[k] for k in ("mean", "l2", "min", "max")], rtol=1e-5)
    # The NHWC input's fingerprint equals torch's of the same image in NCHW.
    tf_, ta, _, _ = models.pair("conv")
    x_row = next(t for t in g.tensors if t.producer == NONE and t.shape == list(ja[-1].shape))
    assert x_row.fingerprint["quantiles"] == dict(native.torch_extension().fingerprint(ta[-1]))["quantiles"]


@needs_extension
def test_run_file_holds_ops_fingerprints_config_and_info(tmp_path):
    import magneton

    _, _, jf, ja = models.pair("mlp")
    path = str(tmp_path / "mlp.mgt")
    old = jax.config.jax_default_matmul_precision
    jax.config.update("jax_default_matmul_precision", "highest")
    try:
        rec = record_jax(jf, *ja, path=path)
    finally:
        jax.config.update("jax_default_matmul_precision", old)
    run = magneton.load_run(path)
    assert len(run["ops"]) == len(rec.graph.ops) and len(run["tensors"]) == len(rec.graph.tensors)
    assert [o["name"] for o in run["ops"]] == [o.name for o in rec.graph.ops]
    assert [o["inputs"] for o in run["ops"]] == [o.inputs for o in rec.graph.ops]
    assert all(t["fingerprint"] is not None for t in run["tensors"])
    assert run["config"]["jax.config.jax_default_matmul_precision"] == "highest"
    assert run["config"]["jax.backend"] == "cpu" and "env.XLA_FLAGS" in run["config"]
    extra = run["info"]["extra"]
    assert extra["framework"] == "jax" and extra["jax_version"] == jax.__version__
    assert run["info"]["start_ns"] <= run["ops"][0]["start_ns"] <= run["ops"][0]["end_ns"] <= run["info"]["end_ns"]


@needs_extension
def test_repeated_executions_are_written_as_iterations_with_the_first_ones_values(tmp_path):
    import magneton

    _, _, jf, ja = models.pair("mlp")
    path = str(tmp_path / "mlp3.mgt")
    rec = record_jax(jax.jit(jf), *ja, path=path, repeat=3)
    run = magneton.load_run(path)
    assert run["info"]["extra"]["iterations"] == "3"
    n = len(run["ops"]) // 3
    assert len(run["ops"]) == 3 * n == rec.summary["ops"]
    assert [o["id"] for o in run["ops"]] == list(range(3 * n))
    for k in (1, 2):
        for a, b in zip(run["ops"][:n], run["ops"][k * n:(k + 1) * n]):
            assert b["name"] == a["name"] and (b["parent"] == a["parent"] == NONE or b["parent"] == a["parent"] + k * n)
            for ta, tb in zip(a["outputs"], b["outputs"]):  # a new row per execution, the same values
                assert tb != ta and run["tensors"][tb]["fingerprint"] == run["tensors"][ta]["fingerprint"]


def _wasteful_mlp(params, x):
    """The MLP and a computation it throws away (its result times zero)."""
    waste = jnp.tanh(x @ jnp.ones((x.shape[1], 4096), x.dtype)).sum()
    return models.mlp_jax(params, x) + 0.0 * waste


def _step_marks(path: str) -> list:
    """Times of the step marks in a run file (load_run has no ranges)."""
    import contextlib
    import sqlite3
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return [t for (t,) in db.execute(
            "SELECT r.start_ns FROM ranges r JOIN strings n ON n.id = r.name JOIN strings d ON d.id = r.domain "
            "WHERE n.value = 'step' AND d.value = 'magneton' AND r.start_ns = r.end_ns")]


@needs_extension
def test_measured_calls_follow_the_op_level_executions_in_the_same_file(tmp_path):
    """measured=K: K calls of the program as its loop makes them, after the op-level
    executions, from the noted "measured_from_ns" on. Their kernels (on a GPU)
    carry no op and each call ends with a step mark; without a kernel trace
    (the CPU) nothing of the calls can be aligned: they are timed on the
    host by their step marks after the noted end of the op-level executions
    ("kernels_traced_until_ns", as untraced steps), which still cost the regions."""
    import magneton

    _, _, jf, ja = models.pair("mlp")
    path = str(tmp_path / "both.mgt")
    rec = record_jax(jax.jit(jf), *ja, path=path, repeat=2, measured=7)
    run = magneton.load_run(path)
    info, extra = run["info"], run["info"]["extra"]
    n = rec.summary["equations_per_execution"]
    if not rec.summary["kernel_tracer"]:
        assert "measured_from_ns" not in extra and extra["iterations"] == "2"
        assert len(run["ops"]) == 2 * n
        assert any(s["name"] == "jax_measured_calls_host_timed" and s["value"] == 7 for s in run["stats"])
        cut = int(extra["kernels_traced_until_ns"])
        assert all(op["end_ns"] <= cut for op in run["ops"])
        marks = _step_marks(path)
        assert len(marks) == 8 and all(cut <= t <= info["end_ns"] for t in marks)  # 7 calls between 8 marks
        return
    cut = int(extra["measured_from_ns"])
    assert "iterations" not in extra  # the diff costs one repetition of the step at a time
    assert info["start_ns"] < cut < info["end_ns"]
    assert all(op["start_ns"] < cut for op in run["ops"]) and len(run["ops"]) == 2 * n
    late = [k for k in run["kernels"] if k["start_ns"] >= cut]
    assert late and all(k["op"] == -1 for k in late)
    assert any(k["op"] >= 0 for k in run["kernels"] if k["start_ns"] < cut)
    marks = _step_marks(path)
    assert len(marks) == 7 and all(cut < t < info["end_ns"] for t in marks)
    plain = str(tmp_path / "plain.mgt")
    record_jax(jax.jit(jf), *ja, path=plain, repeat=2)
    assert "measured_from_ns" not in magneton.load_run(plain)["info"]["extra"]


@needs_extension
def test_measured_calls_can_wait_for_each_result(tmp_path):
    """wait_each=True paces the calls as a loop that reads every result: each
    call's kernels have ended by its step mark. Queued back to back, a call
    whose device time (matmuls of 2048 x 2048, about a millisecond) is far
    longer than its dispatch would have its kernels run on after later marks."""
    import magneton

    if jax.default_backend() != "gpu":
        pytest.skip("needs a kernel trace (a GPU): without one the calls are timed on the host only")
    x = jnp.ones((2048, 2048), jnp.float32) / 2048
    path = str(tmp_path / "paced.mgt")
    rec = record_jax(jax.jit(lambda a: a @ a @ a @ a), x, path=path, measured=20, wait_each=True)
    if not rec.summary["kernel_tracer"]:
        pytest.skip("needs a kernel trace (a GPU): without one the calls are timed on the host only")
    run = magneton.load_run(path)
    cut = int(run["info"]["extra"]["measured_from_ns"])
    marks = sorted(_step_marks(path))
    assert len(marks) == 20
    calls = [k for k in run["kernels"] if k["start_ns"] >= cut]
    for previous, mark in zip([cut] + marks, marks):
        launched = [k for k in calls if previous <= k["start_ns"] < mark]
        assert launched and all(k["end_ns"] <= mark + 50_000 for k in launched)  # 50 us: the two clocks


@needs_extension
def test_diff_costs_the_regions_of_such_files_from_their_measured_calls(tmp_path):
    """Two files of both passes (an MLP, and the MLP with a computation it throws
    away) diff without --measured-a/-b: per-iteration figures come from the calls."""
    import json
    import subprocess
    from pathlib import Path

    binary = Path(os.environ.get("MAGNETON_BUILD", Path(__file__).resolve().parents[2] / "build")) / "magneton"
    if not binary.is_file():
        pytest.skip("magneton is not built (set MAGNETON_BUILD)")
    _, _, _, ja = models.pair("mlp")
    paths = []
    for name, fn in (("lean", models.mlp_jax), ("wasteful", _wasteful_mlp)):
        paths.append(str(tmp_path / f"{name}.mgt"))
        rec = record_jax(jax.jit(fn), *ja, path=paths[-1], measured=30)
        if not rec.summary["kernel_tracer"]:
            pytest.skip("needs a kernel trace (a GPU): without one the calls are timed on the host only")
    p = subprocess.run([str(binary), "diff", "--json", *paths], capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 1), p.stderr
    report = json.loads(p.stdout)
    for side in "ab":
        assert any(n.startswith(f"run {side}: time and energy from its measured pass (30 repetitions")
                   for n in report["notes"]), report["notes"]
        assert report["runs"][side]["measured_repeats"] == 30
        assert report["runs"][side]["per_iteration"]["repetitions"] >= 29
    assert report["runs"]["b"]["per_iteration"]["seconds"] > report["runs"]["a"]["per_iteration"]["seconds"]
    waste = [f for f in report["findings"] if f["verdict"] == "waste"]
    assert waste and waste[0]["costly"] == "b", report["findings"]


@needs_extension
def test_eager_against_jit_is_sized_by_the_programs_own_calls(tmp_path):
    """The op-level executions of a function that is not jitted leave out what
    its own calls pay each time (re-tracing value_and_grad): the dispatch
    finding compares the calls' time per step where both files hold them."""
    import json
    import subprocess
    from pathlib import Path

    binary = Path(os.environ.get("MAGNETON_BUILD", Path(__file__).resolve().parents[2] / "build")) / "magneton"
    if not binary.is_file():
        pytest.skip("magneton is not built (set MAGNETON_BUILD)")
    _, _, _, ja = models.pair("mlp")

    def step(*args):  # a training-style step: gradients by a transform, as eager programs call it
        return jax.value_and_grad(lambda *a: models.mlp_jax(*a).sum())(*args)

    paths = [str(tmp_path / "eager.mgt"), str(tmp_path / "jit.mgt")]
    for path, fn in zip(paths, (step, jax.jit(step))):
        rec = record_jax(fn, *ja, path=path, measured=20)
        if rec.summary["kernel_tracer"]:
            pytest.skip("with a kernel trace the calls are the measured pass (test_diff_costs_the_regions_...)")
    p = subprocess.run([str(binary), "diff", "--json", *paths], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    report = json.loads(p.stdout)
    top = report["findings"][0]
    assert top["evidence_class"] == "dispatch" and top["costly"] == "a", top
    params = {d["parameter"]: d for d in top["evidence"][0]["params"]}
    own = params["time as the program runs (its own calls)"]
    untraced = [report["runs"][s]["untraced"] for s in "ab"]
    assert all(u and u["steps"] == 20 for u in untraced), untraced
    assert top["a"]["seconds"] == pytest.approx(untraced[0]["seconds"]) and own["a"].endswith(("ms", "us"))
    assert top["b"]["seconds"] == pytest.approx(untraced[1]["seconds"])


@needs_extension
def test_existing_run_file_is_refused_unless_overwrite(tmp_path):
    path = tmp_path / "a.mgt"
    path.write_bytes(b"keep me")
    with pytest.raises(Exception, match="a.mgt"):
        record_jax(jnp.sin, jnp.ones(2), path=str(path))
    assert path.read_bytes() == b"keep me"
    record_jax(jnp.sin, jnp.ones(2), path=str(path), overwrite=True)
    assert path.read_bytes() != b"keep me"


def test_magneton_record_jax_is_the_recorder_imported_on_first_use():
    import magneton

    assert magneton.record_jax is record_jax


@needs_extension
def test_native_session_places_devices_and_writes_ranges_and_stats(tmp_path):
    """The writer under record_jax, driven directly: a GPU row is added once
    per ordinal; without a CUPTI tracer in the build (or no GPU) tracing is
    unavailable and says so; ranges, stats and info extra are written."""
    import magneton

    path = str(tmp_path / "s.mgt")
    gpu = {"kind": "gpu", "ordinal": 0, "name": "X", "uuid": "GPU-1", "memory_bytes": 1}
    s = native.jax_writer().Session(path, devices=[gpu, dict(gpu)], start_ns=1)
    assert list(s.device_ids) == [0, 0]
    s.push(0)
    s.pop()
    assert s.stop_tracing() == []
    rows = {"ranges": [{"id": 0, "name": "blk", "domain": "jax.named_scope", "thread": 1, "start_ns": 2,
                        "end_ns": 3, "parent": -1}],
            "stats": [{"name": "x", "severity": "info", "value": 2, "description": "d"}],
            "extra": {"framework": "jax"}, "config": {"jax.backend": "gpu"}}
    summary = s.stop(rows, 9, [])
    assert summary["kernels"] == 0
    run = magneton.load_run(path)
    assert [d["uuid"] for d in run["devices"]] == ["GPU-1"]
    assert run["info"]["extra"]["framework"] == "jax" and run["info"]["end_ns"] == 9
    names = {st["name"] for st in run["stats"]}
    assert "x" in names
    assert summary["kernel_tracer"] or "kernel_tracing_unavailable" in names
    import sqlite3  # load_run's dicts leave ranges out; the store is SQLite (docs/run-format.md)
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM ranges").fetchone()[0] == 1
    with pytest.raises(ValueError, match="already stopped"):
        s.stop({}, 10, [])


def _fresh_python(code: str, tmp_path):
    """Runs `code` in a new interpreter that has imported nothing of ours."""
    import subprocess
    import textwrap

    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "..", "python"))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


@needs_extension
def test_record_jax_in_a_program_that_never_imported_torch_loads_torch_first(tmp_path):
    # The extension links libtorch: loaded before torch, it finds libc10 only
    # through a run path, which an installed or copied module does not have.
    r = _fresh_python("""
        import sys
        import jax.numpy as jnp
        from magneton.jax_recorder import record_jax
        assert "torch" not in sys.modules
        rec = record_jax(lambda x: jnp.tanh(x @ x.T), jnp.ones((4, 4)), path="run.mgt")
        order = list(sys.modules)
        assert order.index("torch") < order.index("magneton._torch"), "the extension was loaded before torch"
        print("ops", rec.summary["ops"])
    """, tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "run.mgt").exists()


def test_record_jax_without_a_loadable_extension_names_the_cause(tmp_path):
    r = _fresh_python("""
        import sys
        sys.modules["torch"] = None  # torch cannot be imported here
        import jax.numpy as jnp
        from magneton.jax_recorder import record_jax
        try:
            record_jax(lambda x: x * 2, jnp.ones(3), path="run.mgt")
        except ImportError as e:
            print(e)
    """, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "fingerprints need the torch extension" in r.stdout
    assert "needs torch, which cannot be imported here" in r.stdout and "import of torch halted" in r.stdout


def test_a_missing_extension_is_reported_as_not_built(tmp_path):
    r = _fresh_python("""
        import sys
        sys.modules["magneton._torch"] = None  # as if the module were not built
        from magneton import recorder
        try:
            recorder.extension()
        except ImportError as e:
            print(e)
    """, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "magneton._torch is not built" in r.stdout and "pip install ." in r.stdout


def test_the_idle_hold_after_the_measured_pass_is_only_for_a_traced_gpu_with_energy():
    """record_jax holds the GPU idle after its measured pass (docs/energy.md, "Idle hold"), with
    energy on and kernels traced; never on a CPU or without energy. Its note is "FROM TO"."""
    from types import SimpleNamespace

    from magneton import jax_recorder
    traced, untraced = SimpleNamespace(kernel_tracer=True), SimpleNamespace(kernel_tracer=False)
    gpu, cpu = [{"kind": "gpu"}], []
    for session, energy, rows in ((traced, "none", gpu), (untraced, "nvml", gpu), (traced, "auto", cpu)):
        extra = {}
        jax_recorder._hold_idle(session, energy, rows, extra)
        assert extra == {}
    extra = {}
    jax_recorder._hold_idle(traced, "nvml", gpu, extra)
    held_from, held_to = map(int, extra["idle_held_ns"].split())
    assert held_to - held_from >= jax_recorder.IDLE_HOLD_SECONDS * 1e9
