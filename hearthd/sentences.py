"""Where text is cut for speaking: sentences, the first clause of a long first sentence, and pieces short enough for a
voice. One module, so every path that speaks (the live loop, the satellites, Wyoming's streamed synthesis, MQTT
announcements, the voices themselves) cuts text the same way."""

from __future__ import annotations

import re

MARKS = ".!?…。।"  # what ends a sentence: Latin and Cyrillic punctuation, the ellipsis, the ideographic stop, the danda
BETWEEN_SENTENCES = re.compile(rf"(?<=[{MARKS}])\s+")
ENDS_SENTENCE = re.compile(rf"[{MARKS}]\s+$")  # streamed text whose last sentence is complete
_PIECE_END = re.compile(rf"(?<=[{MARKS};:])\s+")  # a voice may also break at a semicolon or a colon
_CLAUSE_END = re.compile(r"(?<=[,;:—])\s+")
FIRST_PIECE_CHARS = 30  # a longer first sentence is spoken clause first: the listener waits only for that
PIECE_CHARS = 200  # no voice is handed more at once (Piper's memory grows with the length of one sentence)


def split_sentences(text: str) -> list[str]:
    """`text` cut into its sentences, stripped, none empty."""
    return [s for s in (p.strip() for p in BETWEEN_SENTENCES.split(text)) if s]


def spoken_sentences(text: str) -> list[str]:
    """A reply as it is spoken: sentence by sentence, each played as soon as it is made. A long first sentence gives
    its first clause on its own ("Sorry, I did not catch the room — …"): the wait before the first sound is the time
    to make the first piece (a Kokoro sentence of 60 characters: ~2 s on 2 cores; its first clause: ~0.7 s)."""
    parts = split_sentences(text)
    if parts and len(parts[0]) > FIRST_PIECE_CHARS:
        clause = _CLAUSE_END.split(parts[0], maxsplit=1)
        if len(clause) == 2 and len(clause[1].split()) >= 2:  # the rest keeps at least two words
            parts[:1] = clause
    return parts


def pieces(text: str, limit: int = PIECE_CHARS, at_clauses: bool = True) -> list[str]:
    """`text` in pieces of at most `limit` characters: cut at sentence ends (and a semicolon or colon, `at_clauses`),
    else between words, else anywhere."""
    out: list[str] = []
    for sentence in (_PIECE_END if at_clauses else BETWEEN_SENTENCES).split(text.strip()):
        piece = ""
        for word in sentence.split():
            while len(word) > limit:  # one "word" longer than a piece (a URL, a run of symbols)
                if piece:
                    out.append(piece)
                    piece = ""
                out.append(word[:limit])
                word = word[limit:]
            if piece and len(piece) + 1 + len(word) > limit:
                out.append(piece)
                piece = word
            else:
                piece = f"{piece} {word}" if piece else word
        if piece:
            out.append(piece)
    return out


__all__ = ["ENDS_SENTENCE", "FIRST_PIECE_CHARS", "PIECE_CHARS", "pieces", "split_sentences", "spoken_sentences"]
