"""pytorch-181115, wasteful side: the 2-rank DDP loop over a 1.3:1 uneven split, ended
with torch.distributed.algorithms.join.Join (the finished rank shadows the
other's collectives until it is done). See workload.py and README.md."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workload  # noqa: E402

FRAMEWORK = "torch"
DISTRIBUTED = True

if __name__ == "__main__":
    workload.main("wasteful")
