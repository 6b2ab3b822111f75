"""Checkpoints of a run: `RUN_DIR/checkpoints/tick=K/` with one folder per group and a manifest.

`tick=K` holds the state *before* tick K runs (K ticks completed). Each group writes its own
folder atomically (into a temporary sibling, fsync, rename); the coordinator writes the
pending inboxes and then `manifest.json` last, so a folder without a manifest is incomplete
and ignored by `last_complete`. Everything is JSON or whatever the group writes (Parquet,
JSON); never pickle, so reading a checkpoint never runs code.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from societas.agents.runtime.protocol import Message
from societas.memory.store.fsutil import fsync_dir

MANIFEST = "manifest.json"
INBOX = "inbox.json"
FORMAT_VERSION = 1


def checkpoints_dir(run_dir: str | Path) -> Path:
    """Where a run's checkpoints live."""
    return Path(run_dir) / "checkpoints"


def tick_dir(run_dir: str | Path, tick: int) -> Path:
    """The folder of the checkpoint taken before `tick`."""
    return checkpoints_dir(run_dir) / f"tick={tick}"


def group_dir(run_dir: str | Path, tick: int, group_id: int) -> Path:
    """One group's folder inside a checkpoint."""
    return tick_dir(run_dir, tick) / f"group-{group_id}"


def fsync_tree(path: Path) -> None:
    """fsync every file and folder under `path` (and `path` itself)."""
    for root, dirs, files in os.walk(path):
        for name in files:
            fd = os.open(os.path.join(root, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        for name in dirs:
            fsync_dir(Path(root) / name)
    fsync_dir(path)


def json_text(data: Any) -> str:
    """The JSON text of a run's record files (keys sorted, no spaces), in a folder or a store."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to `path` via a temporary file, fsync and rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json_text(data))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


async def write_group_atomic(final: Path, write: Callable[[str], Any]) -> dict[str, Any]:
    """Let `write(tmpdir)` (a group's async `checkpoint`) fill a temp folder, then publish it."""
    tmp = final.with_name(f".{final.name}.{uuid.uuid4().hex}.tmp")
    await asyncio.to_thread(tmp.mkdir, parents=True)
    try:
        meta = await write(str(tmp))
        await asyncio.to_thread(_publish, tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dict(meta or {})


def _publish(tmp: Path, final: Path) -> None:
    fsync_tree(tmp)
    if final.exists():  # a replayed group re-taking the same checkpoint
        shutil.rmtree(final)
    os.replace(tmp, final)
    fsync_dir(final.parent)


class Manifest(BaseModel):
    """What makes a checkpoint complete: written last, after every group and the inboxes."""

    version: int = FORMAT_VERSION
    tick: int = Field(ge=0, description="Ticks completed; the run resumes at this tick.")
    ticks: int = Field(ge=0, description="Ticks the run was asked for.")
    seed: int
    agents: int
    groups: dict[int, dict[str, Any]] = Field(description="group id -> its checkpoint meta.")
    totals: dict[str, float] = Field(default_factory=dict)
    digests: list[str] = Field(default_factory=list, description="Routing digest per tick.")
    llm_tasks: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="LLM calls per task up to this tick (all invocations)."
    )
    llm_models: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="LLM usage per model up to this tick (all invocations)."
    )
    config: dict[str, Any] = Field(default_factory=dict, description="Run config, no secrets.")


def write_checkpoint_manifest(
    run_dir: str | Path, manifest: Manifest, inbox: dict[int, list[Message]]
) -> Path:
    """Write the pending inboxes, then the manifest (last): the checkpoint is now complete."""
    folder = tick_dir(run_dir, manifest.tick)
    missing = [g for g in manifest.groups if not group_dir(run_dir, manifest.tick, g).is_dir()]
    if missing:
        raise RuntimeError(f"checkpoint tick={manifest.tick}: groups {missing} wrote nothing")
    write_json_atomic(
        folder / INBOX,
        {str(g): [m.model_dump(mode="json") for m in msgs] for g, msgs in inbox.items()},
    )
    write_json_atomic(folder / MANIFEST, manifest.model_dump(mode="json"))
    return folder


def complete_ticks(run_dir: str | Path) -> list[int]:
    """Ticks of every complete checkpoint (with a manifest), ascending."""
    root = checkpoints_dir(run_dir)
    if not root.is_dir():
        return []
    out = []
    for child in root.iterdir():
        if child.name.startswith("tick=") and (child / MANIFEST).is_file():
            try:
                out.append(int(child.name.removeprefix("tick=")))
            except ValueError:
                continue
    return sorted(out)


def last_complete(run_dir: str | Path) -> int | None:
    """Tick of the last complete checkpoint, or None."""
    ticks = complete_ticks(run_dir)
    return ticks[-1] if ticks else None


def load_checkpoint(run_dir: str | Path, tick: int) -> tuple[Manifest, dict[int, list[Message]]]:
    """The manifest and pending inboxes of a complete checkpoint."""
    folder = tick_dir(run_dir, tick)
    manifest = Manifest.model_validate_json((folder / MANIFEST).read_text())
    raw = json.loads((folder / INBOX).read_text())
    inbox = {int(g): [Message.model_validate(m) for m in msgs] for g, msgs in raw.items()}
    return manifest, inbox


def prune(run_dir: str | Path, keep: int, ticks: Iterable[int] | None = None) -> None:
    """Delete all but the newest `keep` complete checkpoints (and any incomplete older ones)."""
    if keep <= 0:
        return
    done = sorted(ticks) if ticks is not None else complete_ticks(run_dir)
    if len(done) <= keep:
        return
    cutoff = done[-keep]
    for child in checkpoints_dir(run_dir).iterdir():
        if child.name.startswith("tick="):
            try:
                t = int(child.name.removeprefix("tick="))
            except ValueError:
                continue
            if t < cutoff:
                shutil.rmtree(child, ignore_errors=True)
