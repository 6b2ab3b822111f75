"""The demographic fields the AgentSociety seed's thought and attitude prompts show (race,
religion, marital status, residence, education, skill, family consumption), drawn per agent
from seeded distributions: marital status by age, skill by occupation, family consumption by
income rank. A profiles file may set any of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RACES = {"white": 0.58, "hispanic": 0.19, "black": 0.12, "asian": 0.06, "other": 0.05}
RELIGIONS = {
    "christianity": 0.63,
    "no religion": 0.29,
    "judaism": 0.02,
    "islam": 0.01,
    "buddhism": 0.01,
    "hinduism": 0.01,
    "another religion": 0.03,
}
RESIDENCES = {"urban": 0.31, "suburban": 0.55, "rural": 0.14}
EDUCATION = {"below bachelor": 0.62, "bachelor": 0.23, "master": 0.11, "doctor": 0.04}
MARRIAGE = ("single", "married", "divorced", "widowed")
# Marital status weights by age band (upper age bound, weights in MARRIAGE order).
MARRIAGE_BY_AGE = (
    (25, (0.85, 0.14, 0.01, 0.0)),
    (35, (0.45, 0.48, 0.07, 0.0)),
    (50, (0.22, 0.60, 0.16, 0.02)),
    (65, (0.12, 0.62, 0.19, 0.07)),
    (200, (0.06, 0.52, 0.14, 0.28)),
)
CONSUMPTION = ("low", "slightly low", "medium", "slightly high", "high")
SKILLS = {
    "teacher": "teaching and explaining",
    "nurse": "caring for patients",
    "baker": "baking bread and pastry",
    "clerk": "bookkeeping and paperwork",
    "engineer": "designing and repairing machines",
    "shop assistant": "serving customers",
    "driver": "driving",
    "unemployed": "odd jobs",
    "retired": "gardening and cooking",
}
OTHER_SKILLS = ("cooking", "carpentry", "bookkeeping", "gardening", "sewing", "driving")
FIELDS = (
    "race",
    "religion",
    "marriage_status",
    "residence",
    "education",
    "skill",
    "family_consumption",
)


@dataclass(frozen=True, slots=True)
class Demographics:
    """One agent's seed demographic fields."""

    race: str
    religion: str
    marriage_status: str
    residence: str
    education: str
    skill: str
    family_consumption: str


def _pick(rng: np.random.Generator, table: dict[str, float], n: int) -> list[str]:
    names = list(table)
    weights = np.array([table[k] for k in names], dtype=float)
    return [names[i] for i in rng.choice(len(names), size=n, p=weights / weights.sum())]


def _marriage(rng: np.random.Generator, age: int) -> str:
    weights = next(w for top, w in MARRIAGE_BY_AGE if age < top)
    p = np.array(weights, dtype=float)
    return MARRIAGE[int(rng.choice(len(MARRIAGE), p=p / p.sum()))]


def draw(
    seed: int, ages: Sequence[int], occupations: Sequence[str], incomes: Sequence[float]
) -> list[Demographics]:
    """Every agent's fields from its own RNG stream of `seed`, so drawing them leaves the
    population's other draws unchanged; family consumption follows the income quintile,
    one level up or down for a fifth of the agents."""
    n = len(ages)
    rng = np.random.default_rng([seed, 13])
    races, religions = _pick(rng, RACES, n), _pick(rng, RELIGIONS, n)
    residences, education = _pick(rng, RESIDENCES, n), _pick(rng, EDUCATION, n)
    ranks = np.argsort(np.argsort(np.asarray(incomes, dtype=float))) if n else np.array([])
    out = []
    for i in range(n):
        level = int(ranks[i] * len(CONSUMPTION) // n) if n else 2
        shift = int(rng.choice((-1, 0, 0, 0, 0, 0, 0, 0, 0, 1)))
        level = min(len(CONSUMPTION) - 1, max(0, level + shift))
        occupation = occupations[i]
        skill = SKILLS.get(occupation) or OTHER_SKILLS[int(rng.integers(len(OTHER_SKILLS)))]
        out.append(
            Demographics(
                race=races[i],
                religion=religions[i],
                marriage_status=_marriage(rng, int(ages[i])),
                residence=residences[i],
                education=education[i],
                skill=skill,
                family_consumption=CONSUMPTION[level],
            )
        )
    return out
