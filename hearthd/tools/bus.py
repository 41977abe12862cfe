"""The D-Bus connection the desktop tools share: calls, properties, and errors a user can be told about.

Every freedesktop service hearthd talks to may be missing (no MPRIS player running, no UPower on a desktop
box, a container without logind). Such a call raises `ServiceMissing`; an answer that is an error raises
`ServiceFailed`. `on_bus` turns both into a spoken reply for the tool's family, never a traceback.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import HearthdError
from .registry import ToolResult

log = logging.getLogger(__name__)

# Error names that mean "nobody is there", as opposed to "somebody said no".
_MISSING = {
    "org.freedesktop.DBus.Error.ServiceUnknown",
    "org.freedesktop.DBus.Error.NameHasNoOwner",
    "org.freedesktop.DBus.Error.UnknownObject",
    "org.freedesktop.DBus.Error.UnknownInterface",
    "org.freedesktop.DBus.Error.UnknownMethod",
    "org.freedesktop.DBus.Error.UnknownProperty",
    "org.freedesktop.DBus.Error.NoServer",
    "org.freedesktop.DBus.Error.Disconnected",
}

PROPERTIES = "org.freedesktop.DBus.Properties"


class ServiceMissing(HearthdError):
    """The bus or the service is not there; `family` names what the user asked for (media, power, …)."""

    code = "dbus-service-missing"
    phrase_key = "error.tool_failed"  # on_bus says it better, per family ("no media player is running")

    def __init__(self, service: str, detail: str) -> None:
        super().__init__(f"{service}: {detail}")
        self.service = service


class ServiceFailed(HearthdError):
    """The service answered with an error (refused, not allowed, broken)."""

    code = "dbus-service-failed"
    phrase_key = "error.tool_failed"

    def __init__(self, service: str, error_name: str, detail: str) -> None:
        super().__init__(f"{service}: {error_name}: {detail}")
        self.service = service
        self.error_name = error_name


class Bus:
    """One lazily opened connection per bus ("session", "system"), reopened when it drops.

    An empty address means the standard one (DBUS_SESSION_BUS_ADDRESS, DBUS_SYSTEM_BUS_ADDRESS or
    /run/dbus/system_bus_socket), which is how dbus-fast resolves them.
    """

    def __init__(self, session_address: str = "", system_address: str = "", timeout_s: float = 5.0) -> None:
        self.addresses = {"session": session_address, "system": system_address}
        self.timeout_s = timeout_s
        self._buses: dict[str, Any] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = asyncio.Lock()

    async def connection(self, which: str) -> Any:
        from dbus_fast import BusType
        from dbus_fast.aio import MessageBus

        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a connection belongs to the loop that opened it (`hearthd ask --then`)
            self._buses, self._loop, self._lock = {}, loop, asyncio.Lock()
        async with self._lock:
            bus = self._buses.get(which)
            if bus is not None and bus.connected:
                return bus
            address = self.addresses[which] or None
            kind = BusType.SYSTEM if which == "system" else BusType.SESSION
            try:
                bus = await asyncio.wait_for(MessageBus(bus_address=address, bus_type=kind).connect(),
                                             self.timeout_s)
            except Exception as e:  # no address, no socket, refused, auth: all mean "no bus here"
                raise ServiceMissing(f"{which} bus", f"cannot connect ({type(e).__name__}: {e})") from None
            self._buses[which] = bus
            return bus

    async def call(self, which: str, service: str, path: str, interface: str, member: str, signature: str = "",
                   body: list[Any] | None = None) -> list[Any]:
        """One method call; returns the reply's body."""
        from dbus_fast import Message, MessageType

        bus = await self.connection(which)
        message = Message(destination=service, path=path, interface=interface, member=member,
                          signature=signature, body=body or [])
        try:
            reply = await asyncio.wait_for(bus.call(message), self.timeout_s)
        except TimeoutError:
            raise ServiceFailed(service, "org.freedesktop.DBus.Error.Timeout",
                                f"{member} got no answer in {self.timeout_s:g} s") from None
        except (EOFError, OSError) as e:
            self._buses.pop(which, None)
            raise ServiceMissing(service, f"the bus went away ({e})") from None
        if reply.message_type == MessageType.ERROR:
            detail = str(reply.body[0]) if reply.body else ""
            if reply.error_name in _MISSING:
                raise ServiceMissing(service, f"{reply.error_name}: {detail}")
            raise ServiceFailed(service, reply.error_name or "unknown", detail)
        return list(reply.body)

    async def get(self, which: str, service: str, path: str, interface: str, name: str) -> Any:
        (variant,) = await self.call(which, service, path, PROPERTIES, "Get", "ss", [interface, name])
        return variant.value

    async def get_all(self, which: str, service: str, path: str, interface: str) -> dict[str, Any]:
        (props,) = await self.call(which, service, path, PROPERTIES, "GetAll", "s", [interface])
        return {k: v.value for k, v in props.items()}

    async def set(self, which: str, service: str, path: str, interface: str, name: str, signature: str,
                  value: Any) -> None:
        from dbus_fast import Variant

        await self.call(which, service, path, PROPERTIES, "Set", "ssv", [interface, name, Variant(signature, value)])

    async def names(self, which: str) -> list[tuple[str, str]]:
        """Every well-known name on the bus with its owner's unique name (":1.42")."""
        (names,) = await self.call(which, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                   "ListNames")
        out = []
        for name in names:
            if name.startswith(":"):
                continue
            try:
                (owner,) = await self.call(which, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                           "org.freedesktop.DBus", "GetNameOwner", "s", [name])
            except (ServiceMissing, ServiceFailed):
                continue  # gone between the two calls
            out.append((name, owner))
        return out

    async def close(self) -> None:
        for bus in self._buses.values():
            bus.disconnect()
        self._buses.clear()


def unique_serial(owner: str) -> tuple[int, ...]:
    """":1.42" → (1, 42): buses hand out unique names in connection order, so a bigger one connected later."""
    try:
        return tuple(int(p) for p in owner.lstrip(":").split("."))
    except ValueError:
        return (0,)


Handler = Callable[[dict[str, Any]], Awaitable[ToolResult]]


def on_bus(family: str, handler: Handler) -> Handler:
    """The handler, with a missing service said as "not available here" and a refusal as "that didn't work"
    (phrases `unavailable.<family>` and `failed.<family>`); the details go to the trace, not to the speaker."""

    async def guarded(args: dict[str, Any]) -> ToolResult:
        try:
            return await handler(args)
        except ServiceMissing as e:
            log.info("%s not available: %s", family, e)
            return ToolResult(False, {"error": str(e), "code": e.code, "service": e.service}, f"unavailable.{family}")
        except ServiceFailed as e:
            log.warning("%s failed: %s", family, e)
            return ToolResult(False, {"error": str(e), "code": e.code, "service": e.service,
                                      "error_name": e.error_name}, f"failed.{family}")

    return guarded
