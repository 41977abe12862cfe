"""Mock freedesktop D-Bus services that tests export on a private dbus-daemon to check the exact calls made.

Each mock owns one well-known name on its own connection and records every method call and every property
*set* in ``calls``, in order, as ``(member, args)``; a property set is recorded as ``("Set", (property, value))``.
Property reads (``Get``/``GetAll``) are not recorded and never fail. Setting ``fail`` to a D-Bus error name makes
every recorded call raise that error (after it was recorded), so tests can check how refusals are handled.

Typical fixture::

    @pytest.fixture
    async def login1(dbus_address: str) -> AsyncIterator[MockLogin1]:
        mock = MockLogin1()
        await mock.start(dbus_address)
        yield mock
        await mock.stop()
"""

# No `from __future__ import annotations` here: dbus-fast evaluates string annotations itself and turns
# `-> None` (the string "None") into a non-string signature, which its compiled _Method rejects.

import asyncio
import contextlib
import os
from collections.abc import Iterator
from typing import Annotated, Any

from dbus_fast import DBusError, NameFlag, RequestNameReply, Variant, unpack_variants
from dbus_fast.aio import MessageBus
from dbus_fast.annotations import (
    DBusBool,
    DBusDict,
    DBusDouble,
    DBusInt32,
    DBusInt64,
    DBusObjectPath,
    DBusSignature,
    DBusStr,
    DBusUInt32,
)
from dbus_fast.constants import PropertyAccess
from dbus_fast.service import ServiceInterface, dbus_property, method, signal

# Signatures dbus-fast has no ready alias for. dbus-fast 5 unmarshals structs as tuples (and sends tuples or lists).
DBusStrList = Annotated[list[str], DBusSignature("as")]
DBusPathList = Annotated[list[str], DBusSignature("ao")]
DBusSessionRef = Annotated[tuple[str, str], DBusSignature("(so)")]
DBusServerInfo = Annotated[tuple[str, str, str, str], DBusSignature("ssss")]
DBusClosed = Annotated[tuple[int, int], DBusSignature("uu")]

READ = PropertyAccess.READ

Call = tuple[str, tuple[Any, ...]]


class MockInterface(ServiceInterface):
    """One exported interface of a mock; state lives on the owning MockService, so tests have one place to look."""

    def __init__(self, name: str, owner: "MockService") -> None:
        super().__init__(name)
        self.owner = owner

    def _record(self, member: str, *args: Any) -> None:
        self.owner.record(member, args)

    def snapshot(self) -> dict[str, Any]:
        """Current value of every readable property, by its D-Bus name (Python attributes use the same names)."""
        return {p.name: getattr(self, p.name) for p in self.introspect().properties if p.access.readable()}

    def emit_changes(self, before: dict[str, Any]) -> None:
        """Emit PropertiesChanged for the properties whose value differs from ``before``."""
        changed = {name: value for name, value in self.snapshot().items() if before.get(name) != value}
        if changed:
            self.emit_properties_changed(changed)


class MockService:
    """A mock that owns ``bus_name`` on its own connection, exporting its interfaces at their paths.

    Attributes: ``bus_name``, ``calls`` (recorded ``(member, args)`` in order), ``fail`` (error name or None),
    ``bus`` (the connection while started, else None).
    """

    def __init__(self, bus_name: str) -> None:
        self.bus_name = bus_name
        self.calls: list[Call] = []
        self.fail: str | None = None
        self.bus: MessageBus | None = None
        self._exports: list[tuple[str, MockInterface]] = []

    def export(self, path: str, interface: MockInterface) -> None:
        """Register an interface to be exported at ``path`` on start."""
        self._exports.append((path, interface))

    def record(self, member: str, args: tuple[Any, ...]) -> None:
        """Record a call, then refuse it when ``fail`` is set (recording first so tests see refused attempts too)."""
        self.calls.append((member, args))
        if self.fail is not None:
            raise DBusError(self.fail, "mock refused")

    def calls_to(self, member: str) -> list[tuple[Any, ...]]:
        """The argument tuples of every recorded call to ``member``, in order."""
        return [args for name, args in self.calls if name == member]

    @contextlib.contextmanager
    def emitting(self) -> Iterator[None]:
        """Emit PropertiesChanged for whatever the body of the block changed, on every interface."""
        before = [(iface, iface.snapshot()) for _, iface in self._exports]
        yield
        for iface, snap in before:
            iface.emit_changes(snap)

    async def start(self, address: str) -> None:
        """Connect to ``address``, export the interfaces and take the bus name."""
        if self.bus is not None:
            raise RuntimeError(f"{self.bus_name} is already started")
        bus = await MessageBus(bus_address=address).connect()
        # Export before taking the name: a client that reacts to NameOwnerChanged must find the objects there.
        for path, iface in self._exports:
            bus.export(path, iface)
        reply = await bus.request_name(self.bus_name, NameFlag.DO_NOT_QUEUE)
        if reply is not RequestNameReply.PRIMARY_OWNER:
            bus.disconnect()
            await _quietly(bus.wait_for_disconnect())
            raise RuntimeError(f"could not own {self.bus_name}: {reply.name}")
        self.bus = bus

    async def stop(self) -> None:
        """Release the name and disconnect; a no-op when not started, so teardown may call it twice."""
        bus, self.bus = self.bus, None
        if bus is None:
            return
        # The daemon may already be gone (a test killed it): writing to the dead socket would leave an
        # unretrieved future error behind, so only say goodbye while connected, and never wait long.
        if bus.connected:
            await _quietly(bus.release_name(self.bus_name))
        # Unexport so the interfaces forget this bus and a later start() can export them again.
        for path in dict.fromkeys(path for path, _ in self._exports):
            bus.unexport(path)
        bus.disconnect()
        await _quietly(bus.wait_for_disconnect())


async def _quietly(awaitable: Any, timeout: float = 2.0) -> None:
    """Await, ignoring errors and giving up after ``timeout``: teardown must not fail or hang on a dead bus."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(timeout):
            await awaitable


async def start_all(address: str, *mocks: MockService) -> None:
    """Start the mocks in order; when one fails, stop those already started and re-raise."""
    started: list[MockService] = []
    try:
        for mock in mocks:
            await mock.start(address)
            started.append(mock)
    except BaseException:
        await stop_all(*started)
        raise


async def stop_all(*mocks: MockService) -> None:
    """Stop the mocks (each stop is idempotent and swallows bus errors)."""
    await asyncio.gather(*(mock.stop() for mock in mocks))


# --- MPRIS media player -------------------------------------------------------------------------------------

MPRIS_PATH = "/org/mpris/MediaPlayer2"
MPRIS_TRACK = "/org/mpris/MediaPlayer2/track/1"


class MockPlayer(MockService):
    """An MPRIS player ``org.mpris.MediaPlayer2.<name>``; attributes ``status``, ``title``, ``artist``, ``volume``."""

    def __init__(self, name: str = "vlc", status: str = "Paused", title: str = "Song", artist: str = "Artist",
                 volume: float = 1.0) -> None:
        super().__init__(f"org.mpris.MediaPlayer2.{name}")
        self.name = name
        self.status = status
        self.title = title
        self.artist = artist
        self.volume = volume
        self.export(MPRIS_PATH, _MediaPlayer2(self))
        self.export(MPRIS_PATH, _MprisPlayer(self))

    def update(self, *, status: str | None = None, title: str | None = None, artist: str | None = None,
               volume: float | None = None) -> None:
        """Change state from the test side (not recorded), emitting PropertiesChanged like a real player."""
        with self.emitting():
            self.status = self.status if status is None else status
            self.title = self.title if title is None else title
            self.artist = self.artist if artist is None else artist
            self.volume = self.volume if volume is None else volume


class _MediaPlayer2(MockInterface):
    def __init__(self, owner: MockPlayer) -> None:
        super().__init__("org.mpris.MediaPlayer2", owner)
        self.player = owner

    @method()
    def Raise(self) -> None:
        self._record("Raise")

    @method()
    def Quit(self) -> None:
        self._record("Quit")

    @dbus_property(READ)
    def Identity(self) -> DBusStr:
        return self.player.name


class _MprisPlayer(MockInterface):
    def __init__(self, owner: MockPlayer) -> None:
        super().__init__("org.mpris.MediaPlayer2.Player", owner)
        self.player = owner

    def _transport(self, member: str, status: str) -> None:
        self._record(member)
        with self.player.emitting():
            self.player.status = status

    @method()
    def Play(self) -> None:
        self._transport("Play", "Playing")

    @method()
    def Pause(self) -> None:
        self._transport("Pause", "Paused")

    @method()
    def PlayPause(self) -> None:
        # Per MPRIS, PlayPause on a stopped player starts it.
        self._transport("PlayPause", "Paused" if self.player.status == "Playing" else "Playing")

    @method()
    def Stop(self) -> None:
        self._transport("Stop", "Stopped")

    @method()
    def Next(self) -> None:
        self._record("Next")

    @method()
    def Previous(self) -> None:
        self._record("Previous")

    @dbus_property(READ)
    def PlaybackStatus(self) -> DBusStr:
        return self.player.status

    @dbus_property(READ)
    def Metadata(self) -> DBusDict:
        meta = {"mpris:trackid": Variant("o", MPRIS_TRACK)}
        # Real players leave out tags they do not know rather than sending empty strings.
        if self.player.title:
            meta["xesam:title"] = Variant("s", self.player.title)
        if self.player.artist:
            meta["xesam:artist"] = Variant("as", [self.player.artist])
        return meta

    @dbus_property()
    def Volume(self) -> DBusDouble:
        return self.player.volume

    @Volume.setter  # type: ignore[no-redef]
    def Volume(self, value: DBusDouble) -> None:
        self._record("Set", "Volume", value)
        with self.player.emitting():
            self.player.volume = max(0.0, value)  # MPRIS: negative volumes are treated as 0

    @dbus_property(READ)
    def CanControl(self) -> DBusBool:
        return True

    @dbus_property(READ)
    def CanPlay(self) -> DBusBool:
        return True

    @dbus_property(READ)
    def CanPause(self) -> DBusBool:
        return True

    @dbus_property(READ)
    def CanGoNext(self) -> DBusBool:
        return True

    @dbus_property(READ)
    def CanGoPrevious(self) -> DBusBool:
        return True


# --- systemd-logind -----------------------------------------------------------------------------------------

LOGIN1_PATH = "/org/freedesktop/login1"
# Real logind escapes object paths; "c1" starts with a letter, so its escaped form is the same.
SESSION_ID = "c1"
SESSION_PATH = f"{LOGIN1_PATH}/session/{SESSION_ID}"


class MockLogin1(MockService):
    """``org.freedesktop.login1`` with one user (``uid``) and one session "c1"; attributes ``uid``, ``user_path``."""

    def __init__(self, uid: int | None = None, with_user_display: bool = True) -> None:
        super().__init__("org.freedesktop.login1")
        self.uid = os.getuid() if uid is None else uid
        self.with_user_display = with_user_display
        self.user_path = f"{LOGIN1_PATH}/user/_{self.uid}"
        self.export(LOGIN1_PATH, _Login1Manager(self))
        self.export(self.user_path, _Login1User(self))
        self.export(SESSION_PATH, _Login1Session(self))


class _Login1Manager(MockInterface):
    def __init__(self, owner: MockLogin1) -> None:
        super().__init__("org.freedesktop.login1.Manager", owner)
        self.login1 = owner

    @method()
    def PowerOff(self, interactive: DBusBool) -> None:
        self._record("PowerOff", interactive)

    @method()
    def Reboot(self, interactive: DBusBool) -> None:
        self._record("Reboot", interactive)

    @method()
    def Suspend(self, interactive: DBusBool) -> None:
        self._record("Suspend", interactive)

    @method()
    def LockSessions(self) -> None:
        self._record("LockSessions")

    @method()
    def GetUser(self, uid: DBusUInt32) -> DBusObjectPath:
        self._record("GetUser", uid)
        if uid != self.login1.uid:
            raise DBusError("org.freedesktop.login1.NoSuchUser", f"User ID {uid} is not logged in or lingering")
        return self.login1.user_path

    @method()
    def GetSession(self, session_id: DBusStr) -> DBusObjectPath:
        self._record("GetSession", session_id)
        if session_id != SESSION_ID:
            raise DBusError("org.freedesktop.login1.NoSuchSession", f"No session '{session_id}' known")
        return SESSION_PATH


class _Login1User(MockInterface):
    def __init__(self, owner: MockLogin1) -> None:
        super().__init__("org.freedesktop.login1.User", owner)
        self.login1 = owner

    @dbus_property(READ)
    def Display(self) -> DBusSessionRef:
        # logind's way of saying "no graphical session" is an empty id with the root path.
        return (SESSION_ID, SESSION_PATH) if self.login1.with_user_display else ("", "/")


class _Login1Session(MockInterface):
    def __init__(self, owner: MockLogin1) -> None:
        super().__init__("org.freedesktop.login1.Session", owner)

    @method()
    def Lock(self) -> None:
        self._record("Lock")

    @method()
    def Unlock(self) -> None:
        self._record("Unlock")

    @method()
    def SetBrightness(self, subsystem: DBusStr, name: DBusStr, brightness: DBusUInt32) -> None:
        self._record("SetBrightness", subsystem, name, brightness)

    @dbus_property(READ)
    def Id(self) -> DBusStr:
        return SESSION_ID

    @dbus_property(READ)
    def Active(self) -> DBusBool:
        return True


# --- Desktop notifications ----------------------------------------------------------------------------------


class MockNotifications(MockService):
    """``org.freedesktop.Notifications``.

    Notify is recorded with its hints unwrapped (``{"urgency": 1}``, not Variants); the hints exactly as sent,
    Variants and all, are kept per Notify call in ``raw_hints``. ``open`` holds the ids not yet closed.
    """

    def __init__(self) -> None:
        super().__init__("org.freedesktop.Notifications")
        self.raw_hints: list[dict[str, Variant]] = []
        self.open: set[int] = set()
        self.last_id = 0
        self.interface = _Notifications(self)
        self.export("/org/freedesktop/Notifications", self.interface)


class _Notifications(MockInterface):
    def __init__(self, owner: MockNotifications) -> None:
        super().__init__("org.freedesktop.Notifications", owner)
        self.notes = owner

    @method()
    def Notify(self, app_name: DBusStr, replaces_id: DBusUInt32, app_icon: DBusStr, summary: DBusStr,
               body: DBusStr, actions: DBusStrList, hints: DBusDict, expire_timeout: DBusInt32) -> DBusUInt32:
        self.notes.raw_hints.append(hints)
        self._record("Notify", app_name, replaces_id, app_icon, summary, body, actions, unpack_variants(hints),
                     expire_timeout)
        # The spec: replacing an open notification keeps its id; anything else gets a fresh one.
        if replaces_id and replaces_id in self.notes.open:
            return replaces_id
        self.notes.last_id += 1
        self.notes.open.add(self.notes.last_id)
        return self.notes.last_id

    @method()
    def CloseNotification(self, id_: DBusUInt32) -> None:
        self._record("CloseNotification", id_)
        if id_ in self.notes.open:
            self.notes.open.discard(id_)
            self.NotificationClosed(id_, 3)  # 3: closed by a call to CloseNotification

    @method()
    def GetCapabilities(self) -> DBusStrList:
        self._record("GetCapabilities")
        return ["body"]

    @method()
    def GetServerInformation(self) -> DBusServerInfo:
        self._record("GetServerInformation")
        return ("mock", "hearthd-tests", "1.0", "1.2")

    @signal()
    def NotificationClosed(self, id_: int, reason: int) -> DBusClosed:
        return (id_, reason)


# --- UPower -------------------------------------------------------------------------------------------------

UPOWER_PATH = "/org/freedesktop/UPower"
DISPLAY_DEVICE_PATH = "/org/freedesktop/UPower/devices/DisplayDevice"


class MockUPower(MockService):
    """``org.freedesktop.UPower`` with a display device; attributes mirror the constructor arguments.

    ``state`` uses UPower's numbers: 1 charging, 2 discharging, 3 empty, 4 fully charged, 5/6 pending charge/discharge.
    """

    def __init__(self, percentage: float = 57.0, state: int = 2, time_to_empty: int = 5400, time_to_full: int = 0,
                 is_present: bool = True) -> None:
        super().__init__("org.freedesktop.UPower")
        self.percentage = percentage
        self.state = state
        self.time_to_empty = time_to_empty
        self.time_to_full = time_to_full
        self.is_present = is_present
        self.export(UPOWER_PATH, _UPower(self))
        self.export(DISPLAY_DEVICE_PATH, _UPowerDevice(self))

    def update(self, *, percentage: float | None = None, state: int | None = None, time_to_empty: int | None = None,
               time_to_full: int | None = None, is_present: bool | None = None) -> None:
        """Change the battery from the test side (not recorded), emitting PropertiesChanged like UPower."""
        with self.emitting():
            self.percentage = self.percentage if percentage is None else percentage
            self.state = self.state if state is None else state
            self.time_to_empty = self.time_to_empty if time_to_empty is None else time_to_empty
            self.time_to_full = self.time_to_full if time_to_full is None else time_to_full
            self.is_present = self.is_present if is_present is None else is_present


class _UPower(MockInterface):
    def __init__(self, owner: MockUPower) -> None:
        super().__init__("org.freedesktop.UPower", owner)
        self.upower = owner

    @method()
    def GetDisplayDevice(self) -> DBusObjectPath:
        self._record("GetDisplayDevice")
        return DISPLAY_DEVICE_PATH

    @dbus_property(READ)
    def OnBattery(self) -> DBusBool:
        return self.upower.state == 2


class _UPowerDevice(MockInterface):
    def __init__(self, owner: MockUPower) -> None:
        super().__init__("org.freedesktop.UPower.Device", owner)
        self.upower = owner

    @method()
    def Refresh(self) -> None:
        self._record("Refresh")

    @dbus_property(READ)
    def Percentage(self) -> DBusDouble:
        return self.upower.percentage

    @dbus_property(READ)
    def State(self) -> DBusUInt32:
        return self.upower.state

    @dbus_property(READ)
    def TimeToEmpty(self) -> DBusInt64:
        return self.upower.time_to_empty

    @dbus_property(READ)
    def TimeToFull(self) -> DBusInt64:
        return self.upower.time_to_full

    @dbus_property(READ)
    def IsPresent(self) -> DBusBool:
        return self.upower.is_present

    @dbus_property(READ)
    def Type(self) -> DBusUInt32:
        return 2  # battery


# --- NetworkManager -----------------------------------------------------------------------------------------

NM_PATH = "/org/freedesktop/NetworkManager"
ACTIVE_CONNECTION_PATH = "/org/freedesktop/NetworkManager/ActiveConnection/1"
NM_STATE_CONNECTED_GLOBAL = 70
NM_STATE_DISCONNECTED = 20
NM_ACTIVE_CONNECTION_STATE_ACTIVATED = 2


class MockNetworkManager(MockService):
    """``org.freedesktop.NetworkManager`` with one Wi-Fi connection; attributes ``wireless_enabled``, ``connection``.

    The active-connection object is always exported; it is only *referenced* (PrimaryConnection,
    ActiveConnections) while ``connected``.
    """

    def __init__(self, wireless_enabled: bool = True, connection: str = "HomeWiFi") -> None:
        super().__init__("org.freedesktop.NetworkManager")
        self.wireless_enabled = wireless_enabled
        self.connection = connection
        self.export(NM_PATH, _NetworkManager(self))
        self.export(ACTIVE_CONNECTION_PATH, _ActiveConnection(self))

    @property
    def connected(self) -> bool:
        """Whether the Wi-Fi connection is up: there is one and the radio is on."""
        return bool(self.connection) and self.wireless_enabled

    def update(self, *, wireless_enabled: bool | None = None, connection: str | None = None) -> None:
        """Change the network from the test side (not recorded), emitting PropertiesChanged like NetworkManager."""
        with self.emitting():
            self.wireless_enabled = self.wireless_enabled if wireless_enabled is None else wireless_enabled
            self.connection = self.connection if connection is None else connection


class _NetworkManager(MockInterface):
    def __init__(self, owner: MockNetworkManager) -> None:
        super().__init__("org.freedesktop.NetworkManager", owner)
        self.nm = owner

    @dbus_property()
    def WirelessEnabled(self) -> DBusBool:
        return self.nm.wireless_enabled

    @WirelessEnabled.setter  # type: ignore[no-redef]
    def WirelessEnabled(self, value: DBusBool) -> None:
        self._record("Set", "WirelessEnabled", value)
        with self.nm.emitting():
            self.nm.wireless_enabled = value

    @dbus_property(READ)
    def WirelessHardwareEnabled(self) -> DBusBool:
        return True

    @dbus_property(READ)
    def PrimaryConnection(self) -> DBusObjectPath:
        return ACTIVE_CONNECTION_PATH if self.nm.connected else "/"

    @dbus_property(READ)
    def ActiveConnections(self) -> DBusPathList:
        return [ACTIVE_CONNECTION_PATH] if self.nm.connected else []

    @dbus_property(READ)
    def State(self) -> DBusUInt32:
        return NM_STATE_CONNECTED_GLOBAL if self.nm.connected else NM_STATE_DISCONNECTED


class _ActiveConnection(MockInterface):
    def __init__(self, owner: MockNetworkManager) -> None:
        super().__init__("org.freedesktop.NetworkManager.Connection.Active", owner)
        self.nm = owner

    @dbus_property(READ)
    def Id(self) -> DBusStr:
        return self.nm.connection

    @dbus_property(READ)
    def Type(self) -> DBusStr:
        return "802-11-wireless"

    @dbus_property(READ)
    def State(self) -> DBusUInt32:
        return NM_ACTIVE_CONNECTION_STATE_ACTIVATED
