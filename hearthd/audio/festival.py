"""Festival (Debian's `festival` with `festvox-ru`, voice `msu_ru_nsh_clunits`): hearthd's natural offline voice for
Russian (whisper base reads it back; espeak-ng's Russian it mostly cannot).

One festival process per voice stays running with the voice loaded (loading it costs ~0.6 s; a sentence then takes
~60 ms): each piece is sent as a Scheme command that writes a WAV file into a private temporary folder, followed by
a marker the process prints when done. Its output goes through a pseudo-terminal, so the marker is not held in a
pipe's buffer. A process that dies or hangs is ended and started again on the next piece.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import shutil
import subprocess
import tempfile
import threading
import time
import wave
from pathlib import Path

import numpy as np

from .tts import Speech, TtsError, pieces

DEFAULT_VOICE = "msu_ru_nsh_clunits"
VOICE_DIRS = (Path("/usr/share/festival/voices"), Path("/usr/lib/festival/voices"))
START_S = 20.0  # loading a voice, on a busy machine
PIECE_S = 20.0  # one piece of at most 200 characters


def voice_installed(voice: str) -> bool:
    """Whether festival and `voice` are installed (a folder named after the voice under festival's voices)."""
    return bool(shutil.which("festival")) and any(
        (root / lang / voice).is_dir() for root in VOICE_DIRS if root.is_dir() for lang in os.listdir(root))


_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_PERCENT = re.compile(r"(\d+)\s*%")


def speakable(text: str, lang: str) -> str:
    """What festival's letter-to-sound rules can read: "7:30" as "7 30" (hours and minutes, as people say a time),
    "50 %" as the number with its noun in the form it takes ("50 процентов", from locales/<lang>/spoken.toml)."""
    from ..spoken import say_count

    def percent(m: re.Match[str]) -> str:
        try:
            return say_count(int(m.group(1)), "percent", lang)
        except (KeyError, ValueError):
            return m.group(1)

    return _PERCENT.sub(percent, _TIME.sub(lambda m: f"{int(m.group(1))} {m.group(2)}", text))


def _scheme_string(text: str) -> str:
    """`text` as a Scheme string literal: one line of words and the clause marks festival reads. Anything else goes
    (festival's reader mishandles escaped quotes, and the Russian voice's letter-to-sound rules refuse the whole
    utterance over one bracket or dash standing alone); a dash between clauses becomes a comma."""
    kept = "".join(c if c.isalnum() or c in ".,!?;:'-" else ("," if c in "—–" else " ") for c in text)
    flat = " ".join(kept.replace(" - ", ", ").split())
    # a clause mark standing alone is a token the rules refuse too: it joins the word before it
    flat = re.sub(r"(?:\s*[.,!?;:])*\s*([.,!?;:])(?=\s|$)", r"\1", flat).lstrip(".,!?;: ")
    return '"' + flat + '"'


class FestivalTextToSpeech:
    """A festival voice in a process of its own, started on first use and kept."""

    def __init__(self, voice: str = DEFAULT_VOICE, lang: str = "ru") -> None:
        if not shutil.which("festival"):
            raise TtsError("festival is not installed (apt-get install festival festvox-ru)")
        if not voice.replace("_", "").isalnum():
            raise TtsError(f"not a festival voice name: {voice!r}")
        if not voice_installed(voice):
            raise TtsError(f"festival has no voice {voice!r} (apt-get install festvox-ru)")
        self.voice = voice
        self.lang = lang  # the language the voice speaks: how numbers are written out for it
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._out = -1
        self._dir = tempfile.TemporaryDirectory(prefix="hearthd-festival-")  # 0700: the replies are private
        self._count = 0

    def _start(self) -> None:
        import pty
        import termios

        master, slave = pty.openpty()
        attrs = termios.tcgetattr(slave)
        attrs[3] &= ~termios.ECHO  # the commands are not echoed back
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        try:
            self._proc = subprocess.Popen(["festival", "--pipe"], stdin=subprocess.PIPE, stdout=slave,
                                          stderr=subprocess.DEVNULL, start_new_session=True)
        finally:
            os.close(slave)
        self._out = master
        self._command(f'(voice_{self.voice})', START_S)

    def _command(self, scheme: str, timeout: float) -> None:
        """Send one command and wait for the marker that says festival finished it."""
        assert self._proc is not None and self._proc.stdin is not None
        self._count += 1
        marker = f"HEARTHD-DONE-{self._count}"
        try:
            self._proc.stdin.write(f'{scheme}\n(format t "{marker}\\n")\n'.encode())
            self._proc.stdin.flush()
        except OSError as e:
            raise TtsError(f"festival ({self.voice}) stopped: {e}") from e
        seen = b""
        deadline = time.monotonic() + timeout
        while marker.encode() not in seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TtsError(f"festival ({self.voice}) did not answer within {timeout:g} s")
            ready, _, _ = select.select([self._out], [], [], left)
            if not ready:
                continue
            try:
                chunk = os.read(self._out, 4096)
            except OSError:
                chunk = b""
            if not chunk:
                raise TtsError(f"festival ({self.voice}) exited (code {self._proc.poll()})")
            seen = (seen + chunk)[-4096:]

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        if self._out >= 0:
            with contextlib.suppress(OSError):
                os.close(self._out)
            self._out = -1

    def audio(self, text: str) -> tuple[np.ndarray, int]:
        """One piece of text: int16 audio and its rate (none for a piece with nothing to say: festival writes no
        file for it)."""
        if not any(c.isalnum() for c in text):
            return np.zeros(0, dtype=np.int16), 16000
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._stop()
                self._start()
            wav = Path(self._dir.name) / "piece.wav"
            wav.unlink(missing_ok=True)
            try:
                self._command(f"(utt.save.wave (SynthText {_scheme_string(text)}) \"{wav}\" 'riff)", PIECE_S)
            except TtsError:
                self._stop()  # in an unknown state: the next piece starts a fresh process
                raise
            try:
                with wave.open(str(wav)) as w:
                    rate = w.getframerate()
                    raw = w.readframes(w.getnframes())
            except (OSError, EOFError, wave.Error) as e:
                raise TtsError(f"festival ({self.voice}) wrote no audio for {text!r}: {e}") from e
            finally:
                wav.unlink(missing_ok=True)
        return np.frombuffer(raw, dtype="<i2").copy(), rate

    def synthesize(self, text: str) -> Speech:
        """`text` in pieces of at most 200 characters (as for Piper)."""
        chunks, rate = [], 16000
        for piece in pieces(speakable(text, self.lang)):
            audio, rate = self.audio(piece)
            chunks.append(audio)
        return Speech(np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16), rate)

    def close(self) -> None:
        with self._lock:
            self._stop()
        self._dir.cleanup()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._stop()


__all__ = ["DEFAULT_VOICE", "FestivalTextToSpeech", "voice_installed"]
