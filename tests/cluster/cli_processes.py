"""The `societas` CLI as a user starts it, for the CLI tests: run to its end or in the
background, wait for what it writes, a small town config, a folder's digest."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SOCIETAS = [sys.executable, "-m", "societas.cluster.cli"]


def societas(*args: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    """Run the CLI to its end; output as text."""
    return subprocess.run(
        [*SOCIETAS, *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        **kw,
    )


def start(*args: str, log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start the CLI in the background (its own process group, `env` if given), output to
    `log`."""
    fh = log.open("w")
    return subprocess.Popen(
        [*SOCIETAS, *args],
        stdout=fh,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )


def wait_for(predicate, timeout: float, what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            tail = log.read_text()[-3000:] if log is not None else ""
            raise AssertionError(f"timed out waiting for {what}\n{tail}")
        time.sleep(0.2)


def closed_port() -> int:
    """A loopback port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def town(tmp_path: Path, name: str = "town.yaml", **over) -> Path:
    """configs/town.yaml, small, with overrides merged in."""
    data = yaml.safe_load((ROOT / "configs" / "town.yaml").read_text())
    data.update({"ticks": 8, "agents": {**data["agents"], "count": 20}})
    for key, value in over.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def tree_digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }
