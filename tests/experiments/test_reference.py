"""configs/REFERENCE.md is generated from the models and must be up to date."""

from __future__ import annotations

from societas.agents.experiments.reference import PAGE, render


def test_reference_page_is_up_to_date():
    assert PAGE.read_text(encoding="utf-8") == render(), (
        "configs/REFERENCE.md is out of date: run "
        "`.venv/bin/python -m societas.agents.experiments.reference`"
    )


def test_reference_lists_every_intervention_kind_field_and_selector():
    from societas.agents.experiments.schema import Intervention, Selector

    page = render()
    for name in [*Intervention.model_fields, *Selector.model_fields]:
        assert f"| `{name}` |" in page, name
    for kind in ("event", "fact", "policy", "set"):
        assert f"- `{kind}`:" in page
    assert "| `mood` |" not in page  # custom attributes are the scenario's, not built in
    assert "| `currency` | float |" in page
