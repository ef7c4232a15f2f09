"""Records the JAX training fixtures on the CPU through the one-command route,
as a user would (`python -m magneton record -o X.mgt train.py ...`):
onehot.mgt (the embedding as a one-hot matrix product) and take.mgt (a
lookup), each the step recorded with values and the later iterations as the
program makes its calls.

    PYTHONPATH=python python tests/data/jax_train/make_fixtures.py [OUT_DIR] [--iters 40]

Writes both into OUT_DIR (default: this folder), compacted to 1 KiB pages for committing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "jax"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", nargs="?", default=HERE)
    p.add_argument("--iters", type=int, default=40)
    a = p.parse_args(argv)
    from make_fixtures import compact

    for embed in ("onehot", "take"):
        path = os.path.join(a.out, embed + ".mgt")
        subprocess.run([sys.executable, "-m", "magneton", "record", "-f", "-o", path, "--energy", "none",
                        os.path.join(HERE, "train.py"), "--embed", embed, "--iters", str(a.iters)], check=True)
        compact(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
