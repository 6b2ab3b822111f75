"""`select: {share: p}`: a seeded sample in proportion to the population (at least one), so
the town's rumour reaches as large a part of 1,000 agents as of 200."""

from __future__ import annotations

from societas.agents.experiments.schema import Selector
from societas.agents.population import population_for
from societas.agents.scenario import load_scenario

from .test_outcomes_recorded import cfg


def test_share_scales_with_the_population_and_is_seeded():
    for count, expected in ((10, 1), (200, 3), (1000, 15)):
        pop = population_for(load_scenario(cfg(agents={"count": count})))
        chosen = pop.select(Selector(share=0.015), 0, 5)
        assert len(chosen) == expected
        assert chosen == pop.select(Selector(share=0.015), 0, 5)
    pop = population_for(load_scenario(cfg(agents={"count": 200})))
    assert pop.select(Selector(share=0.5), 1, 5) != pop.select(Selector(share=0.5), 2, 5)
    low = pop.select(Selector(share=0.5, income_below=2000), 1, 5)
    assert all(pop.profiles[i].income < 2000 for i in low)
