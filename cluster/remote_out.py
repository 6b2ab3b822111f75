"""`--out` as an object-store URL (s3://bucket/prefix, gs://..., anything pyarrow's
filesystems open, e.g. `s3://bucket/run?endpoint_override=host:9000&scheme=http`).

The run works in a local staging folder and pushes it to the URL at start, at every
checkpoint and at the end (and after an interrupt), so the URL always holds a resumable
run; `resume URL` pulls it back first. Credentials come from the environment
(AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, ...), never from the config.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

STAGING_ENV = "SOCIETAS_STAGING_DIR"
SKIP = ("memory/", ".")  # the live memory store (checkpoints hold its state), temp files


class RemoteOutError(ValueError):
    """The URL cannot hold this run (unreachable, no rights, holds another run)."""


def is_url(out: str | Path | None) -> bool:
    """Whether `--out` names an object store rather than a folder."""
    return out is not None and "://" in str(out) and not str(out).startswith("file://")


def child_out(out: str, name: str) -> str:
    """`--out` of the run `name` under `out` (a seed's or an arm's): a URL keeps its scheme
    and query (`s3://b/x?region=r` -> `s3://b/x/NAME?region=r`), a folder gains a subfolder."""
    if not is_url(out):
        return str(Path(out) / name)
    parts = urlsplit(out)
    return urlunsplit(parts._replace(path=f"{parts.path.rstrip('/')}/{name}"))


def open_url(url: str) -> tuple[Any, str]:
    """(pyarrow filesystem, path inside it) for `url`; RemoteOutError when it cannot."""
    import pyarrow.fs as pafs

    try:
        return pafs.FileSystem.from_uri(url)
    except Exception as err:  # ArrowInvalid / OSError with the reason
        raise RemoteOutError(f"cannot open: {str(err).splitlines()[0]}") from None


def read_object(url: str, name: str) -> bytes | None:
    """The bytes of `name` under `url` (`run.json`, `experiment.json`), None when it has none;
    RemoteOutError when the store cannot be read."""
    fs, path = open_url(url)
    try:
        with fs.open_input_stream(f"{path.rstrip('/')}/{name}") as src:
            data: bytes = src.read()
            return data
    except FileNotFoundError:
        return None
    except OSError as err:
        if "not found" in str(err).lower() or "no such" in str(err).lower():
            return None
        raise RemoteOutError(f"{url}: cannot read {name}: {_reason(err)}") from None


def write_object(url: str, name: str, data: bytes) -> None:
    """Write `data` as `name` under `url`; RemoteOutError when the store refuses it."""
    fs, path = open_url(url)
    try:
        with fs.open_output_stream(f"{path.rstrip('/')}/{name}") as dst:
            dst.write(data)
    except OSError as err:
        raise RemoteOutError(f"{url}: cannot write {name}: {_reason(err)}") from None


def write_json_at(place: str | Path, name: str, data: Any) -> None:
    """Write `data` as the JSON file `name` of a folder (atomically) or of a URL (one
    object), the same text either way."""
    from societas.cluster.checkpoint import json_text, write_json_atomic

    if is_url(place):
        write_object(str(place), name, json_text(data).encode())
    else:
        write_json_atomic(Path(place) / name, data)


def names_under(url: str, sub: str = "") -> list[str]:
    """The names of the files and folders directly under `url` (or its `sub` folder), sorted;
    [] when there are none."""
    import pyarrow.fs as pafs

    fs, path = open_url(url)
    base = "/".join(p for p in (path.rstrip("/"), sub.strip("/")) if p)
    try:
        infos = fs.get_file_info(pafs.FileSelector(base, allow_not_found=True))
    except OSError as err:
        raise RemoteOutError(f"{url}: cannot list {sub or 'it'}: {_reason(err)}") from None
    return sorted(info.base_name for info in infos)


def _reason(err: BaseException) -> str:
    """The first line of a store's error, short enough for one line of output."""
    return str(err).splitlines()[0][:200] if str(err) else type(err).__name__


def staging_dir(url: str) -> Path:
    """The local folder a run into `url` works in ($SOCIETAS_STAGING_DIR or runs/.staging)."""
    base = Path(os.environ.get(STAGING_ENV) or Path("runs") / ".staging")
    return base / hashlib.sha256(url.encode()).hexdigest()[:16]


def reading_copy(url: str, *, checkpoints: bool = False) -> Path:
    """A local copy of what a report or an export reads of the run or experiment at `url`:
    every file but live memory and (unless `checkpoints`, for what restores an agent)
    checkpoints, fetched where the store's differs (beside the staging folders; what a
    report, export or interview writes there stays); RemoteOutError when the store cannot
    be read or holds nothing."""
    import pyarrow.fs as pafs

    fs, path = open_url(url)
    root = path.rstrip("/")
    staged = staging_dir(url)
    dest = staged.with_name(f"{staged.name}-read")
    skipped = ("memory",) if checkpoints else ("memory", "checkpoints")
    try:
        infos = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
        wanted = {
            rel: i
            for i in infos
            if i.type == pafs.FileType.File and _kept(rel := i.path[len(root) + 1 :], skipped)
        }
        if not wanted:
            raise RemoteOutError(f"{url}: holds no run (nothing there)")
        for rel, info in wanted.items():
            local = dest / rel
            if not _same_copy(local, info):
                local.parent.mkdir(parents=True, exist_ok=True)
                with fs.open_input_stream(info.path) as src, local.open("wb") as dst:
                    while chunk := src.read(1 << 22):
                        dst.write(chunk)
    except OSError as err:
        raise RemoteOutError(f"{url}: cannot read it: {_reason(err)}") from None
    fetched = dest / ".fetched.json"  # what came from the store: reports and exports stay
    before = json.loads(fetched.read_text()) if fetched.is_file() else []
    for rel in set(before) - set(wanted):  # gone from the store since (a resume rewrote it)
        (dest / rel).unlink(missing_ok=True)
    fetched.write_text(json.dumps(sorted(wanted)))
    return dest


def _kept(rel: str, skipped: tuple[str, ...]) -> bool:
    """Whether the file `rel` of a run or experiment is in no `skipped` folder, nor hidden."""
    return not any(p in skipped or p.startswith(".") for p in rel.split("/"))


def _same_copy(local: Path, info: Any) -> bool:
    """Whether `local` already holds the store's file `info` (same size, not older)."""
    if not local.is_file() or info.mtime is None:
        return False
    st = local.stat()
    return st.st_size == info.size and st.st_mtime >= info.mtime.timestamp()


def check_remote_out(url: str, *, overwrite: bool = False, resume: bool = False) -> None:
    """Raise RemoteOutError unless `url` is writable and free (or resumable)."""
    import pyarrow.fs as pafs

    fs, path = open_url(url)
    try:
        info = fs.get_file_info(f"{path}/run.json")
        if resume and info.type == pafs.FileType.NotFound:
            raise RemoteOutError("holds no run to resume (no run.json)")
        if not resume and not overwrite and info.type != pafs.FileType.NotFound:
            raise RemoteOutError(
                "holds another run; choose another URL, pass --overwrite, or resume it"
            )
        probe = f"{path}/.societas-write-test"
        with fs.open_output_stream(probe) as out:
            out.write(b"ok")
        fs.delete_file(probe)
    except RemoteOutError:
        raise
    except Exception as err:
        raise RemoteOutError(f"not writable: {_reason(err)}") from None


class RemoteSync:
    """Pushes a local run folder to its URL (and pulls it for a resume)."""

    def __init__(self, url: str, local: Path) -> None:
        self.url = url
        self.local = Path(local)
        self.fs, self.path = open_url(url)
        self.path = self.path.rstrip("/")
        self._pushed: dict[str, tuple[int, int]] = {}

    def push(self) -> None:
        """Mirror the local folder at the URL: upload new or changed files, delete what is
        gone locally (pruned checkpoints, results a resume rewrites). The live memory
        folder stays local: checkpoints carry the memory a resume needs."""
        import pyarrow.fs as pafs

        self.local.mkdir(parents=True, exist_ok=True)
        local = {}
        for path in self.local.rglob("*"):
            rel = path.relative_to(self.local).as_posix()
            if path.is_file() and not rel.startswith(SKIP):
                st = path.stat()
                local[rel] = (st.st_size, st.st_mtime_ns)
        for rel, stamp in sorted(local.items()):
            if self._pushed.get(rel) == stamp:
                continue
            with (
                (self.local / rel).open("rb") as src,
                self.fs.open_output_stream(f"{self.path}/{rel}") as dst,
            ):
                while chunk := src.read(1 << 22):
                    dst.write(chunk)
            self._pushed[rel] = stamp
        remote = self.fs.get_file_info(pafs.FileSelector(self.path, recursive=True))
        for info in remote:
            rel = info.path[len(self.path) + 1 :]
            if info.type == pafs.FileType.File and rel not in local:
                self.fs.delete_file(info.path)
                self._pushed.pop(rel, None)

    def clear(self) -> None:
        """Delete what the URL holds (--overwrite)."""
        self.fs.delete_dir_contents(self.path, missing_dir_ok=True)

    def pull(self) -> None:
        """Copy the URL's run into the local folder (resume)."""
        import pyarrow.fs as pafs

        self.local.mkdir(parents=True, exist_ok=True)
        pafs.copy_files(
            self.path,
            str(self.local.resolve()),
            source_filesystem=self.fs,
            destination_filesystem=pafs.LocalFileSystem(),
        )


def holds_run_at(where: str | Path) -> bool:
    """Whether a folder or URL holds (part of) a societas run."""
    from societas.cluster.observe.run_folder import RUN_MARKERS, holds_run

    if not is_url(where):
        return holds_run(Path(where))
    return any(name in RUN_MARKERS for name in names_under(str(where)))


def read_record_at(where: str | Path) -> dict[str, Any] | None:
    """`run.json` of a run in a folder or at a URL, as `read_record` reads it."""
    from societas.cluster.observe.run_folder import RUN_FILE, read_record, record_of

    if not is_url(where):
        return read_record(Path(where))
    raw = read_object(str(where), RUN_FILE)
    return None if raw is None else record_of(raw)


def last_complete_at(where: str | Path) -> int | None:
    """Tick of the last complete checkpoint (one with its manifest) in a folder or at a URL."""
    from societas.cluster.checkpoint import MANIFEST, last_complete

    if not is_url(where):
        return last_complete(where)
    url = str(where)
    names = names_under(url, "checkpoints")
    ticks = sorted(int(n[5:]) for n in names if n[:5] == "tick=" and n[5:].isdigit())
    done = [t for t in ticks if MANIFEST in names_under(url, f"checkpoints/tick={t}")]
    return done[-1] if done else None


def driver_alive_at(where: str | Path) -> int | None:
    """The pid of a run's driver when that very process still runs on this host (a run at a
    URL is read from its processes.json there, wherever its staging folder is)."""
    import socket

    from pydantic import ValidationError

    from societas.cluster.cleanup import ProcessesRecord, driver_alive, live_driver
    from societas.cluster.observe.run_folder import PROCESSES_FILE

    if not is_url(where):
        return driver_alive(Path(where))
    raw = read_object(str(where), PROCESSES_FILE)
    try:
        record = ProcessesRecord.model_validate_json(raw or b"{}")
    except ValidationError:
        return None
    return live_driver(record) if record.host in (None, socket.gethostname()) else None


def fetch_objects(url: str, names: list[str], dest: Path) -> None:
    """Copy the objects `names` under `url` (those it holds) to the same paths under `dest`."""
    for name in names:
        data = read_object(url, name)
        if data is not None:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            (dest / name).write_bytes(data)
