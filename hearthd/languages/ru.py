"""Russian's own code: three noun forms after a number, and number words that agree with the noun's gender
(locales/ru/spoken.toml [numbers])."""

from __future__ import annotations

from typing import Any

from ..locale import table


def _russian_plural(n: int) -> int:
    """0 = one (1, 21, 101), 1 = few (2-4, 22-24), 2 = many (5-20, 25-30, 11-14)."""
    if n % 10 == 1 and n % 100 != 11:
        return 0
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return 1
    return 2


def _russian_words(n: int, gender: str) -> str:
    """"одна минута", "два часа": the words from locales/ru/spoken.toml [numbers]."""
    t = table("ru", "spoken.toml")["numbers"]
    if n == 0:
        return str(t["zero"])
    parts: list[str] = []
    thousands, rest = divmod(n, 1000)
    if thousands:
        parts += [_russian_words(thousands, "f")] if thousands > 1 else []
        parts.append(t["thousand"][_russian_plural(thousands)])
    hundreds, rest = divmod(rest, 100)
    if hundreds:
        parts.append(t["hundreds"][hundreds - 1])
    if 10 <= rest <= 19:
        parts.append(t["teens"][rest - 10])
    else:
        tens, units = divmod(rest, 10)
        if tens:
            parts.append(t["tens"][tens - 2])
        if units:
            parts.append(t["units_f"][units - 1] if gender == "f" and units <= 2 else t["units"][units - 1])
    return " ".join(parts)


RULES: dict[str, Any] = {"plural": _russian_plural, "number_words": _russian_words}
