"""Desktop notifications (`org.freedesktop.Notifications`, session bus): visual feedback of what hearthd did,
what it waits for, and alarms. Best effort: with no notification server the spoken reply is still there."""

from __future__ import annotations

import logging

from .bus import Bus, ServiceFailed, ServiceMissing

log = logging.getLogger(__name__)

SERVICE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
URGENCY = {"low": 0, "normal": 1, "critical": 2}


class Notifier:
    """Shows one notification per event; a confirmation replaces the previous one instead of piling up."""

    def __init__(self, bus: Bus, app_name: str = "hearthd", timeout_ms: int = 5000) -> None:
        self.bus = bus
        self.app_name = app_name
        self.timeout_ms = timeout_ms
        self.last_id = 0
        self.missing_logged = False

    async def notify(self, summary: str, body: str = "", urgency: str = "normal", replace: bool = False) -> int:
        """The notification's id, or 0 when none could be shown (logged once, never raised)."""
        from dbus_fast import Variant

        hints = {"urgency": Variant("y", URGENCY[urgency]), "category": Variant("s", "hearthd")}
        try:
            (nid,) = await self.bus.call("session", SERVICE, PATH, SERVICE, "Notify", "susssasa{sv}i",
                                         [self.app_name, self.last_id if replace else 0, "audio-input-microphone",
                                          summary, body, [], hints, self.timeout_ms])
        except ServiceMissing as e:
            if not self.missing_logged:
                log.info("no notifications: %s", e)
                self.missing_logged = True
            return 0
        except ServiceFailed as e:
            log.warning("notification refused: %s", e)
            return 0
        self.last_id = int(nid)
        return self.last_id
