"""hearthd as Home Assistant really talks to it (issue 27). Home Assistant 2025.4 pins wyoming 1.5.4: its
`Transcript` carries neither a language nor a context, and its conversation agent opens a new connection for every
request. Those clients run here as they are, from a virtual environment with that exact version (made once from the
package registry and cached, as the satellite tests do), beside the current version from hearthd's own.

No model loads: every request is a template sentence."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from wyoming.asr import Transcript
from wyoming.event import async_read_event, async_write_event
from wyoming.handle import Handled, NotHandled

from hearthd.locale import phrase

from .services import CACHE, RegistryUnreachable, venv_with
from .test_wyoming import Served, served, wy_components  # noqa: F401 - the fixtures, shared with that module

HERE = Path(__file__).resolve().parent
HA_2025_4_WYOMING = "1.5.4"  # what Home Assistant 2025.4.4 pins
CLIENT = HERE / "ha_wyoming_client.py"


@pytest.fixture(scope="session")
def current_python() -> Path:
    """A client of the wyoming version hearthd itself is built on (pyproject), in a virtual environment of its own."""
    from importlib.metadata import version

    current = version("wyoming")
    try:
        return venv_with("wyoming", current, CACHE / "hearthd" / f"wyoming-{current}-venv")
    except RegistryUnreachable as e:
        pytest.skip(f"the package registry cannot be reached to install wyoming {current}: {e}")


@pytest.fixture(scope="session")
def ha_2025_4_python() -> Path:
    try:
        return venv_with("wyoming", HA_2025_4_WYOMING, CACHE / "hearthd" / f"wyoming-{HA_2025_4_WYOMING}-venv")
    except RegistryUnreachable as e:
        pytest.skip(f"the package registry cannot be reached to install wyoming {HA_2025_4_WYOMING}: {e}")


async def conversation(python: Path | str, port: int, *texts: str, context: str = "") -> list[dict[str, Any]]:
    """Each text sent as Home Assistant's conversation agent does: a connection of its own, answered in turn."""
    args = [str(CLIENT), str(port), *(["--context", context] if context else []), *texts]
    proc = await asyncio.create_subprocess_exec(str(python), *args, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()[-2000:]
    return [json.loads(line) for line in out.splitlines()]


async def ask_from(host: str, port: int, text: str) -> tuple[str, str]:
    """One request on a connection from another address of this machine (127.0.0.2: another host to hearthd)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(host, 0))
    try:
        await async_write_event(Transcript(text=text).event(), writer)
        while True:
            event = await asyncio.wait_for(async_read_event(reader), 60)
            assert event is not None
            if Handled.is_type(event.type) or NotHandled.is_type(event.type):
                return event.type, str((event.data or {}).get("text"))
    finally:
        writer.close()


async def test_a_yes_through_home_assistant_2025_4_answers_its_question(served: Served,  # noqa: F811
                                                                         ha_2025_4_python: Path) -> None:
    """"Cancel all my alarms" → "…? Please say yes or no." → "yes", each on a connection of its own with no
    context (HA 2025.4): the yes answered "There is no question of mine waiting". The question a closed connection
    leaves open is now the next connection's from the same host."""
    served.components.alarms.add("06:00")
    replies = await conversation(ha_2025_4_python, served.port, "cancel all my alarms", "yes")
    assert [r["wyoming"] for r in replies] == [HA_2025_4_WYOMING] * 2
    assert all(set(r["sent"]) == {"text"} for r in replies)  # no language, no context: as Home Assistant sends
    assert replies[0]["text"] == phrase("en", "confirm.cancel_all_alarms")
    assert replies[1]["text"].startswith("Cancelled")  # "Cancelled 1 alarm."
    assert replies[1]["type"] == "handled" and served.components.alarms.pending() == []


async def test_another_hosts_yes_never_answers_the_question(served: Served,  # noqa: F811
                                                            ha_2025_4_python: Path) -> None:
    """The question waits for its own host: a yes from another address is refused (nothing is cancelled), and it
    does not use the question up either; the asking host's yes then answers it."""
    served.components.alarms.add("06:00")
    replies = await conversation(ha_2025_4_python, served.port, "cancel all my alarms")
    assert replies[0]["text"] == phrase("en", "confirm.cancel_all_alarms")
    kind, text = await ask_from("127.0.0.2", served.port, "yes")
    assert (kind, text) == ("not-handled", phrase("en", "confirm.nothing_open"))
    assert len(served.components.alarms.pending()) == 1
    replies = await conversation(ha_2025_4_python, served.port, "yes")
    assert replies[0]["type"] == "handled" and served.components.alarms.pending() == []


async def test_a_question_is_taken_over_once_and_never_from_beside_its_open_connection(
        served: Served, ha_2025_4_python: Path) -> None:  # noqa: F811
    """A client that keeps its connection keeps its question to itself; and once answered, a later yes from the
    same host has nothing to answer."""
    served.components.alarms.add("06:00")
    reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
    try:
        await async_write_event(Transcript(text="cancel all my alarms").event(), writer)
        event = await asyncio.wait_for(async_read_event(reader), 60)
        assert event is not None and (event.data or {}).get("text") == phrase("en", "confirm.cancel_all_alarms")
        replies = await conversation(ha_2025_4_python, served.port, "yes")  # beside the open one: its own turn
        assert replies[0]["text"] == phrase("en", "confirm.nothing_open")
        assert len(served.components.alarms.pending()) == 1
    finally:
        writer.close()
    await asyncio.sleep(0.2)  # the asking connection is gone: its question is the next one's
    replies = await conversation(ha_2025_4_python, served.port, "no", "yes")
    assert [r["text"] for r in replies] == [phrase("en", "confirm.cancelled"), phrase("en", "confirm.nothing_open")]
    assert len(served.components.alarms.pending()) == 1


async def test_the_current_wyoming_client_names_its_conversation(served: Served,  # noqa: F811
                                                                 current_python: Path) -> None:
    """Clients from wyoming 1.7 on carry Home Assistant's conversation_id: the question is that conversation's,
    whatever host or connection answers."""
    served.components.alarms.add("06:00")
    replies = await conversation(current_python, served.port, "cancel all my alarms", context="01HQCURRENT")
    assert replies[0]["sent"]["context"] == {"conversation_id": "01HQCURRENT"}
    assert replies[0]["text"] == phrase("en", "confirm.cancel_all_alarms")
    assert (await conversation(current_python, served.port, "yes", context="01HQOTHER"))[0]["type"] == "not-handled"
    assert len(served.components.alarms.pending()) == 1
    replies = await conversation(current_python, served.port, "yes", context="01HQCURRENT")
    assert replies[0]["type"] == "handled" and served.components.alarms.pending() == []


async def test_a_question_asks_the_client_to_keep_listening(served: Served) -> None:  # noqa: F811
    """Issue 27, item 6: after "For what time?" a satellite should reopen its microphone: the answer's context says
    `continue_conversation` while a question waits, and not once it is answered."""
    from .test_wyoming import ask

    context = {"conversation_id": "01HQCONTINUE"}
    async with served.client() as client:
        asked = await ask(client, "set an alarm", context)
        answered = await ask(client, "for 6:30", context)
    assert asked.context == {**context, "continue_conversation": True}
    assert answered.context == context and isinstance(answered, Handled)


async def test_the_server_is_announced_for_home_assistant_where_its_uri_is_bound(
        wy_components: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Issue 27, item 6: `wyoming.zeroconf = true` logged "pip install zeroconf". Now `_wyoming._tcp` is announced
    with the server's name and port, on the interface of the uri's address only (127.0.0.1 here: this machine
    alone), and withdrawn when the server stops."""
    from zeroconf import IPVersion
    from zeroconf.asyncio import AsyncZeroconf

    from .test_wyoming import serve

    monkeypatch.setattr(wy_components.cfg.wyoming, "zeroconf", True)
    monkeypatch.setattr(wy_components.cfg.wyoming, "name", "hearthd kitchen")
    server, port, _ = await serve(wy_components)
    browser = AsyncZeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
    try:
        found = await browser.async_get_service_info("_wyoming._tcp.local.", "hearthd kitchen._wyoming._tcp.local.",
                                                     timeout=5000)
        assert found is not None and found.port == port and found.parsed_addresses() == ["127.0.0.1"]
        # announced from 127.0.0.1 alone: the uri binds no other address (with 0.0.0.0, every interface's)
        senders = {t.sock.getsockname()[0] for t in server._zeroconf.zeroconf.engine.senders}
        assert senders == {"127.0.0.1"}, senders
        await asyncio.wait_for(server.stop(), 30)
        await asyncio.sleep(0.5)
        gone = await browser.async_get_service_info("_wyoming._tcp.local.", "hearthd kitchen._wyoming._tcp.local.",
                                                    timeout=1500)
        assert gone is None  # the goodbye was sent: Home Assistant forgets it
    finally:
        await server.stop()
        await browser.async_close()



async def test_a_request_resent_with_its_id_does_nothing_twice(served: Served) -> None:  # noqa: F811
    """Issue 27, item 7: a retry set a second alarm. A client that names its request (`request_id` in the
    context) is answered again without acting again; another id is a request of its own."""
    from .test_wyoming import ask

    async with served.client() as client:
        first = await ask(client, "set an alarm for 6 am", {"request_id": "r-1"})
    async with served.client() as client:  # the retry, after the first connection broke
        again = await ask(client, "set an alarm for 6 am", {"request_id": "r-1"})
        other = await ask(client, "set an alarm for 6 am", {"request_id": "r-2"})
    assert isinstance(other, Handled)
    assert isinstance(first, Handled) and again.text == first.text
    assert [a.hhmm for a in served.components.alarms.pending()] == ["06:00", "06:00"]  # r-1 once, r-2 once


async def test_no_request_waits_behind_other_turns_longer_than_a_turns_budget(
        served: Served, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Issue 27: nothing in Home Assistant may wait on hearthd longer than the turn's budget. A request queued behind
    a turn that holds hearthd past `agent.max_turn_s` is answered "busy" then, not when the other ends."""
    import time

    from .test_wyoming import ask

    monkeypatch.setattr(served.components.cfg.agent, "max_turn_s", 0.5)
    await served.server.turns.acquire()  # another turn, running long
    try:
        async with served.client() as client:
            started = time.monotonic()
            answer = await ask(client, "what time is it")
            waited = time.monotonic() - started
    finally:
        served.server.turns.release()
    assert isinstance(answer, NotHandled) and answer.text == phrase("en", "error.busy")
    assert waited < 5
    async with served.client() as client:  # and once free, served as usual
        assert isinstance(await ask(client, "what time is it"), Handled)


async def test_speech_to_text_behind_a_long_turn_ends_in_a_transcript_within_the_budget(
        served: Served, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Home Assistant's speech to text waits for `transcript` and ignores `error`: a request behind a turn that holds
    hearthd past `agent.max_turn_s` is told "busy" and answered with no words then."""
    import time

    import numpy as np
    from wyoming.asr import Transcribe
    from wyoming.audio import AudioChunk, AudioStart, AudioStop
    from wyoming.error import Error

    monkeypatch.setattr(served.components.cfg.agent, "max_turn_s", 0.5)
    speech = (np.sin(np.arange(16000) / 5) * 3000).astype("<i2").tobytes()
    await served.server.turns.acquire()
    try:
        async with served.client() as client:
            started = time.monotonic()
            for event in (Transcribe(language="en"), AudioStart(rate=16000, width=2, channels=1),
                          AudioChunk(rate=16000, width=2, channels=1, audio=speech), AudioStop()):
                await client.write_event(event.event())
            kinds = []
            while not kinds or kinds[-1].type != "transcript":
                event = await asyncio.wait_for(client.read_event(), 10)
                assert event is not None
                kinds.append(event)
            waited = time.monotonic() - started
    finally:
        served.server.turns.release()
    assert [e.type for e in kinds] == ["error", "transcript"] and Error.from_event(kinds[0]).code == "busy"
    assert Transcript.from_event(kinds[1]).text == "" and waited < 5
