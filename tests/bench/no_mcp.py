"""Run the service as if the [mcp] extra were not installed (for bench_idle's split of resident memory):

    python tests/bench/no_mcp.py --config FILE [flags...]    (the same flags as python -m hippocampus)
"""
from __future__ import annotations

import runpy
import sys


class _NoMcp:
    """A meta path finder that says the MCP SDK (and a2wsgi) are not there."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("mcp", "mcp_types", "a2wsgi"):
            raise ImportError(f"No module named {name!r} (hidden by tests/bench/no_mcp.py)")
        return None


sys.meta_path.insert(0, _NoMcp())
sys.argv[0] = "hippocampus"
runpy.run_module("hippocampus", run_name="__main__")
