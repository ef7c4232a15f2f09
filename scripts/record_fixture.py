"""Records the committed torch fixtures in tests/data/torch/ (real CPU runs).

    PYTHONPATH=python python scripts/record_fixture.py [OUT_DIR] [gpt2 cnn eig train checkpoint collect]   (default: all)

gpt2_2l_values.mgt    2-layer GPT-2 forward (transformers, random weights, seed 0), fingerprints on
gpt2_2l_measured.mgt  the same forward, measured pass (no fingerprints)
cnn_train_values.mgt  conv/bn/relu/pool/linear: one SGD training step, forward + backward, fingerprints on
eig_general.mgt,      a covariance check the host branches on (transformers#34570, cases/hf-34570):
eig_symmetric.mgt     eigvals (complex, sorted) vs eigvalsh, then rows sampled if it passed
train_gelu_composite.mgt,  one AdamW training step of a 2-layer MLP with LayerNorm, its GELU
train_gelu_fused.mgt       written out (tanh formula) vs F.gelu(approximate="tanh"): a step with
                           an output per parameter update, saved activations and optimizer state
train_blocks.mgt,          SGD training steps of three residual MLP blocks, plain vs each block
train_blocks_checkpointed.mgt  under torch.utils.checkpoint (its forward recomputed in the backward);
                           both passes in one file: one step with values, five measured
collect_list.mgt,          two linear layers over 48 batches, its outputs gathered in a list (joined after
collect_cat.mgt            the loop) vs grown with torch.cat at every step; both passes in one file,
                           from the third step

Small on purpose: analysis tests load them on any machine, without torch."""

import os
import sqlite3
import sys

import torch
import transformers

import magneton


def gpt2():
    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=4, vocab_size=128, n_positions=32,
                                  bos_token_id=0, eos_token_id=0)
    return transformers.GPT2LMHeadModel(cfg).eval(), torch.randint(0, 128, (1, 16))


def cnn_step(path):
    torch.manual_seed(0)
    nn = torch.nn
    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Flatten(), nn.Linear(4 * 4 * 4, 5))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = torch.randn(2, 3, 8, 8), torch.randint(0, 5, (2,))
    with magneton.record(path, fingerprints=True, overwrite=True, command="scripts/record_fixture.py cnn"):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()


def eig_check(path, symmetric):
    """Mean and covariance of a 500x32 matrix, its eigenvalues, and 16 rows sampled around the
    mean only if they are all positive: the check ends in a Python bool (an op with no value)."""
    w = torch.randn(500, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad(), magneton.record(path, fingerprints=True, overwrite=True,
                                          command=f"scripts/record_fixture.py eig symmetric={symmetric}"):
        mean = w.mean(dim=0)
        centered = w - mean
        cov = centered.T @ centered / w.shape[0]
        e = torch.linalg.eigvalsh(cov) if symmetric else torch.linalg.eigvals(cov).real.sort().values
        if bool((e > 0).all()):
            noise = torch.randn(16, 32, generator=torch.Generator().manual_seed(1))
            mean + noise @ torch.linalg.cholesky(1e-9 * cov).T


def train_step(path, fused):
    """One AdamW step after a warm-up step (the optimizer's state exists, as in a training loop)."""
    torch.manual_seed(0)
    nn = torch.nn

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm, self.up, self.down = nn.LayerNorm(16), nn.Linear(16, 32), nn.Linear(32, 4)

        def forward(self, x):
            h = self.up(self.norm(x))
            if fused:
                h = torch.nn.functional.gelu(h, approximate="tanh")
            else:
                h = 0.5 * h * (1 + torch.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))
            return self.down(h)

    net = Mlp()
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))

    def step():
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()
    with magneton.record(path, fingerprints=True, overwrite=True,
                         command=f"scripts/record_fixture.py train fused={fused}"):
        step()


def checkpointed_steps(path, checkpointed):
    """SGD steps of three residual LayerNorm-MLP blocks, both passes in one file: one step with
    values, then five measured. checkpointed: each block under torch.utils.checkpoint
    (non-reentrant), which runs its forward again in the backward."""
    torch.manual_seed(0)
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm, self.up, self.down = nn.LayerNorm(64), nn.Linear(64, 256), nn.Linear(256, 64)

        def forward(self, x):
            return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))

    blocks = nn.ModuleList(Block() for _ in range(3))
    head = nn.Linear(64, 4)
    opt = torch.optim.SGD(list(blocks.parameters()) + list(head.parameters()), lr=0.01)
    x, y = torch.randn(32, 64), torch.randint(0, 4, (32,))
    with magneton.record(path, fingerprints=True, fingerprint_steps=1, overwrite=True,
                         command=f"scripts/record_fixture.py checkpoint checkpointed={checkpointed}") as rec:
        for _ in range(6):
            h = x
            for block in blocks:
                h = torch.utils.checkpoint.checkpoint(block, h, use_reentrant=False) if checkpointed else block(h)
            torch.nn.functional.cross_entropy(head(h), y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            rec.step()


def collect_steps(path, grow):
    """Two linear layers over 48 batches of 64 rows: two steps unrecorded, one with values, the rest measured;
    its outputs gathered in a list and joined once after the loop, or (grow) concatenated onto
    the result at every step, which copies all rows gathered so far each time."""
    torch.manual_seed(0)
    layer = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256))
    data = torch.randn(48, 64, 256)
    with torch.no_grad(), magneton.record(path, fingerprints=True, fingerprint_steps=1, overwrite=True,
                                          schedule=magneton.schedule(wait=2, active=46, repeat=1),
                                          command=f"scripts/record_fixture.py collect grow={grow}") as rec:
        out = torch.empty(0, 256) if grow else []
        for x in data:
            y = layer(x)
            if grow:
                out = torch.cat([out, y])
            else:
                out.append(y)
            rec.step()
        if not grow:
            out = torch.cat(out)


def compact(path):
    """Small pages and no free space: the committed files stay small."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=DELETE")
    db.execute("PRAGMA page_size=1024")
    db.execute("VACUUM")
    db.close()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "data", "torch")
    wanted = set(sys.argv[2:]) or {"gpt2", "cnn", "eig", "train", "checkpoint", "collect"}
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    written = []
    if "gpt2" in wanted:
        model, ids = gpt2()
        with torch.no_grad():
            for name, fps in (("gpt2_2l_values.mgt", True), ("gpt2_2l_measured.mgt", False)):
                path = os.path.join(out, name)
                with magneton.record(path, fingerprints=fps, overwrite=True,
                                     command=f"scripts/record_fixture.py gpt2 fingerprints={fps}") as rec:
                    model(ids)
                print(name, rec.summary["ops"], "ops", rec.summary["tensors"], "tensors")
                written.append(name)
    if "cnn" in wanted:
        cnn_step(os.path.join(out, "cnn_train_values.mgt"))
        written.append("cnn_train_values.mgt")
    if "eig" in wanted:
        for name, symmetric in (("eig_general.mgt", False), ("eig_symmetric.mgt", True)):
            eig_check(os.path.join(out, name), symmetric)
            written.append(name)
    if "train" in wanted:
        for name, fused in (("train_gelu_composite.mgt", False), ("train_gelu_fused.mgt", True)):
            train_step(os.path.join(out, name), fused)
            written.append(name)
    if "checkpoint" in wanted:
        for name, checkpointed in (("train_blocks.mgt", False), ("train_blocks_checkpointed.mgt", True)):
            checkpointed_steps(os.path.join(out, name), checkpointed)
            written.append(name)
    if "collect" in wanted:
        for name, grow in (("collect_list.mgt", False), ("collect_cat.mgt", True)):
            collect_steps(os.path.join(out, name), grow)
            written.append(name)
    for name in written:
        compact(os.path.join(out, name))
        magneton.load_run(os.path.join(out, name))  # still a valid run
        print(name, "written")


if __name__ == "__main__":
    main()
