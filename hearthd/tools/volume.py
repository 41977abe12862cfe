"""System volume and mute of the default output, through the sound server's own command-line client.

Neither PipeWire nor PulseAudio offers a standard D-Bus volume API (PulseAudio's D-Bus module is optional and
off by default; PipeWire has none), so hearthd runs the sound server's client: `wpctl` on PipeWire, else
`pactl`, which speaks the PulseAudio protocol that both PulseAudio and pipewire-pulse serve. Both act on
the default sink, so the volume the user hears changes, not one application's. A call costs a few ms.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from typing import Any

from .bus import ServiceFailed, ServiceMissing, on_bus
from .media import MediaPlayers
from .registry import Tool, ToolResult


class VolumeBackend:
    """One sound-server client: read (percent, muted), set a percent, set mute."""

    program = ""

    def __init__(self, timeout_s: float = 5.0) -> None:
        self.timeout_s = timeout_s

    async def run(self, *args: str) -> str:
        path = shutil.which(self.program)
        if path is None:
            raise ServiceMissing(self.program, f"{self.program} is not installed")
        try:
            proc = await asyncio.create_subprocess_exec(path, *args, stdout=asyncio.subprocess.PIPE,
                                                        stderr=asyncio.subprocess.PIPE)
            out, err = await asyncio.wait_for(proc.communicate(), self.timeout_s)
        except TimeoutError:
            proc.kill()
            raise ServiceFailed(self.program, "timeout", f"{self.program} {' '.join(args)} hung") from None
        if proc.returncode != 0:
            message = (err or out).decode(errors="replace").strip()
            # No server to talk to is "not available here", not "it refused".
            if re.search(r"connection (refused|failure)|could not connect|no such file|not running", message, re.I):
                raise ServiceMissing(self.program, message)
            raise ServiceFailed(self.program, f"exit {proc.returncode}", message)
        return out.decode(errors="replace")

    async def read(self) -> tuple[int, bool]:
        raise NotImplementedError

    async def set_percent(self, percent: int) -> None:
        raise NotImplementedError

    async def set_mute(self, muted: bool) -> None:
        raise NotImplementedError


class WpctlVolume(VolumeBackend):
    """PipeWire (WirePlumber's wpctl)."""

    program = "wpctl"
    sink = "@DEFAULT_AUDIO_SINK@"

    async def read(self) -> tuple[int, bool]:
        out = await self.run("get-volume", self.sink)  # "Volume: 0.40 [MUTED]"
        m = re.search(r"Volume:\s*([0-9.]+)", out)
        if not m:
            raise ServiceFailed(self.program, "unreadable", out.strip())
        return round(float(m.group(1)) * 100), "MUTED" in out

    async def set_percent(self, percent: int) -> None:
        await self.run("set-volume", self.sink, f"{percent / 100:.2f}")

    async def set_mute(self, muted: bool) -> None:
        await self.run("set-mute", self.sink, "1" if muted else "0")


class PactlVolume(VolumeBackend):
    """PulseAudio, or PipeWire through pipewire-pulse."""

    program = "pactl"
    sink = "@DEFAULT_SINK@"

    async def read(self) -> tuple[int, bool]:
        volume = await self.run("get-sink-volume", self.sink)  # "Volume: front-left: 26214 /  40% / …"
        levels = [int(x) for x in re.findall(r"(\d+)%", volume)]
        if not levels:
            raise ServiceFailed(self.program, "unreadable", volume.strip())
        mute = await self.run("get-sink-mute", self.sink)  # "Mute: yes"
        return round(sum(levels) / len(levels)), "yes" in mute.lower()

    async def set_percent(self, percent: int) -> None:
        await self.run("set-sink-volume", self.sink, f"{percent}%")

    async def set_mute(self, muted: bool) -> None:
        await self.run("set-sink-mute", self.sink, "1" if muted else "0")


BACKENDS: dict[str, type[VolumeBackend]] = {"wpctl": WpctlVolume, "pactl": PactlVolume}


def volume_backend(name: str = "auto", timeout_s: float = 5.0) -> VolumeBackend:
    """The configured client; "auto" is wpctl where installed (PipeWire), else pactl."""
    if name == "auto":
        name = "wpctl" if shutil.which("wpctl") else "pactl"
    if name not in BACKENDS:
        raise ValueError(f"audio.volume_backend must be auto, wpctl or pactl, not {name!r}")
    return BACKENDS[name](timeout_s)


class SystemVolume:
    """Volume tools over a backend; "louder" while muted unmutes too (the user wants to hear it)."""

    def __init__(self, backend: VolumeBackend, step: int = 10, media: MediaPlayers | None = None) -> None:
        self.backend = backend
        self.step = step
        self.media = media  # the player's own volume, when the system volume cannot be set

    async def _set(self, args: dict[str, Any]) -> ToolResult:
        percent = int(args["percent"])
        try:
            await self.backend.set_percent(percent)
            data: dict[str, Any] = {"percent": percent, "via": self.backend.program}
        except ServiceMissing:
            if self.media is None:
                raise
            try:
                player = await self.media.set_volume(percent)
            except ServiceMissing:
                raise ServiceMissing(self.backend.program, "no sound server and no media player") from None
            data = {"percent": percent, "via": player.name}
        return ToolResult(True, data, "volume.set", counts={"percent": (percent, "percent")})

    async def _change(self, args: dict[str, Any]) -> ToolResult:
        direction = args["direction"]
        before, muted = await self.backend.read()
        after = max(0, min(100, before + (self.step if direction == "up" else -self.step)))
        await self.backend.set_percent(after)
        if muted and direction == "up":
            await self.backend.set_mute(False)
        return ToolResult(True, {"before": before, "percent": after, "via": self.backend.program},
                          f"volume.{direction}", counts={"percent": (after, "percent")})

    async def _level(self, args: dict[str, Any]) -> ToolResult:
        """"What's the volume", "how loud is it": the level, and that the sound is muted when it is."""
        percent, muted = await self.backend.read()
        return ToolResult(True, {"percent": percent, "muted": muted, "via": self.backend.program},
                          "volume.level_muted" if muted else "volume.level", counts={"percent": (percent, "percent")})

    async def _mute(self, args: dict[str, Any]) -> ToolResult:
        await self.backend.set_mute(True)
        return ToolResult(True, {"muted": True, "via": self.backend.program}, "volume.muted")

    async def _unmute(self, args: dict[str, Any]) -> ToolResult:
        await self.backend.set_mute(False)
        return ToolResult(True, {"muted": False, "via": self.backend.program}, "volume.unmuted")

    def tools(self) -> list[Tool]:
        empty = {"type": "object", "properties": {}, "additionalProperties": False}
        return [
            Tool("set_volume", "Set the speaker volume in percent.",
                 {"type": "object", "properties": {"percent": {"type": "integer", "minimum": 0, "maximum": 100,
                                                                 "x-ground": "percent"}},
                  "required": ["percent"], "additionalProperties": False},
                 on_bus("volume", self._set), family="volume"),
            Tool("change_volume", "Make the sound louder or quieter.",
                 {"type": "object", "properties": {"direction": {"type": "string", "enum": ["up", "down"]}},
                  "required": ["direction"], "additionalProperties": False},
                 on_bus("volume", self._change), family="volume",
                 argument_sides={"direction": {"up": ("volume_up", "volume_down"),
                                               "down": ("volume_down", "volume_up")}}),
            # read from the templates only ("what's the volume"): the model's catalogue stays as it was; before, the
            # question was refused as one about changing it
            Tool("volume_level", "Say how loud the sound is.", empty, on_bus("volume", self._level), family="volume",
                 read_only=True, offered=lambda: False),
            Tool("mute", "Mute the sound.", empty, on_bus("volume", self._mute), family="volume",
                 sides=("mute", "unmute")),
            Tool("unmute", "Unmute the sound.", empty, on_bus("volume", self._unmute), family="volume",
                 sides=("unmute", "mute")),
        ]
