"""Power and screen through systemd-logind (`org.freedesktop.login1`, system bus).

Power off and reboot are consequential: the policy asks for a spoken yes before the handler runs. Calls pass
`interactive=false`: the spoken yes is the consent, and a daemon has no polkit agent to answer a prompt.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .bus import Bus, ServiceMissing, on_bus
from .registry import Tool, ToolResult

LOGIN1 = "org.freedesktop.login1"
MANAGER_PATH = "/org/freedesktop/login1"
MANAGER = "org.freedesktop.login1.Manager"
USER = "org.freedesktop.login1.User"
SESSION = "org.freedesktop.login1.Session"
SCREEN_STEPS = {"up": 20, "down": -20}  # "brighter" / "dim the screen": a fifth of the range from where it is
SCREEN_LOWEST = 5  # percent: dimmed step by step, the screen stays readable


class Login1:
    """logind's manager (suspend, reboot, power off) and the user's graphical session (lock, brightness)."""

    def __init__(self, bus: Bus, backlight: str = "", backlight_dir: str | Path = "/sys/class/backlight",
                 uid: int | None = None) -> None:
        self.bus = bus
        self.backlight = backlight  # a device name under backlight_dir, or its directory; empty = the first one
        self.backlight_dir = Path(backlight_dir)
        self.uid = os.getuid() if uid is None else uid

    async def manager(self, member: str, signature: str = "", body: list[Any] | None = None) -> list[Any]:
        return await self.bus.call("system", LOGIN1, MANAGER_PATH, MANAGER, member, signature, body)

    async def session_path(self) -> str:
        """The session to lock: ours when we run inside one, else the user's graphical ("display") session —
        a user service runs outside any session."""
        session_id = os.environ.get("XDG_SESSION_ID")
        if session_id:
            (path,) = await self.manager("GetSession", "s", [session_id])
            return str(path)
        (user_path,) = await self.manager("GetUser", "u", [self.uid])
        _, path = await self.bus.get("system", LOGIN1, str(user_path), USER, "Display")
        if not path or path == "/":
            raise ServiceMissing(LOGIN1, "the user has no graphical session to lock")
        return str(path)

    def _device(self) -> tuple[Path, int]:
        """The backlight's sysfs directory and its max_brightness."""
        if self.backlight.startswith("/"):  # a device directory given by path
            candidates = [Path(self.backlight)]
        elif self.backlight:
            candidates = [self.backlight_dir / self.backlight]
        else:
            candidates = sorted(self.backlight_dir.glob("*"))
        for device in candidates:
            try:
                return device, int((device / "max_brightness").read_text().strip())
            except (OSError, ValueError):
                continue
        raise ServiceMissing("backlight", f"no backlight device ({self.backlight or self.backlight_dir})")

    @staticmethod
    def _percent_now(device: Path, top: int) -> int | None:
        """The backlight's brightness now, in percent of its range (sysfs `actual_brightness`, else `brightness`);
        None when it cannot be read."""
        for name in ("actual_brightness", "brightness"):
            try:
                value = int((device / name).read_text().strip())
            except (OSError, ValueError):
                continue
            if top > 0 and 0 <= value <= top:
                return round(100 * value / top)
        return None

    # -- tools --------------------------------------------------------------------------------------------

    async def _lock(self, args: dict[str, Any]) -> ToolResult:
        path = await self.session_path()
        await self.bus.call("system", LOGIN1, path, SESSION, "Lock")
        return ToolResult(True, {"session": path}, "screen.locked")

    async def _suspend(self, args: dict[str, Any]) -> ToolResult:
        await self.manager("Suspend", "b", [False])
        return ToolResult(True, {}, "power.suspend")

    async def _power_off(self, args: dict[str, Any]) -> ToolResult:
        await self.manager("PowerOff", "b", [False])
        return ToolResult(True, {}, "power.power_off")

    async def _reboot(self, args: dict[str, Any]) -> ToolResult:
        await self.manager("Reboot", "b", [False])
        return ToolResult(True, {}, "power.reboot")

    async def _brightness(self, args: dict[str, Any]) -> ToolResult:
        """A percent, or a step up or down from the brightness the backlight is at ("dim the screen")."""
        if args.get("percent") is None and args.get("step") not in SCREEN_STEPS:
            return ToolResult(False, {"code": "screen-no-level"}, "screen.level_missing")
        device, top = self._device()
        name = device.name
        if args.get("percent") is not None:
            percent = int(args["percent"])
        else:
            now = self._percent_now(device, top)
            if now is None:
                return ToolResult(False, {"code": "screen-level-unknown"}, "screen.level_unknown")
            # dimmed, never to black: a screen at 0 cannot be read to set it back
            percent = max(SCREEN_LOWEST, min(100, now + SCREEN_STEPS[str(args["step"])]))
        value = round(top * percent / 100)
        path = await self.session_path()
        await self.bus.call("system", LOGIN1, path, SESSION, "SetBrightness", "ssu", ["backlight", name, value])
        return ToolResult(True, {"device": name, "value": value, "max": top, "percent": percent},
                          "screen.brightness", counts={"percent": (percent, "percent")})

    def tools(self) -> list[Tool]:
        empty = {"type": "object", "properties": {}, "additionalProperties": False}
        return [
            Tool("lock_screen", "Lock the computer's screen.", empty, on_bus("screen", self._lock), family="power"),
            Tool("suspend", "Put the computer to sleep.", empty, on_bus("power", self._suspend), family="power"),
            Tool("power_off", "Shut the computer down.", empty, on_bus("power", self._power_off), family="power",
                 consequential=True),
            Tool("reboot", "Restart the computer.", empty, on_bus("power", self._reboot), family="power",
                 consequential=True),
            # "dim the screen": a step filled by code (the sentence library), standing in for the percent the model
            # must always give and the templates ask for when neither is said
            Tool("screen_brightness", "Set the screen's brightness in percent.",
                 {"type": "object", "properties": {"percent": {"type": "integer", "minimum": 0, "maximum": 100,
                                                                 "x-ground": "percent"},
                                                     "step": {"type": "string", "enum": list(SCREEN_STEPS),
                                                              "x-ground": "code", "x-instead-of": "percent"}},
                  "required": [], "x-model-required": ["percent"], "additionalProperties": False},
                 on_bus("screen", self._brightness), family="power"),
        ]
