"""One suite measurement of one run: a value (None when it cannot be measured) and a note."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Measured:
    """A value measured in one run, or None with the reason in `note`; `detail` is this
    seed's own (listed per seed in the report)."""

    value: float | None
    note: str = ""
    detail: str = ""
