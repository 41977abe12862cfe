"""A hostile run on hearthd's Wyoming door (issue 26): 5,000+ generated inputs (fixed seed) in groups — bytes that
are no JSON, JSON that is no event, nesting beyond any bound, lone surrogates, wrong types in every known event,
absurd and lying lengths, oversized headers and texts, known events out of order — each on a connection of its own,
followed by a `describe` on that connection. Every input must end in an Error event and the server hanging up, or in
the connection still answering; never a traceback in the log, never a hang; and after each group a real request
(`handle` of "what time is it") is answered. The counts are printed per group (`pytest -s`).

No model loads: the handled request is a template sentence."""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from wyoming.error import Error
from wyoming.event import async_read_event
from wyoming.handle import Handled
from wyoming.info import Info

from .test_wyoming import Served, ask, served, wy_components  # noqa: F401 - the fixtures, shared with that module

SEED = 26
PER_GROUP = 560  # nine groups: 5,040 inputs
PARALLEL = 16  # connections at once (below wyoming.max_connections)
ANSWER_S = 30.0  # an input is a hang when neither an answer nor the server's hang-up came within this


def _line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def _junk(rng: random.Random) -> bytes:
    return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300))).replace(b"\n", b" ") + b"\n"


def _not_events(rng: random.Random) -> bytes:
    return _line(rng.choice([1, -1.5, "describe", [], [{"type": "describe"}], None, True, {"data": {}},
                             {"type": 5}, {"type": None}, {"type": "describe", "data": []},
                             {"type": "describe", "data": "x"}]))


def _nested(rng: random.Random) -> bytes:
    depth = rng.choice([33, 100, 1000, 5000, 20_000])
    deep = "[" * depth + "]" * depth if rng.random() < 0.5 else '{"a":' * depth + "1" + "}" * depth
    if rng.random() < 0.5:
        return ('{"type":"describe","data":{"x":' + deep + "}}\n").encode()
    body = ('{"x": ' + deep + "}").encode()
    return _line({"type": "describe", "data_length": len(body)}) + body


def _surrogates(rng: random.Random) -> bytes:
    field = rng.choice([("transcript", "text"), ("synthesize", "text"), ("transcribe", "language"),
                        ("synthesize-chunk", "text"), ("detect", "names")])
    lone = rng.choice(["\\ud800", "\\udfff", "\\udbff\\u0041", "x\\ud83d"])
    text = lone + "x" * rng.randint(0, 3000)  # the escape as JSON writes it: json.loads makes it a lone surrogate
    return ('{"type": "' + field[0] + '", "data": {"' + field[1] + '": "' + text + '"}}\n').encode()


WRONG = [None, 5, -1, 1.5, True, "", "x" * 200, [], [1], {}, {"a": 1}, "NaN"]


def _wrong_types(rng: random.Random) -> bytes:
    kind, fields = rng.choice([
        ("transcribe", ["language", "name", "context"]), ("synthesize", ["text", "voice", "context"]),
        ("audio-start", ["rate", "width", "channels", "timestamp"]), ("audio-chunk", ["rate", "width", "channels"]),
        ("detect", ["names", "context"]), ("synthesize-start", ["voice", "context"]), ("synthesize-chunk", ["text"]),
        ("handled", ["text"]), ("run-pipeline", ["start_stage", "end_stage"]), ("describe", ["x"])])
    data = {f: rng.choice(WRONG) for f in rng.sample(fields, rng.randint(1, len(fields)))}
    payload = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 3, 1024]))) if kind == "audio-chunk" else b""
    header = {"type": kind, "data": data}
    if payload:
        header["payload_length"] = len(payload)
    return _line(header) + payload


def _lengths(rng: random.Random) -> bytes:
    lie = rng.choice([-1, 10**12, 2**63, "5", 1.5, True, 17 * 2**20, 2 * 2**20])
    key = rng.choice(["data_length", "payload_length"])
    short = rng.random() < 0.5  # announce a length, then send less and stop
    header = {"type": "audio-chunk", "data": {"rate": 16000, "width": 2, "channels": 1},
              key: 40 if short else lie}
    return _line(header) + (b"\x00" * 10 if short else b"")


def _oversized(rng: random.Random) -> bytes:
    if rng.random() < 0.5:
        return b'{"type": "describe", "data": {"x": "' + b"a" * rng.randint(65_000, 200_000) + b'"}}\n'
    return _line({"type": rng.choice(["synthesize", "transcript", "synthesize-chunk"]),
                  "data": {"text": "hello " * rng.randint(2_000, 20_000)}})


def _out_of_order(rng: random.Random) -> bytes:
    events = [_line({"type": "audio-chunk", "data": {"rate": 16000, "width": 2, "channels": 1},
                     "payload_length": 640}) + b"\x00" * 640,
              _line({"type": "audio-stop"}), _line({"type": "audio-start", "data": {"rate": 16000, "width": 2,
                                                                                       "channels": 1}}),
              _line({"type": "synthesize-stop"}), _line({"type": "synthesize-chunk", "data": {"text": "hi. "}}),
              _line({"type": "transcribe", "data": {"language": rng.choice(["en", "xx", "de"])}}),
              _line({"type": "detect", "data": {"names": ["nope"]}}), _line({"type": "not-a-known-event"}),
              _line({"type": "ping", "data": {"text": "x"}})]
    return b"".join(rng.choice(events) for _ in range(rng.randint(2, 12)))


def _records(path: Path) -> int:
    return len(path.read_bytes().splitlines()) if path.exists() else 0


GROUPS: list[tuple[str, Callable[[random.Random], bytes]]] = [
    ("junk", _junk), ("not-events", _not_events), ("nested", _nested), ("surrogates", _surrogates),
    ("wrong-types", _wrong_types), ("lengths", _lengths), ("oversized", _oversized), ("out-of-order", _out_of_order)]


async def _one(port: int, data: bytes, turns: Counter[str]) -> str:
    """Send `data`, then a describe; "closed" (an Error, then the hang-up), "answers" (the describe answered, the
    connection still good), or "hang". Each turn answered (handled, not-handled) is counted in `turns`."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=2**22)
    told = False  # an Error came before the hang-up: the client was told why
    try:
        writer.write(data + _line({"type": "describe"}))
        await writer.drain()
        writer.write_eof()  # nothing more comes: an input cut short inside an event ends there, not at the idle timeout
        async with asyncio.timeout(ANSWER_S):
            while True:
                event = await async_read_event(reader)
                if event is None:
                    return "closed" if told else "dropped without an error"
                told = told or Error.is_type(event.type)
                if event.type in ("handled", "not-handled"):
                    turns["answered"] += 1
                if Info.is_type(event.type):
                    return "answers"
                if not (Error.is_type(event.type) or event.type in (  # an answer of the request, or a refusal
                        "audio-start", "audio-chunk", "audio-stop", "synthesize-stopped", "transcript", "not-detected",
                        "handled", "not-handled", "pong")):
                    return f"unexpected {event.type}"
    except TimeoutError:
        return "hang"
    except (ConnectionError, asyncio.IncompleteReadError):
        return "closed" if told else "dropped without an error"
    finally:
        writer.close()


async def test_five_thousand_hostile_inputs_leave_the_wyoming_door_answering(
        served: Served, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811 - the fixture
    rng = random.Random(SEED)
    port = served.port
    totals: Counter[str] = Counter()
    audit = served.components.audit
    assert audit is not None
    records_before = _records(audit.path)
    with caplog.at_level(logging.WARNING):
        for name, make in GROUPS + [("mixed", lambda r: rng.choice(GROUPS)[1](r))]:
            inputs = [make(rng) for _ in range(PER_GROUP)]
            outcomes: Counter[str] = Counter()
            for start in range(0, len(inputs), PARALLEL):
                batch = inputs[start:start + PARALLEL]
                outcomes.update(await asyncio.gather(*(_one(port, data, totals) for data in batch)))
            async with served.client() as client:  # a real request after each group
                answered = await ask(client, "what time is it")
                totals["answered"] += 1
            assert isinstance(answered, Handled) and answered.text, name
            totals.update(outcomes)
            totals["inputs"] += len(inputs)
            print(f"wyoming hostile {name:<13} inputs {len(inputs):>5}  closed with an error {outcomes['closed']:>5}"
                  f"  still answering {outcomes['answers']:>5}  hangs {outcomes['hang']}")
            assert outcomes["hang"] == 0 and set(outcomes) <= {"closed", "answers"}, (name, outcomes)
    tracebacks = [r for r in caplog.records if r.exc_info]
    recorded = _records(audit.path) - records_before
    print(f"wyoming hostile total: inputs {totals['inputs']}, refused {totals['closed']}, answering "
          f"{totals['answers']}, tracebacks {len(tracebacks)}, hangs {totals['hang']}, turns answered "
          f"{totals['answered']}, audit records {recorded}, lost audit records {audit.lost_total}")
    assert totals["inputs"] >= 5000
    # every turn answered is in the audit (a lone surrogate's turn vanished from it, uncounted), and none was lost
    assert audit.lost_total == 0 and recorded >= totals["answered"] > 0, \
        (recorded, totals["answered"], audit.lost_total)
    assert tracebacks == [], [r.getMessage() for r in tracebacks[:5]]
