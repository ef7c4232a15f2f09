"""sys.monitoring tool ids for Magneton's watchers (the script's loops,
torch.compile graphs): the ids after the debugger's and the coverage tool's,
so that those keep theirs."""

from __future__ import annotations

import sys
from typing import Optional


def claim_tool(name: str) -> Optional[int]:
    """A free tool id, now used by `name`; None where none is free (or Python < 3.12)."""
    mon = getattr(sys, "monitoring", None)
    if mon is None:
        return None
    for tool in range(mon.PROFILER_ID, 6):
        try:
            mon.use_tool_id(tool, name)
        except ValueError:
            continue
        return tool
    return None
