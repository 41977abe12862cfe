"""How a word sounds, roughly, in any of the scripts hearthd hears: a key of sound classes shared by Devanagari,
Cyrillic and Latin (romanised Hindi included), so a word heard approximately ("बंखा" for "पंखा", "ты мир" for
"таймер", "jalao" for "जलाओ", "टीवी" for "TV") is compared with the words it may mean by how it sounds, not how it is
spelled.

Speech to text slips between voiced and voiceless, aspirated and plain, retroflex and dental consonants and between
near vowels; those fall into one class here. Consonants carry a word's identity and vowels are where scripts and
recognisers disagree most (Devanagari leaves its inherent "a" unwritten, English spells "i" for /ai/), so
`similarity` counts a vowel half a consonant, and near sounds (ch/s, l/n, e/i) less. Written by hand: no kept
library keys these three scripts together.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

# Sound classes: P (p b f v w, फ भ व), T (t d th, ट ठ ड ढ त थ द ध), K (k g q kh gh x, क ख ग घ, к г х), C (ch j, च छ ज झ,
# ч ц), S (s z sh zh, स श ष ज़, с з ш щ ж), M, N, L, R, Y (a glide, weighed as a vowel), H (dropped after a consonant);
# vowels a (a, अ आ, а я), o (o, ओ औ ऑ, о ё), e (e ai, ए ऐ, е э), i (i ee, इ ई, и ы), u (u oo, उ ऊ, у ю).
VOWELS = frozenset("aeiouY")
_DEVANAGARI_CONSONANTS = {
    **dict.fromkeys("कखगघ", "K"), **dict.fromkeys("चछजझ", "C"), **dict.fromkeys("टठडढतथदध", "T"),
    **dict.fromkeys("पफबभ", "P"), "म": "M", **dict.fromkeys("नणञङ", "N"), "य": "Y", "र": "R", "ऱ": "R",
    "ल": "L", "ळ": "L", "व": "P", **dict.fromkeys("शषस", "S"), "ह": "H",
}
_NUKTA_SOUNDS = {"ज": "S", "झ": "S"}  # ज़ is z; क़ ख़ ग़ ड़ ढ़ फ़ stay in their consonant's class
_DEVANAGARI_VOWELS = {
    **dict.fromkeys("अआा", "a"), **dict.fromkeys("ओऔोौऑॉॅ", "o"), **dict.fromkeys("एऐेै", "e"),
    **dict.fromkeys("इईिी", "i"), **dict.fromkeys("उऊुू", "u"), "ऋ": "Ri", "ृ": "Ri",
}
_DEVANAGARI_MARKS = {**dict.fromkeys("ंँ", "N"), "ः": "H"}
_VIRAMA, _NUKTA = "\u094d", "\u093c"
_CYRILLIC = {
    **dict.fromkeys("бпфв", "P"), **dict.fromkeys("дт", "T"), **dict.fromkeys("гкх", "K"), **dict.fromkeys("чц", "C"),
    **dict.fromkeys("сзшщж", "S"), "м": "M", "н": "N", "л": "L", "р": "R", "й": "Y",
    **dict.fromkeys("ая", "a"), **dict.fromkeys("оё", "o"), **dict.fromkeys("еэ", "e"), **dict.fromkeys("иы", "i"),
    **dict.fromkeys("ую", "u"),
}
# Latin spellings of one sound, longest first where they overlap ("tch" before "ch", "igh" before "gh").
_LATIN_PAIRS = (("tch", "C"), ("sch", "S"), ("igh", "ai"), ("ch", "C"), ("sh", "S"), ("zh", "S"), ("ph", "P"),
                ("th", "T"), ("dh", "T"), ("bh", "P"), ("kh", "K"), ("gh", "K"), ("ck", "K"), ("qu", "KP"),
                ("aa", "a"), ("ee", "i"), ("ea", "i"), ("oo", "u"), ("ou", "u"), ("ai", "e"), ("ay", "e"), ("ey", "e"),
                ("x", "KS"))
_LATIN = {
    **dict.fromkeys("pbfvw", "P"), **dict.fromkeys("td", "T"), **dict.fromkeys("kgqc", "K"), "j": "C",
    **dict.fromkeys("sz", "S"), "m": "M", "n": "N", "l": "L", "r": "R", "y": "Y", "h": "H",
    "a": "a", "o": "o", "e": "e", "i": "i", "u": "u",
}
# How English says its letters, for names written as initials ("TV", "AC", "PC"): "टीवी" and "ти ви" are "tee vee".
_LETTER_NAMES = {
    "a": "e", "b": "bee", "c": "see", "d": "dee", "e": "ee", "f": "ef", "g": "jee", "h": "eich", "i": "ai",
    "j": "jei", "k": "kei", "l": "el", "m": "em", "n": "en", "o": "o", "p": "pee", "q": "kyu", "r": "ar", "s": "es",
    "t": "tee", "u": "yu", "v": "vee", "w": "dablyu", "x": "eks", "y": "wai", "z": "zed",
}
_LATIN_VOWELS = frozenset("aeiouy")
# Sounds a recogniser (or a speaker) swaps for each other, cheaper than other vowels: Hindi and Russian write English's
# weak vowels as а/अ ("nursery" नर्सरी, "plug" प्लग), Russian's unstressed e as и.
_NEAR = frozenset(frozenset(p) for p in ("ae", "au", "ei", "ou", "CS", "MN", "LN", "LR", "Ya", "Ye", "Yi"))
_NEAR_COST, _VOWEL_COST = 0.3, 0.5


def _latin(word: str) -> str:
    if len(word) > 3 and word.endswith("e") and word[-2] not in _LATIN_VOWELS:
        word = word[:-1]  # a silent final e: "stove", "fridge", "phone"
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
            elif ch == "y" and i == len(word) - 1 and i > 0 and word[i - 1] not in _LATIN_VOWELS:
                out.append("i")  # "nursery", "sony"
            elif ch in "iy" and i > 0 and word[i + 1:i + 2].isalpha() and word[i + 1] not in _LATIN_VOWELS \
                    and word[i + 2:i + 3] == "e":
                out.append("ai")  # "timer", "fire", "tile": the i of a silent or weak e after one consonant
            else:
                out.append(_LATIN.get(ch, ch if ch.isdigit() else ""))
            i += 1
    # an h after a consonant is breath, not a sound ("bhajan", "dhoop"); at the start or after a vowel it is heard
    return "".join(s for j, s in enumerate(out) if s != "H" or j == 0 or out[j - 1][-1:] in VOWELS)


def _devanagari(word: str) -> str:
    """Devanagari with its unwritten vowel as Hindi says it: a consonant with no vowel sign or virama after it is
    followed by "a", except at the end of the word and between a vowel and a consonant that has one ("कमरा" kamra,
    "बदती" badti, "मिनट" minat)."""
    sounds: list[tuple[str, bool]] = []  # (sound, is it an unwritten "a")
    chars = [ch for ch in word]
    i = 0
    while i < len(chars):
        ch = chars[i]
        nukta = i + 1 < len(chars) and chars[i + 1] == _NUKTA
        sound = (_NUKTA_SOUNDS.get(ch) if nukta else None) or _DEVANAGARI_CONSONANTS.get(ch)
        i += 2 if nukta else 1
        if sound is not None:
            sounds.append((sound, False))
            after = chars[i] if i < len(chars) else ""
            if after and after != _VIRAMA and after not in _DEVANAGARI_VOWELS:  # "पं" is "pan", "पंखा" pankha
                sounds.append(("a", True))
        elif ch in _DEVANAGARI_VOWELS:
            sounds.append((_DEVANAGARI_VOWELS[ch], False))
        elif ch in _DEVANAGARI_MARKS:
            sounds.append((_DEVANAGARI_MARKS[ch], False))
        elif ch.isdigit():
            sounds.append((ch, False))
    kept = []
    for j, (sound, unwritten) in enumerate(sounds):
        if unwritten and 1 < j < len(sounds) - 2 and sounds[j - 2][0] in VOWELS \
                and sounds[j + 1][0] not in VOWELS and sounds[j + 2][0] in VOWELS:
            continue  # schwa deletion: V C(a) C V
        kept.append(sound)
    return "".join(kept)


def _initials(word: str) -> bool:
    """A Latin word said letter by letter: written in capitals ("TV", "AC") or with no vowel at all ("tv", "pc")."""
    letters = [ch for ch in word if ch.isalpha()]
    if not letters or len(letters) > 4 or not all("a" <= ch.lower() <= "z" for ch in letters):
        return False
    return (word.isupper() and len(letters) > 1) or not any(ch.lower() in _LATIN_VOWELS for ch in letters)


def _fold(raw: str) -> str:
    folded: list[str] = []
    for ch in raw:
        if not folded or folded[-1] != ch:
            folded.append(ch)
    return "".join(folded)


def _script(ch: str) -> str:
    if "a" <= ch <= "z" or "\u00c0" <= ch <= "\u024f":
        return "latin"
    if "\u0900" <= ch <= "\u097f":
        return "devanagari"
    return "cyrillic" if "\u0400" <= ch <= "\u04ff" else ""


def _runs(text: str) -> list[tuple[str, str]]:
    """`text` cut where its script changes ("свeт" typed with a Latin e is three runs); digits and marks stay with
    the run they are in."""
    runs: list[tuple[str, str]] = []
    for ch in text:
        script = _script(ch) or (runs[-1][0] if runs else "")
        if runs and runs[-1][0] == script:
            runs[-1] = (script, runs[-1][1] + ch)
        else:
            runs.append((script, ch))
    return runs


@lru_cache(maxsize=16384)  # bounded: a daemon hears endless new words
def key(word: str) -> str:
    """The sound classes of `word` (any script), repeats folded: "बत्ती" and "batti" → "PaTi", "पंखा" and "बंखा" →
    "PaNKa", "таймер" → "TaYMiR", "TV" and "टीवी" → "TiPi"."""
    if _initials(word):
        word = "".join(_LETTER_NAMES[ch] for ch in word.lower() if ch.isalpha())
    # NFD: "ज़" as ज + nukta whichever way it was typed, "café" as a plain e and its accent; й and ё are kept whole
    text = unicodedata.normalize("NFD", word.lower()).replace("\u0438\u0306", "й").replace("\u0435\u0308", "ё")
    raw: list[str] = []
    for script, run in _runs(text):
        if script == "latin":
            raw.append(_latin("".join(ch for ch in run if ch.isalnum() and unicodedata.category(ch) != "Mn")))
        elif script == "devanagari":
            raw.append(_devanagari(run))
        else:
            raw.append("".join(_CYRILLIC.get(ch, ch if ch.isdigit() else "") for ch in run))
    return _fold("".join(raw))


def _cost(x: str, y: str) -> float:
    if x == y:
        return 0.0
    if frozenset((x, y)) in _NEAR:
        return _NEAR_COST
    return _VOWEL_COST if x in VOWELS and y in VOWELS else 1.0


def _weight(sound: str) -> float:
    return _VOWEL_COST if sound in VOWELS else 1.0


def distance(a: str, b: str) -> float:
    """The weighted edit distance of two keys: a vowel or glide counts half, near sounds ("C"/"S", "L"/"N", "e"/"i")
    less than that, anything else one."""
    wa, wb = [_weight(x) for x in a], [_weight(y) for y in b]
    costs = [[_cost(x, y) for y in b] for x in a]
    previous = [0.0]
    for w in wb:
        previous.append(previous[-1] + w)
    for i, x_weight in enumerate(wa):
        row = costs[i]
        current = [previous[0] + x_weight]
        for j, y_weight in enumerate(wb):
            current.append(min(previous[j + 1] + x_weight, current[j] + y_weight, previous[j] + row[j]))
        previous = current
    return previous[-1]


def phrase_key(text: str) -> str:
    """The key of a phrase, its words run together: word breaks are where recognisers disagree ("ты мир", "таймер")."""
    return "".join(key(w) for w in text.split())


def weight(text: str) -> float:
    """How much sound a word or phrase has to go by: its consonants count one, its vowels half ("TV" 3, "on" 1.5)."""
    return sum(map(_weight, phrase_key(text)))


def similarity(a: str, b: str, at_least: float = 0.0) -> float:
    """How alike two words or phrases sound, 0..1 (1: the same key): their keys' weighted edit distance, normalised
    by the weight of the longer. Word breaks do not count ("ты мир" ~ "таймер"). Below `at_least` the answer is
    only a bound (0 when their lengths alone rule it out: every edit costs at least what it changes in weight)."""
    ka, kb = phrase_key(a), phrase_key(b)
    if not ka or not kb:
        return 1.0 if ka == kb else 0.0
    if ka == kb:
        return 1.0
    wa, wb = sum(map(_weight, ka)), sum(map(_weight, kb))
    if min(wa, wb) / max(wa, wb) < at_least:
        return 0.0
    return max(0.0, 1.0 - distance(ka, kb) / max(wa, wb))
