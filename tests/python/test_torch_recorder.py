"""The torch recorder on real models (CPU): dataflow completeness of a
12-layer GPT-2 forward, a CNN training step with backward ops, views and
in-place writes, inference mode, threads and failure behaviour."""

import threading

import pytest

torch = pytest.importorskip("torch")
magneton = pytest.importorskip("magneton")
pytest.importorskip("magneton._torch", reason="magneton._torch is not built (ninja magneton_torch)")

from magneton.dataflow import completeness  # noqa: E402


def _gpt2(n_layer):
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=n_layer, n_embd=64, n_head=4, vocab_size=512, n_positions=64,
                                  bos_token_id=0, eos_token_id=0)
    return transformers.GPT2LMHeadModel(cfg).eval()


def _producers(run):
    return {t: op["id"] for op in run["ops"] for t in op["outputs"]}


def _inputs_count(run):
    return sum(len(op["inputs"]) for op in run["ops"])


def test_gpt2_12_layer_forward_is_connected(tmp_path):
    model = _gpt2(12)
    ids = torch.randint(0, 512, (2, 32))
    path = tmp_path / "gpt2.mgt"
    with torch.no_grad():
        with magneton.record(path) as rec:
            logits = model(ids).logits
    assert logits.shape == (2, 32, 512)
    run = magneton.load_run(path)
    c = completeness(run)
    assert c["ops"] > 1000  # 12 blocks of attention + MLP
    assert c["fraction"] >= 0.99, c["disconnected"][:10]
    # Inputs linked only through their storage's last writer stay rare.
    assert rec.summary["aliased_inputs"] <= 0.01 * _inputs_count(run)
    names = {op["name"] for op in run["ops"]}
    assert {"aten::addmm", "aten::layer_norm", "aten::scaled_dot_product_attention"} <= names
    # The logits come out of the last op that wrote them: lm_head's linear.
    top = [op for op in run["ops"] if op["parent"] == -1]
    assert top[-1]["name"] == "aten::linear"
    assert run["tensors"][top[-1]["outputs"][0]]["shape"] == [2, 32, 512]
    # Schemas and call sites.
    addmm = next(op for op in run["ops"] if op["name"] == "aten::addmm")
    assert addmm["schema"] == "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta, Scalar alpha) -> Tensor"
    split = next(op for op in run["ops"] if op["name"] == "aten::split")  # an overload, a list result
    assert split["schema"] == "aten::split.Tensor(Tensor self, int split_size, int dim) -> Tensor[]"
    frames = {f["function"] for f in run["frames"]}
    assert any("GPT2" in f for f in frames), sorted(frames)[:20]
    assert all(op["stack"] >= 0 for op in top)
    assert run["info"]["extra"]["framework"] == "torch"
    assert all(op["end_ns"] >= op["start_ns"] > 0 for op in run["ops"])


def test_gpt2_under_inference_mode(tmp_path):
    model = _gpt2(2)
    ids = torch.randint(0, 512, (1, 16))
    with torch.inference_mode():
        with magneton.record(tmp_path / "inf.mgt"):
            model(ids)
    run = magneton.load_run(tmp_path / "inf.mgt")
    assert completeness(run)["fraction"] >= 0.99
    assert run["config"]["torch.inference_mode"] == "true"


def _cnn():
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(8 * 8 * 8, 10))


def test_cnn_training_step_records_backward(tmp_path):
    torch.manual_seed(0)
    net = _cnn()
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
    with magneton.record(tmp_path / "cnn.mgt", fingerprints=True) as rec:
        for _ in range(2):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
    run = magneton.load_run(tmp_path / "cnn.mgt")
    ops = run["ops"]
    assert completeness(run)["fraction"] >= 0.99
    assert rec.summary["fingerprint_failures"] == 0
    assert all(t["fingerprint"] is not None for t in run["tensors"])
    # Every autograd node links to the forward op that created it.
    nodes = [op for op in ops if op["name"].endswith("Backward0") and "::" not in op["name"]]
    assert {n["name"] for n in nodes} >= {"ConvolutionBackward0", "NativeBatchNormBackward0", "AddmmBackward0"}
    for n in nodes:
        assert n["forward_op"] >= 0, n["name"]
        fwd = ops[n["forward_op"]]
        assert fwd["sequence"] == n["sequence"] and fwd["id"] < n["id"]
    conv_bwd = next(n for n in nodes if n["name"] == "ConvolutionBackward0")
    assert ops[conv_bwd["forward_op"]]["name"] in ("aten::convolution", "aten::_convolution", "aten::conv2d")
    # Ops inside a node inherit its forward op.
    inner = [op for op in ops if op["parent"] == conv_bwd["id"]]
    assert inner and all(op["forward_op"] == conv_bwd["forward_op"] for op in inner)
    # The second step reads the weights the first step's optimizer wrote in place.
    producers = _producers(run)
    weight = net[0].weight
    conv_ops = [op for op in ops if op["name"] == "aten::conv2d"]
    assert len(conv_ops) == 2
    second_w = conv_ops[1]["inputs"][1]
    assert run["tensors"][second_w]["shape"] == list(weight.shape)
    assert second_w in producers and ops[producers[second_w]]["name"].startswith("aten::add")
    assert run["tensors"][second_w]["version"] > run["tensors"][conv_ops[0]["inputs"][1]]["version"]


def _accumulate_grad_children(names_and_parents):
    """Per AccumulateGrad node, the names of the operators it ran."""
    kids = {}
    for name, parent in names_and_parents:
        if parent is not None and parent[0] == "torch::autograd::AccumulateGrad":
            kids.setdefault(parent[1], []).append(name)
    return sorted(tuple(v) for v in kids.values())


def test_recording_a_training_step_does_not_change_what_it_runs(tmp_path):
    # Watching an operator's inputs holds a reference to them; were that done
    # for autograd nodes, AccumulateGrad would copy every gradient instead of
    # taking it. The recorder must see the operators torch.profiler sees
    # without input recording: the program as it runs.
    torch.manual_seed(0)
    net = _cnn()
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))

    def step():
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=False) as prof:
        step()
    events = prof.events()
    seen = _accumulate_grad_children(
        (e.name, (e.cpu_parent.name, e.cpu_parent.id) if e.cpu_parent is not None else None) for e in events)
    with magneton.record(tmp_path / "step.mgt", fingerprints=True, energy="none"):
        step()
    ops = magneton.load_run(tmp_path / "step.mgt")["ops"]
    recorded = _accumulate_grad_children(
        (op["name"], (ops[op["parent"]]["name"], op["parent"]) if op["parent"] >= 0 else None) for op in ops)
    params = len(list(net.parameters()))
    assert len(seen) == len(recorded) == params
    assert recorded == seen
    assert all(kids == ("aten::detach",) for kids in recorded)  # the gradient taken, not copied


def _op(run, name, nth=0):
    return [op for op in run["ops"] if op["name"] == name][nth]


def test_view_taken_before_an_inplace_write_reads_the_write(tmp_path):
    x = torch.randn(4, 4)
    with magneton.record(tmp_path / "v.mgt"):
        base = x * 1
        row = base[1]           # a view, taken before the write
        base.add_(1)            # in place: new version of the storage
        out = row * 2           # reads the written value through the old view
    assert torch.equal(out, (x[1] + 1) * 2)
    run = magneton.load_run(tmp_path / "v.mgt")
    producers = _producers(run)
    add_ = _op(run, "aten::add_")
    mul2 = _op(run, "aten::mul", 1)
    assert producers[mul2["inputs"][0]] == add_["id"]
    first = _op(run, "aten::mul", 0)
    assert producers[add_["inputs"][0]] == first["id"]


def test_inplace_under_inference_mode_is_a_new_value(tmp_path):
    with torch.inference_mode():
        with magneton.record(tmp_path / "i.mgt"):
            a = torch.zeros(8)
            a.add_(1)
            b = a * 3
    assert torch.equal(b, torch.full((8,), 3.0))
    run = magneton.load_run(tmp_path / "i.mgt")
    producers = _producers(run)
    assert producers[_op(run, "aten::mul")["inputs"][0]] == _op(run, "aten::add_")["id"]


def test_out_arguments_and_nesting(tmp_path):
    a, b = torch.randn(3, 3), torch.randn(3, 3)
    out = torch.empty(3, 3)
    with magneton.record(tmp_path / "o.mgt"):
        torch.matmul(a, b, out=out)
        c = out + 1
    run = magneton.load_run(tmp_path / "o.mgt")
    producers = _producers(run)
    add = _op(run, "aten::add")
    writer = run["ops"][producers[add["inputs"][0]]]
    assert writer["name"].startswith("aten::matmul") or writer["name"].startswith("aten::mm")
    assert writer["parent"] == -1  # the outermost op that produced it is the latest producer
    assert torch.equal(c, out + 1)


def test_a_fused_optimizer_writes_the_parameters_it_was_given(tmp_path):
    # _fused_adam_ returns nothing and writes its tensor lists in place without
    # moving their version counters: the schema's (a!) says what it wrote.
    torch.manual_seed(0)
    params = [torch.randn(16, requires_grad=True) for _ in range(3)]
    for p in params:
        p.grad = torch.randn(16)
    opt = torch.optim.Adam(params, lr=1e-2, fused=True)
    opt.step()  # the state exists before the recorded step
    with magneton.record(tmp_path / "adam.mgt", fingerprints=True):
        opt.step()
        after = [p * 1 for p in params]  # reads what the step wrote
    run = magneton.load_run(tmp_path / "adam.mgt")
    producers = _producers(run)
    adam = _op(run, "aten::_fused_adam_")
    assert len(adam["outputs"]) >= len(params)
    reads = [op for op in run["ops"] if op["name"] == "aten::mul"]
    assert len(reads) == len(params)
    assert all(producers[op["inputs"][0]] == adam["id"] for op in reads)
    assert all(torch.equal(a, p.detach()) for a, p in zip(after, params))


def test_arguments_that_are_not_tensors_and_memory_kinds(tmp_path):
    x = torch.randn(4, 8)
    with magneton.record(tmp_path / "a.mgt"):
        y = x.to(torch.float64, non_blocking=True)
        torch.nn.functional.softmax(y, dim=-1)
        x.sum(dim=0, keepdim=True)
        torch.empty(2, 3, memory_format=torch.contiguous_format)
    run = magneton.load_run(tmp_path / "a.mgt")
    # dtypes by name, booleans as Python writes them, None-valued arguments left out
    assert _op(run, "aten::_to_copy")["args"] == "dtype=float64, non_blocking=True"
    assert _op(run, "aten::copy_")["args"] == "non_blocking=True"
    assert _op(run, "aten::_softmax")["args"] == "dim=-1, half_to_float=False"
    assert _op(run, "aten::sum")["args"] == "dim=[0], keepdim=True"
    assert _op(run, "aten::empty")["args"] == "size=[2,3], device=cpu, pin_memory=False, memory_format=contiguous_format"
    # no accelerator here: every tensor is in ordinary host memory
    assert {t["memory"] for t in run["tensors"]} == {"pageable"}


def test_ops_on_other_threads_carry_their_thread(tmp_path):
    def work():
        torch.ones(5).sum()

    with magneton.record(tmp_path / "t.mgt"):
        torch.zeros(2).sum()
        t = threading.Thread(target=work)
        t.start()
        t.join()
    run = magneton.load_run(tmp_path / "t.mgt")
    threads = {op["thread"] for op in run["ops"] if op["name"] == "aten::sum"}
    assert len(threads) == 2


def test_one_recording_at_a_time(tmp_path):
    with magneton.record(tmp_path / "a.mgt"):
        with pytest.raises(ValueError, match="already active"):
            with magneton.record(tmp_path / "b.mgt"):
                pass
        torch.ones(1) + 1
    assert len(magneton.load_run(tmp_path / "a.mgt")["ops"]) >= 1
    assert not (tmp_path / "b.mgt").exists()


def test_existing_file_is_kept_unless_overwrite(tmp_path):
    path = tmp_path / "r.mgt"
    with magneton.record(path):
        torch.ones(2) * 2
    with pytest.raises(Exception, match="exists"):
        with magneton.record(path):
            pass
    with magneton.record(path, overwrite=True):
        torch.ones(2) + torch.ones(2)
    assert "aten::add" in {op["name"] for op in magneton.load_run(path)["ops"]}


def test_exception_in_block_propagates_and_run_is_written(tmp_path):
    with pytest.raises(ZeroDivisionError):
        with magneton.record(tmp_path / "e.mgt"):
            torch.ones(3).exp()
            1 / 0
    assert "aten::exp" in {op["name"] for op in magneton.load_run(tmp_path / "e.mgt")["ops"]}


def test_bad_energy_name_is_one_clear_error(tmp_path):
    with pytest.raises(ValueError, match="energy='watts'"):
        magneton.record(tmp_path / "x.mgt", energy="watts")


def test_kernels_without_correlation_link_to_innermost_op_by_time(tmp_path):
    ext = magneton.recorder.extension()
    tid, pthread = 101, 0x7F00AA
    ops = [(0, -1, tid, 100, 200),   # aten::linear
           (1, 0, tid, 110, 150),    #   aten::addmm
           (2, -1, tid, 300, 400),   # aten::relu
           (3, -1, 202, 100, 400)]   # an op on another thread
    api_calls = [(7, pthread, 120),  # inside addmm
                 (8, pthread, 160),  # inside linear, after addmm ended
                 (9, pthread, 250),  # between ops: no op
                 (10, tid, 350),     # thread named by tid directly
                 (11, pthread, 310)]
    kernels = [(0, 7, -1), (1, 8, -1), (2, 9, -1), (3, 10, -1), (4, 11, 3)]  # kernel 4: already correlated
    out = ext._link_kernels_by_time(str(tmp_path / "k.mgt"), ops, api_calls, kernels, {pthread: tid})
    assert [out[i] for i in range(5)] == [1, 0, -1, 2, 3]
    assert (out["by_time"], out["by_correlation"]) == (3, 1)
    # The recorder computed a fingerprint from 240 to 260 on some thread: the
    # launch at 250, inside no op, was its solver's (kRecorderWork); an op
    # that encloses a launch keeps it, recorder work or not.
    out = ext._link_kernels_by_time(str(tmp_path / "w.mgt"), ops, api_calls, kernels, {pthread: tid},
                                    recorder_work=[(340, 360), (240, 260)])
    assert [out[i] for i in range(5)] == [1, 0, -2, 2, 3]
    assert (out["by_time"], out["recorder_work"]) == (3, 1)


def test_energy_samplers_run_alongside_and_absent_sensors_are_stats(tmp_path):
    with magneton.record(tmp_path / "auto.mgt", energy="auto") as rec:
        x = torch.randn(200, 200)
        for _ in range(50):
            x = (x @ x).tanh()
        threading.Event().wait(0.3)  # several procfs readings
    run = magneton.load_run(tmp_path / "auto.mgt")
    assert rec.summary["energy_series"] >= 1
    assert any(s["source"] == "procfs" and s["points"] >= 2 for s in run["series"])
    assert any(op["name"] == "aten::mm" for op in run["ops"])
    with magneton.record(tmp_path / "nvml.mgt", energy="nvml"):
        torch.ones(2) + 1
    run = magneton.load_run(tmp_path / "nvml.mgt")
    if not any(d["kind"] == "gpu" for d in run["devices"]):  # no NVIDIA driver here
        assert any(s["name"].startswith("nvml") for s in run["stats"]), run["stats"]


def test_a_compiled_graph_is_one_operator_with_its_tensors(tmp_path):
    # Inductor's generated kernels are no operators: the graph's call is
    # recorded as one (compiled_calls.py), its outputs fingerprinted as the
    # eager module's are, and nothing is watched after the block.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.GELU(), torch.nn.Linear(32, 32), torch.nn.Tanh())
    compiled = torch.compile(model)
    x = torch.randn(4, 32)
    with torch.no_grad():
        for _ in range(2):
            compiled(x)
        with magneton.record(tmp_path / "c.mgt", fingerprints=True) as rec:
            y = compiled(x)
        assert torch.equal(compiled(x), y)  # outside the block: nothing recorded, same result
        with magneton.record(tmp_path / "e.mgt", fingerprints=True):
            model(x)
    assert not rec._compiled_calls._tool  # the watching ended with the block
    run = magneton.load_run(str(tmp_path / "c.mgt"))
    graphs = [op for op in run["ops"] if op["name"] == "## Call CompiledFxGraph ##"]
    assert len(graphs) == 1
    graph = graphs[0]
    assert len(graph["inputs"]) >= 5  # x and both layers' weights and biases
    assert len(graph["outputs"]) == 1
    out = run["tensors"][graph["outputs"][0]]
    assert out["shape"] == [4, 32] and out["fingerprint"]
    eager = magneton.load_run(str(tmp_path / "e.mgt"))
    last = max((op for op in eager["ops"] if op["parent"] == -1 and op["outputs"]), key=lambda op: op["id"])
    want = eager["tensors"][last["outputs"][0]]["fingerprint"]
    assert abs(out["fingerprint"]["mean"] - want["mean"]) <= 1e-5 * max(1.0, abs(want["mean"]))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU: waits are CUPTI's calls")
def test_a_synchronize_between_operators_carries_its_python_line(tmp_path):
    # A forward hook that synchronizes: the call runs between operators, so
    # only its own stack can name the hook's line (sync_sites.h).
    lin = torch.nn.Linear(64, 64).cuda()
    x = torch.randn(8, 64, device="cuda")

    def sync_hook(module, inputs, output):
        torch.cuda.synchronize()

    lin.register_forward_hook(sync_hook)
    path = tmp_path / "sync.mgt"
    with magneton.record(path, fingerprints=True):
        lin(x)
    run = magneton.load_run(path)
    syncs = [a for a in run["api_calls"] if a["name"].startswith("cudaDeviceSynchronize")]
    assert syncs, sorted({a["name"] for a in run["api_calls"]})
    line = sync_hook.__code__.co_firstlineno + 1

    def in_hook(call):
        frames = [run["frames"][i] for i in run["stacks"][call["stack"]]] if call["stack"] >= 0 else []
        return any(f["function"].endswith("sync_hook") and f["line"] == line for f in frames)

    # The recorder synchronizes too (at its start and stop), elsewhere.
    assert sum(map(in_hook, syncs)) == 1, [(c["name"], c["stack"]) for c in syncs]
