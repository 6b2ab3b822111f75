"""The `finmem` profile: paper layers, per-layer retrieval, promotion by the access counter,
demotion and clean-up by importance thresholds."""

from __future__ import annotations

import math

import pytest

from societas.memory import GroupMemoryConfig
from societas.memory.policies.forgetting import ForgettingPolicy, finmem_forgetting, finmem_layers
from societas.memory.policies.runner import forgetting_pass

DAY = 86_400.0


def test_profile_sets_the_paper_layers_unless_the_config_sets_them():
    cfg = GroupMemoryConfig(profile="finmem")
    forgetting = cfg.policies.forgetting
    assert forgetting.enabled and forgetting.per_layer_retrieval
    assert forgetting.layers == finmem_layers()
    decays = [forgetting.layers[n].importance_decay_per_day for n in ("short", "mid", "long")]
    assert decays == [0.9, 0.967, 0.988]
    taus = [forgetting.layers[n].recency_tau_days for n in ("short", "mid", "long")]
    assert taus == [3, 90, 365]
    own = GroupMemoryConfig(profile="finmem", policies={"forgetting": {"enabled": False}})
    assert not own.policies.forgetting.enabled  # explicit config wins over the profile
    assert not GroupMemoryConfig().policies.forgetting.enabled  # default profile unchanged
    again = GroupMemoryConfig.model_validate(cfg.model_dump(mode="json"))
    assert again.policies.forgetting == forgetting


def test_demotion_and_cleanup_by_importance_thresholds():
    policy = finmem_forgetting()
    now = 10 * DAY
    # mid: importance 0.5 < 0.6 (lower jump threshold) → demoted unless the counter earned it
    assert policy.decide(0.5, "mid", now, now, now)[0] == "demote"
    assert policy.decide(0.5, "mid", now, now, now, access_count=3)[0] == "keep"
    assert policy.decide(0.7, "long", now, now, now)[0] == "demote"  # below 0.8
    assert policy.decide(0.04, "short", now, now, now)[0] == "cleanup"  # below 0.05
    # importance decays by the layer's daily factor: 0.5 × 0.9^30 ≈ 0.02 → clean-up
    assert policy.decide(0.5, "short", 0.0, now, 30 * DAY)[0] == "cleanup"
    # recency below 0.05: exp(-Δ/3 days) < 0.05 after ~9 days without access → clean-up
    assert policy.decide(0.9, "reflection", 0.0, 0.0, 10 * DAY)[0] == "keep"  # τ = 365
    old = ForgettingPolicy(enabled=True, layers=finmem_layers())
    assert old.decide(0.55, "short", now - 10 * DAY, now - 10 * DAY, now)[0] == "cleanup"
    assert policy.decide(0.65, "short", now, now, now)[0] == "promote"  # above 0.6
    assert policy.decide(0.3, "short", now, now, now, access_count=2)[0] == "keep"
    assert policy.decide(0.3, "short", now, now, now, access_count=3)[0] == "promote"


@pytest.fixture
async def finmem_group(group_factory, backend):
    forgetting = finmem_forgetting().model_copy(update={"run_every_ticks": 1})
    g = group_factory(
        backend,
        profile="finmem",
        policies={"forgetting": forgetting.model_dump()},
        tiers={"warm_max_age_days": None, "migrate_every_ticks": 1},
    )
    await g.add_agents({1: {}})
    yield g
    await g.close()


async def test_promotion_after_the_configured_accesses(finmem_group):
    g = finmem_group
    s = g.agent(1).stream
    target = await s.add("event", "the bond yield curve inverted sharply", importance=0.3)
    other = await s.add("event", "a quiet day at the harbour market", importance=0.3)
    layer_after = []
    for _ in range(6):
        hits = await s.search("bond yield curve", top_k=1)
        assert target in {h.id for h in hits}
        await g.end_tick()  # counts written, then the daily FinMem pass (every tick here)
        (rec,) = await s.get_by_ids(target)
        layer_after.append(rec.layer)
    # short → mid after 3 reads (the access counter), mid → long after 6
    assert layer_after == ["short", "short", "mid", "mid", "mid", "long"]
    (quiet,) = await s.get_by_ids(other)
    # once the target left short, the quiet memory is short's best and is read from then on
    assert quiet.layer == ("mid" if quiet.access_count >= 3 else "short")
    assert g.counters["promoted"] == 2 + (quiet.access_count >= 3)


async def test_per_layer_retrieval_returns_from_every_layer(finmem_group):
    g = finmem_group
    s = g.agent(1).stream
    ids = {}
    for layer in ("short", "mid", "long"):
        ids[layer] = [
            await s.add("event", f"{layer} note {k} about the grain market", importance=0.9)
            for k in range(3)
        ]
    ids["reflection"] = [
        await s.add("reflection", f"insight {k} on grain prices", importance=0.9) for k in range(3)
    ]
    now = g.clock.abs_seconds
    await g.sync_writes()  # queued adds written before the store is used directly
    for layer in ("mid", "long"):
        await g.store.set_payloads([(ids[layer], {"layer": layer, "layer_since": now})])
        for memory_id in ids[layer]:
            g.hot.set_layer(memory_id, layer, 0.9, now)
    hits = await s.search("grain market prices", top_k=2)
    by_layer: dict[str, list[int]] = {}
    for h in hits:
        by_layer.setdefault(h.layer, []).append(h.id)
    assert sorted(by_layer) == ["long", "mid", "reflection", "short"]
    assert all(len(v) == 2 for v in by_layer.values())  # top_k from each layer, merged
    assert all(set(v) <= set(ids[layer]) for layer, v in by_layer.items())
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    only = await s.search("grain market prices", top_k=2, layers=["mid"])
    assert {h.layer for h in only} == {"mid"} and len(only) == 2


async def test_forgetting_pass_demotes_by_importance(finmem_group):
    g = finmem_group
    s = g.agent(1).stream
    memory_id = await s.add("event", "a middling rumour about rates", importance=0.5)
    await g.sync_writes()  # queued adds written before the store is used directly
    now = g.clock.abs_seconds
    await g.store.set_payloads([([memory_id], {"layer": "mid", "layer_since": now})])
    g.hot.set_layer(memory_id, "mid", 0.5, now)
    out = await forgetting_pass(g)
    assert out["demoted"] == 1
    (rec,) = await s.get_by_ids(memory_id)
    assert rec.layer == "short"


def test_a_scenario_chooses_the_profile():
    from societas.agents.scenario import ScenarioConfig

    scenario = ScenarioConfig.model_validate({"memory": {"profile": "finmem"}})
    assert scenario.memory.profile == "finmem"
    assert scenario.memory.policies.forgetting.per_layer_retrieval
    with pytest.raises(ValueError, match="profile"):
        ScenarioConfig.model_validate({"memory": {"profile": "psychic"}})


def finmem_score(layer: str, importance: float, days: float) -> float:
    """By hand: e^(−Δ/Q) + importance × f^Δ with the paper's Q and f of `layer` (γ = 0)."""
    q, f = {"short": (3, 0.9), "mid": (90, 0.967), "long": (365, 0.988)}.get(layer, (365, 0.988))
    return math.exp(-days / q) + importance * f**days


@pytest.mark.parametrize("path", ["ram", "warm", "engine"])
async def test_two_day_old_memory_scores_by_its_layer_recency(group_factory, backend, path):
    retrieval: dict = {"relevance_weight": 0.0}
    tiers: dict = {"warm_max_age_days": None}
    if path == "engine":
        retrieval["mmr_lambda"] = 1.0  # MMR ranks in the engine's formula query
    if path == "warm":
        tiers.update(hot_cap_per_agent=1, migrate_every_ticks=1)
    g = group_factory(backend, profile="finmem", retrieval=retrieval, tiers=tiers)
    await g.add_agents({1: {}})
    s = g.agent(1).stream
    ids = {
        layer: await s.add(topic, f"{layer} note on grain", importance=0.5)
        for layer, topic in (("short", "event"), ("mid", "event"), ("long", "event"))
    }
    ids["reflection"] = await s.add("reflection", "reflection note on grain", importance=0.5)
    await g.sync_writes()
    t0 = g.clock.abs_seconds
    for layer in ("mid", "long"):
        await g.store.set_payloads([([ids[layer]], {"layer": layer, "layer_since": t0})])
        g.hot.set_layer(ids[layer], layer, 0.5, t0)
    if path == "warm":
        await g.end_tick()  # all but the newest leave the hot tier
        assert ids["short"] not in g.hot
    g.clock.set(g.clock.day + 2, g.clock.t)  # two days later, no access in between
    hits = {h.id: h for h in await s.search("grain", top_k=4)}
    for layer, memory_id in ids.items():
        assert hits[memory_id].layer == layer
        assert hits[memory_id].score == pytest.approx(finmem_score(layer, 0.5, 2.0), abs=1e-4)
    # short: e^(−2/3) + 0.5 × 0.9² = 0.9184, not 0.99^48 + 0.5 × 0.9² = 1.0222
    assert hits[ids["short"]].score == pytest.approx(0.9184, abs=1e-4)
    await g.close()


async def test_promotion_restarts_the_recency_clock(group_factory, backend):
    forgetting = finmem_forgetting().model_dump()
    g = group_factory(
        backend,
        profile="finmem",
        retrieval={"relevance_weight": 0.0},
        policies={"forgetting": forgetting},
    )
    await g.add_agents({1: {}})
    s = g.agent(1).stream
    memory_id = await s.add("event", "the central bank cut rates", importance=0.9)
    await g.sync_writes()
    g.clock.set(g.clock.day + 2, g.clock.t)
    out = await forgetting_pass(g)  # 0.9 × 0.9² = 0.729 ≥ 0.6: short → mid
    assert out["promoted"] == 1
    g.clock.set(g.clock.day + 1, g.clock.t)  # one day in mid, three since it was added
    (hit,) = await s.search("central bank rates", top_k=1, layers=["mid"])
    assert hit.id == memory_id and hit.layer == "mid"
    # Δ restarts at the promotion: e^(−1/90) + 0.729 × 0.967 = 1.6939 (Δ = 3 days: 1.6722)
    assert hit.score == pytest.approx(math.exp(-1 / 90) + 0.729 * 0.967, abs=1e-4)
    assert hit.score == pytest.approx(1.6939, abs=1e-4)
    await g.close()


@pytest.mark.parametrize("forget", [None, False])
async def test_cleanup_deletes_by_default_or_moves_to_cold(group_factory, backend, forget):
    forgetting = finmem_forgetting().model_dump()
    if forget is not None:
        forgetting["forget"] = forget
    g = group_factory(
        backend,
        profile="finmem",
        policies={"forgetting": forgetting},
        tiers={"warm_max_age_days": None},
        retrieval={"relevance_weight": 0.0},
    )
    await g.add_agents({1: {}})
    faint = await g.agent(1).stream.add("event", "a faint rumour", importance=0.04)
    kept = await g.agent(1).stream.add("event", "a solid report", importance=0.5)
    await g.sync_writes()
    out = await forgetting_pass(g)  # 0.04 < 0.05: cleaned up
    assert out["cleaned_up"] == 1 and g.counters["cleaned_up"] == 1
    assert (await g.get_by_ids([kept]))[0].text == "a solid report"
    if forget is None:  # FinMem deletes
        assert g.counters["forgotten"] == 1 and g.cold.count() == 0
        with pytest.raises(KeyError):
            await g.get_by_ids([faint])
    else:
        assert g.counters["forgotten"] == 0 and g.cold.all_ids() == {faint}
        assert (await g.get_by_ids([faint]))[0].text == "a faint rumour"
        g.clock.set(g.clock.day + 2, g.clock.t)  # cold scores by its layer too
        (hit,) = await g.agent(1).stream.search("rumour", tiers=("cold",))
        assert hit.score == pytest.approx(finmem_score("short", 0.04, 2.0), abs=1e-4)
    await g.close()
