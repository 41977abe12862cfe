"""Text folded for comparison: one spelling per word, the same everywhere words are compared with tables, templates
and names (the checks, the templates' helpers, the tolerant tier, the sentence library, numbers and times).

Whisper writes the same Hindi word with or without the nukta (हज़ार/हजार, डेढ़/डेढ) and with chandrabindu or anusvara
(पाँच/पांच), with or without zero-width joiners, and Russian with or without ё; a table lists each word once, and
both sides of a comparison are folded alike so no spelling is missed.
"""

from __future__ import annotations

import unicodedata

_MARKS = (("\u093c", ""), ("\u0901", "\u0902"), ("\u200c", ""), ("\u200d", ""))


def fold(text: str) -> str:
    """`text` in NFC and lower case, ё as е, the Devanagari nukta dropped, chandrabindu as anusvara, no zero-width
    joiners."""
    text = unicodedata.normalize("NFC", text).lower().replace("ё", "е")
    for mark, plain in _MARKS:
        text = text.replace(mark, plain)
    return text
