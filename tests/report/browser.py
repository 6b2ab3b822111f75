"""Load a page in real headless Chromium over the DevTools protocol (aiohttp websocket).

Collects console errors, uncaught exceptions and every network request the page makes,
counts drawn Plotly charts, and takes a screenshot of the first screen. Chromium runs with
a proxy that refuses everything, so a page that needed the network would fail to draw.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from tests.debian import debian_binary

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--proxy-server=http://127.0.0.1:9",  # every request to a host fails
    "--proxy-bypass-list=<-loopback>",
    "--window-size=1280,900",
    "--remote-debugging-port=0",
]

COUNT_CHARTS = """(() => {
  const divs = [...document.querySelectorAll('.plotly-graph-div')];
  const drawn = divs.filter(d => d.querySelector('svg.main-svg') && d._fullLayout);
  const ids = [...document.querySelectorAll('section[id]')].map(s => s.id);
  const titles = [...document.querySelectorAll(
    '.plotly-graph-div .xtitle, .plotly-graph-div .ytitle, .plotly-graph-div .gtitle')];
  const clipped = titles.filter(t => {
    const r = t.getBoundingClientRect();
    const g = t.closest('.plotly-graph-div').getBoundingClientRect();
    if (r.width === 0 || g.width === 0) return false;
    return r.left < g.left - 1 || r.right > g.right + 1 || r.top < g.top - 1
      || r.bottom > g.bottom + 1;
  }).map(t => t.textContent);
  return JSON.stringify({charts: divs.length, drawn: drawn.length, sections: ids,
                         clipped: clipped, title: document.title});
})()"""


def chromium_path() -> str:
    """Debian's Chromium, installed when missing (skips only where it cannot be)."""
    return debian_binary("chromium", "chromium", "chromium-browser")


@dataclass
class PageCheck:
    """What Chromium saw: errors, requests, charts and the screenshot file."""

    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    charts: int = 0
    drawn: int = 0
    sections: list[str] = field(default_factory=list)
    clipped_labels: list[str] = field(default_factory=list)
    title: str = ""

    @property
    def external_requests(self) -> list[str]:
        return [u for u in self.requests if not u.startswith(("file:", "data:", "blob:", "about:"))]


class _CDP:
    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.next_id = 0
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.events: list[dict[str, Any]] = []

    async def reader(self) -> None:
        async for msg in self.ws:
            data = json.loads(msg.data)
            if "id" in data and data["id"] in self.pending:
                self.pending.pop(data["id"]).set_result(data)
            else:
                self.events.append(data)

    async def call(self, method: str, session: str | None = None, **params: Any) -> Any:
        self.next_id += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = fut
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        await self.ws.send_str(json.dumps(msg))
        data = await asyncio.wait_for(fut, 60)
        if "error" in data:
            raise RuntimeError(f"{method}: {data['error']}")
        return data.get("result", {})


def _ws_url(profile: Path, proc: subprocess.Popen[bytes]) -> str:
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if port_file.exists():
            lines = port_file.read_text().splitlines()
            if len(lines) >= 2:
                return f"ws://127.0.0.1:{lines[0]}{lines[1]}"
        if proc.poll() is not None:
            raise RuntimeError(f"chromium exited with {proc.returncode}")
        time.sleep(0.1)
    raise RuntimeError("chromium did not open its DevTools port")


async def _check(url: str, ws_url: str, screenshot: Path, settle_s: float) -> PageCheck:
    out = PageCheck()
    async with aiohttp.ClientSession() as http, http.ws_connect(ws_url, max_msg_size=0) as ws:
        cdp = _CDP(ws)
        reader = asyncio.create_task(cdp.reader())
        target = await cdp.call("Target.createTarget", url="about:blank")
        attached = await cdp.call(
            "Target.attachToTarget", targetId=target["targetId"], flatten=True
        )
        sid = attached["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            await cdp.call(f"{domain}.enable", sid)
        await cdp.call("Page.navigate", sid, url=url)
        loaded = time.monotonic() + 60
        while time.monotonic() < loaded:
            if any(e.get("method") == "Page.loadEventFired" for e in cdp.events):
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(settle_s)
        res = await cdp.call("Runtime.evaluate", sid, expression=COUNT_CHARTS, returnByValue=True)
        info = json.loads(res["result"]["value"])
        shot = await cdp.call("Page.captureScreenshot", sid, format="png")
        await asyncio.to_thread(screenshot.write_bytes, base64.b64decode(shot["data"]))
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
    for e in cdp.events:
        method, params = e.get("method"), e.get("params", {})
        if method == "Runtime.exceptionThrown":
            out.console_errors.append(json.dumps(params.get("exceptionDetails", {}))[:500])
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            out.console_errors.append(json.dumps(params.get("args", []))[:500])
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            out.console_errors.append(params["entry"].get("text", "")[:500])
        elif method == "Network.requestWillBeSent":
            out.requests.append(params.get("request", {}).get("url", ""))
    out.charts, out.drawn = info["charts"], info["drawn"]
    out.sections, out.clipped_labels, out.title = info["sections"], info["clipped"], info["title"]
    return out


def check_page(html: Path, screenshot: Path, settle_s: float = 2.0) -> PageCheck:
    """Open `html` in headless Chromium (fresh profile, no network) and report what it saw."""
    exe = chromium_path()
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    # Chromium's helper processes (renderer, GPU, crashpad) outlive the browser process for a
    # moment and keep writing into the profile: the whole process group is ended before the
    # profile is removed, and a file a straggler still writes does not fail the test.
    with tempfile.TemporaryDirectory(
        prefix="societas-chromium-", ignore_cleanup_errors=True
    ) as profile:
        proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            ws_url = _ws_url(Path(profile), proc)
            return asyncio.run(_check(html.resolve().as_uri(), ws_url, screenshot, settle_s))
        finally:
            _end_group(proc)


def _end_group(proc: subprocess.Popen) -> None:
    """SIGTERM Chromium's process group, SIGKILL it after 10 s; wait for the browser."""
    for sig, wait_s in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(wait_s)
            return
        except subprocess.TimeoutExpired:
            continue
