"""Seeded generation of the whole society: places, profiles and the social network.

Every group regenerates the same population from the scenario and the seed and keeps only
its own agents, so nothing but agent ids has to be shipped to a group, and intervention
selectors see the whole population the same way in every group.
"""

from __future__ import annotations

import itertools
import math
import os
import string
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import networkx as nx
import numpy as np

from societas.agents import demographics
from societas.agents.cognition.persona import plain_names
from societas.agents.environment import Place, TownMap
from societas.agents.friends import FriendTable
from societas.agents.llm.meaning import Population as PlainNames
from societas.agents.scenario import ScenarioConfig, Selector

FIRST = (
    "Ada",
    "Ben",
    "Cleo",
    "Dan",
    "Eva",
    "Finn",
    "Gia",
    "Hugo",
    "Ines",
    "Jon",
    "Kim",
    "Leo",
    "Mia",
    "Noah",
    "Olga",
    "Paul",
    "Quin",
    "Rosa",
    "Sam",
    "Tara",
    "Umar",
    "Vera",
    "Will",
    "Xia",
    "Yara",
    "Zed",
)
LAST = (
    "Adams",
    "Brown",
    "Chen",
    "Diaz",
    "Evans",
    "Fox",
    "Garcia",
    "Hill",
    "Ito",
    "Jones",
    "Khan",
    "Lopez",
    "Moore",
    "Nagy",
    "Owens",
    "Patel",
    "Quinn",
    "Rossi",
    "Smith",
    "Tanaka",
)
# The gender each first name is read as (a model reads it too); the rest fit anyone.
FEMALE_NAMES = frozenset("Ada Cleo Eva Gia Ines Mia Olga Rosa Tara Vera Xia Yara".split())
MALE_NAMES = frozenset("Ben Dan Finn Hugo Jon Leo Noah Paul Umar Will Zed".split())
PERSONALITIES = (
    "outgoing and curious",
    "calm and careful",
    "anxious and conscientious",
    "friendly and talkative",
    "reserved and analytical",
    "stubborn and proud",
)
NO_WORK = ("unemployed", "retired")


_SHARED = "population profiles are memoised and shared; copy what you change"


class FrozenProfileError(AttributeError):
    """A change to a sealed (shared) profile."""


class FrozenDict(dict):
    """A dict that refuses changes (picklable, JSON-serialisable like a dict)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(f"read-only mapping: {_SHARED}")

    __setitem__ = __delitem__ = __ior__ = _refuse  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))


@dataclass(slots=True)
class Profile:
    """One agent's generated traits and its places."""

    id: int
    name: str
    age: int
    gender: str
    occupation: str
    income: float
    personality: str
    home: str
    work: str
    shelter: str
    leisure: str
    shop: str
    trust: float
    stubbornness: float
    sociability: float
    attitudes: dict[str, float] = field(default_factory=dict)
    # The seed's demographic fields (agents.demographics), shown in thought and attitude prompts.
    race: str = ""
    religion: str = ""
    marriage_status: str = ""
    residence: str = ""
    education: str = ""
    skill: str = ""
    family_consumption: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # custom attributes from a file
    agent_type: str = "citizen"  # the `type` attribute: picks the agent's memory profile
    _sealed: bool = field(default=False, init=False, repr=False, compare=False)

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_sealed", False):
            raise FrozenProfileError(f"profile {self.id}: {name!r} is read-only ({_SHARED})")
        object.__setattr__(self, name, value)

    def seal(self) -> None:
        """Make this profile read-only (the memoised population is shared by every group)."""
        object.__setattr__(self, "attitudes", FrozenDict(self.attitudes))
        object.__setattr__(self, "extra", FrozenDict(self.extra))
        object.__setattr__(self, "_sealed", True)

    def kv(self) -> dict[str, Any]:
        """Initial KV memory values of this agent (custom attributes from a file included)."""
        return {
            **self.extra,
            "name": self.name,
            "age": self.age,
            "gender": self.gender,
            "occupation": self.occupation,
            "income": round(self.income, 2),
            "personality": self.personality,
            "home": self.home,
            "work": self.work,
            "position": self.home,
            "attitude": dict(self.attitudes),
            "currency": round(self.income * 0.5, 2),
            "trust_government": self.trust,
            "type": self.agent_type,
            **{k: getattr(self, k) for k in demographics.FIELDS},
        }


@dataclass(frozen=True)
class Population:
    """The generated society: town map, profiles by id, friend lists with tie strength.

    Read-only once generated: `population_for` hands the same object to every group of a
    process (profiles sealed, friend lists tuples)."""

    town: TownMap
    profiles: tuple[Profile, ...]
    friends: FriendTable  # agent id -> tuple of (friend id, tie strength)

    def __len__(self) -> int:
        return len(self.profiles)

    @cached_property
    def plain_names(self) -> PlainNames:
        """Every name as prompts show it, sorted, each once: whom a model's text may name."""
        return plain_names(p.name for p in self.profiles)

    def select(self, sel: Selector, salt: int, seed: int) -> set[int]:
        """Agent ids matching a selector; `fraction`/`count` are seeded by (seed, salt)."""
        ids = [p.id for p in self.profiles if _matches(p, sel)]
        if sel.ids is not None:
            wanted = set(sel.ids)
            ids = [i for i in ids if i in wanted]
        rng = np.random.default_rng([seed, salt, 7])
        if sel.fraction is not None:
            draws = rng.random(len(self.profiles))
            ids = [i for i in ids if draws[i] < sel.fraction]
        if sel.count is not None and len(ids) > sel.count:
            ids = sorted(rng.choice(ids, size=sel.count, replace=False).tolist())
        if sel.share is not None:  # a sample in proportion to the whole population
            size = min(len(ids), max(1, round(sel.share * len(self.profiles))))
            ids = sorted(rng.choice(ids, size=size, replace=False).tolist()) if ids else []
        return set(ids)


def _matches(p: Profile, s: Selector) -> bool:
    return not (
        (s.occupation is not None and p.occupation not in s.occupation)
        or (s.income_below is not None and p.income >= s.income_below)
        or (s.income_above is not None and p.income <= s.income_above)
        or (s.age_min is not None and p.age < s.age_min)
        or (s.age_max is not None and p.age > s.age_max)
    )


def _scaled(count: int, n_agents: int, per: int | None) -> int:
    return count if per is None else max(1, round(count * n_agents / per))


def build_town(cfg: ScenarioConfig, rng: np.random.Generator) -> TownMap:
    """Homes for the households plus workplaces, shops, cafes, parks and shelters."""
    n, m = cfg.agents.count, cfg.map
    counts = {
        "home": math.ceil(n / cfg.agents.household_size),
        "work": _scaled(m.workplaces, n, m.per_agents),
        "shop": _scaled(m.shops, n, m.per_agents),
        "cafe": _scaled(m.cafes, n, m.per_agents),
        "park": _scaled(m.parks, n, m.per_agents),
        "shelter": _scaled(m.shelters, n, m.per_agents),
    }
    places = []
    for kind, k in counts.items():
        xy = rng.random((k, 2)) * m.size_km
        places += [
            Place(id=f"{kind}-{i}", kind=kind, x=float(x), y=float(y))
            for i, (x, y) in enumerate(xy)
        ]
    return TownMap(places)


def _attitudes(cfg: ScenarioConfig, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    out = {}
    for topic in cfg.topics:
        if topic.initial == "uniform":
            values = rng.uniform(0, 10, n)
        elif topic.initial == "bimodal":
            side = rng.random(n) < 0.5
            values = np.where(side, rng.normal(3.0, topic.sd, n), rng.normal(7.0, topic.sd, n))
        else:
            values = rng.normal(topic.mean, topic.sd, n)
        out[topic.name] = np.clip(values, 0.0, 10.0).round(3)
    return out


def generate(cfg: ScenarioConfig) -> Population:
    """The whole society for this scenario and seed (deterministic)."""
    rng = np.random.default_rng([cfg.seed, 1])
    pop = cfg.agents
    n = pop.count
    town = build_town(cfg, rng)
    ages = np.clip(rng.normal(pop.age_mean, pop.age_sd, n), pop.age_min, pop.age_max).astype(int)
    jobs = sorted(pop.occupations)  # not the mapping order: config.json sorts its keys
    weights = np.array([pop.occupations[j] for j in jobs], dtype=float)
    occ = rng.choice(len(jobs), size=n, p=weights / weights.sum())
    incomes = pop.income_median * np.exp(rng.normal(0.0, pop.income_sigma, n))
    trust = rng.beta(*pop.trust_government, n)
    stubborn = rng.uniform(0.1, 0.9, n)
    sociable = rng.uniform(0.2, 1.0, n)
    attitudes = _attitudes(cfg, rng, n)
    homes, works = town.of_kind("home"), town.of_kind("work")
    home_of = rng.permutation(np.arange(n) % len(homes))
    work_of = rng.integers(0, len(works), n)
    generated = unique_names(n, cfg.seed)
    profiles = []
    for i in range(n):
        occupation = jobs[occ[i]]
        if ages[i] >= pop.retirement_age:
            occupation = "retired"
        home = homes[home_of[i]]
        employed = occupation not in NO_WORK
        income = float(incomes[i]) if employed else float(incomes[i]) * 0.35
        profiles.append(
            Profile(
                id=i,
                name=generated[i],
                age=int(ages[i]),
                gender=gender_of(generated[i], rng.random()),
                occupation=occupation,
                income=round(income, 2),
                personality=PERSONALITIES[int(rng.integers(len(PERSONALITIES)))],
                home=home.id,
                work=works[work_of[i]].id if employed else "",
                shelter=town.nearest(home, "shelter").id,
                leisure=town.nearest(home, "cafe" if rng.random() < 0.6 else "park").id,
                shop=town.nearest(home, "shop").id,
                trust=round(float(trust[i]), 4),
                stubbornness=round(float(stubborn[i]), 4),
                sociability=round(float(sociable[i]), 4),
                attitudes={t: float(v[i]) for t, v in attitudes.items()},
            )
        )
    ages_now = [p.age for p in profiles]
    drawn_fields = demographics.draw(
        cfg.seed, ages_now, [p.occupation for p in profiles], [p.income for p in profiles]
    )
    for p, d in zip(profiles, drawn_fields, strict=True):
        for key in demographics.FIELDS:
            setattr(p, key, getattr(d, key))
    if pop.types:  # own RNG stream: declaring types leaves every other draw unchanged
        names = sorted(pop.types)
        shares = np.array([pop.types[t] for t in names], dtype=float)
        drawn = np.random.default_rng([cfg.seed, 7]).choice(len(names), n, p=shares / shares.sum())
        for p, k in zip(profiles, drawn.tolist(), strict=True):
            p.agent_type = names[k]
    if pop.profiles is not None:
        apply_profile_file(cfg, profiles, [w.id for w in works])
        _rename_misfits(profiles, generated, cfg.seed)
    friends = social_network(cfg, profiles, rng)
    for p in profiles:
        p.seal()
    return Population(town=town, profiles=tuple(profiles), friends=FriendTable(friends, n))


def _middles(k: int) -> list[str]:
    """The middle parts of `k` initials: [''] for 0, then 'A.'..'Z.', 'A. A.'.., in order."""
    letters = itertools.product(string.ascii_uppercase, repeat=k)
    return [" ".join(f"{c}." for c in group) for group in letters]


def name_stream(seed: int) -> Iterator[str]:
    """Endless distinct plain names, seeded: shuffled first x last names, then tiers that add
    middle initials and a second surname, never a number."""
    rng = np.random.default_rng([seed, 11])
    pairs = [(f, last) for f in FIRST for last in LAST]
    doubles = [(f, f"{a}-{b}") for f in FIRST for a in LAST for b in LAST if a != b]
    first_tiers = [(pairs, [""]), (pairs, _middles(1)), (doubles, [""]), (doubles, _middles(1))]
    more = ((block, _middles(k)) for k in itertools.count(2) for block in (pairs, doubles))
    for block, middles in itertools.chain(first_tiers, more):
        for j in rng.permutation(len(block) * len(middles)).tolist():
            (first, last), middle = block[j % len(block)], middles[j // len(block)]
            yield f"{first} {middle} {last}" if middle else f"{first} {last}"


def unique_names(n: int, seed: int) -> list[str]:
    """The first `n` names of the seed's name stream: distinct, digit-free, deterministic."""
    return list(itertools.islice(name_stream(seed), n))


def name_gender(name: str) -> str | None:
    """The gender a generated name's first name is read as; None when it fits anyone."""
    first = name.split(" ", 1)[0]
    return "female" if first in FEMALE_NAMES else "male" if first in MALE_NAMES else None


def gender_of(name: str, coin: float) -> str:
    """A generated agent's gender: its name's, else the coin's (drawn for every agent, so the
    draws after it do not depend on the name)."""
    return name_gender(name) or ("female", "male")[int(coin < 0.5)]


def fits(name: str, gender: str) -> bool:
    """Whether a name may be a person of `gender` (any name for a gender not female or male)."""
    read = name_gender(name)
    return read is None or read == gender or gender not in ("female", "male")


def _rename_misfits(profiles: list[Profile], generated: list[str], seed: int) -> None:
    """Give a fresh generated name to agents whose generated name a profiles file uses for
    another agent, or that does not fit the gender the file gives; names from the file stay
    as given (duplicates there are told apart by id)."""
    kept = {p.name for p in profiles if p.name != generated[p.id]}
    misfits = [
        p
        for p in profiles
        if p.name == generated[p.id] and (p.name in kept or not fits(p.name, p.gender))
    ]
    used = kept | {p.name for p in profiles}
    stream = name_stream(seed)
    spare: list[str] = []  # names passed over for a misfit of another gender, kept in order
    for p in misfits:
        name = next((n for n in spare if fits(n, p.gender)), None)
        if name is not None:
            spare.remove(name)
        while name is None:
            n = next(stream)
            if n in used:
                continue
            used.add(n)
            if fits(n, p.gender):
                name = n
            else:
                spare.append(n)
        p.name = name


def apply_profile_file(cfg: ScenarioConfig, profiles: list[Profile], works: list[str]) -> None:
    """Overwrite generated traits with the profiles file's columns, row i -> agent i."""
    from societas.agents.experiments.profiles import load_profiles

    assert cfg.agents.profiles is not None
    types: dict[str, str] = {a.name: a.type for a in cfg.attributes}
    rows = load_profiles(cfg.agents.profiles, types, [t.name for t in cfg.topics])
    for p, row in zip(profiles, rows, strict=False):
        for key, value in row["profile"].items():
            setattr(p, "agent_type" if key == "type" else key, value)
        if "occupation" in row["profile"]:
            employed = p.occupation not in NO_WORK
            p.work = (p.work or works[p.id % len(works)]) if employed else ""
        p.attitudes.update(row["attitude"])
        p.extra = dict(row["attribute"])


def _ws(n: int, k: int, p: float, seed: int, kind: str) -> nx.Graph:
    if kind == "random":
        return nx.gnm_random_graph(n, n * k // 2, seed=seed)
    return nx.watts_strogatz_graph(n, min(k, n - 1), p, seed=seed)


def social_network(
    cfg: ScenarioConfig, profiles: list[Profile], rng: np.random.Generator
) -> dict[int, list[tuple[int, float]]]:
    """Small world over agents ordered by a trait mixed with noise (homophily), plus an
    optional separate small world of the last `isolated` agents (a disconnected component)."""
    net, n = cfg.network, len(profiles)
    if net.edges is not None:  # the researcher's own network (validated at load)
        from societas.agents.experiments.edges import read_edges

        return read_edges(net.edges, n)
    friends: dict[int, list[tuple[int, float]]] = {i: [] for i in range(n)}
    if net.kind == "none":
        return friends
    main_n = n - net.isolated
    trait = {
        "attitude": [next(iter(p.attitudes.values()), 5.0) for p in profiles[:main_n]],
        "age": [float(p.age) for p in profiles[:main_n]],
        "income": [p.income for p in profiles[:main_n]],
    }[net.homophily_on]
    ranks = np.argsort(np.argsort(np.asarray(trait))) / max(1, main_n - 1)
    key = net.homophily * ranks + (1 - net.homophily) * rng.random(main_n)
    order = np.argsort(key, kind="stable")
    parts = [(order.tolist(), _ws(main_n, net.k, net.rewire_p, cfg.seed, net.kind))]
    if net.isolated >= 2:
        iso = list(range(main_n, n))
        k = min(net.k, max(2, net.isolated - 1))
        parts.append((iso, _ws(net.isolated, k, net.rewire_p, cfg.seed + 1, net.kind)))
    strength = rng.uniform(0.3, 1.0, size=n * net.k * 2 + 16)
    s = 0
    for members, graph in parts:
        for a, b in sorted(graph.edges()):
            u, v = members[a], members[b]
            w = round(float(strength[s % len(strength)]), 3)
            s += 1
            friends[u].append((v, w))
            friends[v].append((u, w))
    return {i: sorted(f) for i, f in friends.items()}


@lru_cache(maxsize=4)
def _cached(json_cfg: str, _stamp: tuple[int, int] = (0, 0)) -> Population:
    return generate(ScenarioConfig.model_validate_json(json_cfg))


def population_for(cfg: ScenarioConfig) -> Population:
    """`generate`, memoised per process (in-process groups share one population)."""
    return _cached(
        cfg.model_dump_json(exclude={"groups", "memory", "llm", "results"}),
        _file_stamp(cfg.agents.profiles),
    )


def _file_stamp(path: Any) -> tuple[int, int]:
    """(mtime, size) of a profiles file: an edited file is read again, not served stale."""
    try:
        st = os.stat(path) if path is not None else None
    except OSError:
        return (0, 0)
    return (st.st_mtime_ns, st.st_size) if st is not None else (0, 0)
