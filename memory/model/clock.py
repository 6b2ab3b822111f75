"""The simulated clock memories are stamped with: day number and seconds since midnight."""

from __future__ import annotations

from pydantic import BaseModel, Field

SECONDS_PER_DAY = 86_400


class SimClock(BaseModel, validate_assignment=True):
    """Simulated time shared by a group's agents; `abs_seconds` orders all memories."""

    day: int = Field(0, ge=0, description="Simulated day, starting at 0.")
    t: float = Field(0.0, ge=0.0, lt=SECONDS_PER_DAY, description="Seconds since midnight.")

    @property
    def abs_seconds(self) -> float:
        """Seconds since the start of day 0: the time axis recency decays over."""
        return self.day * SECONDS_PER_DAY + self.t

    def advance(self, seconds: float) -> None:
        """Move the clock forward, rolling over midnight into the next day."""
        if seconds < 0:
            raise ValueError(f"advance: seconds must be >= 0, got {seconds!r}")
        total = self.abs_seconds + seconds
        day, t = divmod(total, SECONDS_PER_DAY)
        self.day, self.t = int(day), float(t)

    def set(self, day: int, t: float) -> None:
        """Jump to (day, t), validated like the fields."""
        self.day, self.t = day, t


def format_time_of_day(t: float) -> str:
    """Seconds since midnight as HH:MM, the way memories are shown to an LLM."""
    minutes = int(t) // 60
    return f"{minutes // 60:02d}:{minutes % 60:02d}"
