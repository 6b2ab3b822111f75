"""A run's counts over all its invocations: a resumed run's run.json says so, lists each
segment, and its top-level counts and final progress come from the cumulative totals (the
checkpointed ones, deterministic over resumes), not from the last invocation alone."""

from __future__ import annotations

from typing import Any

WHOLE = {"llm_requests": "llm_requests", "llm_tokens": "llm_tokens", "agent_steps": "agent_steps"}


def whole_run(previous: dict[str, Any], data: dict[str, Any], ticks: int) -> dict[str, Any]:
    """`data` (the record about to be written at the end of an invocation) with `segments`,
    `resumed`, and whole-run counts and final progress from the run loop's totals."""
    segment = {
        "start_tick": data.get("start_tick", data.get("first_tick", 0)),
        "ticks_run": data.get("ticks_run"),
        "llm_requests": data.get("llm_requests"),
        "llm_tokens": data.get("llm_tokens"),
        "wall_s": data.get("wall_s"),
        "ended_at": data.get("ended_at"),
    }
    out = {**data, "segments": [*previous.get("segments", []), segment]}
    out["resumed"] = int(data.get("resumes") or 0) > 0
    totals = data.get("totals") or {}
    if all(k in totals for k in WHOLE.values()):  # the run loop's, cumulative over resumes
        for field, key in WHOLE.items():
            out[field] = int(totals[key])
        out["progress"] = {
            **(data.get("progress") or {}),
            "tick": ticks,
            "ticks": ticks,
            "llm_requests": int(totals["llm_requests"]),
            "llm_tokens": int(totals["llm_tokens"]),
        }
    return out


def segments_before(previous: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The segments a resumed run had: those recorded, plus the interrupted one it resumes."""
    if not previous:
        return []
    segments = list(previous.get("segments", []))
    if previous.get("status") != "completed":
        segments.append(
            {
                "start_tick": previous.get("start_tick", 0),
                "ticks_done": previous.get("ticks_done"),
                "status": previous.get("status"),
                "llm_requests": (previous.get("progress") or {}).get("llm_requests"),
                "llm_tokens": (previous.get("progress") or {}).get("llm_tokens"),
                "ended_at": previous.get("ended_at"),
            }
        )
    return segments
