"""Text folding in one place (issue 30.5): every comparison of what was said with tables, templates and names
folds both sides with hearthd.text.fold, so a spelling whisper writes either way is one word everywhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hearthd.text import fold

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("a,b", [
    ("हज़ार", "हजार"), ("डेढ़", "डेढ"), ("पाँच", "पांच"), ("दरवाज़ा", "दरवाजा"),  # nukta, chandrabindu
    ("\u095b", "\u091c"),  # a precomposed nukta letter (ज़ as one code point) and the plain one
    ("क्\u200dष", "क्ष"), ("क्\u200cष", "क्ष"),  # zero-width joiners
    ("Ёлка", "елка"), ("е\u0308ж", "еж"),  # ё, precomposed or not
    ("Kitchen LIGHT", "kitchen light"),
])
def test_spellings_whisper_writes_either_way_fold_to_one(a: str, b: str) -> None:
    assert fold(a) == fold(b)


def test_different_words_stay_different() -> None:
    assert fold("पंखा") != fold("पका") and fold("мел") != fold("мёд") and fold("on") != fold("off")


def test_no_module_folds_text_by_hand() -> None:
    """A module that folded by its own rule (ё without the nukta, or the nukta without chandrabindu) would miss a
    spelling the others catch: the rules are written once, in hearthd/text.py."""
    by_hand = re.compile(r"""replace\(\s*["']ё["']|replace\(\s*["']\\u093c["']|replace\(\s*["']\\u0901["']""")
    offenders = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "hearthd").rglob("*.py"))
                 if path.name != "text.py"
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if by_hand.search(line)]
    assert offenders == []
