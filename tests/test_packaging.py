"""Packaging guards: every package folder is installed; memory/ and agents/ never import Ray."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAPPING = {"cluster": "societas.cluster", "agents": "societas.agents", "memory": "societas.memory"}


def test_every_package_folder_is_listed_in_pyproject():
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = set()
    for top, dotted in MAPPING.items():
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top)
            found.add(".".join([dotted, *rel.parts]))
    assert found - listed == set(), "add these to [tool.setuptools] packages"


def test_memory_and_agents_do_not_import_ray():
    offenders = []
    for top in ("memory", "agents"):
        for source in (ROOT / top).rglob("*.py"):
            for node in ast.walk(ast.parse(source.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                offenders += [
                    f"{source}: {n}"
                    for n in names
                    if n.split(".")[0] == "ray" or n.startswith("societas.cluster")
                ]
    assert offenders == []


def test_bundled_model_files_ship_with_the_package():
    import societas.memory

    models = Path(societas.memory.__file__).parent / "models"
    assert (models / "bm25" / "english.txt").stat().st_size > 500
    assert (models / "minilm" / "tokenizer.json").stat().st_size > 400_000
