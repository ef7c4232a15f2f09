"""Recording overhead of magneton.record on a CPU GPT-2 forward (docs/benchmarks.md).

    PYTHONPATH=python python bench/torch_recorder_bench.py [--layers 12] [--embd 64] [--iters 20]

Plain forward vs the same forward inside a recording: ops only (stacks off),
ops + Python stacks (the default), and the recording pass with fingerprints.
Each timing is the median of --iters forwards; plain runs bracket the
recorded ones so drift shows. Prints one table; per-op cost = extra time / ops."""

import argparse
import os
import statistics
import tempfile
import time

import torch
import transformers

import magneton


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--embd", type=int, default=64)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads (1: steadier on a busy machine)")
    p.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                   help="cpu: this process's CPU time (robust to other load); wall: elapsed time")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    clock = time.process_time if a.clock == "cpu" else time.perf_counter
    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=a.layers, n_embd=a.embd, n_head=4, vocab_size=512, n_positions=256)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    x = torch.randint(0, 512, (a.batch, a.seq))

    def timed(n):
        out = []
        for _ in range(n):
            t = clock()
            model(x)
            out.append(clock() - t)
        return statistics.median(out)

    rows = []
    with torch.no_grad(), tempfile.TemporaryDirectory() as d:
        timed(5)
        plain = [timed(a.iters)]
        for name, kw, n in (("ops", dict(stacks=False), a.iters), ("ops+stacks", {}, a.iters),
                            ("fingerprints", dict(fingerprints=True), max(3, a.iters // 5))):
            with magneton.record(os.path.join(d, name + ".mgt"), **kw) as rec:
                model(x)
                t = timed(n)
            ops = rec.summary["ops"] // (n + 1)
            rows.append((name, t, ops))
            plain.append(timed(a.iters))
    base = statistics.median(plain)
    print(f"GPT-2 {a.layers} layers, n_embd {a.embd}, batch {a.batch}x{a.seq}, torch {torch.__version__}, "
          f"{os.cpu_count()} CPUs, threads {torch.get_num_threads()}, {a.clock} time")
    print(f"{'config':<14} {'ms/forward':>11} {'overhead':>9} {'ops':>6} {'us/op':>7}")
    print(f"{'plain':<14} {1e3 * base:>11.2f} {'':>9} {'':>6} {'':>7}   (plain runs: "
          + ", ".join(f"{1e3 * v:.2f}" for v in plain) + ")")
    for name, t, ops in rows:
        print(f"{name:<14} {1e3 * t:>11.2f} {100 * (t / base - 1):>8.1f}% {ops:>6} {1e6 * (t - base) / ops:>7.1f}")


if __name__ == "__main__":
    main()
