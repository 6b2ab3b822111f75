"""Cluster jobs through the Ray Jobs API: submit a run config, follow it, stop it.

Token auth (Ray >= 2.5x enables it by default for clusters started with `ray.init()`, and
`ray start --head` enables it when a token exists): a process that only talks HTTP to the
dashboard does not turn it on by itself unless `RAY_AUTH_MODE=token` is set, so requests
would get 401. `auth_headers` therefore reads the token the way Ray does, from
`RAY_AUTH_TOKEN`, else the file named by `RAY_AUTH_TOKEN_PATH`, else `~/.ray/auth_token`, and
sends it as `Authorization: Bearer ...`; `RAY_AUTH_MODE=disabled` sends nothing. The token is
never logged, printed, or put into the job's runtime_env.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

DEFAULT_ADDRESS = "http://127.0.0.1:8265"
AGENT_WAIT_S = 60.0  # how long submit waits for a fresh head's job agent
STOP_WAIT_S = 120  # SIGTERM -> SIGKILL grace of a stopped job (final checkpoint)
PACKAGES = {"cluster": "cluster", "agents": "agents", "memory": "memory"}


class JobsError(RuntimeError):
    """A Jobs API call failed; the message says why and what to do (auth, address)."""


def read_token(env: Mapping[str, str] | None = None) -> str | None:
    """The Ray auth token from the environment or token file, or None (never logged)."""
    env = os.environ if env is None else env
    if env.get("RAY_AUTH_MODE", "").lower() == "disabled":
        return None
    token = env.get("RAY_AUTH_TOKEN", "").strip()
    if token:
        return token
    path = env.get("RAY_AUTH_TOKEN_PATH") or str(Path.home() / ".ray" / "auth_token")
    try:
        token = Path(path).expanduser().read_text().strip()
    except OSError:
        return None
    return token or None


def auth_headers(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`Authorization: Bearer <token>` when a token is configured, else nothing."""
    token = read_token(env)
    return {"Authorization": f"Bearer {token}"} if token else {}


def client(address: str | None = None) -> Any:
    """A `JobSubmissionClient` for `address` (or RAY_ADDRESS / the local dashboard) with auth."""
    from ray.job_submission import JobSubmissionClient

    addr = address or os.environ.get("RAY_JOBS_ADDRESS") or DEFAULT_ADDRESS
    if not addr.startswith(("http://", "https://")):
        raise JobsError(f"--address must be the dashboard URL (http://HEAD:8265), got {addr!r}")
    try:
        return JobSubmissionClient(addr, headers=auth_headers())
    except Exception as err:  # ConnectionError, auth errors from the version probe
        raise JobsError(_explain(err, addr)) from None


def _explain(err: BaseException, address: str) -> str:
    text = str(err)
    no_token = ("401", "Unauthorized", "Authentication required", "cannot be opened or is empty")
    if any(marker in text for marker in no_token):
        return (
            f"{address}: the cluster requires a token. Export RAY_AUTH_TOKEN (or "
            "RAY_AUTH_TOKEN_PATH, or put it in ~/.ray/auth_token); on the head node "
            "`ray get-auth-token` prints it."
        )
    if "403" in text or "Forbidden" in text or "invalid or incorrect" in text:
        return f"{address}: the token was rejected; check RAY_AUTH_TOKEN / ~/.ray/auth_token."
    return f"{address}: {text.splitlines()[0] if text else type(err).__name__}"


class SubmitSpec(BaseModel):
    """A run to submit: config file, where results go on the cluster, overrides."""

    config: Path
    out: str = Field(description="Run directory on the cluster (shared storage on multi-node).")
    agents: int | None = None
    ticks: int | None = None
    groups: int | None = None
    ship_code: bool = Field(True, description="Send this checkout's societas as py_modules.")
    env_vars: dict[str, str] = Field(default_factory=dict)
    job_id: str | None = None
    overwrite: bool = False
    checkpoint_every: int | None = None
    keep_checkpoints: int | None = None
    skip_service_checks: bool = False


def stage_package(dest: Path) -> Path:
    """Copy the package root and its three rooms into `dest/societas` (what `py_modules`
    uploads)."""
    import societas.cluster

    root = Path(societas.cluster.__file__).resolve().parent.parent
    pkg = dest / "societas"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(root / "societas", pkg, ignore=ignore)
    for name, folder in PACKAGES.items():
        shutil.copytree(root / folder, pkg / name, ignore=ignore)
    return pkg


def entrypoint(spec: SubmitSpec) -> str:
    """The job's command: `societas run` on the uploaded config, attached to the cluster."""
    parts = ["python", "-m", "societas.cluster.cli", "run", spec.config.name, "--out", spec.out]
    for flag, value in (
        ("--agents", spec.agents),
        ("--ticks", spec.ticks),
        ("--groups", spec.groups),
        ("--checkpoint-every", spec.checkpoint_every),
        ("--keep-checkpoints", spec.keep_checkpoints),
    ):
        if value is not None:
            parts += [flag, str(value)]
    if spec.overwrite:
        parts.append("--overwrite")
    if spec.skip_service_checks:
        parts.append("--skip-service-checks")
    return " ".join(shlex.quote(p) for p in parts)


def progress_from_logs(text: str) -> dict[str, str]:
    """The last `progress ...` line a run printed (tick, simulated time, steps/s, LLM)."""
    for line in reversed(text.splitlines()):
        if line.startswith("progress "):
            return {k: v.strip("'") for k, v in (f.split("=", 1) for f in shlex.split(line)[1:])}
    return {}


def submit(spec: SubmitSpec, address: str | None = None) -> str:
    """Upload the config (and the code), submit the job, return its id."""
    if not spec.config.is_file():
        raise JobsError(f"{spec.config}: no such config file")
    jobs = client(address)
    with tempfile.TemporaryDirectory(prefix="societas-job-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        shutil.copy2(spec.config, work / spec.config.name)
        runtime_env: dict[str, Any] = {
            "working_dir": str(work),
            "env_vars": {
                "HF_HUB_OFFLINE": "1",
                "RAY_USAGE_STATS_ENABLED": "0",
                # `societas stop JOB` sends SIGTERM; the run needs time for its final checkpoint.
                "RAY_JOB_STOP_WAIT_TIME_S": str(STOP_WAIT_S),
                **spec.env_vars,
            },
        }
        if spec.ship_code:
            runtime_env["py_modules"] = [str(stage_package(Path(tmp) / "code"))]
        # A head that just started may have no job agent yet ("No available agent to submit
        # job, please try again later"): that answer alone is retried, for a bounded time.
        deadline = time.monotonic() + AGENT_WAIT_S
        while True:
            try:
                return str(
                    jobs.submit_job(
                        entrypoint=entrypoint(spec),
                        runtime_env=runtime_env,
                        submission_id=spec.job_id,
                        metadata={"societas_config": spec.config.name, "out": spec.out},
                    )
                )
            except Exception as err:
                if "No available agent" in str(err) and time.monotonic() < deadline:
                    time.sleep(1.0)  # a synchronous CLI call, not inside an event loop
                    continue
                raise JobsError(_explain(err, address or DEFAULT_ADDRESS)) from None


def status(job_id: str, address: str | None = None) -> dict[str, Any]:
    """Status, message and timing of a job."""
    jobs = client(address)
    try:
        info = jobs.get_job_info(job_id)
    except Exception as err:
        raise JobsError(_explain(err, address or DEFAULT_ADDRESS)) from None
    return {
        "job_id": job_id,
        "status": str(info.status.value if hasattr(info.status, "value") else info.status),
        "message": info.message,
        "entrypoint": info.entrypoint,
        "start_time": info.start_time,
        "end_time": info.end_time,
    }


def logs(job_id: str, address: str | None = None) -> str:
    """Everything the job printed so far."""
    jobs = client(address)
    try:
        return str(jobs.get_job_logs(job_id))
    except Exception as err:
        raise JobsError(_explain(err, address or DEFAULT_ADDRESS)) from None


async def follow(job_id: str, address: str | None = None) -> AsyncIterator[str]:
    """Yield log chunks as the job prints them, until it ends."""
    jobs = client(address)
    async for chunk in jobs.tail_job_logs(job_id):
        yield chunk


def stop(job_id: str, address: str | None = None) -> bool:
    """Ask the cluster to stop a job; True if it was running."""
    jobs = client(address)
    try:
        return bool(jobs.stop_job(job_id))
    except Exception as err:
        raise JobsError(_explain(err, address or DEFAULT_ADDRESS)) from None
