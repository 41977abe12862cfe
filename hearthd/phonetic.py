"""How a word sounds, roughly, in any of the scripts hearthd hears: a key of sound classes shared by Devanagari,
Cyrillic and Latin (romanised Hindi included), so a word heard approximately ("बंखा" for "पंखा", "ты мир" for
"таймер", "jalao" for "जलाओ") is compared with the words it may mean by how it sounds, not how it is spelled.

Speech to text slips between voiced and voiceless, aspirated and plain, retroflex and dental consonants and between
near vowels; those fall into one class here. Written by hand: no kept library keys these three scripts together.
"""

from __future__ import annotations

import unicodedata
from functools import cache

from rapidfuzz.distance import Levenshtein

# Sound classes: P (p b f v w, फ भ), T (t d, ट ठ ड ढ त थ द ध), K (k g q kh gh, क ख ग घ), C (ch j, च छ ज झ, ч ц),
# S (s z sh, स श ष, с з ш щ ж), M, N, L, R, Y, H; vowels a (a aa o-ish), i (i ee e), u (u oo).
_DEVANAGARI = {
    **dict.fromkeys("कखगघक़ख़ग़", "K"), **dict.fromkeys("चछजझज़", "C"), **dict.fromkeys("टठडढड़ढ़तथदध", "T"),
    **dict.fromkeys("पफबभफ़", "P"), "म": "M", **dict.fromkeys("नणञङ", "N"), "य": "Y", "र": "R", "ऱ": "R",
    "ल": "L", "ळ": "L", "व": "P", **dict.fromkeys("शषस", "S"), "ह": "H",
    **dict.fromkeys("अआऑॅॉा", "a"), **dict.fromkeys("इईएऐिीेै", "i"), **dict.fromkeys("उऊओऔुूोौ", "u"),
    **dict.fromkeys("ंँ", "N"), "ः": "H", "ऋ": "Ri", "ृ": "Ri",
}
_CYRILLIC = {
    **dict.fromkeys("бпфв", "P"), **dict.fromkeys("дт", "T"), **dict.fromkeys("гкх", "K"), **dict.fromkeys("чц", "C"),
    **dict.fromkeys("сзшщж", "S"), "м": "M", "н": "N", "л": "L", "р": "R", "й": "Y",
    **dict.fromkeys("аоя", "a"), **dict.fromkeys("еёэиы", "i"), **dict.fromkeys("ую", "u"),
}
_LATIN_PAIRS = (("tch", "C"), ("sch", "S"), ("ch", "C"), ("sh", "S"), ("ph", "P"), ("th", "T"), ("dh", "T"),
                ("bh", "P"), ("kh", "K"), ("gh", "K"), ("ck", "K"), ("qu", "KP"), ("aa", "a"), ("ee", "i"),
                ("oo", "u"), ("ou", "u"), ("ai", "i"), ("ay", "i"), ("ey", "i"), ("x", "KS"))
_LATIN = {
    **dict.fromkeys("pbfvw", "P"), **dict.fromkeys("td", "T"), **dict.fromkeys("kgqc", "K"), "j": "C",
    **dict.fromkeys("sz", "S"), "m": "M", "n": "N", "l": "L", "r": "R", "y": "Y", "h": "H",
    **dict.fromkeys("ao", "a"), **dict.fromkeys("ie", "i"), "u": "u",
}


def _latin(word: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(word):
        for pair, sound in _LATIN_PAIRS:
            if word.startswith(pair, i):
                out.append(sound)
                i += len(pair)
                break
        else:
            ch = word[i]
            if ch == "c" and i + 1 < len(word) and word[i + 1] in "eiy":
                out.append("S")  # "cinema", "centre"
            else:
                out.append(_LATIN.get(ch, ""))
            i += 1
    return "".join(out)


@cache
def key(word: str) -> str:
    """The sound classes of `word` (any script), repeats and a word's silent ends folded: "बत्ती" and "बदती" → "PaTi",
    "таймер" and "таймир" → "TaYMiR"."""
    text = unicodedata.normalize("NFC", word.lower().replace("\u093c", ""))  # the nukta: ज़ is heard as ज
    text = unicodedata.normalize("NFD", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Mn" or "\u0900" <= ch <= "\u097f")
    text = text.replace("\u094d", "")  # the virama joins consonants; the key has no inherent vowels anyway
    if any("a" <= ch <= "z" for ch in text):
        raw = _latin("".join(ch for ch in text if ch.isalpha() or ch.isdigit()))
        raw = raw[:1] + "".join(ch for i, ch in enumerate(raw[1:], 1)  # an h after a consonant is breath
                                if ch != "H" or raw[i - 1] in "aiu")
    else:
        raw = "".join(_DEVANAGARI.get(ch, _CYRILLIC.get(ch, ch if ch.isdigit() else "")) for ch in text)
    folded: list[str] = []
    for ch in raw:
        if not folded or folded[-1] != ch:
            folded.append(ch)
    return "".join(folded)


def similarity(a: str, b: str) -> float:
    """How alike two words or phrases sound, 0..1 (1: the same key): the edit distance of their keys, normalised."""
    ka, kb = " ".join(key(w) for w in a.split()), " ".join(key(w) for w in b.split())
    if not ka or not kb:
        return 1.0 if ka == kb else 0.0
    return float(Levenshtein.normalized_similarity(ka.replace(" ", ""), kb.replace(" ", "")))
