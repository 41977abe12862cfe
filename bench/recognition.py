"""What biasing speech to text toward the home's words brings, and what finding names by their sound adds after it.

    .venv/bin/python bench/recognition.py [--langs en,ru,hi] [--styles off,hotwords,prompt,both] [--show]

Each command of tests/data/recognition.yaml is said by the language's test voice (hearthd.evaluation.voices: Piper
English, festival Russian, Kokoro Hindi; seeded, cached on disk) and transcribed by the shipped whisper base, the
language forced, once per bias style: off (the language's own prompt only, as with stt.bias = false), the home's and
the commands' words as faster-whisper `hotwords`, in the `initial_prompt`, or both (the home's names as hot words,
the commands' words in the prompt), and in the prompt with the sentence templates' alternatives of the commands' words
after them (prompt+templates). Per language and style it prints:

- words: the device, room and command words of the commands heard right (any listed spelling, nukta and case aside);
- all: commands with every one of their words heard;
- name: devices found in the transcript by their name or alias as written; +sound: found by name or by their sound
  (Catalogue.resolve on the transcript's words: hearthd.phonetic), the second step, measured on the same transcript;
- echo: transcripts that were the prompt written back (decoded again unbiased);
- ms: median transcription time (styles in turn on each command, so the machine's load drifts alike for all), and
  its ratio to the first style's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "recognition.yaml"


def load() -> dict[str, Any]:
    import yaml

    return dict(yaml.safe_load(DATA.read_text(encoding="utf-8")))


def catalogue(data: dict[str, Any]) -> Any:
    """The bench's home: its devices in three scripts, with their aliases."""
    from hearthd.tools.discovery import Entity
    from hearthd.tools.smarthome import Catalogue

    home = Catalogue(None, aliases=data.get("aliases") or {})
    for d in data["home"]:
        e = Entity(source=d["key"], key=f"{d['component']}.{d['key']}", component=d["component"], name=d["name"],
                   area=d["area"], config={"command_topic": f"{d['key']}/set", "state_topic": d["key"]})
        home.entities[e.key] = e
    return home


def _plain(text: str) -> str:
    """Lower case, nukta and punctuation out: "गीज़र" and "गीजर" are one spelling here."""
    text = unicodedata.normalize("NFD", text.lower()).replace("\u093c", "")
    return " ".join("".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text).split())


def heard(word: str, transcript: str) -> bool:
    """Whether one of the word's spellings ("a|b") is in the transcript."""
    said = f" {_plain(transcript)} "
    return any(f" {_plain(w)}" in said for w in word.split("|"))


def found_by_name(home: Any, device: str, transcript: str) -> bool:
    """The device's name or one of its aliases, as written, in the transcript."""
    names = [device] + [a for a, target in home.aliases.items() if target.lower() == device.lower()]
    return any(heard(n, transcript) for n in names)


def found_by_sound(home: Any, device: str, transcript: str) -> bool:
    """The device, found by its name or sound: some run of one to three of the transcript's words resolves to it and
    to it alone (Catalogue.resolve: the name, an alias, a near spelling, then hearthd.phonetic)."""
    if found_by_name(home, device, transcript):
        return True
    words = _plain(transcript).split()
    kinds = {e.component for e in home.entities.values()}
    for n in (1, 2, 3):
        for i in range(len(words) - n + 1):
            match = home.resolve(" ".join(words[i:i + n]), kinds)
            if [e.name for e in match.entities] == [device]:
                return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", default="en,ru,hi")
    parser.add_argument("--styles", default="off,hotwords,prompt,both,prompt+templates")
    parser.add_argument("--show", action="store_true", help="print every transcript")
    args = parser.parse_args()

    os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp())
    from hearthd.audio.bias import HomeNames, RecognitionBias
    from hearthd.audio.stt import WhisperSpeechToText
    from hearthd.config import load_config
    from hearthd.daemon.components import make_store
    from hearthd.evaluation.voices import speak

    empty = Path(tempfile.mkdtemp()) / "config.toml"
    empty.write_text("")
    cfg = load_config(empty, environ={})
    data = load()
    home = catalogue(data)
    names = HomeNames(tuple(e.name for e in home.entities.values()) + tuple(home.aliases), tuple(sorted(home.areas())))
    stt = WhisperSpeechToText(make_store(cfg).resolve(cfg.stt.model), cfg.stt)
    styles = args.styles.split(",")

    print(f"{'lang':4} {'style':16} {'words':>11} {'all':>7} {'name':>7} {'+sound':>7} {'echo':>4} "
          f"{'ms':>6} {'ratio':>6}  prompt tokens")
    biases = {style: None if style == "off" else RecognitionBias(
        lambda: names, style.split("+")[0], count_tokens=stt.count_tokens, template_words="+" in style)
        for style in styles}
    for lang in args.langs.split(","):
        commands = data["commands"][lang]
        rows = {style: Row() for style in styles}
        for i, c in enumerate(commands):
            pcm = speak(c["text"], lang, seed=i)
            for style in styles:  # in turn on each command: the machine's load drifts alike for every style
                row, stt.bias = rows[style], biases[style]
                echoes, started = stt.echoes, time.perf_counter()
                text = stt.transcribe(pcm, language=lang).text
                row.times.append((time.perf_counter() - started) * 1000)
                row.echoes += stt.echoes - echoes
                right = [heard(w, text) for w in c["words"]]
                row.words += sum(right)
                row.whole += all(right)
                if c.get("device"):
                    row.devices += 1
                    row.by_name += found_by_name(home, c["device"], text)
                    row.by_sound += found_by_sound(home, c["device"], text)
                if args.show:
                    print(f"    {style:16} {'ok ' if all(right) else 'MISS'} {c['text']!r} → {text!r}")
        total = sum(len(c["words"]) for c in commands)
        base_ms = statistics.median(rows[styles[0]].times)
        for style, row in rows.items():
            bias = biases[style]
            prompt = bias.for_language(lang) if bias is not None else None
            tokens = stt.count_tokens(" ".join(p for p in (prompt.prompt, prompt.hotwords) if p)) if prompt else 0
            ms = statistics.median(row.times)
            print(f"{lang:4} {style:16} {row.words:>3}/{total:<3} {100 * row.words / total:3.0f}% "
                  f"{100 * row.whole / len(commands):5.0f}% {100 * row.by_name / max(row.devices, 1):6.0f}% "
                  f"{100 * row.by_sound / max(row.devices, 1):6.0f}% {row.echoes:>4} {ms:6.0f} "
                  f"{ms / base_ms:6.2f}  {tokens}")


@dataclass
class Row:
    """One style's counts on one language's commands."""

    words: int = 0
    whole: int = 0
    devices: int = 0
    by_name: int = 0
    by_sound: int = 0
    echoes: int = 0
    times: list[float] = field(default_factory=list)


if __name__ == "__main__":
    main()
