"""Packaging guards: every package folder is installed; memory/ and agents/ never import Ray."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAPPING = {"cluster": "societas.cluster", "agents": "societas.agents", "memory": "societas.memory"}


def test_every_package_folder_is_installed():
    """Each folder with an __init__.py under the four roots is importable from the install."""
    import importlib

    found = ["societas"]
    for top, dotted in MAPPING.items():
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top)
            found.append(".".join([dotted, *rel.parts]))
    missing = []
    for name in found:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            missing.append(f"{name}: {exc}")
    assert missing == []


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
