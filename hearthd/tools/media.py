"""Media players over MPRIS (`org.mpris.MediaPlayer2.*` on the session bus).

Which player: the one playing; else the one hearthd last saw playing or controlled; else the player that
started last (unique bus names grow in connection order). "Play" prefers a paused player over a stopped one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .bus import Bus, ServiceMissing, on_bus
from .registry import Tool, ToolResult

PREFIX = "org.mpris.MediaPlayer2."
PATH = "/org/mpris/MediaPlayer2"
PLAYER = "org.mpris.MediaPlayer2.Player"
ACTIONS = {"play": "Play", "pause": "Pause", "next": "Next", "previous": "Previous", "stop": "Stop"}
_STATUS_RANK = {"Playing": 0, "Paused": 1, "Stopped": 2}


@dataclass
class Player:
    """One MPRIS player as found on the bus."""

    name: str  # the bus name, org.mpris.MediaPlayer2.vlc
    owner: str  # its unique name, :1.42
    status: str  # Playing | Paused | Stopped


class MediaPlayers:
    """MPRIS control of whichever player the user means."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self.recent: str | None = None  # the bus name hearthd last saw playing or controlled

    async def players(self) -> list[Player]:
        """Every player on the session bus, the one the user most likely means first."""
        from .bus import unique_serial

        found = []
        for name, owner in await self.bus.names("session"):
            if not name.startswith(PREFIX):
                continue
            try:
                status = str(await self.bus.get("session", name, PATH, PLAYER, "PlaybackStatus"))
            except ServiceMissing:
                continue  # quit while we looked, or no Player interface
            found.append(Player(name, owner, status))
        found.sort(key=lambda p: (p.status != "Playing", p.name != self.recent, _STATUS_RANK.get(p.status, 3),
                                  tuple(-x for x in unique_serial(p.owner))))
        return found

    async def active(self) -> Player:
        players = await self.players()
        if not players:
            raise ServiceMissing("mpris", "no MPRIS media player is running")
        return players[0]

    async def control(self, action: str) -> Player:
        player = await self.active()
        await self.bus.call("session", player.name, PATH, PLAYER, ACTIONS[action])
        self.recent = player.name
        return player

    async def now_playing(self) -> tuple[Player, dict[str, Any]]:
        player = await self.active()
        if player.status == "Playing":
            self.recent = player.name
        metadata = await self.bus.get("session", player.name, PATH, PLAYER, "Metadata")
        return player, {k: getattr(v, "value", v) for k, v in dict(metadata).items()}

    async def set_volume(self, percent: int) -> Player:
        """The player's own volume (MPRIS Volume, 0.0–1.0): used when the system volume cannot be set."""
        player = await self.active()
        await self.bus.set("session", player.name, PATH, PLAYER, "Volume", "d", max(0, min(100, percent)) / 100)
        self.recent = player.name
        return player

    # -- tools --------------------------------------------------------------------------------------------

    async def _media(self, args: dict[str, Any]) -> ToolResult:
        action = args["action"]
        player = await self.control(action)
        return ToolResult(True, {"player": player.name, "action": action, "was": player.status}, f"media.{action}")

    async def _play_genre(self, args: dict[str, Any]) -> ToolResult:
        """"Put on some jazz": MPRIS can tell a player to play, never what (it has no search), so the player plays what
        it has and the reply says that the kind of music was not chosen."""
        player = await self.control("play")
        return ToolResult(True, {"player": player.name, "action": "play", "was": player.status,
                                 "genre": str(args.get("genre", ""))}, "media.play_genre")

    async def _now_playing(self, args: dict[str, Any]) -> ToolResult:
        player, meta = await self.now_playing()
        title = str(meta.get("xesam:title") or "")
        artists = meta.get("xesam:artist") or []
        artist = ", ".join(str(a) for a in artists) if isinstance(artists, list) else str(artists)
        data = {"player": player.name, "status": player.status, "title": title, "artist": artist}
        if player.status != "Playing" or not title:
            return ToolResult(True, data, "media.nothing_playing")
        if artist:
            return ToolResult(True, data, "media.now_playing", {"title": title, "artist": artist})
        return ToolResult(True, data, "media.now_playing_title", {"title": title})

    def tools(self) -> list[Tool]:
        return [
            Tool("media", "Control the music or video player.",
                 {"type": "object", "properties": {"action": {"type": "string", "enum": list(ACTIONS)}},
                  "required": ["action"], "additionalProperties": False},
                 on_bus("media", self._media), family="media",
                 argument_sides={"action": {"play": ("play", "pause"), "pause": ("pause", "play")}}),
            # read from the templates only ("put on some jazz"): the model's catalogue stays as it was; before, it was
            # refused, or read as an alarm or a device called "jazz"
            Tool("play_genre", "Play music of a kind (the player plays what it has).",
                 {"type": "object", "properties": {"genre": {"type": "string", "maxLength": 40}},
                  "required": ["genre"], "additionalProperties": False},
                 on_bus("media", self._play_genre), family="media", offered=lambda: False),
            Tool("now_playing", "Say which song or video is playing.",
                 {"type": "object", "properties": {}, "additionalProperties": False},
                 on_bus("media", self._now_playing), family="media", read_only=True),
        ]
