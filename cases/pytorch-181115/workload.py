"""pytorch-181115: what both sides share. A 2-rank DistributedDataParallel training
loop over an uneven split of the data (rank 0 holds 1.3x the batches of rank 1:
13 against 10). The sides differ only in how the loop ends:

- wasteful.py: torch.distributed.algorithms.join.Join. The rank that runs out of
  data first "shadows" the collectives of the rank still training until that one
  is done too: it stays in the job, waiting in allreduces, for 3 more steps.
- efficient.py: a hand-written early exit. Before every step the ranks agree
  (one allreduce of a has-a-batch flag, MIN) whether all of them still have a
  batch; the first rank to run out ends the loop for everyone, and the finished
  device can idle (or be given back).

Each rank is its own process (torch.multiprocessing), so each writes its own run
file: magneton.record(path) with `{rank}` in the path, or run.rank<N>.mgt
(docs/distributed.md). On a machine with 2 GPUs the ranks use NCCL, one GPU
each; otherwise gloo on the CPU (what the tests and tests/data/dist use).

    python cases/pytorch-181115/wasteful.py --small --record /tmp/w.rank{rank}.mgt
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from pathlib import Path

CASE = "pytorch-181115"
TAG = "MAGNETON_CASE "
WORLD_SIZE = 2
BATCHES = (13, 10)          # per rank: the 1.3:1 uneven split
SIDES = {"wasteful": "join", "efficient": "early-exit"}


def shapes(small: bool) -> dict:
    if small:
        return {"batch": 128, "width": 512, "layers": 3}
    return {"batch": 256, "width": 4096, "layers": 6}


def backend_for(device: str) -> str:
    return "nccl" if device == "cuda" else "gloo"


def choose_device(requested: str | None) -> str:
    import torch
    if requested:
        return requested
    return "cuda" if torch.cuda.is_available() and torch.cuda.device_count() >= WORLD_SIZE else "cpu"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build(device: str, small: bool):
    import torch
    torch.manual_seed(0)  # the same weights on every rank (DDP also broadcasts rank 0's)
    dims = shapes(small)
    layers = []
    for _ in range(dims["layers"] - 1):
        layers += [torch.nn.Linear(dims["width"], dims["width"]), torch.nn.ReLU()]
    layers.append(torch.nn.Linear(dims["width"], 1))
    return torch.nn.Sequential(*layers).to(device)


def batches(rank: int, device: str, small: bool) -> list:
    import torch
    dims = shapes(small)
    g = torch.Generator().manual_seed(1000 + rank)
    out = []
    for _ in range(BATCHES[rank]):
        x = torch.randn(dims["batch"], dims["width"], generator=g)
        y = torch.randn(dims["batch"], 1, generator=g)
        out.append((x.to(device), y.to(device)))
    return out


def train_step(model, opt, x, y):
    import torch
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


def loop_join(model, opt, data) -> int:
    from torch.distributed.algorithms.join import Join
    steps = 0
    with Join([model]):
        for x, y in data:
            train_step(model, opt, x, y)
            steps += 1
    return steps


def loop_early_exit(model, opt, data, device: str) -> int:
    import torch
    import torch.distributed as dist
    steps = 0
    for i in range(max(BATCHES)):
        flag = torch.tensor([1 if i < len(data) else 0], device=device)
        dist.all_reduce(flag, op=dist.ReduceOp.MIN)
        if int(flag.item()) == 0:
            break  # a peer ran out of data: everyone stops here
        x, y = data[i]
        train_step(model, opt, x, y)
        steps += 1
    return steps


def _sync(device: str) -> None:
    import torch
    if device == "cuda":
        torch.cuda.synchronize()


def worker(rank: int, side: str, device: str, small: bool, record: str | None, energy: str,
           results: str | None, stacks: bool = True) -> None:
    os.environ["RANK"], os.environ["WORLD_SIZE"], os.environ["LOCAL_RANK"] = str(rank), str(WORLD_SIZE), str(rank)
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(1)  # two ranks share the CPU machine's cores
    if device == "cuda":
        torch.cuda.set_device(rank)
    dist.init_process_group(backend_for(device), rank=rank, world_size=WORLD_SIZE)
    dev = f"cuda:{rank}" if device == "cuda" else "cpu"
    model = DDP(build(dev, small), device_ids=[rank] if device == "cuda" else None)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    data = batches(rank, dev, small)
    # Warm-up: one even step on both ranks (DDP's bucket rebuild, allocator, kernels).
    warm_x, warm_y = data[0]
    train_step(model, opt, warm_x, warm_y)
    _sync(dev)
    dist.barrier()

    def run() -> int:
        if SIDES[side] == "join":
            return loop_join(model, opt, data)
        return loop_early_exit(model, opt, data, dev)

    t0 = time.monotonic_ns()
    if record:
        import magneton
        with magneton.record(record, energy=energy, overwrite=True, stacks=stacks) as rec:
            steps = run()
            _sync(dev)
        path = rec.path
    else:
        steps = run()
        _sync(dev)
        path = None
    t1 = time.monotonic_ns()
    line = {"case": CASE, "side": side, "rank": rank, "device": device, "steps": steps,
            "batches": len(data), "t0_ns": t0, "t1_ns": t1, "wall_s": (t1 - t0) / 1e9, "record": path}
    if results:
        Path(results, f"rank{rank}.json").write_text(json.dumps(line))
    # One write per line: both ranks share the parent's stdout.
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), (TAG + json.dumps(line) + "\n").encode())
    dist.barrier()
    if device == "cpu":
        # gloo's teardown (destroy_process_group, or the interpreter's exit)
        # now and then aborts a rank with "terminate called without an active
        # exception" once both have finished; everything is written, so the
        # ranks leave without it.
        sys.stderr.flush()
        os._exit(0)
    dist.destroy_process_group()


def launch(side: str, device: str | None = None, small: bool = False, record: str | None = None,
           energy: str | None = None, results: str | None = None, stacks: bool = True) -> None:
    """Runs the 2-rank job of one side (one process per rank) and waits for it."""
    import torch.multiprocessing as mp
    device = choose_device(device)
    if device == "cuda":
        import torch
        if torch.cuda.device_count() < WORLD_SIZE:
            raise SystemExit(f"{CASE}: --device cuda needs {WORLD_SIZE} GPUs, this machine has "
                             f"{torch.cuda.device_count()}")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(free_port())
    energy = energy or ("nvml" if device == "cuda" else "none")
    mp.spawn(worker, args=(side, device, small, record, energy, results, stacks), nprocs=WORLD_SIZE, join=True)


def main(side: str) -> None:
    p = argparse.ArgumentParser(prog=f"{CASE}/{side}.py", description=f"{CASE}, {side} side ({SIDES[side]}).")
    p.add_argument("--device", choices=("cuda", "cpu"), default=None,
                   help="cuda: NCCL, one GPU per rank (needs 2); cpu: gloo (default when fewer GPUs)")
    p.add_argument("--small", action="store_true", help="tiny model (tests on a CPU)")
    p.add_argument("--record", metavar="PATH", default=None,
                   help="record every rank: PATH with {rank}, or PATH.rank<N>.mgt")
    p.add_argument("--energy", choices=("nvml", "none", "auto"), default=None)
    a = p.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
    launch(side, a.device, a.small, a.record, a.energy)
