"""Closed-grammar rescoring: what whisper wrote, weighed against the sentences the home's commands are made of.

Rhasspy's idea, with whisper's own ears. Whisper base decoding freely writes Hindi it hears clearly as noise ("बातचारो"
for "लाइट बंद करो", "दामर हताडो" for "टाइमर हटा दो") and Russian at times as other words ("поставь ты мир на 10 минут"):
its decoder's idea of the language is weak, its ear is not. Told the candidate sentences, it ranks the one said first
(forced alignment: the probability of each sentence's tokens given the audio, `WhisperSpeechToText.fit`).

When the strict templates cannot read a transcript, the tolerant tier offers the template sentences nearest it
(`TolerantMatcher.sentences`: the nearest bags written out with the words heard, a room or a name not heard filled with
the home's), and each is read against the audio beside what whisper wrote. A sentence that ends before whisper's own
does pays for the speech it leaves unsaid (forced alignment scores a text's tokens, never its end: "поставь
будильник" fits the start of "поставь будильник на полседьмого" well). The best sentence replaces the transcript when
it fits the audio better than whisper's own, or nearly as well (within `margin`, in mean log-probability per token: a
free decode picks each token greedily, so the sentence said scores a little below it) and well enough on its own
(`floor`): something no template says ("what's the weather like tomorrow") fits none of them and stays as heard. Never
while a question is open (a yes or no, a room, a time is answered as said), and what is chosen goes through
every check and the confirmation policy as what was typed would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .bias import looped

# A sentence whose end is aligned before the end of what was heard (less REACH_SLACK, of the speech) loses REACH_COST
# per whole speech it leaves unsaid, from its mean log-probability per token
REACH_SLACK = 0.05
REACH_COST = 3.0
# A sentence fitting within this of the best (mean log-probability per token) that does another thing to the same
# device (`rivals`) leaves the transcript as heard: whisper did not hear which ("अदला दबाचला", for "अगला गाना चलाओ",
# fit "पिछला गाना बजा दो" 0.08 better than "अगला ट्रैक बजाओ"; the previous song was played)
RIVAL_GAP = 0.25


@dataclass(frozen=True)
class Rescored:
    """The sentence chosen for what whisper wrote, and how well each fits the audio."""

    text: str
    heard: str
    score: float  # mean log-probability per token of `text` against the audio
    heard_score: float  # of what whisper wrote
    candidates: int  # how many sentences were weighed


def unsure_of_language(transcript: object, below: float) -> bool:
    """Whether whisper chose the transcript's language itself and less surely than `below`
    (`stt.rescore_languages_below`): the other languages' sentences are then weighed too."""
    return getattr(transcript, "source", "") == "detected" and getattr(transcript, "prob", 1.0) < below


def rescored(heard: str, candidates: list[str], fit: Callable[[list[str]], list[tuple[float, float]]],
             margin: float, floor: float, foreign: bool = False,
             negate: Callable[[str], str | None] | None = None, loops: bool = False,
             rivals: Callable[[str, str], bool] | None = None) -> Rescored | None:
    """The candidate that fits the audio best (`fit`: per sentence, its mean log-probability per token and how far
    into the speech it reaches; a sentence that stops short of what was heard pays for it), if it fits better than
    `heard`, or nearly as well (within `margin`) and at least `floor`; else None (the transcript stands). `foreign`:
    the sentences are of a language whisper did not hear, and what it wrote, read as theirs, fits badly by its
    letters alone ("Music, turn on" read as Hindi): fitting better than it is no reason, `floor` always holds.
    `negate`: the chosen sentence told not to be done ("रसोई की बत्ती बंद मत करो"); when the audio fits it better, it
    is chosen instead. The templates say no "don't", so a negation whisper garbled ("बंद मद्खारो") would otherwise be
    dropped, and the light turned off that the user said to leave on. What whisper wrote in a loop is no reading of the
    audio: with `loops`, against it `floor` alone decides. That is for a few candidates (the stop phrases): among
    the templates' many sentences one fits a loop above the floor by chance ("कल मौसम कैसा रहेगा", heard as "बातचा
    बातचा …", read as asking the volume), so there the loop stands and the model reads it. `rivals`: whether two
    sentences do different things to the same device; one fitting within RIVAL_GAP of the best that does leaves the
    transcript as heard (the audio did not say which: on or off is never chosen by a hair)."""
    others = [c for c in dict.fromkeys(candidates) if c.strip() and c.strip() != heard.strip()]
    if not others:
        return None
    fits = fit([heard, *others])
    if len(fits) != len(others) + 1:
        raise ValueError(f"{len(fits)} scores for {len(others) + 1} sentences")
    (heard_score, heard_reach), rest = fits[0], fits[1:]
    if loops and looped(heard):
        # whisper went round in a loop ("अप्रूव़ व़ व़ व़ …" for "रुक जाओ"): each token of a loop foretells the next, so
        # it fits the audio well by its own repetition, not by what was said; a sentence then needs only `floor`
        heard_score = min(heard_score, floor)
    # a sentence that ends before the speech does pays for what it leaves unsaid
    adjusted = [score - REACH_COST * max(0.0, heard_reach - reach - REACH_SLACK) for score, reach in rest]
    best = max(range(len(others)), key=lambda i: adjusted[i])
    score = adjusted[best]
    if (score <= heard_score or foreign) and (score < floor or score < heard_score - margin):
        return None
    text = others[best]
    if rivals is not None and any(adjusted[i] >= score - RIVAL_GAP and rivals(text, others[i])
                                  for i in range(len(others)) if i != best):
        return None
    negated = negate(text) if negate is not None else None
    if negated and negated != text:
        weighed = fit([text, negated])
        if len(weighed) == 2:
            (plain, plain_reach), (told, told_reach) = weighed
            told_score = told - REACH_COST * max(0.0, heard_reach - told_reach - REACH_SLACK)
            if told_score > plain - REACH_COST * max(0.0, heard_reach - plain_reach - REACH_SLACK):
                text, score = negated, max(score, told_score)
    return Rescored(text, heard, round(score, 3), round(heard_score, 3), len(others))
