"""One conversation's open state — the question asked, the calls held for a yes, the "which one?", its language and
its room — kept apart per requester: the local microphone ("local"), each D-Bus sender ("dbus:<unique name>"), each MQTT
conversation ("mqtt:<id>"). An answer is only ever read in the conversation that was asked; a request from
another one is a turn of its own and leaves the question open (until it times out, as before).

One timeout rule for all three kinds of question: each carries a deadline on the Dialogues' clock (which the
Router and the ConfirmationPolicy share, see Components), and when the conversation's next turn begins at or past it
the question is closed (`Dialogue.expire`): nothing it held runs, and the utterance is a request of its own."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..agent.fastpath import Done, Pending
from .choice import Choice
from .policy import ConfirmationPolicy, Held

log = logging.getLogger(__name__)

LOCAL = "local"  # the microphone and `hearthd ask` (and its --then answers)
MAX_DIALOGUES = 64
MAX_DROPPED = 256  # conversations remembered as having had their question cancelled, until they next speak
IDLE_S = 600.0  # a conversation with nothing open and no turn for this long is forgotten (its language with it)


@dataclass
class Dialogue:
    """The open state of one conversation."""

    id: str
    pending: Pending | None = None  # the Router's open clarification ("For what time?")
    held: Held | None = None  # calls waiting for a yes ("Unlock the front door?")
    choice: Choice | None = None  # a tool's open "Which one: …?"
    done: Done | None = None  # the request just done, which "actually, make it 8" corrects (no question: not open)
    lang: str | None = None  # its last language, for a turn that does not show its own
    area: str = ""  # its room, what "here" means in it (a satellite's area); "" is the configured general.area
    used: float = field(default_factory=time.monotonic)
    kept: bool = True  # False: the registry is full of other doors' open questions; a question it asks is not kept
    dropped: bool = False  # its last question was cancelled to make room for its own door's newer ones

    def is_open(self, now: float | None = None) -> bool:
        """A question of this conversation is waiting for its answer (none past its deadline)."""
        now = time.monotonic() if now is None else now
        return any(state is not None and now < state.deadline for state in (self.pending, self.held, self.choice))

    def expire(self, now: float) -> None:
        """Close every question whose deadline has come (the one timeout rule: at the deadline it is closed)."""
        if self.pending is not None and now >= self.pending.deadline:
            self.pending = None
        if self.held is not None and now >= self.held.deadline:
            self.held = None  # silence past the confirmation timeout: cancelled, nothing ran
        if self.choice is not None and now >= self.choice.deadline:
            self.choice = None


class Dialogues:
    """The conversations by id, bounded: past `max_size` the longest idle one without an open question goes first;
    when every other one has a question open, the longest idle one *of the newcomer's own door* ("mqtt", "dbus",
    "wyoming", "satellite": the id before its first ":") goes (its question cancelled, nothing runs, and a warning
    says so), and when the newcomer's door has no other, the newcomer is not kept: 64 MQTT conversations each opening
    a question never push out a D-Bus requester's. Neither is silent: a newcomer not kept is not asked its question
    (it hears that too many are open, `Dialogue.kept`), and a cancelled one's next turn hears that its question was
    closed to make room (`Dialogue.dropped`). Idle past `idle_s` with nothing open, one is forgotten. The local one
    is never forgotten."""

    def __init__(self, max_size: int = MAX_DIALOGUES, idle_s: float = IDLE_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_size = max_size
        self.idle_s = idle_s
        self.clock = clock
        self._by_id: OrderedDict[str, Dialogue] = OrderedDict()  # least recently used first
        self._dropped: OrderedDict[str, None] = OrderedDict()  # whose question eviction cancelled (told next turn)

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, conversation: object) -> bool:
        return conversation in self._by_id

    def peek(self, conversation: str) -> Dialogue | None:
        """The conversation if it is known, without touching it."""
        return self._by_id.get(conversation)

    def get(self, conversation: str) -> Dialogue:
        """The conversation `conversation` (made when new), marked as just used."""
        now = self.clock()
        self._forget_idle(now)
        dialogue = self._by_id.pop(conversation, None) or Dialogue(conversation)
        dialogue.expire(now)
        dialogue.used = now
        dialogue.kept = True
        if conversation in self._dropped:
            del self._dropped[conversation]
            dialogue.dropped = True  # its answer now is told why there is no question (pipeline: confirm.dropped)
        self._by_id[conversation] = dialogue
        while len(self._by_id) > max(self.max_size, 2):
            if not self._evict(now, conversation):
                del self._by_id[conversation]  # no room that is not another door's open question: not kept
                dialogue.kept = False  # a question it would ask is not asked; it hears why (confirm.too_many_open)
                log.warning("conversations: %d open questions; %s is answered but cannot keep a question of its own",
                            len(self._by_id), conversation)
                break
        return dialogue

    def _forget_idle(self, now: float) -> None:
        for key in [k for k, d in self._by_id.items()
                    if k != LOCAL and now - d.used > self.idle_s and not d.is_open(now)]:
            del self._by_id[key]

    def _evict(self, now: float, keep: str) -> bool:
        """One conversation forgotten to make room for `keep`; False when none may be."""
        candidates = [k for k in self._by_id if k not in (LOCAL, keep)]
        closed = [k for k in candidates if not self._by_id[k].is_open(now)]
        if closed:
            del self._by_id[closed[0]]
            return True
        door = _door(keep)
        same = [k for k in candidates if _door(k) == door]
        if not same:
            return False
        log.warning("conversations: %d open questions; the oldest of %s's door (%s) is cancelled to make room",
                    len(self._by_id) - 1, keep, same[0])
        del self._by_id[same[0]]
        self._dropped[same[0]] = None  # its next turn is told its question was closed, and why
        while len(self._dropped) > MAX_DROPPED:
            self._dropped.popitem(last=False)
        return True


def _door(conversation: str) -> str:
    """The front door a conversation came by: "mqtt:<id>" → "mqtt"."""
    return conversation.split(":", 1)[0]


@contextmanager
def confirmations(policy: ConfirmationPolicy, dialogue: Dialogue) -> Iterator[ConfirmationPolicy]:
    """The policy with this conversation's held calls in its one slot, and what is held afterwards kept by the
    conversation. The rules are shared; the slot is never left holding anyone's calls. Only around code without an
    `await`, so no other turn can see the slot in between."""
    policy.held = dialogue.held
    try:
        yield policy
    finally:
        dialogue.held, policy.held = policy.held, None
