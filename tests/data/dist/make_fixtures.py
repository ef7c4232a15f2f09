"""Records the fixtures of tests/data/dist: the pytorch-181115 case's 2-rank DDP job
(gloo on the CPU, 1.3:1 uneven split, cases/pytorch-181115/workload.py) with the real
recorder, every rank into its own file:

    join.rank0.mgt, join.rank1.mgt              dist.Join (wasteful.py)
    early_exit.rank0.mgt, early_exit.rank1.mgt  hand-written early exit (efficient.py)

    PYTHONPATH=python ~/.cache/magneton/venv-py312/bin/python tests/data/dist/make_fixtures.py

Needs the magneton._torch extension (ninja -C build magneton_torch). Stacks are off to
keep the files small. The waits depend on the machine's timing; the tests only assert
what the job's shape forces (docs/distributed.md)."""
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "cases" / "pytorch-181115"))

import workload  # noqa: E402

FIXTURES = {"wasteful": "join", "efficient": "early_exit"}

if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    os.environ.pop("MAGNETON_JOB_ID", None)
    for side, stem in FIXTURES.items():
        workload.launch(side, "cpu", small=True, record=str(out / f"{stem}.rank{{rank}}.mgt"), stacks=False)
    for f in sorted(out.glob("*.rank*.mgt")):
        print(f"{f.name}: {f.stat().st_size // 1024} KiB")
