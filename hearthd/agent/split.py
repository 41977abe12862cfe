"""Several requests in one utterance ("turn off the light and set an alarm for seven"): where to cut."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from ..locale import toml


@cache
def _table(lang: str) -> dict[str, list[str]]:
    return toml(lang, "split.toml")


@cache
def _joiners(lang: str) -> tuple[str, ...]:
    return tuple(sorted((w.lower() for w in _table(lang)["and"]), key=lambda w: -len(w.split())))


@cache
def _inside(lang: str) -> tuple[tuple[str, ...], ...]:
    """What follows a joining word inside one request ("an hour and a half"): no cut there."""
    return tuple(tuple(w.lower().split()) for w in _table(lang).get("not_before", []))


@cache
def _needs_more(lang: str) -> frozenset[str]:
    """Verbs that say nothing without what follows: a joining word right after one alone is a misheard article
    ("set and alarm for 7:30" is "set an alarm"), not a cut."""
    return frozenset(w.lower() for w in _table(lang).get("not_after", []))


@cache
def _more_of(lang: str) -> frozenset[str]:
    """Words a joining word after is "more" of them, not "and" ("पाँच मिनट और जोड़ दो": five minutes more; split.toml
    `more_after`)."""
    return frozenset(w.lower() for w in _table(lang).get("more_after", []))


@cache
def _courtesy(lang: str) -> tuple[tuple[str, ...], ...]:
    return tuple(sorted((tuple(w.lower().split()) for w in _table(lang).get("courtesy", [])), key=len, reverse=True))


@cache
def _courtesy_after(lang: str) -> tuple[tuple[str, ...], ...]:
    return tuple(sorted((tuple(w.lower().split()) for w in _table(lang).get("courtesy_after", [])), key=len,
                        reverse=True))


@cache
def _asked_after(lang: str) -> tuple[tuple[str, ...], ...]:
    return tuple(sorted((tuple(w.lower().split()) for w in _table(lang).get("asked_after", [])), key=len,
                        reverse=True))


@cache
def _goes_on(lang: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _table(lang).get("goes_on", []))


def goes_on(text: str, lang: str) -> bool:
    """Whether `text` stops where more must follow: its last word joins, or leads into, what comes next ("turn on
    the light in the", "set an alarm for", "выключи свет и"), in the language's list (split.toml `goes_on`)."""
    words = [w.strip(".,;:!?…-—\"'«»“”").lower() for w in text.split()]
    words = [w for w in words if w]
    return bool(words) and words[-1] in _goes_on(lang)


def without_courtesy(text: str, lang: str) -> str:
    """The utterance without a courtesy said before the request and cut from it by a joining word or a comma ("could
    you be a dear and wake me at six" → "wake me at six"; "будь другом, выключи свет" → "выключи свет"), or said after
    it ("turn off the hall light when you get a sec"), or asked after it whether it will be done ("lock the front door,
    would you?": its question mark goes with it). A courtesy with nothing beside it, or one said first that is not
    cut off so, stays as said."""
    words = text.strip().split()
    plain = [w.strip(",;.!?").lower() for w in words]
    for phrase in _asked_after(lang):
        n = len(phrase)
        if len(words) > n and tuple(plain[-n:]) == phrase and words[-n - 1][-1:] in (",", ".", ";", "?", "!"):
            return without_courtesy(" ".join(words[:-n]).rstrip(",;"), lang)
    for phrase in _courtesy_after(lang):
        n = len(phrase)
        if len(words) > n and tuple(plain[-n:]) == phrase:
            before = " ".join(words[:-n]).rstrip(",;")
            return without_courtesy(before + words[-1][len(words[-1].rstrip("?!.")):], lang)
    for phrase in _courtesy(lang):
        n = len(phrase)
        if tuple(plain[:n]) != phrase or len(words) <= n:
            continue
        rest = words[n:]
        if words[n - 1].endswith((",", ";")):
            return " ".join(rest) if rest else text
        for joiner in _joiners(lang):
            size = len(joiner.split())
            if [w.strip(",;").lower() for w in rest[:size]] == joiner.split() and len(rest) > size:
                return " ".join(rest[size:])
    return text


def split_requests(text: str, lang: str) -> list[str]:
    """The utterance cut at the joining words of its language ("and", "и", "और"), commas included (a courtesy said
    before the request, "could you be a dear and …", is not a part)."""
    text = without_courtesy(text, lang)
    words = [w.strip(",;") for w in re.split(r"[\s,;]+", text.strip()) if w.strip(",;")]
    parts: list[list[str]] = [[]]
    i = 0
    while i < len(words):
        for joiner in _joiners(lang):
            size = len(joiner.split())
            after = tuple(w.lower() for w in words[i + size :])
            if " ".join(words[i : i + size]).lower() == joiner and parts[-1] \
                    and " ".join(parts[-1]).lower() not in _needs_more(lang) \
                    and parts[-1][-1].strip(",.").lower() not in _more_of(lang) \
                    and not any(after[: len(tail)] == tail for tail in _inside(lang)):
                parts.append([])
                i += size
                break
        else:
            parts[-1].append(words[i])
            i += 1
    return [" ".join(p) for p in parts if p]


# A clause ends at a comma, a semicolon or a sentence mark followed by a space; not at the dot of "7.30" or of the
# "a.m." abbreviation.
_CLAUSE_END = re.compile(r"[,;!?…]\s+|(?<!\.[^\W\d_])\.\s+")


def clauses(text: str) -> list[str]:
    """The utterance cut where the speaker paused in writing: "I'm off to bed, lock the front door"."""
    return [c.strip(" ,;.!?…") for c in _CLAUSE_END.split(text.strip()) if c.strip(" ,;.!?…")]


@cache
def _statement_starts(lang: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _table(lang).get("statement_starts", []))


@cache
def _statement_ends(lang: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _table(lang).get("statement_ends", []))


def statement(clause: str, lang: str) -> str:
    """How a clause shows it is a remark about things rather than a request: "start" when it begins as one ("it's
    dark", "I'm heading out", "мне холодно"), "end" when it ends as one (Hindi's verb-final "अंडे उबालने हैं"), or
    "" for neither. Said beside a request, a remark is the reason for it, not a second request."""
    words = [w.strip("'\"«»") for w in clause.lower().split()]
    if not words:
        return ""
    if words[-1] in _statement_ends(lang):  # the verb said last says what is ("कोई नहीं देख रहा": nobody is
        return "end"  # watching), even when the clause also begins as a remark; its "नहीं" describes, it does not forbid
    starts = _statement_starts(lang)
    if words[0] in starts or " ".join(words[:2]) in starts:
        return "start"
    return ""


def is_statement(clause: str, lang: str) -> bool:
    return bool(statement(clause, lang))


def tells_not_to(clause: str, lang: str) -> bool:
    """A remark that ends as a statement says what is, even with "नहीं" in it ("sunai nahi de raha"); only the
    imperative negation ("मत") tells hearthd not to do something."""
    return any(w.strip("'\"«»") in _table(lang).get("imperative_negation", []) for w in clause.lower().split())


def unglued(text: str, lang: str) -> str:
    """`text` with a negation that speech to text ran into the next word set apart ("पंखा बंद मतकेरना" → "पंखा बंद मत
    केरना"; split.toml `told_not_glued`, less the words that only begin the same, `told_not_glued_not`)."""
    table = _table(lang)
    glued = [g.lower() for g in table.get("told_not_glued", [])]
    # written in Latin ("TV Band Matkarna"), the negation is set apart only before a verb of `told_not_as`: "mat" begins
    # too many words ("matlab", "matar", "match") for a list of those that merely begin so
    before_verb = [g.lower() for g in table.get("told_not_glued_before_verb", [])]
    if not glued and not before_verb:
        return text
    keep = {w.lower() for w in table.get("told_not_glued_not", [])}
    told_as: dict[str, Any] = dict(table.get("told_not_as", {}))  # type: ignore[arg-type]
    verbs = {w.lower() for w in (*told_as, *map(str, told_as.values()))}
    out = []
    for word in text.split():
        bare = word.strip(",.!?…;:\"'«»“”।").lower()
        head = next((g for g in glued if bare.startswith(g) and len(bare) > len(g) and bare not in keep
                     and not any(bare.startswith(k) for k in keep)), None) \
            or next((g for g in before_verb if bare.startswith(g) and bare[len(g):] in verbs), None)
        out.append(f"{word[:len(head)]} {word[len(head):]}" if head and word.lower().startswith(head) else word)
    return " ".join(out)


def told_not_to(text: str, lang: str) -> str | None:
    """What an utterance tells hearthd not to do, as the request it would be said plainly ("don't turn off the light"
    → "turn off the light", "нет, не выключай свет" → "выключай свет", "लाइट बंद मत करो" → "लाइट बंद करो"); None when it
    says no such thing. The negation opens the utterance (split.toml `told_not`, a "no" before it dropped too:
    `told_not_first`), or, in a language that puts it beside the verb, is anywhere in it (`told_not_anywhere`)."""
    table = _table(lang)
    told = sorted({" ".join(p.lower().split()) for p in table.get("told_not", [])}, key=len, reverse=True)
    if not told:
        return None
    first = {w.lower() for w in table.get("told_not_first", [])}
    words = [w for w in (w.strip(",.!?…;:\"'«»“”।") for w in unglued(text, lang).lower().replace("’", "'").split())
             if w]
    while words and words[0] in first and not any(" ".join(words[:len(p.split())]) == p for p in told):
        words = words[1:]  # ("no need to …" is a negation of its own, not a "no" before one)
    anywhere = bool(table.get("told_not_anywhere", False))
    but = [w.lower().split() for w in table.get("told_not_but", [])]
    plain: dict[str, str] = dict(table.get("told_not_as", {}))  # type: ignore[arg-type]
    for phrase in told:
        n = len(phrase.split())
        starts = range(len(words) - n + 1) if anywhere else range(min(1, len(words) - n + 1))
        for i in starts:
            if " ".join(words[i:i + n]) != phrase:
                continue
            if any(words[i + n:i + n + len(b)] == b or words[max(0, i - len(b)):i] == b for b in but):
                return None  # "don't forget to …", "भूलना मत": do it
            rest = [plain.get(w, w) for w in words[:i] + words[i + n:]]
            return " ".join(rest) if rest else None
    if table.get("told_not_at_verb", False):
        # later in the utterance, beside a verb said as one says what not to do: before it ("завтра не буди", "свет
        # не выключай") or after it ("будить не надо"): what comes first is then a time or a thing, not a remark
        after = sorted({" ".join(p.lower().split()) for p in table.get("told_not_after", [])}, key=len, reverse=True)
        for phrase, before in [(p, True) for p in told] + [(p, False) for p in after]:
            n = len(phrase.split())
            for i in range(1, len(words) - n + 1):
                if " ".join(words[i:i + n]) != phrase:
                    continue
                if (words[i + n] in plain if before and i + n < len(words) else
                        not before and any(w in plain for w in words[:i])):
                    rest = [plain.get(w, w) for w in words[:i] + words[i + n:]]
                    return " ".join(rest)
    return None


def told_not_form(text: str, lang: str) -> str | None:
    """`text`, a request said plainly, as said telling hearthd not to do it ("turn off the light" → "don't turn off
    the light", "выключи свет" → "не выключай свет", "लाइट बंद कर दो" → "लाइट बंद मत कर दो"); None in a language
    without the rule (split.toml `told_not_prefix`, or `told_not_before_verb` with the light verbs that follow the
    main one, `told_not_light_verbs`). The way back to the imperfective is `told_not_as` read backwards."""
    table = _table(lang)
    words = text.split()
    if not words:
        return None
    back: dict[str, str] = {}
    told_as: dict[str, Any] = dict(table.get("told_not_as", {}))  # type: ignore[arg-type]
    for said, plain in told_as.items():
        back.setdefault(str(plain), str(said))  # (the imperative is listed before the infinitives)
    if prefix := str(table.get("told_not_prefix", "")):
        first = words[0].lower()
        return " ".join([prefix, back.get(first, words[0]), *words[1:]])
    if marker := str(table.get("told_not_before_verb", "")):
        if not any(ch.isalpha() and not ch.isascii() for ch in text):  # written in Latin: "light band mat kar do"
            marker = str(table.get("told_not_before_verb_latn", marker))
        light = {w.lower() for w in table.get("told_not_light_verbs", [])}
        at = len(words) - 1
        if at >= 1 and words[at].lower() in light:
            at -= 1  # "बंद कर दो": before "कर"
        return " ".join([*words[:at], marker, *words[at:]])
    return None


def left_out(text: str, lang: str) -> list[tuple[str, str, bool]]:
    """The ways `text` may say what to leave out of a request for many ("turn off all the lights except the bedroom",
    "выключи свет везде кроме спальни", "बेडरूम को छोड़कर सारी लाइटें बंद कर दो"): (the request without it, what is left
    out, sure), the longest left-out first. `sure`: said with a word that only ever means this (split.toml `except`,
    `except_after`); otherwise ("but", `except_maybe`) it counts only when what follows names a room or a device. The
    caller says whether the left-out names one; none of these when the text says no such word."""
    table = _table(lang)
    words = [w.strip(".!?…;:\"'«»“”।") for w in text.replace("’", "'").split()]
    words = [w for w in words if w]
    low = [w.lower().strip(",") for w in words]

    def phrases(key: str) -> list[list[str]]:
        return sorted((p.lower().split() for p in table.get(key, [])), key=len, reverse=True)

    out: list[tuple[str, str, bool]] = []
    for key, after, sure in (("except", False, True), ("except_maybe", False, False), ("except_after", True, True)):
        for marker in phrases(key):
            n = len(marker)
            for i in range(len(low) - n + 1):
                if low[i:i + n] != marker:
                    continue
                before, rest = words[:i], words[i + n:]
                if after:  # the left-out ends at the marker: the words before it, back to a comma or the start
                    start = max((j + 1 for j, w in enumerate(before) if w.endswith(",")), default=0)
                    for k in range(start, len(before)):
                        out.append((" ".join(before[:k] + rest).strip(" ,"), " ".join(before[k:]).strip(" ,"), sure))
                else:  # the left-out follows the marker, up to a comma or the end
                    end = next((j + 1 for j, w in enumerate(rest) if w.endswith(",")), len(rest))
                    for k in range(end, 0, -1):
                        out.append((" ".join(before + rest[k:]).strip(" ,"), " ".join(rest[:k]).strip(" ,"), sure))
        if out:
            return [o for o in out if o[0] and o[1]]
    return []


def sounds_left_out(text: str, lang: str) -> bool:
    """Whether `text` says, or has a word that sounds like, one of the words that leave something out of a request
    ("बेड्व को जोकर सारी बाटि बंद करदो": "जोकर" for "छोड़कर"): speech to text garbles them as it does names, and a
    template sentence chosen for the rest would do the very thing to be left out. Only the words of `except` and
    `except_heard`, the ones no word of a command sounds like ("кроме" is "громче" by sound: not listened for), are
    listened for."""
    from ..phonetic import key, similarity

    if left_out(text, lang):
        return True
    markers = [m.lower() for m in _table(lang).get("except_heard", [])]
    heard = [w.strip(",.!?…;:\"'«»“”।") for w in text.split()]
    return any(similarity(w, m) >= SOUNDS_LIKE for w in heard if len(key(w)) >= 3 for m in markers)


SOUNDS_LIKE = 0.78  # phonetic.similarity of a heard word to a word that leaves something out


@cache
def _there(lang: str) -> tuple[tuple[str, ...], ...]:
    return tuple(sorted((tuple(w.lower().split()) for w in _table(lang).get("there", [])), key=len, reverse=True))


def without_there(clause: str, lang: str) -> str | None:
    """`clause` without its "there" ("kill the light there" → "kill the light"), or None when it says none: the room
    it means is one a remark beside it names (split.toml `there`)."""
    words = clause.split()
    folded = [w.lower().strip(",.!?…") for w in words]
    for there in _there(lang):
        for i in range(len(folded) - len(there) + 1):
            if tuple(folded[i:i + len(there)]) == there:
                return " ".join(words[:i] + words[i + len(there):])
    return None
