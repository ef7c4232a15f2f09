"""Recording every rank of a torch.distributed job: one run file per rank, with the
rank, world size, job and clock note in the run's metadata (docs/distributed.md)."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
magneton = pytest.importorskip("magneton")
from magneton import recorder  # noqa: E402

PYTHON_DIR = Path(magneton.__file__).resolve().parent.parent


@pytest.mark.parametrize("path,rank,world,expected", [
    ("run.mgt", 0, 2, "run.rank0.mgt"),
    ("out/run.mgt", 1, 2, "out/run.rank1.mgt"),
    ("run", 3, 4, "run.rank3"),
    ("a.b/run.x.mgt", 1, 2, "a.b/run.x.rank1.mgt"),
    ("run.mgt", 0, 1, "run.mgt"),                       # one process: the path as given
    ("run-{rank}.mgt", 1, 2, "run-1.mgt"),              # a placeholder wins over the suffix
    ("r{rank}/run.mgt", 0, 1, "r0/run.mgt"),
])
def test_rank_path(path, rank, world, expected):
    assert recorder.rank_path(path, rank, world) == expected


def _clear(monkeypatch):
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID",
              "MAGNETON_JOB_ID"):
        monkeypatch.delenv(k, raising=False)


def test_identity_from_the_launcher_environment(monkeypatch):
    _clear(monkeypatch)
    assert recorder.distributed_identity() is None
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("MASTER_ADDR", "10.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29500")
    ident = recorder.distributed_identity()
    assert ident == {"rank": 1, "world_size": 2, "local_rank": 1, "backend": "", "job": "10.0.0.1:29500"}
    monkeypatch.setenv("LOCAL_RANK", "0")
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "abc")
    assert recorder.distributed_identity()["job"] == "abc"
    assert recorder.distributed_identity()["local_rank"] == 0
    monkeypatch.setenv("MAGNETON_JOB_ID", "mine")
    assert recorder.distributed_identity()["job"] == "mine"
    monkeypatch.setenv("RANK", "2")  # not a rank of a world of 2
    assert recorder.distributed_identity() is None


def test_record_resolves_the_rank_path_without_starting(monkeypatch, tmp_path):
    _clear(monkeypatch)
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    rec = magneton.record(str(tmp_path / "run.mgt"))
    assert rec.path == str(tmp_path / "run.rank1.mgt")
    _clear(monkeypatch)
    assert magneton.record(str(tmp_path / "run.mgt")).path == str(tmp_path / "run.mgt")


JOB = textwrap.dedent("""
    import os, sys
    import torch, torch.distributed as dist, torch.multiprocessing as mp
    import magneton

    def worker(rank, out):
        os.environ.update(RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank))
        torch.set_num_threads(1)
        dist.init_process_group("gloo", rank=rank, world_size=2)
        with magneton.record(out) as rec:
            t = torch.ones(4) * (rank + 1)
            dist.all_reduce(t)
        print("wrote", rec.path, flush=True)
        dist.barrier()
        dist.destroy_process_group()

    if __name__ == "__main__":
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = sys.argv[2]
        mp.spawn(worker, args=(sys.argv[1],), nprocs=2)
""")


def test_two_gloo_ranks_write_one_file_each(tmp_path):
    pytest.importorskip("magneton._torch", reason="magneton._torch is not built (ninja magneton_torch)")
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = tmp_path / "job.py"
    script.write_text(JOB)
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MAGNETON_JOB_ID", "TORCHELASTIC_RUN_ID"):
        env.pop(k, None)
    subprocess.run([sys.executable, str(script), str(tmp_path / "run.mgt"), str(port)], env=env, check=True,
                   timeout=300, capture_output=True, text=True)
    runs = [magneton.load_run(str(tmp_path / f"run.rank{r}.mgt")) for r in (0, 1)]
    assert not (tmp_path / "run.mgt").exists()
    for r, run in enumerate(runs):
        extra = run["info"]["extra"]
        assert extra["rank"] == str(r)
        assert extra["world_size"] == "2"
        assert extra["local_rank"] == str(r)
        assert extra["dist.backend"] == "gloo"
        assert extra["dist.job"] == f"127.0.0.1:{port}"
        assert "not aligned across hosts" in extra["dist.clock"]
        assert any(op["name"] == "c10d::allreduce_" for op in run["ops"])
    # One host: both ranks' clocks are CLOCK_MONOTONIC, so their recordings overlap in time.
    a, b = (run["info"] for run in runs)
    assert a["clock_domain"] == b["clock_domain"] == "CLOCK_MONOTONIC"
    assert a["start_ns"] < b["end_ns"] and b["start_ns"] < a["end_ns"]


def test_torchrun_ranks_record_with_the_command_line(tmp_path):
    """`torchrun ... -m magneton record -o run.mgt script.py`: every rank its own file; the
    process group starts inside the recording, so the backend is read at its end."""
    pytest.importorskip("magneton._torch", reason="magneton._torch is not built (ninja magneton_torch)")
    torchrun = Path(sys.executable).with_name("torchrun")
    if not torchrun.exists():
        pytest.skip("torchrun is not next to this Python")
    script = tmp_path / "job.py"
    script.write_text("import torch, torch.distributed as dist\n"
                      "dist.init_process_group('gloo')\n"
                      "t = torch.ones(4)\n"
                      "dist.all_reduce(t)\n"
                      "dist.barrier()\n")
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR), OMP_NUM_THREADS="1")
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MAGNETON_JOB_ID", "TORCHELASTIC_RUN_ID"):
        env.pop(k, None)
    subprocess.run([str(torchrun), "--standalone", "--nproc-per-node", "2", "-m", "magneton", "record", "-o",
                    str(tmp_path / "run.mgt"), str(script)], env=env, check=True, timeout=300,
                   capture_output=True, text=True)
    extras = [magneton.load_run(str(tmp_path / f"run.rank{r}.mgt"))["info"]["extra"] for r in (0, 1)]
    assert [e["rank"] for e in extras] == ["0", "1"]
    assert extras[0]["dist.job"] == extras[1]["dist.job"] != ""  # torchrun's run id
    assert all(e["dist.backend"] == "gloo" for e in extras)
