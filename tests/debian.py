"""The real outside programs the tests start (Prometheus, R, Chromium): found on PATH, or
installed from Debian's packages as .ci/run does; a test skips only where that is impossible."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def debian_binary(package: str, *names: str) -> str:
    """The path of the first of `names` on PATH, installing `package` with apt-get when none
    is there; skips only without apt-get or without root."""
    names = names or (package,)
    found = next((shutil.which(n) for n in names if shutil.which(n)), None)
    if found:
        return found
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        pytest.skip(f"no `{names[0]}` and no apt-get as root to install Debian's {package}")
    for args in (
        ["update", "-qq"],
        ["install", "-y", "-qq", "--no-install-recommends", package],
    ):
        done = subprocess.run(
            [apt, *args], check=False, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, f"apt-get {args[0]} failed: {done.stderr[-2000:]}"
    found = next((shutil.which(n) for n in names if shutil.which(n)), None)
    assert found, f"apt-get installed {package} but none of {names} is on PATH"
    return found
