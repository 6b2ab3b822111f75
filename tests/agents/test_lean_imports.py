"""A group's process imports only what a run on the rules policy uses: the openai client and
aiohttp's server cost ~56 MB in every group actor. (pandas, where installed, is imported by
pyarrow at its first conversion of Python values, whatever societas imports.)"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("openai", "aiohttp")


def _loaded(code: str) -> list[str]:
    """The HEAVY modules loaded after running `code` in a fresh interpreter."""
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_group_modules_leave_heavy_imports_out() -> None:
    code = (
        "import societas.agents.runtime.engine, societas.cluster.ray.groups,"
        " societas.memory.tiers.cold"
    )
    assert _loaded(code) == []


def test_heavy_modules_come_when_used() -> None:
    # The emulator and an endpoint's client still find what they need when first used.
    code = (
        "from societas.testing.emulator import EmulatorConfig\n"
        "from societas.agents.llm.config import EndpointConfig\n"
        "from societas.agents.llm.pool import Endpoint\n"
        "Endpoint(EndpointConfig(base_url='http://127.0.0.1:9/v1', model='m'), 1.0, 0).client\n"
    )
    assert _loaded(code) == ["openai", "aiohttp"]
