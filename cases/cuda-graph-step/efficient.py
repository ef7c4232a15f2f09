"""cuda-graph-step, efficient side: the same step captured once in a CUDA graph
(torch.cuda.CUDAGraph) on static input and output buffers; each step copies the context into
the static input and replays the graph: one launch for the whole step, its kernels back to
back on the device. A graph needs a CUDA device: on a CPU the step calls the same function
on the same static buffers (so the CPU check covers the buffers, not the replay)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import casekit  # noqa: E402

workload = casekit.sibling(__file__, "workload")
FRAMEWORK = "torch"


def setup(device, small):
    state = workload.setup(device, small)
    model, static_ids = state["model"], state["ids"].clone()
    state["static_ids"] = static_ids
    if state["device"].type != "cuda":
        state["graph"] = None
        return state
    # Warm up on a side stream (allocator, cuBLAS handles), then capture one step.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            workload.decode_step(model, static_ids)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        state["static_out"] = workload.decode_step(model, static_ids)
    state["graph"] = graph
    return state


def step(state):
    state["static_ids"].copy_(state["ids"])  # this step's context into the captured input
    if state["graph"] is None:
        return workload.decode_step(state["model"], state["static_ids"])
    state["graph"].replay()
    return state["static_out"]


if __name__ == "__main__":
    casekit.main(__name__)
