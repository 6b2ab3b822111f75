"""The environment: a map of places, the simulated clock, positions, and encounters.

An encounter is two agents at one place in one tick. Encounters are computed from position
reports alone (agent id -> place id), so it does not matter which group owns which agent:
the driver merges every group's report and pairs agents the same way in every layout.
"""

from __future__ import annotations

import math
import random
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

PLACE_KINDS = ("home", "work", "shop", "cafe", "park", "shelter")


@dataclass(frozen=True, slots=True)
class Place:
    """A location agents can be at."""

    id: str
    kind: str
    x: float
    y: float


class TownMap:
    """Places by id and kind, with nearest-place lookups."""

    def __init__(self, places: Iterable[Place]) -> None:
        self.places: dict[str, Place] = {p.id: p for p in places}
        self._by_kind: dict[str, list[Place]] = defaultdict(list)
        for p in self.places.values():
            self._by_kind[p.kind].append(p)

    def __contains__(self, place_id: object) -> bool:
        return place_id in self.places

    def of_kind(self, kind: str) -> list[Place]:
        """Places of one kind, in id order of creation."""
        return self._by_kind.get(kind, [])

    def kind_of(self, place_id: str) -> str:
        """'home', 'work', ...; 'unknown' for an id not on the map."""
        place = self.places.get(place_id)
        return place.kind if place else "unknown"

    def nearest(self, origin: Place, kind: str) -> Place:
        """The closest place of `kind` (ties by id order)."""
        options = self.of_kind(kind)
        if not options:
            raise KeyError(f"the map has no place of kind {kind!r}")
        return min(options, key=lambda p: math.hypot(p.x - origin.x, p.y - origin.y))


class Encounter(BaseModel):
    """Two agents at one place in one tick (a < b)."""

    model_config = ConfigDict(frozen=True)

    tick: int
    a: int
    b: int
    place: str


def _stable_seed(*parts: object) -> int:
    """A seed from its parts that does not change between processes (unlike hash())."""
    return zlib.crc32(":".join(map(str, parts)).encode())


def encounters(
    positions: Mapping[int, str], tick: int, seed: int, max_pairs_per_place: int = 50
) -> list[Encounter]:
    """Pair up agents sharing a place: seeded shuffle per (seed, tick, place), consecutive
    pairs, at most `max_pairs_per_place` pairs; sorted by (place, a, b)."""
    at: dict[str, list[int]] = defaultdict(list)
    for agent_id, place in positions.items():
        at[place].append(agent_id)
    out: list[Encounter] = []
    for place in sorted(at):
        members = at[place]
        if len(members) < 2:
            continue
        members.sort()
        random.Random(_stable_seed(seed, tick, place)).shuffle(members)
        for i in range(0, min(len(members) - 1, 2 * max_pairs_per_place), 2):
            a, b = sorted((members[i], members[i + 1]))
            out.append(Encounter(tick=tick, a=a, b=b, place=place))
    return out


class SimTime(BaseModel):
    """Where a tick falls in simulated time."""

    model_config = ConfigDict(frozen=True)

    tick: int
    day: int
    t: float
    hour: float

    @classmethod
    def of(cls, tick: int, tick_seconds: float, start_hour: int) -> SimTime:
        """Tick 0 starts at `start_hour` on day 0."""
        total = start_hour * 3600.0 + tick * tick_seconds
        day, t = divmod(total, 86_400.0)
        return cls(tick=tick, day=int(day), t=t, hour=t / 3600.0)


class EnvironmentView:
    """What an agent can see of the world this tick: the map, the time, the town's state."""

    def __init__(self, town: TownMap, time: SimTime, danger: bool = False) -> None:
        self.town = town
        self.time = time
        self.danger = danger
