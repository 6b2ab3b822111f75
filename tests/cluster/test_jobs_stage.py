"""What `societas submit` uploads as `py_modules`: the package root and its three rooms."""

from __future__ import annotations

from pathlib import Path

from societas.cluster.ray.jobs import stage_package


def test_staged_package_has_the_front_door_and_every_room(tmp_path: Path) -> None:
    pkg = stage_package(tmp_path / "code")
    assert "__all__" in (pkg / "__init__.py").read_text()
    for part in ("testing/emulator.py", "cluster/cli/commands.py", "agents/agent.py"):
        assert (pkg / part).is_file(), part
    assert (pkg / "memory" / "__init__.py").is_file()
    assert not list(pkg.rglob("__pycache__"))
