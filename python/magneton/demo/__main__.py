"""`magneton demo`'s recordings: both variants of one built-in pair in one
Python process, so torch, transformers and CUDA start once (each start costs
seconds of the demo's minute), then `DIR/pair.json` names the four run files
for the command to diff:

    python -m magneton.demo --case auto --out DIR [--device ...] [--size ...]

Exit 3 when torch, transformers or the extension cannot be imported (one line
on stderr says which), 2 on bad usage."""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import sys
from pathlib import Path

from magneton.demo import common

# case: (module, variant a, variant b, what the pair shows)
CASES = {
    "gpt2-attention": ("gpt2_blocks", "eager", "sdpa",
                       "GPT-2 blocks: attention written out as matmul, softmax, matmul (a) vs "
                       "scaled_dot_product_attention (b)"),
    "gpt2-conv1d": ("gpt2_blocks", "addmm", "mm_add", "GPT-2 blocks: HF Conv1D as torch.addmm (a) vs mm + add (b)"),
    "gpt2-gelu": ("gpt2_blocks", "gelu_new", "gelu_fused",
                  "GPT-2 blocks: HF's gelu_new as 8 elementwise operators (a) vs the fused F.gelu (b)"),
    "unet-tf32": ("unet_tf32", "fp32", "tf32", "UNet-like convolutions and linear layers: TF32 off (a) vs on (b)"),
}


def auto_case(device: str) -> str:
    """On a GPU the attention pair: on the H200 eager attention costs GPT-2 small
    33% more energy per forward than SDPA (5.31 J vs 3.99 J, long-window NVML
    ground truth), where the paper's Conv1D pair is 3% apart. On a CPU the GELU
    pair, whose difference a CPU shows plainly by time alone."""
    return "gpt2-attention" if device == "cuda" else "gpt2-gelu"


def main() -> None:
    p = argparse.ArgumentParser(description="record both variants of a magneton demo pair")
    p.add_argument("--case", choices=("auto", *CASES), default="auto")
    p.add_argument("--out", required=True, help="directory for the four run files and pair.json")
    common.add_run_options(p)
    args = p.parse_args()
    try:
        import torch
        import transformers  # noqa: F401  (the models are transformers')

        from magneton import recorder
        recorder.extension()
    except Exception as e:  # an ImportError, or the extension's own error
        print(f"magneton demo: {sys.executable} cannot import torch, transformers and magneton._torch "
              f"({type(e).__name__}: {e}); set MAGNETON_PYTHON to the project's venv python and build "
              "magneton_torch (scripts/build.sh), or install the package (pip install .)", file=sys.stderr)
        sys.exit(3)
    device = common.pick_device(torch, args.device)
    case = auto_case(device) if args.case == "auto" else args.case
    module, *variants, what = CASES[case]
    print(f"magneton demo: {what}", flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pair = {"case": case}
    for side, variant in zip("ab", variants):
        common.say(f"run {side} = {variant}")
        one = argparse.Namespace(**vars(args), variant=variant)
        one.out, one.measured = str(out / f"{variant}.mgt"), str(out / f"{variant}-measured.mgt")
        importlib.import_module(f"magneton.demo.{module}").run(one, device)
        pair[side], pair[f"measured_{side}"] = one.out, one.measured
        gc.collect()  # side a's model and tensors go before side b runs
        if device == "cuda":
            torch.cuda.empty_cache()
    (out / "pair.json").write_text(json.dumps(pair, indent=1) + "\n")


if __name__ == "__main__":
    main()
