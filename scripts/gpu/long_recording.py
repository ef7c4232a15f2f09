"""A long recording of a training loop with a step schedule (issue "Record for
as long as the program runs", docs/recording.md "Steps"): Transformers' GPT-2
(random weights) trained with AdamW for SECONDS inside one magneton.record
with a schedule of 10 active steps after WAIT (the first one the recording
pass, the other nine the measured pass); the loop goes on to the end of the
window, recording nothing more. Two runs with the same WAIT record the same
steps (the same weights): their diff is an A/A pair. Every 10 s it prints the process's
resident memory, the rows the recorder holds and the run file's size; at the
end, one JSON line: the memory samples, the steps run, the file's size.

    python long_recording.py --out run.mgt --seconds 540 [--wait 100] [--small] [--device cuda|cpu]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from recorder_memory import rss_mb  # noqa: E402  (the memory benchmark's reading, for the same figure)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--seconds", type=float, default=540)
    p.add_argument("--wait", type=int, default=100, help="steps before the recorded ones")
    p.add_argument("--device", default="cuda")
    p.add_argument("--small", action="store_true", help="a tiny model (to try the script on a CPU)")
    a = p.parse_args()
    import torch
    import transformers

    import magneton

    device = a.device if a.device == "cpu" or torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    cfg = (transformers.GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=1000) if a.small
           else transformers.GPT2Config(n_layer=12, n_embd=768, n_head=12))
    model = transformers.GPT2LMHeadModel(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batch, seq = (2, 32) if a.small else (8, 256)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq), device=device)

    def step() -> None:
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    wait = a.wait
    sched = magneton.schedule(wait=wait, warmup=1, active=10, repeat=1)

    samples, steps, t0 = [], 0, time.monotonic()
    next_sample = t0
    with magneton.record(a.out, energy="auto", fingerprints=True, fingerprint_steps=1, schedule=sched) as rec:
        while time.monotonic() - t0 < a.seconds or steps < wait + 11:
            step()
            rec.step()
            steps += 1
            if time.monotonic() >= next_sample:
                size = os.path.getsize(a.out) if os.path.exists(a.out) else 0
                samples.append({"t": round(time.monotonic() - t0, 1), "rss_mb": round(rss_mb(), 1),
                                "rows_held": rec.rows_held(), "file_mb": round(size / 2**20, 2)})
                print(json.dumps(samples[-1]), flush=True)
                next_sample += 10
    print(json.dumps({"steps": steps, "wait": wait, "samples": samples,
                      "file_mb": round(os.path.getsize(a.out) / 2**20, 2), "summary": rec.summary}, default=str))


if __name__ == "__main__":
    main()
