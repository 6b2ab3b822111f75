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


def _imports(source: Path) -> list[str]:
    """Every module name `source` imports (top level or inside functions)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_only_cluster_ray_imports_ray():
    """Ray lives in one room: cluster/ray/; the rest of cluster/ and the root stay Ray-free."""
    offenders = [
        f"{source}: {name}"
        for top in ("cluster", "societas")
        for source in (ROOT / top).rglob("*.py")
        if (ROOT / "cluster" / "ray") not in source.parents
        for name in _imports(source)
        if name.split(".")[0] == "ray"
    ]
    assert offenders == []


def test_console_script_and_module_entry_points():
    """`societas.cluster.cli:main` (the console script) and `python -m societas.cluster.cli`."""
    import subprocess
    import sys

    from societas.cluster.cli import main
    from societas.cluster.cli.commands import main as real_main

    assert main is real_main
    out = subprocess.run(
        [sys.executable, "-m", "societas.cluster.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.startswith("societas ")


def test_documented_module_paths_still_import():
    """Paths the docs name keep working as aliases of their new homes."""
    from societas.cluster.ray.runtime import run_on_ray
    from societas.cluster.ray_runtime import ClusterConfig
    from societas.cluster.ray_runtime import run_on_ray as alias
    from societas.cluster.society import Society

    assert alias is run_on_ray
    assert ClusterConfig.__module__ == "societas.cluster.cluster_config"
    assert Society.__module__ == "societas.cluster.society"


def test_bundled_model_files_ship_with_the_package():
    import societas.memory

    models = Path(societas.memory.__file__).parent / "models"
    assert (models / "bm25" / "english.txt").stat().st_size > 500
    assert (models / "minilm" / "tokenizer.json").stat().st_size > 400_000


def test_front_door_exports_the_public_api():
    """`import societas` gives the public API by name, each from its home module."""
    import societas
    from societas.agents.agent import Agent, AgentContext, Block
    from societas.agents.llm import LLMGateway
    from societas.agents.scenario import ScenarioConfig, load_scenario
    from societas.cluster.society import Society
    from societas.memory import GroupMemory

    expected = {
        "Society": Society,
        "load_scenario": load_scenario,
        "ScenarioConfig": ScenarioConfig,
        "Agent": Agent,
        "Block": Block,
        "AgentContext": AgentContext,
        "GroupMemory": GroupMemory,
        "LLMGateway": LLMGateway,
    }
    for name, obj in expected.items():
        assert name in societas.__all__
        assert getattr(societas, name) is obj
    assert isinstance(societas.__version__, str) and "__version__" in societas.__all__
    assert set(societas.__all__) <= set(dir(societas))


def test_front_door_import_is_light_and_rejects_unknown_names():
    """`import societas` alone loads neither Ray nor the runtime; unknown names fail clearly."""
    import subprocess
    import sys

    code = (
        "import sys, societas\n"
        "heavy = [m for m in ('ray', 'pyarrow', 'societas.cluster', 'societas.memory')"
        " if m in sys.modules]\n"
        "assert heavy == [], heavy\n"
        "try:\n    societas.no_such_name\nexcept AttributeError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "no_such_name" in out.stdout


def test_group_engines_are_built_in_one_place():
    """Every run (local, Ray, arms, branches, interviews, Society) gets its engines from
    `cluster/loop/engines.py`."""
    builders = sorted(
        str(source.relative_to(ROOT))
        for source in (ROOT / "cluster").rglob("*.py")
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "GroupEngine"
    )
    assert set(builders) == {"cluster/loop/engines.py"}


def test_importing_every_module_leaves_the_process_alone():
    """Importing the whole package changes no environment variable, gc setting or Arrow pool
    (worker tuning is `memory.tuning.tune_worker()`, called by the CLI and the Ray actors)."""
    import subprocess
    import sys

    code = """
import gc, importlib, os, pkgutil
env, threshold = dict(os.environ), gc.get_threshold()
import pyarrow as pa
pool = pa.default_memory_pool().backend_name
failed = []
for root in ("societas", "societas.cluster", "societas.agents", "societas.memory"):
    for info in pkgutil.walk_packages(importlib.import_module(root).__path__, root + "."):
        if not info.name.endswith("__main__") and ".models" not in info.name:
            try:
                importlib.import_module(info.name)
            except Exception as err:
                failed.append(f"{info.name}: {err!r}")
assert failed == [], failed
assert dict(os.environ) == env, set(os.environ.items()) ^ set(env.items())
assert gc.get_threshold() == threshold and gc.get_freeze_count() == 0
assert pa.default_memory_pool().backend_name == pool
"""
    res = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
