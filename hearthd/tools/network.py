"""Wi-Fi on/off and the current connection through NetworkManager (`org.freedesktop.NetworkManager`, system bus).

Turning Wi-Fi off is consequential: on a machine reached over Wi-Fi it cuts the user off, and hearthd cannot
turn it back on by voice if its own control path (MQTT, a remote satellite) went with it.
"""

from __future__ import annotations

from typing import Any

from .bus import Bus, on_bus
from .registry import Tool, ToolResult

NM = "org.freedesktop.NetworkManager"
NM_PATH = "/org/freedesktop/NetworkManager"
ACTIVE = "org.freedesktop.NetworkManager.Connection.Active"


class NetworkManager:
    """The Wi-Fi radio switch and the primary connection's name."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus

    async def set_wifi(self, enabled: bool) -> None:
        await self.bus.set("system", NM, NM_PATH, NM, "WirelessEnabled", "b", enabled)

    async def connection(self) -> str:
        """The primary connection's name; "" when not connected."""
        path = str(await self.bus.get("system", NM, NM_PATH, NM, "PrimaryConnection"))
        if not path or path == "/":
            return ""
        return str(await self.bus.get("system", NM, path, ACTIVE, "Id"))

    async def _wifi_on(self, args: dict[str, Any]) -> ToolResult:
        await self.set_wifi(True)
        return ToolResult(True, {"wireless_enabled": True}, "network.wifi_on")

    async def _wifi_off(self, args: dict[str, Any]) -> ToolResult:
        await self.set_wifi(False)
        return ToolResult(True, {"wireless_enabled": False}, "network.wifi_off")

    async def _status(self, args: dict[str, Any]) -> ToolResult:
        name = await self.connection()
        if not name:
            return ToolResult(True, {"connection": ""}, "network.disconnected")
        return ToolResult(True, {"connection": name}, "network.connected", {"name": name})

    def tools(self) -> list[Tool]:
        empty = {"type": "object", "properties": {}, "additionalProperties": False}
        return [
            Tool("wifi_on", "Turn Wi-Fi on.", empty, on_bus("network", self._wifi_on), family="network",
                 sides=("on", "off")),
            Tool("wifi_off", "Turn Wi-Fi off.", empty, on_bus("network", self._wifi_off), family="network",
                 consequential=True, sides=("off", "on")),
            Tool("network_status", "Say which network the computer is connected to.", empty,
                 on_bus("network", self._status), family="network", read_only=True),
        ]
