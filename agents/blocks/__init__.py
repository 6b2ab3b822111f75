"""Built-in blocks (after AgentSociety's society agent and Generative Agents): social,
plan, mobility, needs, economy, cognition; `default_blocks` builds them in step order."""

from __future__ import annotations

from societas.agents.blocks.cognition import CognitionBlock
from societas.agents.blocks.economy import EconomyBlock
from societas.agents.blocks.mobility import MobilityBlock, resolve_place
from societas.agents.blocks.needs import NEED_KEYS, NeedsBlock, current_need
from societas.agents.blocks.plan import PlanBlock, categorize
from societas.agents.blocks.social import SocialBlock
from societas.agents.scenario import ScenarioConfig


def default_blocks(scenario: ScenarioConfig) -> list:
    """The blocks every agent runs each tick, in order: perceive and talk, decide what to do,
    move, update needs, earn and spend, think."""
    return [
        SocialBlock(scenario),
        PlanBlock(scenario),
        MobilityBlock(),
        NeedsBlock(scenario),
        EconomyBlock(scenario),
        CognitionBlock(scenario),
    ]


__all__ = [
    "NEED_KEYS",
    "CognitionBlock",
    "EconomyBlock",
    "MobilityBlock",
    "NeedsBlock",
    "PlanBlock",
    "SocialBlock",
    "categorize",
    "current_need",
    "default_blocks",
    "resolve_place",
]
