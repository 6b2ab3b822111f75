"""`society.agents.at_baseline()`: subgroups selected on status before the first
intervention, in the lab example where selecting on today's income misses the treated."""

from __future__ import annotations

from pathlib import Path

import pytest

from societas.agents.experiments.outcomes import BaselineError
from societas.cluster.society import Society

LAB = Path(__file__).resolve().parents[2] / "configs" / "examples" / "lab" / "experiment.yaml"


def test_at_baseline_selects_the_treated_low_earners(tmp_path):
    with Society.from_scenario(LAB, arm="treatment", out=tmp_path / "t") as society:
        society.run(ticks=2)
        with pytest.raises(BaselineError, match="start of tick 4"):
            society.agents.at_baseline()
        society.run(days=1)
        low = society.agents.at_baseline().select(lambda a: a["income"] < 2000)
        treated = set(society.table("treated")["agent_id"].to_pylist())
        assert set(low.ids) == treated and len(treated) > 2
        now = society.agents.select(lambda a: a["income"] < 2000)
        assert set(now.ids) < treated  # today's income includes the basic income
        assert low.agg("mood", "mean") == pytest.approx(
            sum(society.agents.select(lambda a: a.id in treated).get("mood")) / len(treated)
        )  # the selection is of the live agents: today's mood
        base = society.agents.at_baseline()
        assert len(base) == 20 and all(isinstance(v, float) for v in base.get("hunger"))
