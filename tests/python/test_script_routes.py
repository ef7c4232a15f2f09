"""The command-line routes on an ordinary script (set-up, a loop of steps, a
summary), end to end on the CPU with the real recorder and the real `magneton
diff` (docs/recording.md, "One command" and "Two passes"): a GELU written out
against the fused one must come out as the waste, at the script's line."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON = os.environ.get("MAGNETON_PYTHON", sys.executable)

# Both scripts' start: their options, and a GELU written out (--gelu tanh) or fused.
PRELUDE = textwrap.dedent("""
    import argparse, torch
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=12)
    p.add_argument("--gelu", default="fused")
    a = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)

    def gelu(x):
        if a.gelu == "fused":
            return torch.nn.functional.gelu(x, approximate="tanh")
        return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * torch.pow(x, 3.0))))
""")


def _line_of(text: str, mark: str) -> int:
    """The number of the first line of `text` that ends with `mark`."""
    return next(n for n, s in enumerate(text.splitlines(), 1) if s.endswith(mark))


SCRIPT = PRELUDE + textwrap.dedent("""
    data = [torch.randn(16, 64) for _ in range(4)]     # a set-up loop: one operator per iteration
    w1, w2 = torch.randn(64, 256), torch.randn(256, 64)

    total = 0.0
    with torch.no_grad():
        for i in range(a.iters):                          # the step loop
            x = gelu(data[i % 4] @ w1) @ w2
            total += float(x.sum())
    print(f"summary: {total:.3f}")
""")
LOOP_LINE = _line_of(SCRIPT, "# the step loop")


def _magneton():
    binary = Path(os.environ.get("MAGNETON_BUILD", ROOT / "build")) / "magneton"
    if not binary.is_file():
        pytest.skip("magneton is not built (set MAGNETON_BUILD)")
    return str(binary)


def _record_script(script: Path, out: Path, *options: str, args=(), path=(), cwd=None) -> subprocess.CompletedProcess:
    """`python -m magneton record -f -v -o OUT [options] SCRIPT [args]`, with `path` on PYTHONPATH too."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), *map(str, path)]))
    return subprocess.run([PYTHON, "-m", "magneton", "record", "-f", "-v", "-o", str(out), *options, str(script),
                           *args], capture_output=True, text=True, env=env, timeout=600, cwd=cwd)


def _record(tmp: Path, out: str, *options: str, gelu: str, iters: int = 12) -> subprocess.CompletedProcess:
    script = tmp / "prog.py"
    script.write_text(SCRIPT)
    return _record_script(script, tmp / out, *options, args=("--gelu", gelu, "--iters", str(iters)))


def _diff(*args: str) -> dict:
    p = subprocess.run([_magneton(), "diff", *args, "--json"], capture_output=True, text=True, timeout=300)
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)


def _check_gelu_waste(doc: dict) -> None:
    waste = [f for f in doc["findings"] if f["verdict"] == "waste"]
    assert waste, [f["label"] for f in doc["findings"]]
    top = waste[0]
    assert top["costly"] == "a" and top["evidence_class"] == "operators", top["label"]
    assert "aten::gelu" in top["label"] and "aten::tanh" in json.dumps(top["evidence"])
    assert "prog.py" in top["label"]


def test_one_command_per_side_gives_both_passes(tmp_path):
    for gelu, out in (("tanh", "a.mgt"), ("fused", "b.mgt")):
        p = _record(tmp_path, out, gelu=gelu)
        assert p.returncode == 0, p.stderr
        assert "summary:" in p.stdout  # the script's own output and exit code are untouched
        assert f"prog.py:{LOOP_LINE}" in p.stderr, p.stderr  # -v names the loop it took for the steps
    doc = _diff(str(tmp_path / "a.mgt"), str(tmp_path / "b.mgt"))
    assert any("holds both passes" in n for n in doc["notes"]), doc["notes"]
    # 12 iterations: 2 warm up, 1 is the recording pass, 9 are measured (the last one's window is open).
    assert doc["runs"]["a"]["measured_repeats"] == 9
    assert doc["runs"]["a"]["per_iteration"]["timeline"] == "host"
    _check_gelu_waste(doc)
    # Each file given again as its own measured pass changes nothing.
    a, b = str(tmp_path / "a.mgt"), str(tmp_path / "b.mgt")
    again = _diff(a, b, "--measured-a", a, "--measured-b", b)
    assert again["runs"]["a"]["measured_repeats"] == 9
    _check_gelu_waste(again)


def test_warmup_and_steps_choose_which_iterations_are_recorded(tmp_path):
    # 12 iterations: 5 warm up, the 6th is the recording pass, the next 3 are measured, the rest run unwatched.
    for gelu, out in (("tanh", "a.mgt"), ("fused", "b.mgt")):
        p = _record(tmp_path, out, "--warmup", "5", "--steps", "3", gelu=gelu)
        assert p.returncode == 0, p.stderr
        # Said once the loop is found, while the script runs on.
        assert (f"step loop: the loop at prog.py:{LOOP_LINE} (<module>); after 3 more warm-up iterations, one is "
                "recorded with values, the next 3 measured") in p.stderr, p.stderr
    doc = _diff(str(tmp_path / "a.mgt"), str(tmp_path / "b.mgt"))
    assert doc["runs"]["a"]["measured_repeats"] == 3
    _check_gelu_waste(doc)
    p = _record(tmp_path, "c.mgt", "--warmup", "1", gelu="fused")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--warmup 1" in p.stderr, p.stderr
    p = _record(tmp_path, "c.mgt", "--traced-steps", "0", gelu="fused")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--traced-steps 0" in p.stderr, p.stderr
    p = _record(tmp_path, "c.mgt", "--idle-hold", "-1", gelu="fused")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--idle-hold -1" in p.stderr, p.stderr


def test_two_pass_route_finds_the_step_between_set_up_and_summary(tmp_path):
    for gelu, side in (("tanh", "a"), ("fused", "b")):
        assert _record(tmp_path, f"{side}.mgt", "--pass", "recording", gelu=gelu, iters=1).returncode == 0
        assert _record(tmp_path, f"{side}-m.mgt", "--pass", "measured", gelu=gelu, iters=15).returncode == 0
    doc = _diff(str(tmp_path / "a.mgt"), str(tmp_path / "b.mgt"), "--measured-a", str(tmp_path / "a-m.mgt"),
                "--measured-b", str(tmp_path / "b-m.mgt"))
    assert doc["runs"]["a"]["measured_repeats"] >= 13  # the set-up and the summary are not steps
    _check_gelu_waste(doc)
    # A measured run recorded without --pass holds both passes (the default): its measured part is used.
    assert _record(tmp_path, "a-both.mgt", gelu="tanh", iters=15).returncode == 0
    doc = _diff(str(tmp_path / "a.mgt"), str(tmp_path / "b.mgt"), "--measured-a", str(tmp_path / "a-both.mgt"),
                "--measured-b", str(tmp_path / "b-m.mgt"))
    assert any("a-both.mgt holds both passes" in n for n in doc["notes"]), doc["notes"]
    _check_gelu_waste(doc)


TRAIN_SCRIPT = PRELUDE + textwrap.dedent("""
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.Linear(256, 64))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)   # creates its state in the first step
    x, y = torch.randn(32, 64), torch.randn(32, 64)

    for i in range(a.iters):
        loss = torch.nn.functional.mse_loss(model[1](gelu(model[0](x))), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"summary: {loss.item():.4f}")
""")


def test_two_pass_route_costs_the_iteration_where_repeated_values_are_matched(tmp_path):
    # Transformers' GPT-2 forwarding one batch every iteration: a recording of 3 holds the same values
    # 3 times, matched where they first appear, and the measured costs must land there (they once went
    # to the last iteration: every matched region at 0%, the attention finding missing).
    pytest.importorskip("transformers")
    script = ROOT / "scripts" / "gpu" / "gpt2_script.py"
    for attn, side in (("eager", "a"), ("sdpa", "b")):
        for out, options, iters in ((f"{side}.mgt", ("--pass", "recording"), 3), (f"{side}-m.mgt", ("--pass", "measured"), 6)):
            p = _record_script(script, tmp_path / out, *options, args=("--attn", attn, "--tiny", "--iters", str(iters)))
            assert p.returncode == 0, p.stderr
    doc = _diff(*(str(tmp_path / f) for f in ("a.mgt", "b.mgt")), "--measured-a", str(tmp_path / "a-m.mgt"),
                "--measured-b", str(tmp_path / "b-m.mgt"))
    assert any("one of 3 that the recording repeats" in n for n in doc["notes"]), doc["notes"]
    assert min(doc["summary"]["matched_share"].values()) > 0.5, doc["summary"]
    assert any("aten::bmm" in f["label"] and f["costly"] == "a" for f in doc["findings"]), \
        [f["label"] for f in doc["findings"]]


def test_two_pass_route_on_a_training_script_skips_the_recordings_first_iteration(tmp_path):
    # Adam's first step creates its state: recorded over 3 iterations, the step is a later one.
    script = tmp_path / "train.py"
    script.write_text(TRAIN_SCRIPT)
    for gelu, side in (("tanh", "a"), ("fused", "b")):
        for out, options, iters in ((f"{side}.mgt", ("--pass", "recording"), 3), (f"{side}-m.mgt", ("--pass", "measured"), 14)):
            p = _record_script(script, tmp_path / out, *options, args=("--gelu", gelu, "--iters", str(iters)))
            assert p.returncode == 0, p.stderr
    a, b, am, bm = (str(tmp_path / f) for f in ("a.mgt", "b.mgt", "a-m.mgt", "b-m.mgt"))
    doc = _diff(a, b, "--measured-a", am, "--measured-b", bm)
    assert doc["runs"]["a"]["measured_repeats"] >= 12, doc["notes"]
    assert any("that the recording repeats" in n for n in doc["notes"]), doc["notes"]
    waste = [f for f in doc["findings"] if f["verdict"] == "waste"]
    assert waste and waste[0]["costly"] == "a" and "aten::tanh" in json.dumps(waste[0]["evidence"]), doc["findings"]
    # One side's measured pass alone is refused, naming the other side's file.
    p = subprocess.run([_magneton(), "diff", a, b, "--measured-a", am], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and f"{b}: run b was recorded" in p.stderr, p.stderr


ROWS_SCRIPT = PRELUDE + textwrap.dedent("""
    batches = torch.randn(a.iters, 8, 64)
    w1, w2 = torch.randn(64, 256), torch.randn(256, 64)
    top = []
    with torch.no_grad():
        for i in range(a.iters):                          # the batches
            if a.gelu == "rows":
                out = torch.empty(8, 64)
                for r in range(8):                        # one row at a time
                    out[r] = gelu(batches[i, r:r + 1] @ w1)[0] @ w2
            else:
                out = gelu(batches[i] @ w1) @ w2
            top.append(int(out.sum(1).argmax()))
    print("summary:", top[:3])
""")


def test_steps_of_different_loops_are_named_when_nothing_matches(tmp_path):
    """Rows scored one at a time against the batch at once: the one-command
    route takes the row loop for a's step and the batch loop for b's, so no
    value is in common; the diff compares nothing (exit 3) and names both loops."""
    script = tmp_path / "score.py"
    script.write_text(ROWS_SCRIPT)
    batch_line = _line_of(ROWS_SCRIPT, "# the batches")
    row_line = _line_of(ROWS_SCRIPT, "# one row at a time")
    for side, how in (("a", "rows"), ("b", "batch")):
        p = _record_script(script, tmp_path / f"{side}.mgt", args=("--gelu", how, "--iters", "6"))
        assert p.returncode == 0, p.stderr
    magneton = pytest.importorskip("magneton")
    extra = magneton.load_run(str(tmp_path / "a.mgt"))["info"]["extra"]
    assert extra["step_loop"] == f"the loop at score.py:{row_line} (<module>)", extra
    p = subprocess.run([_magneton(), "diff", str(tmp_path / "a.mgt"), str(tmp_path / "b.mgt"), "--color", "never"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "nothing compared" in p.stdout
    assert f"a the loop at score.py:{row_line}" in p.stdout and f"b the loop at score.py:{batch_line}" in p.stdout


CAST_SCRIPT = PRELUDE + textwrap.dedent("""
    data = [torch.randn(512, 256) for _ in range(4)]  # large enough that float64 costs more than load noise
    w = torch.randn(256, 256) / 16
    total = 0.0
    with torch.no_grad():
        for i in range(a.iters):
            h = data[i % 4] @ w
            if a.gelu == "f64":
                h = h.to(torch.float64)                   # the cast
            h = gelu(h) * 0.5 + h
            h = gelu(h) * 0.5 + h
            total += float(h.sum())
    print(f"summary: {total:.3f}")
""")


def test_a_dtype_finding_names_the_cast_it_comes_from(tmp_path):
    script = tmp_path / "cast.py"
    script.write_text(CAST_SCRIPT)
    cast_line = _line_of(CAST_SCRIPT, "# the cast")
    for side, how in (("a", "f64"), ("b", "tanh")):
        p = _record_script(script, tmp_path / f"{side}.mgt", args=("--gelu", how, "--iters", "12"))
        assert p.returncode == 0, p.stderr
    doc = _diff(str(tmp_path / "a.mgt"), str(tmp_path / "b.mgt"))
    dtype = [f for f in doc["findings"] if f["verdict"] == "waste" and f["evidence_class"] == "launch"]
    assert dtype, [(f["verdict"], f["label"]) for f in doc["findings"]]
    # The places that compute in float64 are one finding, and it names the cast that made them so.
    assert "inputs in float64 on a, float32 on b" in dtype[0]["label"], dtype[0]["label"]
    summary = dtype[0]["evidence"][0]["summary"]
    assert f"the float64 values come from aten::to at cast.py:{cast_line}" in summary, summary


def test_a_script_without_a_loop_says_so_in_one_line(tmp_path):
    script = tmp_path / "once.py"
    script.write_text("import torch\nprint(torch.ones(3).sum().item())\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.run([PYTHON, "-m", "magneton", "record", "-o", str(tmp_path / "once.mgt"), str(script)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0  # the script's own status
    assert p.stdout.strip() == "3.0"
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("magneton")]
    assert len(lines) == 1 and "no loop" in lines[0] and "once.py" in lines[0], p.stderr
    # A script that fails before its loop: its traceback and status, and one line that says so
    # (not advice on recording a loop it never reached).
    script.write_text("import torch\nx = torch.ones(3)\nraise SystemExit(4)\nfor i in range(9):\n    x = x * 2\n")
    p = subprocess.run([PYTHON, "-m", "magneton", "record", "-o", str(tmp_path / "once.mgt"), "-f", str(script)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 4
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("magneton")]
    assert len(lines) == 1 and "exited with status 4 before any loop" in lines[0], p.stderr


MODEL_SCRIPT = textwrap.dedent("""
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)

    class Block(torch.nn.Module):
        def __init__(self, d):
            super().__init__()
            self.ln, self.fc = torch.nn.LayerNorm(d), torch.nn.Linear(d, d)
        def forward(self, x):
            return x + self.fc(torch.relu(self.ln(x)))

    class Net(torch.nn.Module):
        def __init__(self, d, n):
            super().__init__()
            self.blocks = torch.nn.ModuleList(Block(d) for _ in range(n))   # builds: 10+ operators each
            self.head = torch.nn.Linear(d, 4)
        def forward(self, x):
            for b in self.blocks:                                            # runs: 10+ operators each
                x = b(x)
            return self.head(x)

    net = Net(16, 4)
    spare = [Block(16) for _ in range(4)]                                    # set-up: builds modules
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    for step in range(6):                                                    # the step loop
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
        opt.zero_grad()
""")


def test_the_step_loop_is_the_scripts_not_a_loop_inside_its_model(tmp_path):
    # A model written in the script has loops of its own that run as many
    # operators per iteration (building its blocks, running them), and so does
    # a loop that builds modules at the top level; the step is the loop that
    # drives the model.
    script = tmp_path / "train.py"
    script.write_text(MODEL_SCRIPT)
    line = _line_of(MODEL_SCRIPT, "# the step loop")
    p = _record_script(script, tmp_path / "t.mgt")
    assert p.returncode == 0, p.stderr
    assert f"train.py:{line} (<module>), 6 iterations" in p.stderr, p.stderr


def test_a_loop_that_builds_the_data_is_not_the_step(tmp_path):
    # Synthetic batches made in a loop before an evaluation loop (tried as a new
    # user would: a BERT classifier evaluated over 40 batches): each iteration
    # makes three tensors, ten operator calls, as many as a small step runs,
    # but none computes; the step is the evaluation loop.
    script = tmp_path / "evaluate.py"
    source = textwrap.dedent("""
        import torch
        torch.manual_seed(0)
        torch.set_num_threads(1)
        model = torch.nn.Sequential(torch.nn.Embedding(100, 16), torch.nn.Flatten(), torch.nn.Linear(64, 3))
        batches = []
        for _ in range(20):                                                  # builds the data
            ids = torch.randint(0, 100, (8, 4))
            batches.append((ids, torch.ones_like(ids), torch.randint(0, 3, (8,)).to(torch.int64)))

        def evaluate(model, batches):
            correct = 0
            with torch.inference_mode():
                for ids, mask, labels in batches:                            # the step loop
                    logits = model(ids * mask)
                    correct += (logits.softmax(-1).argmax(-1) == labels).sum()
            return int(correct)

        print("correct", evaluate(model, batches))
    """)
    script.write_text(source)
    line = _line_of(source, "# the step loop")
    p = _record_script(script, tmp_path / "e.mgt")
    assert p.returncode == 0 and "correct" in p.stdout, p.stderr
    assert f"evaluate.py:{line} (evaluate), 20 iterations" in p.stderr, p.stderr


def test_a_comprehension_over_each_batchs_rows_is_part_of_the_batch_loops_step(tmp_path):
    # Inference one row at a time (tried as a new user would: a classifier over
    # 100 batches, each batch's rows run through the model in a comprehension,
    # then joined): the comprehension runs more than NESTED_STEPS iterations in
    # the batch loop's first iteration, which then goes on with its result; the
    # step is the batch loop, as on the side that runs each batch at once.
    script = tmp_path / "classify.py"
    source = textwrap.dedent("""
        import torch
        torch.manual_seed(0)
        torch.set_num_threads(1)
        model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 4)).eval()
        data = torch.randn(12, 16, 32)
        total = torch.zeros(4)
        with torch.no_grad():
            for x in data:                                                   # the step loop
                logits = torch.cat([model(row.unsqueeze(0)) for row in x])   # one row at a time
                total += logits.softmax(-1).sum(0)
        print("total", float(total.sum()))
    """)
    script.write_text(source)
    line = _line_of(source, "# the step loop")
    p = _record_script(script, tmp_path / "c.mgt")
    assert p.returncode == 0 and "total" in p.stdout, p.stderr
    assert f"classify.py:{line} (<module>), 12 iterations" in p.stderr, p.stderr


def test_a_long_set_up_does_not_delay_the_recorded_step(tmp_path):
    # A set-up that runs operators for seconds outside any loop of the script's
    # (seen on a GPU: building GPT-2 and moving it there): the stack sampler,
    # looking for a library's step loop, took a loop of the code that runs the
    # script (runpy's) for one, and the script's own loop became a nested one,
    # taken at its 8th iteration. The recorded step is the third iteration, as
    # after a short set-up: both sides of a decoding pair record the same position.
    script = tmp_path / "long_setup.py"
    source = textwrap.dedent("""
        import torch
        torch.manual_seed(0)
        torch.set_num_threads(1)
        w = torch.randn(256, 256)
        checks = sorted(range(8000), key=lambda i: float((torch.randn(128, 256) @ w).sum()))  # seconds of set-up
        model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
        data = torch.randn(10, 8, 32)
        with torch.no_grad():
            for step in range(10):                                       # the step loop
                y = model(data[step] * (step + 1))
        print("done", float(y.sum()))
    """)
    script.write_text(source)
    out = tmp_path / "l.mgt"
    p = _record_script(script, out)
    assert p.returncode == 0 and "done" in p.stdout, p.stderr
    magneton = pytest.importorskip("magneton")
    run = magneton.load_run(str(out))
    start = int(run["info"]["extra"]["measured_from_ns"])
    picked = [op["args"] for op in run["ops"] if op["start_ns"] < start and op["name"] == "aten::select"]
    assert picked == ["dim=0, index=2"], picked


def test_a_training_loop_in_a_method_of_the_users_module_is_the_step_loop(tmp_path):
    # Called directly (model.fit()), not through Module.__call__: the loop drives the model.
    script = tmp_path / "fit.py"
    script.write_text(textwrap.dedent("""
        import torch
        torch.manual_seed(0)
        torch.set_num_threads(1)

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.net = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
            def forward(self, x):
                return self.net(x)
            def fit(self, steps):
                opt = torch.optim.SGD(self.parameters(), lr=0.1)
                x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
                for _ in range(steps):                                       # the step loop
                    torch.nn.functional.cross_entropy(self(x), y).backward()
                    opt.step()
                    opt.zero_grad()

        Model().fit(6)
    """))
    line = _line_of(script.read_text(), "# the step loop")
    p = _record_script(script, tmp_path / "f.mgt")
    assert p.returncode == 0, p.stderr
    assert f"fit.py:{line} (fit), 6 iterations" in p.stderr, p.stderr


def test_the_step_loop_may_live_in_a_module_of_the_users_project(tmp_path):
    # train.py calls engine.train_one_epoch(), whose loop over batches is the
    # step (the usual shape of a project: a driver and its engine module); an
    # installed library's loops (torch's optimizer over its parameters) are not.
    (tmp_path / "engine.py").write_text(textwrap.dedent("""
        import torch

        def train_one_epoch(model, opt, batches):
            for x, y in batches:                                             # the step loop
                torch.nn.functional.cross_entropy(model(x), y).backward()
                opt.step()
                opt.zero_grad()
    """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import torch
        from engine import train_one_epoch
        torch.manual_seed(0)
        torch.set_num_threads(1)
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        batches = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(5)]
        for epoch in range(3):                                               # the epoch loop
            train_one_epoch(model, opt, batches)
        print("done")
    """))

    def line_of(name, mark):
        return _line_of((tmp_path / name).read_text(), mark)

    def record(*options):
        return _record_script(tmp_path / "train.py", tmp_path / "e.mgt", *options, cwd=tmp_path)

    p = record()
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "done"
    assert f"engine.py:{line_of('engine.py', '# the step loop')} (train_one_epoch), 15 iterations" in p.stderr, p.stderr
    # --step-line FILE:N takes the outer loop instead (the same line number in another file is not it).
    epochs = line_of("train.py", "# the epoch loop")
    p = record("--step-line", f"train.py:{epochs}")
    assert f"train.py:{epochs} (<module>), 3 iterations" in p.stderr, p.stderr
    p = record("--step-line", "train.py:x")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--step-line train.py:x" in p.stderr, p.stderr


def test_a_step_loop_inside_an_installed_library_is_taken_when_named_or_found_by_sampling(tmp_path):
    # A script whose loop is a library's (a Trainer's train()): not watched by
    # default, so a short one leaves no step; --step-line FILE:N names it.
    lib = tmp_path / "site-packages"
    lib.mkdir()
    (lib / "looplib.py").write_text(textwrap.dedent("""
        import torch

        def fit(model, x, y, steps):
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(steps):                                           # the library's loop
                torch.nn.functional.cross_entropy(model(x), y).backward()
                opt.step()
                opt.zero_grad()
    """))
    (tmp_path / "run.py").write_text(textwrap.dedent("""
        import torch, looplib
        torch.manual_seed(0)
        torch.set_num_threads(1)
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
        looplib.fit(model, torch.randn(8, 16), torch.randint(0, 4, (8,)), 6)
    """))
    line = _line_of((lib / "looplib.py").read_text(), "loop")

    def record(*options):
        return _record_script(tmp_path / "run.py", tmp_path / "l.mgt", *options, path=[lib])

    p = record()
    assert p.returncode == 0 and "no loop" in p.stderr, p.stderr
    p = record("--step-line", f"looplib.py:{line}")
    assert p.returncode == 0, p.stderr
    assert f"looplib.py:{line} (fit), 6 iterations" in p.stderr, p.stderr
    # Run for seconds, the library's loop is found by sampling, and named.
    (tmp_path / "run.py").write_text((tmp_path / "run.py").read_text().replace(", 6)", ", 6000)"))
    p = record("--steps", "20")
    assert p.returncode == 0 and f"looplib.py:{line} (fit)" in p.stderr and "found by sampling" in p.stderr, p.stderr
    # Called from a loop of the script's, the script's loop drives the steps: nothing is sampled.
    (tmp_path / "run.py").write_text((tmp_path / "run.py").read_text().replace(
        "looplib.fit(", "for epoch in range(3):                                               # epochs\n    looplib.fit(")
        .replace(", 6000)", ", 1000)"))
    p = record("--steps", "20")
    epochs = _line_of((tmp_path / "run.py").read_text(), "# epochs")
    assert p.returncode == 0 and f"run.py:{epochs} (<module>)" in p.stderr, p.stderr
    assert "found by sampling" not in p.stderr, p.stderr


def test_a_loop_over_layers_in_a_plain_function_is_not_the_step(tmp_path):
    # A forward written as a plain function with a loop over its layers, called
    # once per step (after one warm-up call outside the loop): a loop over
    # modules is part of the model, so the script's loop is the step.
    script = tmp_path / "mlp.py"
    source = textwrap.dedent("""
        import torch
        torch.manual_seed(0)
        torch.set_num_threads(1)
        layers = [torch.nn.Linear(16, 16) for _ in range(4)]
        weights = [layer.weight for layer in layers]
        params = [p for layer in layers for p in layer.parameters()]
        opt = torch.optim.SGD(params, lr=0.1)
        x = torch.randn(8, 16)

        def forward(h):
            for layer in layers:                                             # the layer loop
                h = torch.nn.functional.gelu(layer(h)) + h
            return h

        def step():
            forward(x).square().mean().backward()
            opt.step()
            opt.zero_grad()

        step()                                                               # a warm-up step
        for i in range(8):                                                   # the step loop
            step()
    """)
    script.write_text(source)
    line = _line_of(source, "# the step loop")
    p = _record_script(script, tmp_path / "m.mgt")
    assert p.returncode == 0 and "--step-line" not in p.stderr, p.stderr
    assert f"mlp.py:{line} (<module>), 8 iterations" in p.stderr, p.stderr

    # The same loop over the layers' weight tensors (no modules): it is nested
    # in the step loop, whose iteration runs operators after it (the loss, the
    # backward, the optimizer), so it is part of the step.
    by_weights = source.replace("for layer in layers:", "for w in weights:").replace("gelu(layer(h))",
                                                                                      "gelu(h @ w.t())")
    script.write_text(by_weights)
    p = _record_script(script, tmp_path / "m.mgt")
    assert p.returncode == 0 and "--step-line" not in p.stderr, p.stderr
    assert f"mlp.py:{line} (<module>), 8 iterations" in p.stderr, p.stderr

    # Twelve layers: the inner loop runs enough iterations in one pass to be
    # taken before the outer one ends; the command says it ran many
    # iterations per call of its function, once per step, and how to name the step.
    script.write_text(by_weights.replace("range(4)", "range(12)").replace("range(8)", "range(24)"))
    p = _record_script(script, tmp_path / "m.mgt")
    assert p.returncode == 0, p.stderr
    hint = [ln for ln in p.stderr.splitlines() if "--step-line" in ln]
    assert len(hint) == 1 and "(forward)" in hint[0] and "12 iterations in each of 24 calls" in hint[0], \
        p.stderr
    p = _record_script(script, tmp_path / "m.mgt", "--step-line", str(line))
    assert p.returncode == 0 and "--step-line" not in p.stderr, p.stderr
    assert f"mlp.py:{line} (<module>), 24 iterations" in p.stderr, p.stderr


def test_a_first_loop_that_ends_long_before_the_script_is_named_with_the_step_line_hint(tmp_path):
    # An evaluation before training qualifies first and is taken; the training
    # loop after it runs on for seconds (a data loader's wait per step here),
    # so the command says the step loop ended long before the script did.
    script = tmp_path / "evalfirst.py"
    source = textwrap.dedent("""
        import time
        import torch
        torch.manual_seed(0)
        torch.set_num_threads(1)
        model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 32))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        x = torch.randn(16, 32)

        def evaluate():
            with torch.no_grad():
                for _ in range(4):                                           # an evaluation
                    model(x).square().mean()

        def main():
            evaluate()
            for step in range(300):                                          # the training loop
                time.sleep(0.01)
                model(x).square().mean().backward()
                opt.step()
                opt.zero_grad()

        main()
    """)
    script.write_text(source)
    p = _record_script(script, tmp_path / "e.mgt")
    assert p.returncode == 0, p.stderr
    hint = [ln for ln in p.stderr.splitlines() if "--step-line" in ln]
    where = f"evalfirst.py:{_line_of(source, '# an evaluation')} (evaluate)"
    assert len(hint) == 1 and where in hint[0] and "before the script did" in hint[0], p.stderr
    training = _line_of(source, "# the training loop")
    p = _record_script(script, tmp_path / "e.mgt", "--step-line", str(training))
    assert p.returncode == 0 and "--step-line" not in p.stderr, p.stderr
    assert f"evalfirst.py:{training} (main), 300 iterations" in p.stderr, p.stderr


def test_micro_batches_accumulated_before_one_optimizer_step_are_part_of_the_step(tmp_path):
    # Gradient accumulation: the loop over micro-batches qualifies first, but
    # the outer iteration runs the optimizer after it, so the outer loop is
    # the step (a micro-batch step would leave the optimizer out of every
    # comparison). In a function called from the script, as scripts are written.
    script = tmp_path / "accum.py"
    source = textwrap.dedent("""
        import torch

        def main():
            torch.manual_seed(0)
            torch.set_num_threads(1)
            model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 16))
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
            data = torch.randn(40, 8, 16)
            for step in range(10):                                           # the step loop
                opt.zero_grad()
                for micro in range(4):                                       # the micro-batches
                    x = data[step * 4 + micro]
                    ((model(x) - x).square().mean() / 4).backward()
                opt.step()

        if __name__ == "__main__":
            main()
    """)
    script.write_text(source)
    line = _line_of(source, "# the step loop")
    p = _record_script(script, tmp_path / "g.mgt")
    assert p.returncode == 0 and "--step-line" not in p.stderr, p.stderr
    assert f"accum.py:{line} (main), 10 iterations" in p.stderr, p.stderr
    # The optimizer stepped in the last micro-batch's iteration, as Transformers'
    # Trainer does: only some iterations step it, so the outer loop is still the step.
    last = source.replace("        opt.step()\n", "").replace(
        ").backward()\n", ").backward()\n            if micro == 3:\n                opt.step()\n")
    assert last.count("opt.step()") == 1 and "if micro == 3" in last
    script.write_text(last)
    p = _record_script(script, tmp_path / "g.mgt")
    assert p.returncode == 0 and f"accum.py:{line} (main)" in p.stderr, p.stderr
    # Many micro-batches (nanoGPT accumulates 40) run more iterations than a
    # nested loop needs to be taken: one whose body calls backward() with no
    # optimizer step yet waits for the outer iteration's end all the same.
    many = source.replace("range(10)", "range(3)").replace("range(4)", "range(12)").replace(
        "data[step * 4 + micro]", "data[micro]").replace("/ 4)", "/ 12)")
    assert "range(12)" in many and "data[micro]" in many
    script.write_text(many)
    p = _record_script(script, tmp_path / "g.mgt")
    assert p.returncode == 0 and f"accum.py:{line} (main), 3 iterations" in p.stderr, p.stderr
    # A loop that updates its weights by hand (no optimizer: a tutorial's
    # `w -= lr * w.grad`) in one long epoch is taken all the same, once it has
    # run more iterations than gradients are accumulated over.
    manual = textwrap.dedent("""
        import torch

        def main():
            torch.manual_seed(0)
            torch.set_num_threads(1)
            w = torch.randn(16, 16, requires_grad=True)
            data = torch.randn(100, 8, 16)
            for epoch in range(1):
                for x in data:                                               # the batches
                    ((x @ w).tanh() - x).square().mean().backward()
                    with torch.no_grad():
                        w -= 0.01 * w.grad
                        w.grad.zero_()
                print("epoch", epoch)

        main()
    """)
    script.write_text(manual)
    p = _record_script(script, tmp_path / "g.mgt")
    assert p.returncode == 0 and f"accum.py:{_line_of(manual, '# the batches')} (main)" in p.stderr, p.stderr
    # Without the optimizer after it, the inner loop is the step again (an
    # epoch of a few batches is no step).
    script.write_text(source.replace("opt.step()", "pass"))
    p = _record_script(script, tmp_path / "g.mgt")
    micro = _line_of(source, "# the micro-batches")
    assert p.returncode == 0 and f"accum.py:{micro} (main)" in p.stderr, p.stderr


def test_an_evaluation_called_from_the_training_loop_is_not_the_step(tmp_path):
    # nanoGPT's shape: the training loop calls an evaluation every few
    # iterations, the first included, whose loop of forward passes with
    # gradients off qualifies before the training loop has run twice. A loop
    # without gradients inside one whose body calls backward() is passed over.
    script = tmp_path / "nano.py"
    source = textwrap.dedent("""
        import torch
        torch.manual_seed(0)
        torch.set_num_threads(1)
        model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.GELU(), torch.nn.Linear(64, 64),
                                    torch.nn.GELU(), torch.nn.Linear(64, 16))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        data = torch.randn(32, 8, 16)

        @torch.no_grad()
        def estimate_loss():
            model.eval()
            out = {}
            for split in ("train", "val"):
                losses = torch.zeros(12)
                for k in range(12):                                          # the evaluation
                    x = data[k]
                    losses[k] = (model(x) - x).square().mean()
                out[split] = losses.mean()
            model.train()
            return out

        it = 0
        while True:
            if it % 20 == 0:                                                 # the training loop
                print(it, estimate_loss())
            x = data[it % 32]
            loss = (model(x) - x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            it += 1
            if it == 50:
                break
    """)
    script.write_text(source)
    p = _record_script(script, tmp_path / "n.mgt")
    assert p.returncode == 0 and "--step-line" not in p.stderr, p.stderr
    assert f"nano.py:{_line_of(source, '# the training loop')} (<module>)" in p.stderr, p.stderr
    # The same with the training step in a function of its own (backward() in the callee).
    callee = source.replace("\nit = 0\n", "\ndef train_step(x):\n"
                            "    (model(x) - x).square().mean().backward()\n\nit = 0\n")
    callee = callee.replace("    loss = (model(x) - x).square().mean()\n    loss.backward()\n", "    train_step(x)\n")
    assert "train_step(x)\n" in callee and "loss.backward()" not in callee
    script.write_text(callee)
    p = _record_script(script, tmp_path / "n.mgt")
    assert p.returncode == 0 and f"nano.py:{_line_of(callee, '# the training loop')} (<module>)" in p.stderr, \
        p.stderr
    # And in a method the loop calls on its object.
    method = callee.replace("def train_step(x):", "class Steps:\n    def train_step(self, x):").replace(
        "    (model(x) - x).square().mean().backward()", "        (model(x) - x).square().mean().backward()")
    method = method.replace("\nit = 0\n", "\ndef run(steps):\n    it = 0\n").replace(
        "    train_step(x)\n", "    steps.train_step(x)\n")
    body = method[method.index("def run(steps):\n    it = 0\n") + len("def run(steps):\n    it = 0\n"):]
    method = method.replace(body, textwrap.indent(body, "    ") + "\nrun(Steps())\n")
    script.write_text(method)
    p = _record_script(script, tmp_path / "n.mgt")
    assert p.returncode == 0 and f"nano.py:{_line_of(method, '# the training loop')} (run)" in p.stderr, \
        p.stderr + method
    # The same evaluation in a script that trains nothing is its step.
    script.write_text(source.replace("loss.backward()", "pass"))
    p = _record_script(script, tmp_path / "n.mgt")
    assert p.returncode == 0 and f"nano.py:{_line_of(source, '# the evaluation')} (estimate_loss)" in p.stderr, \
        p.stderr


def test_a_trainers_loop_is_found_where_the_script_has_none(tmp_path):
    # Transformers' Trainer: the script calls train() outside any loop of its
    # own, and the steps loop inside the installed library. The loops that
    # enclose the running code in most stack samples are watched from then on.
    pytest.importorskip("accelerate")
    script = tmp_path / "hf_trainer.py"
    script.write_text(textwrap.dedent("""
        import sys, torch
        from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

        torch.manual_seed(0)
        torch.set_num_threads(1)
        model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=256, n_positions=64))
        data = [{"input_ids": ids, "labels": ids} for ids in torch.randint(0, 256, (64, 32))]
        args = TrainingArguments(output_dir=sys.argv[1], max_steps=150, per_device_train_batch_size=4,
                                 logging_steps=10**6, save_strategy="no", report_to=[], use_cpu=True,
                                 disable_tqdm=True)
        Trainer(model=model, args=args, train_dataset=data).train()
    """))
    p = _record_script(script, tmp_path / "t.mgt", args=(str(tmp_path / "out"),))
    assert p.returncode == 0 and "no loop" not in p.stderr, p.stderr
    assert "trainer.py:" in p.stderr and "(_run_epoch)" in p.stderr, p.stderr
    # Found by sampling, its recorded iteration depends on timing: the command
    # names the loop for recording the same iteration in both runs.
    hint = [ln for ln in p.stderr.splitlines() if "found by sampling" in ln and "--step-line" in ln]
    assert len(hint) == 1, p.stderr
    line = hint[0].rpartition("--step-line ")[2].split()[0]
    assert line.startswith("transformers/trainer.py:"), hint
    magneton = pytest.importorskip("magneton")
    assert magneton.load_run(str(tmp_path / "t.mgt"))["info"]["extra"].get("step_loop_sampled") == "true"
    p = _record_script(script, tmp_path / "t.mgt", "--step-line", line, args=(str(tmp_path / "out"),))
    assert p.returncode == 0 and "found by sampling" not in p.stderr, p.stderr
    # Watched from its first iteration: all 150 steps but the one its first jump starts counting from.
    assert f"trainer.py:{line.rpartition(':')[2]} (_run_epoch), 149 iterations" in p.stderr, p.stderr


def test_the_two_pass_route_of_a_gpu_script_costs_the_iteration_its_values_matched_in(tmp_path):
    # Recorded on an H100 (2026-12-07, scripts/gpu/kernel_diff.sh with ROUTE=twopass):
    # scripts/gpu/gpt2_script.py, eager against sdpa attention, `--pass recording ...
    # --iters 3` and `--pass measured ... --iters 150`. The three recorded forwards compute
    # the same values; matching pairs them layer by layer in the second (the first's
    # one-time set-up crosses its dataflow), so that forward is the step costed, and the
    # attention of the 12 layers is the top finding (before: the first forward, one region).
    import tarfile
    with tarfile.open(ROOT / "tests/data/diff/gpu/gpt2_attention_twopass.tar.xz") as tar:
        tar.extractall(tmp_path, filter="data")
    runs = tmp_path / "runs"
    p = subprocess.run([_magneton(), "diff", str(runs / "eager.mgt"), str(runs / "sdpa.mgt"),
                        "--measured-a", str(runs / "eager-m.mgt"), "--measured-b", str(runs / "sdpa-m.mgt"),
                        "--json"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 1, p.stderr
    report = json.loads(p.stdout)
    top = report["findings"][0]
    assert top["costly"] == "a" and top["evidence"][0]["kind"] == "operators", top["label"]
    assert "aten::_scaled_dot_product_cudnn_attention" in top["label"] and len(top["regions"]) == 12, top["label"]
    assert 15 < top["saved_pct_of_run"] < 35, top["saved_pct_of_run"]


def test_a_jax_training_script_is_recorded_by_its_jitted_step_and_diffed(tmp_path):
    # The one-command route on a JAX script (tests/data/jax_train/train.py:
    # set-up, a loop of a jitted, donating train step, a summary): the step
    # loop is found by its jitted calls, the step function's call is recorded
    # with values, the later iterations as the program makes them. The
    # script's output is its own, and the diff names the one-hot embedding.
    pytest.importorskip("jax")
    script = ROOT / "tests" / "data" / "jax_train" / "train.py"
    line, loop = _line_of(script.read_text(), "# the embedding"), _line_of(script.read_text(), "# the step loop")
    plain = subprocess.run([PYTHON, str(script), "--embed", "onehot", "--iters", "16"], capture_output=True,
                           text=True, timeout=300)
    runs = {}
    for embed in ("onehot", "take"):
        runs[embed] = tmp_path / f"{embed}.mgt"
        p = _record_script(script, runs[embed], "--energy", "none", args=("--embed", embed, "--iters", "16"))
        assert p.returncode == 0, p.stderr
        assert f"step loop: the loop at train.py:{loop}" in p.stderr and "next call of train_step" in p.stderr, p.stderr
        assert "13 measured" in p.stderr, p.stderr  # 16 iterations: 2 of warm-up, 1 recorded
        if embed == "onehot":
            assert p.stdout == plain.stdout and p.stdout.startswith("summary: loss "), (p.stdout, plain.stdout)
    doc = _diff(str(runs["onehot"]), str(runs["take"]))
    waste = [f for f in doc["findings"] if f["verdict"] == "waste"]
    assert waste and waste[0]["costly"] == "a", doc["findings"]
    assert f"train.py:{line}" in waste[0]["label"], waste[0]["label"]
    only_b = {o["name"] for o in waste[0]["evidence"][0]["only_b"]}
    assert {"jax:gather", "jax:scatter-add"} <= only_b, waste[0]["evidence"][0]["only_b"]
    assert doc["runs"]["a"]["untraced"]["steps"] == 13, doc["runs"]["a"]


def test_a_jax_script_whose_loop_calls_no_jitted_function_is_told_how_to_record_it(tmp_path):
    # An eager JAX loop calls no jitted function, so the route finds no step:
    # the command says so and how to record it, writes no file, and the
    # script's output and exit code are its own.
    pytest.importorskip("jax")
    script = tmp_path / "jx.py"
    script.write_text(textwrap.dedent("""
        import sys
        import jax.numpy as jnp
        x = jnp.ones((64, 64))
        for _ in range(20):
            x = jnp.tanh(x @ x) * 0.5
        print("sum", float(x.sum()))
        sys.exit(4)
    """))
    out = tmp_path / "j.mgt"
    p = _record_script(script, out)
    assert p.returncode == 4 and p.stdout.startswith("sum "), p.stderr
    assert f"{out}: not written: no loop calling jitted functions" in p.stderr, p.stderr
    assert "jit the step" in p.stderr and "magneton.record_jax" in p.stderr, p.stderr
    assert not out.exists()


def test_a_script_whose_jax_is_in_its_own_module_is_recorded_with_framework_jax(tmp_path):
    # The script imports no JAX itself (its model module does), so the route
    # takes it for a torch script and says to name the framework; with
    # --framework jax it records the jitted step of the module.
    pytest.importorskip("jax")
    (tmp_path / "model.py").write_text(textwrap.dedent("""
        import jax, jax.numpy as jnp
        @jax.jit
        def step(w, x):
            for _ in range(6):
                x = jnp.tanh(x @ w)
            return x
        def make():
            return jnp.eye(32) * 0.5, jnp.ones((8, 32))
    """))
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent("""
        import model
        w, x = model.make()
        for _ in range(10):
            x = model.step(w, x)
        print("done")
    """))
    out = tmp_path / "m.mgt"
    p = _record_script(script, out, path=[tmp_path])
    assert p.returncode == 0 and p.stdout == "done\n", p.stderr
    assert "--framework jax" in p.stderr, p.stderr
    p = _record_script(script, out, "--framework", "jax", path=[tmp_path])
    assert p.returncode == 0 and p.stdout == "done\n", p.stderr
    assert "next call of step" in p.stderr and out.exists(), p.stderr


def test_a_decoding_loop_over_a_growing_sequence_is_diffed_by_its_mean_step(tmp_path):
    # Greedy decoding by hand (tried as a new user would with GPT-2 on the CPU):
    # without a cache (a) each step runs the model over the whole sequence so
    # far, with one (b) over the newest position. Each iteration runs the same
    # operators on other shapes, so the measured pass repeats the recorded
    # step by names only; the diff says so and costs the regions over every
    # step, and a's cost is its operators' extra data.
    script = tmp_path / "decode.py"
    source = textwrap.dedent("""
        import sys, torch
        torch.manual_seed(0)
        torch.set_num_threads(1)
        emb, norm = torch.nn.Embedding(64, 512), torch.nn.LayerNorm(512)
        proj, head = torch.nn.Linear(512, 512), torch.nn.Linear(512, 64)
        def encode(ids):
            return torch.tanh(proj(norm(emb(ids))))
        ids = torch.randint(0, 64, (1, 16))
        with torch.no_grad():
            states = encode(ids)
            for pos in range(48):                                            # the step loop
                if sys.argv[1] == "cache" and pos > 0:
                    states = torch.cat([states, encode(ids[:, -1:])], 1)
                elif sys.argv[1] != "cache":
                    states = encode(ids)
                logits = head(states.mean(1))
                ids = torch.cat([ids, logits.argmax(-1, keepdim=True)], 1)
        print(ids[0, 16:].tolist())
    """)
    script.write_text(source)
    line = _line_of(source, "# the step loop")
    outputs = []
    for side in ("full", "cache"):
        p = _record_script(script, tmp_path / f"{side}.mgt", args=(side,))
        assert p.returncode == 0 and f"decode.py:{line} (<module>)" in p.stderr, p.stderr
        outputs.append(p.stdout)
    assert outputs[0] == outputs[1]  # the same tokens: the same workload
    doc = _diff(str(tmp_path / "full.mgt"), str(tmp_path / "cache.mgt"))
    grown = [n for n in doc["notes"] if "shapes change from one iteration to the next" in n]
    assert len(grown) == 2, doc["notes"]
    waste = [f for f in doc["findings"] if f["verdict"] == "waste"]
    assert waste and waste[0]["costly"] == "a", [(f["verdict"], f["label"]) for f in doc["findings"]]
    assert waste[0]["evidence_class"] == "launch" and "more data" in waste[0]["evidence"][0]["summary"], waste[0]


TRAINING = textwrap.dedent("""
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(8, 32), torch.randint(0, 4, (8,))) for _ in range(12)]

    def step(x, y):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
""")


def test_the_same_training_recorded_at_different_iterations_is_told_how_to_align_them(tmp_path):
    # The same training as one loop over 24 batches and as 2 epochs of 12: the
    # nested loop is taken after 8 iterations, the flat one after 2, so the two
    # recordings hold different steps (other weights, another batch) and share
    # no value. The diff names the iterations and the --warmup that aligns them.
    flat, nested = tmp_path / "flat.py", tmp_path / "nested.py"
    flat.write_text(TRAINING + "for i in range(24):\n    step(*data[i % 12])\nprint('done')\n")
    nested.write_text(TRAINING + "for epoch in range(2):\n    for x, y in data:\n        step(x, y)\nprint('done')\n")
    for script, out, options in ((flat, "flat.mgt", ()), (nested, "nested.mgt", ()), (flat, "flat8.mgt", ("--warmup", "8"))):
        p = _record_script(script, tmp_path / out, *options)
        assert p.returncode == 0, p.stderr
    doc = _diff(str(tmp_path / "flat.mgt"), str(tmp_path / "nested.mgt"))
    notes = " ".join(doc["notes"])
    assert "a recorded its loop's iteration 3 with values, b its iteration 9" in notes, notes
    assert "record a with --warmup raised by 6 (--warmup 8" in notes, notes
    aligned = _diff(str(tmp_path / "flat8.mgt"), str(tmp_path / "nested.mgt"))
    assert len(aligned["regions"]) > 3 * len(doc["regions"]), aligned["notes"]
    assert "its loop's iteration" not in " ".join(aligned["notes"])
