"""What biasing speech to text toward the home's words brings, and what finding names by their sound adds after it.

    .venv/bin/python bench/recognition.py [--langs en,ru,hi] [--styles off,hotwords,prompt,both] [--show]
    .venv/bin/python bench/recognition.py --spoken [--stride 3]     # the spoken suites, in their home

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


def load_spoken(langs: list[str], stride: int) -> dict[str, Any]:
    """The spoken suites (tests/data/spoken/<lang>.yaml, every `stride`-th command) in their home
    (tests/data/commands/home.yaml), in this bench's form: each command's words are those of its text that are the
    home's (a device's or alias's word, a room word of the language) or the commands' (hearthd.audio.bias
    command_words: recognition.toml and the templates' alternatives), fillers and words under three letters left out;
    the device, the one its arguments name."""
    import yaml

    from hearthd.audio.bias import command_words
    from hearthd.locale import table

    home = yaml.safe_load((ROOT / "tests" / "data" / "commands" / "home.yaml").read_text(encoding="utf-8"))
    devices = [{**e, "key": e["key"].split(".", 1)[1]} for e in home["entities"]]
    names = {e["name"].lower(): e["name"] for e in devices}
    commands: dict[str, list[dict[str, Any]]] = {}
    for lang in langs:
        vocabulary = {w for e in devices for w in _plain(e["name"]).split()}
        vocabulary |= {w for a in home.get("aliases") or {} for w in _plain(a).split()}
        vocabulary |= {w for said in table(lang, "home.toml").get("areas", {}).values() for a in said
                       for w in _plain(a).split()}
        vocabulary |= {w for c in command_words(lang) for w in _plain(c).split()}
        fillers = {_plain(w) for w in table(lang, "home.toml").get("fillers", [])}
        vocabulary = {w for w in vocabulary if len(w) >= 3 and w not in fillers}  # "на", "का", "the" name nothing
        suite = yaml.safe_load((ROOT / "tests" / "data" / "spoken" / f"{lang}.yaml").read_text(encoding="utf-8"))
        commands[lang] = []
        for c in suite[::stride]:
            said = _plain(c["text"]).split()
            device = next((names[str(v).lower()] for v in (c.get("arguments") or {}).values()
                           if str(v).lower() in names), None)
            commands[lang].append({"text": c["text"], "words": [w for w in said if w in vocabulary] or said[:1],
                                   **({"device": device} if device else {})})
    return {"home": devices, "aliases": home.get("aliases") or {}, "commands": commands}


def catalogue(data: dict[str, Any]) -> Any:
    """The bench's home: its devices in three scripts, with their aliases."""
    from hearthd.tools.catalogue import Catalogue
    from hearthd.tools.discovery import Entity

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
    parser.add_argument("--spoken", action="store_true",
                        help="the spoken suites (tests/data/spoken) in their home, not tests/data/recognition.yaml")
    parser.add_argument("--stride", type=int, default=1, help="with --spoken: every n-th command")
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
    data = load_spoken(args.langs.split(","), args.stride) if args.spoken else load()
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
