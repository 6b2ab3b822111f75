"""Preflight checks against real servers on loopback: the bundled OpenAI-protocol emulator
(served models, API keys), closed and silent ports, an HTTP server where Ray is expected."""

from __future__ import annotations

import asyncio
import socket

import pytest

from societas.agents.llm.config import LLMConfig
from societas.cluster.preflight import check_llm
from societas.cluster.ray.attach import RayAttachError, probe_address
from societas.testing.emulator import EmulatorConfig, serve


def _llm(url: str, model: str = "emulated", key_env: str | None = None) -> LLMConfig:
    endpoint = {"base_url": url, "model": model, "api_key_env": key_env}
    return LLMConfig(provider="openai", endpoints=[endpoint])


async def test_llm_endpoint_model_and_key(monkeypatch):
    monkeypatch.setenv("EMU_SERVER_KEY", "right-key")
    cfg = EmulatorConfig(base_latency_s=0.0, models=["emulated"], api_key_env="EMU_SERVER_KEY")
    async with serve(cfg) as (_emu, url):
        monkeypatch.setenv("EMU_KEY", "right-key")
        assert await asyncio.to_thread(check_llm, _llm(url, key_env="EMU_KEY")) == []

        wrong_model = await asyncio.to_thread(check_llm, _llm(url, "gpt-9", "EMU_KEY"))
        assert len(wrong_model) == 1
        assert wrong_model[0].setting == "llm.endpoints.0.model"
        assert "gpt-9" in wrong_model[0].line() and "emulated" in wrong_model[0].line()

        unset = await asyncio.to_thread(check_llm, _llm(url, key_env="NO_SUCH_KEY_VAR"))
        assert "NO_SUCH_KEY_VAR" in unset[0].line() and "not set" in unset[0].line()

        monkeypatch.setenv("EMU_KEY", "wrong-key-123")
        refused = await asyncio.to_thread(check_llm, _llm(url, key_env="EMU_KEY"))
        assert "refused the key" in refused[0].line()
        assert "wrong-key-123" not in refused[0].line()  # keys are never echoed

        with pytest.raises(RayAttachError, match="not a Ray head"):
            host_port = url.split("//")[1].split("/")[0]
            await asyncio.to_thread(probe_address, host_port, 3.0)


def test_ray_probe_closed_and_silent_ports():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    with pytest.raises(RayAttachError, match="cannot connect"):
        probe_address(f"127.0.0.1:{closed}", 2.0)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        with pytest.raises(RayAttachError, match="no answer within 1 s"):
            probe_address(f"127.0.0.1:{silent.getsockname()[1]}", 1.0)
    for bad in ("http://head:8265", "head", "head:99999"):
        with pytest.raises(RayAttachError, match="--address"):
            probe_address(bad, 1.0)


def test_ray_probe_stops_on_a_stop_request():
    """A Ctrl-C caught by the run's stop handler (which only sets a flag) still ends the probe
    of a silent head at once instead of after its whole timeout."""
    import time

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            probe_address(
                f"127.0.0.1:{silent.getsockname()[1]}", 30.0, lambda: time.monotonic() - t0 > 0.5
            )
        assert time.monotonic() - t0 < 5
