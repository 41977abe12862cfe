"""Battery level, state and time left from UPower's display device (`org.freedesktop.UPower`, system bus)."""

from __future__ import annotations

from typing import Any

from .bus import Bus, on_bus
from .registry import Tool, ToolResult

UPOWER = "org.freedesktop.UPower"
DISPLAY_DEVICE = "/org/freedesktop/UPower/devices/DisplayDevice"
DEVICE = "org.freedesktop.UPower.Device"
# UPower's State: 1 charging, 2 discharging, 3 empty, 4 fully charged, 5 pending charge, 6 pending discharge.
CHARGING, DISCHARGING, FULL = 1, 2, 4


class Battery:
    """UPower's combined battery ("display device"), which sums a laptop's batteries the way its panel does."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus

    async def read(self) -> dict[str, Any]:
        return await self.bus.get_all("system", UPOWER, DISPLAY_DEVICE, DEVICE)

    async def _status(self, args: dict[str, Any]) -> ToolResult:
        props = await self.read()
        present = bool(props.get("IsPresent", False))
        percent = round(float(props.get("Percentage", 0.0)))
        state = int(props.get("State", 0))
        data = {"present": present, "percent": percent, "state": state,
                "time_to_empty": int(props.get("TimeToEmpty", 0)), "time_to_full": int(props.get("TimeToFull", 0))}
        if not present:
            return ToolResult(True, data, "battery.none")
        counts = {"percent": (percent, "percent")}
        if state == FULL or (state == CHARGING and percent >= 100):
            return ToolResult(True, data, "battery.full")
        # Rounded to minutes: "about 1 hour 29 minutes 47 seconds left" is noise.
        if state == DISCHARGING and data["time_to_empty"] >= 60:
            return ToolResult(True, data, "battery.discharging", counts=counts,
                              durations={"duration": _minutes(data["time_to_empty"])})
        if state == CHARGING and data["time_to_full"] >= 60:
            return ToolResult(True, data, "battery.charging", counts=counts,
                              durations={"duration": _minutes(data["time_to_full"])})
        if state == CHARGING:
            return ToolResult(True, data, "battery.charging_level", counts=counts)
        return ToolResult(True, data, "battery.level", counts=counts)

    def tools(self) -> list[Tool]:
        return [Tool("battery_status", "Say how much battery is left.",
                     {"type": "object", "properties": {}, "additionalProperties": False},
                     on_bus("battery", self._status), family="battery", read_only=True)]


def _minutes(seconds: int) -> int:
    return max(60, round(seconds / 60) * 60)
