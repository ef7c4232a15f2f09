"""Configuration snapshot stored with a recording, and
`python -m magneton record` (argv, exit code, usage errors)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
magneton = pytest.importorskip("magneton")
pytest.importorskip("magneton._torch", reason="magneton._torch is not built (ninja magneton_torch)")

PYTHON_DIR = Path(magneton.__file__).resolve().parent.parent


def _record_config(path):
    with magneton.record(path):
        torch.ones(2) + 1
    return magneton.load_run(path)["config"]


def test_config_snapshot_reflects_flags(tmp_path, monkeypatch):
    matmul = torch.backends.cuda.matmul
    saved = (matmul.allow_tf32, torch.backends.cudnn.allow_tf32, torch.get_float32_matmul_precision())
    try:
        matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        monkeypatch.setenv("NVIDIA_TF32_OVERRIDE", "0")
        off = _record_config(tmp_path / "off.mgt")
        matmul.allow_tf32 = True
        torch.set_float32_matmul_precision("high")
        monkeypatch.setenv("NVIDIA_TF32_OVERRIDE", "1")
        on = _record_config(tmp_path / "on.mgt")
    finally:
        matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved[0], saved[1]
        torch.set_float32_matmul_precision(saved[2])
    assert off["torch.backends.cuda.matmul.allow_tf32"] == "false"
    assert on["torch.backends.cuda.matmul.allow_tf32"] == "true"
    assert off["torch.backends.cudnn.allow_tf32"] == "false"
    assert on["torch.float32_matmul_precision"] == "high"
    assert (off["env.NVIDIA_TF32_OVERRIDE"], on["env.NVIDIA_TF32_OVERRIDE"]) == ("0", "1")
    for key in ("torch.backends.cudnn.benchmark", "torch.backends.cudnn.deterministic",
                "torch.backends.cuda.sdp.flash", "torch.backends.cuda.sdp.math", "torch.default_dtype",
                "torch.autocast.cpu.enabled", "version.torch", "version.python",
                "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction"):
        assert key in on, key
    assert on["version.torch"] == torch.__version__


def test_a_whole_script_records_the_flags_it_sets(tmp_path):
    # The two-pass route records a script from its first line: the snapshot taken
    # when the recording began held the defaults, not the script's TF32 setting
    # (seen on an H100: a TF32 off/on pair named no configuration key).
    script = tmp_path / "tf32.py"
    script.write_text("import sys, torch\n"
                      "torch.backends.cuda.matmul.allow_tf32 = sys.argv[1] == 'on'\n"
                      "for _ in range(3):\n    torch.ones(4, 4) @ torch.ones(4, 4)\n")
    for flag in ("on", "off"):
        out = tmp_path / f"{flag}.mgt"
        p = _cli("record", "--pass", "recording", "-o", str(out), str(script), flag, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert magneton.load_run(out)["config"]["torch.backends.cuda.matmul.allow_tf32"] == \
            ("true" if flag == "on" else "false")


def test_autocast_and_default_dtype_are_captured(tmp_path):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with magneton.record(tmp_path / "a.mgt"):
            torch.ones(2, 2) @ torch.ones(2, 2)
    cfg = magneton.load_run(tmp_path / "a.mgt")["config"]
    assert cfg["torch.autocast.cpu.enabled"] == "true"
    assert cfg["torch.autocast.cpu.dtype"] == "bfloat16"


def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    return subprocess.run([sys.executable, "-m", "magneton", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


SCRIPT = """
import sys, torch
print("argv=" + repr(sys.argv[1:]), "name=" + __name__)
torch.ones(3).mul(2)
sys.exit(int(sys.argv[1]))
"""


def test_cli_passes_argv_and_exit_code(tmp_path):
    script = tmp_path / "work.py"
    script.write_text(SCRIPT)
    out = tmp_path / "run.mgt"
    p = _cli("record", "--pass", "measured", "-o", str(out), str(script), "3", "--flag", cwd=tmp_path)
    assert p.returncode == 3, p.stderr
    assert p.stdout.strip() == "argv=['3', '--flag'] name=__main__"
    assert p.stderr == ""  # nothing added to the program's output
    run = magneton.load_run(out)
    assert "aten::mul" in {op["name"] for op in run["ops"]}
    assert str(script) in run["info"]["command"]
    p = _cli("record", "--pass", "measured", "-f", "-o", str(out), str(script), "0", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    # A module's arguments follow it, options included, as with python -m.
    p = _cli("record", "--pass", "measured", "-f", "-o", str(out), "-m", "work", "4", "--flag", cwd=tmp_path)
    assert p.returncode == 4, p.stderr
    assert p.stdout.strip() == "argv=['4', '--flag'] name=__main__"


def test_cli_script_exception_exits_1_and_keeps_run(tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("import torch\ntorch.zeros(1).add(1)\nraise RuntimeError('boom')\n")
    p = _cli("record", "--pass", "measured", "-o", str(tmp_path / "b.mgt"), str(script), cwd=tmp_path)
    assert p.returncode == 1
    assert "RuntimeError: boom" in p.stderr
    # The traceback starts at the script, as python prints it: no frame of magneton's.
    assert "magneton/__main__.py" not in p.stderr and f'File "{script}", line 3' in p.stderr, p.stderr
    assert "aten::add" in {op["name"] for op in magneton.load_run(tmp_path / "b.mgt")["ops"]}


def test_cli_usage_errors_exit_2_with_one_line(tmp_path):
    cases = [("record", str(tmp_path / "missing.py")),
             ("record", "-o", str(tmp_path / "x.mgt"), str(tmp_path / "missing.py")),
             ("record", "-o", str(tmp_path / "x.mgt"), "--energy", "watts", "s.py")]
    for args in cases:
        p = _cli(*args, cwd=tmp_path)
        assert p.returncode == 2, args
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    existing = tmp_path / "exists.mgt"
    existing.write_text("keep me")
    script = tmp_path / "ok.py"
    script.write_text("print('ran')\n")
    p = _cli("record", "-o", str(existing), str(script), cwd=tmp_path)
    assert p.returncode == 2 and "exists" in p.stderr and p.stdout == ""
    assert existing.read_text() == "keep me"
