"""Reading Wyoming events with every length bounded before anything is read into memory: the server's connections,
the remote engines' and the satellites' (the library's reader reads any data or payload length it is told)."""

from __future__ import annotations

import asyncio
from typing import Any

from wyoming.event import Event

from .errors import HearthdError
from .tools.discovery import UnsafeJson, load_json

MAX_LINE_BYTES = 64 * 1024  # an event's JSON header line
MAX_DATA_BYTES = 1024 * 1024  # its separate data part
MAX_PAYLOAD_BYTES = 16 * 1024 * 1024  # one audio chunk (a second of 8-channel 32-bit 192 kHz audio is 6 MB)


class BadStream(HearthdError):
    """Bytes on the connection that are not Wyoming events: the connection ends (after an Error event)."""

    code = "bad-stream"


async def read_event(reader: asyncio.StreamReader) -> Event | None:
    """The next event, as wyoming.event.async_read_event reads it, but with every length bounded before anything is
    read into memory (the library would read any data or payload length it is told); None at the end of the stream."""
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as e:
        if e.partial.strip():
            raise BadStream("the stream ended inside an event") from None
        return None
    except asyncio.LimitOverrunError:
        raise BadStream(f"an event header longer than {MAX_LINE_BYTES} bytes") from None
    try:  # nesting bounded before parsing, a lone surrogate refused (no reply or record could be written with it)
        header = load_json(line.decode("utf-8"))
    except (ValueError, UnsafeJson) as e:  # UnicodeDecodeError is a ValueError
        raise BadStream(f"not a JSON event header: {e}") from None
    if not isinstance(header, dict) or not isinstance(header.get("type"), str):
        raise BadStream("an event header without a type")
    data = header.get("data") or {}
    if not isinstance(data, dict):
        raise BadStream("event data that is not an object")
    data_length = _length(header.get("data_length"), MAX_DATA_BYTES, "data")
    payload_length = _length(header.get("payload_length"), MAX_PAYLOAD_BYTES, "payload")
    try:
        if data_length:
            more = load_json((await reader.readexactly(data_length)).decode("utf-8"))
            if not isinstance(more, dict):
                raise BadStream("event data that is not an object")
            data.update(more)
        payload = await reader.readexactly(payload_length) if payload_length else None
    except asyncio.IncompleteReadError:
        raise BadStream("the stream ended inside an event") from None
    except (ValueError, UnsafeJson) as e:
        raise BadStream(f"event data that is not JSON: {e}") from None
    return Event(type=header["type"], data=data, payload=payload)


def _length(value: Any, limit: int, what: str) -> int:
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise BadStream(f"an invalid {what} length {value!r}")
    if value > limit:
        raise BadStream(f"a {what} of {value} bytes (at most {limit})")
    return value


async def read_client_event(client: Any) -> Event | None:
    """The next event from a `wyoming.client.AsyncClient` (a satellite, a remote engine), bounded; None when the
    connection ended; ConnectionError when it is not connected."""
    reader = client._reader  # noqa: SLF001 - the library's client reads unbounded lengths
    if reader is None:
        raise ConnectionError("not connected")
    return await read_event(reader)
