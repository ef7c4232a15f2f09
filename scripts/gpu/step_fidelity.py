"""Whether the recording pass runs the program's step as it runs unwatched:
the device work of one training step recorded with fingerprints (operators
watched) against a step of the measured pass (no operators), per model.
Before autograd nodes were watched without their inputs, AccumulateGrad
copied every gradient in the recording pass (a ResNet-50 step: 161 copies
more than unwatched), and the diff could not find the recorded step in the
measured pass ("does not repeat the recorded step").

    python scripts/gpu/step_fidelity.py OUT_DIR [--cpu]

Prints one row per model: kernels and copies of the recorded step, per
measured step, the difference, and the extra items by name. On the CPU
(--cpu, or no GPU) it compares operators, which both passes record there: a
check of the script, not of fidelity (the watching is the same on both).
About 1 minute on the H200 (ResNet-50 batch 32 and a 4-layer GPT-2, 2 warm-up
steps, 1 recorded, 5 measured each)."""
import collections
import sqlite3
import sys
from pathlib import Path

import torch
import transformers

import magneton

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
cpu = "--cpu" in sys.argv or not torch.cuda.is_available()
device = "cpu" if cpu else "cuda"
transformers.logging.set_verbosity_error()
STEPS = 5


def resnet():
    cfg = transformers.ResNetConfig(num_labels=1000) if not cpu else transformers.ResNetConfig(
        embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], layer_type="basic", num_labels=10)
    model = transformers.ResNetForImageClassification(cfg).to(device).train()
    batch, size = (32, 224) if not cpu else (2, 32)
    x = torch.randn(batch, 3, size, size, device=device)
    y = torch.randint(0, cfg.num_labels, (batch,), device=device)
    return model, lambda m: m(pixel_values=x, labels=y).loss


def gpt2():
    cfg = transformers.GPT2Config(n_layer=4 if not cpu else 2, n_embd=256 if not cpu else 64, n_head=4,
                                  vocab_size=1000, n_positions=128)
    model = transformers.GPT2LMHeadModel(cfg).to(device).train()
    ids = torch.randint(0, 1000, (4, 128), device=device)
    return model, lambda m: m(ids, labels=ids).loss


def items(path):
    """(name, count) of the step's device work (ops on the CPU), recorder's own left out."""
    db = sqlite3.connect(path)
    names = dict(db.execute("SELECT id, value FROM strings"))
    if cpu:
        rows = db.execute("SELECT name FROM ops").fetchall()
    else:
        rows = db.execute("SELECT name FROM kernels WHERE op != -2").fetchall()
        rows += [(f"copy {k}",) for (k,) in db.execute("SELECT kind FROM transfers WHERE kind != 'sync' AND op != -2")]
    db.close()
    return collections.Counter(names.get(n, n) for (n,) in rows)


def sync():
    if not cpu:
        torch.cuda.synchronize()


print(f"{'model':8} {'recorded':>9} {'measured/step':>14} {'extra':>6}  extra items (recorded - measured)")
for name, build in (("resnet", resnet), ("gpt2", gpt2)):
    torch.manual_seed(0)
    model, loss_of = build()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    def step():
        loss_of(model).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(2):
        step()
    sync()
    rec, mea = out / f"{name}-rec.mgt", out / f"{name}-mea.mgt"
    with magneton.record(str(rec), fingerprints=True, energy="none", overwrite=True):
        step()
        sync()
    with magneton.record(str(mea), energy="none", overwrite=True, stacks=False):
        for _ in range(STEPS):
            step()
        sync()
    r, m = items(str(rec)), items(str(mea))
    per = collections.Counter({k: v / STEPS for k, v in m.items()})
    extra = {k: r[k] - per.get(k, 0) for k in r if r[k] - per.get(k, 0) >= 1}
    top = ", ".join(f"{k[:40]} +{v:g}" for k, v in sorted(extra.items(), key=lambda kv: -kv[1])[:4])
    print(f"{name:8} {sum(r.values()):>9} {sum(m.values()) / STEPS:>14.1f} {sum(r.values()) - sum(m.values()) / STEPS:>6.1f}  {top or '-'}")
