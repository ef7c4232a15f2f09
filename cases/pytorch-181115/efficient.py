"""pytorch-181115, efficient side: the 2-rank DDP loop over a 1.3:1 uneven split, ended
by a hand-written early exit (the ranks agree every step whether all still have
data; the first to run out stops everyone). See workload.py and README.md."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workload  # noqa: E402

FRAMEWORK = "torch"
DISTRIBUTED = True

if __name__ == "__main__":
    workload.main("efficient")
