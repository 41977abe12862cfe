"""The chain for one utterance: wake word → endpointing → STT → agent → tool → reply → speech.

Every step emits an event on the Trace; blocking inference runs in executor threads so the loop stays free.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, TypeVar

import numpy as np

from ..agent.agent import AgentError, Decision
from ..agent.agent import asked_at as agent_asked_at
from ..agent.checks import asks, without_tag
from ..agent.declines import refusal_phrase
from ..agent.fastpath import CORRECTABLE, Done, Pending
from ..agent.library import turn_area
from ..agent.parsing import ToolCall
from ..agent.split import told_not_form, without_courtesy
from ..audio.pcm import SAMPLE_RATE
from ..audio.rescoring import Rescored, rescored, unsure_of_language
from ..audio.stt import SpeechToText, SttError
from ..audio.tts import Speech, TtsError
from ..audio.vad import EndpointState
from ..audio.wake import WakeWordDetector, WakeWordError
from ..context import turn_language
from ..errors import HearthdError
from ..events import (
    AbstainEvent,
    AudioOutEvent,
    ClarifyEvent,
    ConfirmAnswerEvent,
    ConfirmRequestEvent,
    ErrorEvent,
    ModelEvent,
    NotifyEvent,
    ReplyEvent,
    SpeechEndEvent,
    SpeechStartEvent,
    ToolCallEvent,
    ToolResultEvent,
    Trace,
    TranscriptEvent,
    WakeEvent,
)
from ..language import language_of_text
from ..locale import DEFAULT_LANGUAGE, ask_phrase, phrase, read_with
from ..private import StateWriteError
from ..tools.registry import SchemaError, ToolFailed, ToolResult, UnknownTool
from .choice import chosen, held_choice, resolved_call
from .components import Components
from .dialogue import LOCAL, Dialogue, confirmations
from .policy import answer_of, off_phrase, stop_phrase

T = TypeVar("T")
log = logging.getLogger(__name__)


def _let_go(future: asyncio.Future[Any]) -> None:
    """A worker's result nobody waits for any more: its exception read, so that asyncio does not log it as lost."""
    if not future.cancelled():
        future.exception()


class Stage(StrEnum):
    """The stages of one turn, in order."""

    WAKE = "wake"
    VAD = "vad"
    STT = "stt"
    AGENT = "agent"
    TOOL = "tool"
    TTS = "tts"


class PipelineError(HearthdError):
    """A turn that cannot go on; `code` is stable (e.g. `wake-not-detected`), `phrase_key` is what to say."""

    def __init__(self, code: str, message: str, phrase_key: str = "error.internal") -> None:
        super().__init__(message, code, phrase_key)


def stage_error(stage: str, error: Exception, kind: type[HearthdError], code: str) -> HearthdError:
    """What `stage` raised, as its typed error: a HearthdError as it is, anything else (a library's RuntimeError, a
    KeyError…) as `kind` with `code`, logged with its traceback (assist_pipeline wraps each stage the same way)."""
    if not isinstance(error, HearthdError):
        log.error("the %s stage failed unexpectedly", stage, exc_info=error)
    return kind.wrapping(error, code)


_CONTROL = dict.fromkeys(c for c in range(32) if c not in (9, 10, 13))  # NUL and the C0 controls but tab, newlines
# Marks that change how text is shown, never what it says: bidi marks, embeddings, overrides and isolates, the BOM,
# the zero-width space and the word joiner. Pasted or sent by a client ("\u202eSet an alarm for 6 am?"), they kept
# the templates from matching. (Zero-width (non-)joiners stay: they shape Devanagari.)
_CONTROL.update(dict.fromkeys([0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2060, 0xFEFF]))
_CONTROL[0x200B] = " "  # a zero-width space still parts two words


TEXT_SAMPLE = 400  # characters of a refused text read for its language (a 3,120-character one: its start tells)


def clean_text(text: str, max_chars: int) -> str:
    """Request text as the chain can take it: NUL and other control characters dropped, a lone surrogate (bytes
    that were not UTF-8) replaced by U+FFFD. Longer than `max_chars` (agent.max_text_chars) is a PipelineError
    (`text-too-long`), said as "more than I can take in at once"."""
    if len(text) > max_chars:
        raise PipelineError("text-too-long", f"the text is {len(text)} characters; at most {max_chars} are taken "
                            "(agent.max_text_chars)", "agent.too_much")
    text = text.translate(_CONTROL)
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


@dataclass
class TurnResult:
    """What one turn produced."""

    transcript: str = ""
    lang: str = DEFAULT_LANGUAGE
    decision: Decision | None = None
    results: list[ToolResult] = field(default_factory=list)
    reply: str = ""
    speech: Speech | None = None
    error: str = ""


class Pipeline:
    """Runs turns over already-loaded components and reports each step on a Trace."""

    request_id: str | None = None

    def __init__(self, components: Components, trace: Trace) -> None:
        self.c = components
        self.cfg = components.cfg
        self.trace = trace

    async def _blocking(self, stage: str, fn: Callable[..., T], *args: Any) -> T:
        started = time.monotonic()
        try:  # in this turn's context: what it carries (its room, library.turn_area) reaches the executor thread
            return await asyncio.get_running_loop().run_in_executor(None, contextvars.copy_context().run, fn, *args)
        finally:
            self.trace.timing(stage, time.monotonic() - started)

    # -- audio in -------------------------------------------------------------------------------------------

    def _find_wake(self, audio: np.ndarray) -> int:
        try:  # a wake word that cannot load, or a remote one that is down, ends this turn with an apology
            detector: WakeWordDetector = self.c.wake()
            detector.reset()
            detection = detector.process(audio)
        except Exception as e:
            raise stage_error(Stage.WAKE, e, WakeWordError, "wake-failed") from e
        if detection is None:
            best = float(getattr(detector, "max_score", 0.0))
            raise PipelineError(
                "wake-not-detected",
                f"the wake word {detector.name!r} was not heard (best score {best:.2f})",
                "error.no_wake",
            )
        self.trace.emit(WakeEvent(name=detection.name, score=detection.score,
                                  at_s=round(detection.sample / SAMPLE_RATE, 3)))
        return detection.sample

    def _endpoint(self, audio: np.ndarray, offset: int) -> tuple[int, int]:
        endpointer = self.c.endpointer()
        endpointer.reset()
        state = endpointer.feed(audio[offset:])
        if state not in (EndpointState.DONE, EndpointState.TIMEOUT):
            state = endpointer.flush()
        if state != EndpointState.DONE or endpointer.segment is None:
            where = "after the wake word" if self.cfg.wake.enabled else "in the audio"
            raise PipelineError("stt-no-speech", f"no speech {where}", "error.no_speech")
        seg = endpointer.segment
        return offset + seg.start, offset + seg.end

    def _audit(self, result: TurnResult, first_event: int) -> None:
        audit = self.c.audit
        if audit is not None and not audit.write(audit.turn(result.transcript, result.lang,
                                                            self.trace.since(first_event))):
            self.trace.emit(ErrorEvent(code="audit-not-recorded", message=f"{audit.last_loss} ({audit.lost} turn(s) "
                                       "not recorded, told in the next record)"))

    async def run_audio(self, audio: np.ndarray, language: str | None = None, conversation: str = LOCAL
                        ) -> TurnResult:
        """One turn from 16 kHz int16 audio (a WAV file or a captured utterance) in `conversation`."""
        first_event = self.trace.mark()
        dialogue = self.c.dialogues.get(conversation)
        with _in_room(dialogue):
            result = await self._run_audio(audio, language, dialogue)
        self._audit(result, first_event)
        return result

    async def run_text(self, text: str, language: str | None = None, speak: bool = False,
                       request_id: str | None = None, conversation: str = LOCAL,
                       asked_at: float | None = None) -> TurnResult:
        """One turn from text (`hearthd ask`): the same chain from the agent on. A `request_id` makes the turn
        idempotent: sent again, its actions do not run twice. `conversation` is who asks ("local", "dbus:<sender>",
        "mqtt:<id>"): only its own next turn answers a question this one asks. `asked_at` (time.monotonic()): when
        the request arrived, if it waited in line for other turns; the model's budget runs from there."""
        self.request_id = request_id
        first_event = self.trace.mark()
        dialogue = self.c.dialogues.get(conversation)
        arrived = agent_asked_at.set(asked_at)
        try:
            with _in_room(dialogue):
                result = await self._run_text(text, language, speak, dialogue)
        finally:
            agent_asked_at.reset(arrived)
        self._audit(result, first_event)
        return result

    async def _run_audio(self, audio: np.ndarray, language: str | None, dialogue: Dialogue) -> TurnResult:
        # until words are heard, the conversation's language is the turn's (an apology is said in it)
        result = TurnResult(lang=language or dialogue.lang or self.cfg.general.language)
        try:
            if len(audio) < SAMPLE_RATE // 10:
                raise PipelineError("audio-too-short", f"only {len(audio)} samples of audio", "error.no_speech")
            offset = 0
            if self.cfg.wake.enabled:
                offset = await self._blocking(Stage.WAKE, self._find_wake, audio)
            start, end = await self._blocking(Stage.VAD, self._endpoint, audio, offset)
            self.trace.emit(SpeechStartEvent(at_s=round(start / SAMPLE_RATE, 3)))
            self.trace.emit(SpeechEndEvent(at_s=round(end / SAMPLE_RATE, 3)))
            end_of_speech = time.monotonic()
            await self._hear(result, audio[start:end], language, dialogue)
            await self._respond(result, dialogue)
            if result.speech is not None:
                self.trace.timing("end_of_speech_to_reply_audio", time.monotonic() - end_of_speech)
        except Exception as e:  # a stage's typed error, or what escaped between stages: this turn ends alone
            await self._fail(result, stage_error("turn", e, HearthdError, "internal"))
        return result

    async def _hear(self, result: TurnResult, speech: np.ndarray, language: str | None, dialogue: Dialogue,
                    transcript: Any = None, guess: Guess | None = None) -> None:
        """The transcript of one endpointed utterance (`transcript`: one already made, e.g. speculatively; `guess`:
        what was read from it in the pause, the rescoring's choice with it)."""
        if transcript is None:
            try:  # a model that cannot load, a remote that is down, a decoder that breaks: this turn's apology
                stt: SpeechToText = self.c.stt()
                transcript = await self._blocking(Stage.STT, stt.transcribe, speech, language, dialogue.lang)
            except Exception as e:
                raise stage_error(Stage.STT, e, SttError, "stt-failed") from e
        found = guess.found if guess is not None and guess.transcript is transcript and guess.read \
            else await self._rescored(speech, transcript, dialogue)
        chosen, lang = found if found is not None else (None, transcript.lang)
        self.trace.emit(TranscriptEvent(text=chosen.text if chosen else transcript.text, lang=lang,
                                        prob=transcript.prob, lang_source=transcript.source, conversation=dialogue.id,
                                        heard=chosen.heard if chosen else None))
        self.c.last_lang = dialogue.lang = lang
        result.transcript, result.lang = chosen.text if chosen else transcript.text, lang
        if not any(ch.isalnum() for ch in transcript.text):  # "", "...", "?": whisper heard no words
            raise PipelineError("stt-no-text-recognized", "speech was heard but no words recognised",
                                "agent.not_understood")

    async def _rescored(self, speech: np.ndarray, transcript: Any, dialogue: Dialogue,
                        run: Callable[..., Awaitable[Any]] | None = None) -> tuple[Rescored, str] | None:
        """The template sentence that fits the audio better than what whisper wrote (hearthd.audio.rescoring), and its
        language, when the templates cannot read the transcript; never while this conversation's question waits for
        its answer. When whisper was unsure of the language (below `stt.rescore_languages_below`: "बस, रुक जाओ" heard
        as English "Bus Ruk Chao" at 0.62, "वॉल्यूम कम करो" as Russian "Волюм Камкаро" at 0.72), the other languages'
        sentences are weighed too, each language's against whisper's words read as that language (told Hindi, whisper
        fits "Bus Ruk Chao" worse than "bas ruk jao"; told English, the other way round), the best of them taken."""
        stt = self.c.stt()
        fit = getattr(stt, "fit", None)
        if not self.cfg.stt.rescore or fit is None or not transcript.text.strip() or dialogue.is_open() \
                or not self.cfg.agent.fast_path:
            return None
        langs = [transcript.lang]
        if unsure_of_language(transcript, self.cfg.stt.rescore_languages_below):
            langs += [lang for lang in self.cfg.stt.languages if lang != transcript.lang]
        best: tuple[Rescored, str] | None = None
        router = self.c.router()
        rivals = getattr(router, "rivals", None)
        loop = asyncio.get_running_loop()

        def offer(lang: str) -> asyncio.Future[list[str]]:
            # the sentences are written out in a worker thread (100-700 ms of Python: on the event loop they held up
            # every other room's audio), and the next language's while whisper weighs this one's
            return loop.run_in_executor(None, contextvars.copy_context().run, functools.partial(
                router.candidates, transcript.text, lang, foreign=lang != transcript.lang))

        coming: asyncio.Future[list[str]] | None = offer(langs[0])
        try:
            for i, lang in enumerate(langs):
                offered, coming = coming, None
                try:
                    candidates = await offered if offered is not None else []
                except Exception:  # the transcript as whisper wrote it stands, for this language
                    log.exception("writing out the templates' sentences failed")
                    candidates = []
                finally:  # (the next language's Python beside whisper's weighing, which lets go of the interpreter:
                    # begun beside this language's own, the two only took turns)
                    coming = offer(langs[i + 1]) if i + 1 < len(langs) else None
                try:
                    if not candidates:
                        continue
                    found = await (run or functools.partial(self._blocking, Stage.STT))(
                        rescored, transcript.text, candidates, lambda texts, lang=lang: fit(speech, lang, texts),
                        self.cfg.stt.rescore_margin, self.cfg.stt.rescore_floor, lang != transcript.lang,
                        lambda text, lang=lang: None if asks(text, lang) else told_not_form(text, lang), False,
                        rivals and (lambda one, other, lang=lang: rivals(one, other, lang)))
                except Exception:  # the transcript as whisper wrote it stands
                    log.exception("weighing the templates' sentences against the audio failed")
                    continue
                if found is not None and (best is None or found.score > best[0].score):
                    best = (found, lang)
        finally:
            if coming is not None:  # (a turn that ended first: what the next language's sentences came to is let go)
                coming.add_done_callback(_let_go)
        return best

    async def run_utterance(self, speech: np.ndarray, language: str | None = None, transcript: Any = None,
                            conversation: str = LOCAL, guess: Guess | None = None) -> TurnResult:
        """One turn from an utterance the live loop has already cut out (wake word and endpointing done); the
        reply is not synthesised here: the loop speaks it sentence by sentence. `guess`: what was heard and
        decided in the pause (Pipeline.guess), acted on now when the words and the conversation are as they were."""
        first_event = self.trace.mark()
        dialogue = self.c.dialogues.get(conversation)
        result = TurnResult(lang=language or dialogue.lang or self.cfg.general.language)
        try:
            await self._hear(result, speech, language, dialogue, transcript, guess)
            usable = guess is not None and guess.transcript is transcript and guess.decision is not None \
                and guess.text == result.transcript and guess.lang == result.lang and not dialogue.is_open() \
                and not dialogue.dropped
            await self._respond(result, dialogue, speak=False, guess=guess if usable else None)
        except Exception as e:
            await self._fail(result, stage_error("turn", e, HearthdError, "internal"), speak=False)
        self._audit(result, first_event)
        return result

    # -- text in --------------------------------------------------------------------------------------------

    async def _run_text(self, text: str, language: str | None, speak: bool, dialogue: Dialogue) -> TurnResult:
        try:
            text = clean_text(text, self.cfg.agent.max_text_chars)
        except PipelineError as e:  # refused before anything reads it; the audit keeps only its start
            said = language_of_text(text[:TEXT_SAMPLE], self.cfg.stt.languages, dialogue.lang or
                                    self.cfg.general.language)  # said in the language it is written in
            result = TurnResult(transcript=text[:80] + ("…" if len(text) > 80 else ""),
                                lang=language or self.cfg.stt.language or said)
            # who asked, in the audit too (its record names the conversation from this event)
            self.trace.emit(TranscriptEvent(text=result.transcript, lang=result.lang, prob=1.0, source="text",
                                            conversation=dialogue.id))
            await self._fail(result, e, speak=speak)
            return result
        # No script to go by ("7:30" answering "На какое время?"): this conversation's open question's language.
        pending = dialogue.pending
        lang = language or self.cfg.stt.language or language_of_text(
            text, self.cfg.stt.languages, pending.lang if pending else dialogue.lang or self.cfg.general.language)
        self.c.last_lang = dialogue.lang = lang
        result = TurnResult(transcript=text, lang=lang)
        self.trace.emit(TranscriptEvent(text=text, lang=lang, prob=1.0, source="text", conversation=dialogue.id))
        try:
            await self._respond(result, dialogue, speak=speak)
        except Exception as e:
            await self._fail(result, stage_error("turn", e, HearthdError, "internal"), speak=speak)
        return result

    # -- shared tail ----------------------------------------------------------------------------------------

    async def guess(self, speech: np.ndarray, transcript: Any, conversation: str, stale: threading.Event) -> Guess:
        """What the turn would decide on `transcript` (the utterance so far, heard in the pause before the end of
        speech is confirmed), decided now and not acted on: the templates' reading (rescored as `_hear` does), the
        decision of the fast path, the tolerant tier or the model, and whether the words already make a whole
        command (Router.complete: the utterance may then end on vad.complete_silence_ms). Nothing is emitted, asked,
        said or done here. Each step holds the inference gate as a speculative job (turns go first), and `stale`
        set (the speaker went on) skips the steps not begun and stops the model between tokens. A conversation with a
        question open is left to the turn: its answer is read against what is open then."""
        dialogue = self.c.dialogues.get(conversation)
        guess = Guess(transcript)
        if dialogue.is_open() or stale.is_set() or not transcript.text.strip():
            return guess
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()

        async def run(fn: Callable[..., T], *args: Any) -> T:
            job = functools.partial(self.c.inference.speculative, fn, *args, cancelled=stale)
            # a copy each: two jobs of this guess may be under way at once (the model's decision on whisper's words,
            # and the weighing waiting for the gate), and one context cannot be entered by two threads
            return await loop.run_in_executor(None, context.copy().run, job)

        early: asyncio.Future[tuple[Decision, _Scratch]] | None = None
        try:
            with _in_room(dialogue):
                context = contextvars.copy_context()
                router = self.c.router()
                agent = self.c.built("agent")

                def deciding(text: str, lang: str) -> Callable[[], tuple[Decision, _Scratch]]:
                    def decide() -> tuple[Decision, _Scratch]:
                        scratch = _Scratch()
                        with agent.speculating(stale) if agent is not None else contextlib.nullcontext():
                            return router.decide(text, lang, scratch), scratch
                    return decide

                if any(ch.isalnum() for ch in transcript.text):
                    # The decision on whisper's own words begins beside the rescoring's sentences, which are Python
                    # (written out in a worker thread, 50-700 ms) while the model is llama.cpp's: when the rescoring
                    # chooses none, as for most requests the templates cannot read, it is the guess's, ready sooner
                    # (measured: 740-1,130 ms one after the other, 470-610 side by side). Whisper's weighing of the
                    # sentences waits for the model at the gate (the two take the same cores); a sentence it chooses
                    # is decided afresh and this decision is let go.
                    early = asyncio.ensure_future(run(deciding(transcript.text, transcript.lang)))
                guess.found = await self._rescored(speech, transcript, dialogue, run)
                guess.read = True
                chosen, lang = guess.found if guess.found is not None else (None, transcript.lang)
                guess.text, guess.lang = chosen.text if chosen else transcript.text, lang
                if not any(ch.isalnum() for ch in guess.text):
                    return guess
                if chosen is None and early is not None:
                    decision, scratch = await early
                else:
                    decision, scratch = await run(deciding(guess.text, guess.lang))
            if stale.is_set():  # the agent cut its decision for this very event: nothing of it is kept
                return guess
            guess.decision, guess.pending = decision, scratch.pending
            text = without_tag(without_courtesy(guess.text, guess.lang), guess.lang)
            guess.complete = self.c.router().complete(text, guess.lang, decision)
        except Exception:  # noqa: BLE001 — the turn decides again, and reports what fails then
            log.debug("the decision in the pause failed; the turn decides", exc_info=True)
        finally:
            if early is not None:  # (when not waited for, what it came to is let go)
                early.add_done_callback(_let_go)
        return guess

    async def _respond(self, result: TurnResult, dialogue: Dialogue, speak: bool = True,
                       guess: Guess | None = None) -> None:
        policy = self.c.policy
        confirmed = False
        dropped, dialogue.dropped = dialogue.dropped, False  # told once, at the turn after its question was closed
        answer: str | None = None
        calls: list[ToolCall] = []
        with confirmations(policy, dialogue):  # this conversation's held calls only
            if policy.pending():
                # The turn answers "Unlock the front door?": only a yes of that language runs the held calls.
                assert policy.held is not None
                result.lang = policy.held.lang
                answer, calls = policy.answer(result.transcript)
        if answer is not None:
            self.trace.emit(ConfirmAnswerEvent(answer=answer, names=[c.name for c in calls]))
            if answer != "yes":
                await self._reply(result, phrase(result.lang, "confirm.cancelled"), speak)
                return
            decision, confirmed = Decision("call", calls=calls, source="confirmed"), True
        else:
            picked = _wordless(result) or self._hush(result) or self._chosen(result, dialogue) \
                or _unasked(result, dialogue, self.c.router().fast_path, dropped)
            if picked is None and guess is not None and guess.decision is not None:
                picked = guess.decision  # decided in the pause, on these same words
                if guess.pending is not None:  # the question it asks, open from now
                    dialogue.pending = replace(guess.pending,
                                               deadline=self.c.ticks() + self.cfg.agent.clarify_timeout_s)
            try:
                decision = picked if picked is not None else await self._blocking(
                    Stage.AGENT, self.c.router().decide, result.transcript, result.lang, dialogue)
            except Exception as e:  # a model that cannot load or evaluate, a library that breaks: this turn ends
                raise stage_error(Stage.AGENT, e, AgentError, "agent-failed") from e
            decision = self._rung(decision)
            if decision.evaluated:
                self.trace.emit(ModelEvent(evaluated=decision.evaluated, completion_tokens=decision.completion_tokens,
                                           thinking_tokens=decision.thinking_tokens, prefix=decision.prefix,
                                           kept_mb=round(decision.kept_bytes / 2**20, 1) or None))
            if decision.kind == "call" and len(decision.calls) > self.cfg.agent.max_calls:
                decision = Decision("abstain", reason=f"{len(decision.calls)} calls, over agent.max_calls",
                                    source=decision.source, say="agent.too_many")
            with confirmations(policy, dialogue):
                held = decision.kind == "call" and policy.review(decision.calls, result.lang,
                                                                 guess=decision.confirm) is None
                question = policy.question(result.lang) if held else ""
            if held and await self._not_kept(result, dialogue, speak):
                return
            if held:
                result.decision = decision
                first = next((c for c in decision.calls if policy.needs_confirmation(c)), decision.calls[0])
                self.trace.emit(ConfirmRequestEvent(name=first.name, arguments=first.arguments, question=question,
                                                    calls=[{"name": c.name, "arguments": c.arguments}
                                                           for c in decision.calls]))
                await self._reply(result, question, speak)
                await self._notify("confirm", question, result.lang)
                return
        result.decision = decision
        if decision.kind == "abstain":
            self.trace.emit(AbstainEvent(
                reason=decision.reason, source=decision.source,
                relevance=None if decision.relevance is None else round(decision.relevance, 3)))
            # a generic decline says why when the request is of a kind hearthd cannot serve ("the weather: no internet")
            say = refusal_phrase(decision, result.transcript, result.lang)
            result.reply = phrase(result.lang, say, **decision.say_values)
        elif decision.kind == "clarify":
            # the question for the detail, or what the last answer lacked with it ("I don't know a room called …")
            result.reply = phrase(result.lang, decision.say, **decision.say_values) if decision.say \
                else ask_phrase(result.lang, decision.missing)
            if decision.held:  # the request's other parts wait for the answer ("… and lock the door": which door?)
                result.reply = f"{result.reply} {phrase(result.lang, 'confirm.rest_waits')}"
            self.trace.emit(ClarifyEvent(question=result.reply, name=decision.calls[0].name, missing=decision.missing,
                                         source=decision.source))
        else:
            replies = []
            for position, call in enumerate(decision.calls):
                self.trace.emit(ToolCallEvent(
                    name=call.name, arguments=call.arguments, source=decision.source,
                    confidence=round(decision.name_probs.get(call.name, 0.0), 3),
                    relevance=None if decision.relevance is None else round(decision.relevance, 3)))
                key = None if not self.request_id else \
                    self.c.done_requests.key(self.request_id, position, call.name, call.arguments)
                tool_result = self.c.done_requests.get(key) if key else None
                if tool_result is not None:
                    self.trace.emit(ToolResultEvent(name=call.name, ok=tool_result.ok, result=tool_result.data,
                                                    duplicate=True))  # the same request again: answered, not done again
                else:
                    tool_result = await self._execute(call.name, call.arguments, confirmed, result.lang)
                    if key:
                        self.c.done_requests.put(key, tool_result)
                if str(tool_result.data.get("code", "")).startswith("state-"):
                    result.error = result.error or str(tool_result.data["code"])  # nothing was saved: say so
                result.results.append(tool_result)
                said = phrase(result.lang, tool_result.phrase, **tool_result.spoken_values(result.lang))
                if (choice := held_choice(call, tool_result, result.lang, self.cfg.agent.clarify_timeout_s)):
                    dialogue.choice = choice  # "Which one: …?" — this conversation's next utterance may name it
                    self.trace.emit(ClarifyEvent(question=said, name=call.name, missing=choice.argument,
                                                 candidates=choice.candidates, source="tool"))
                replies.append(said)
            result.reply = " ".join(replies)
            # the request done, which this conversation may correct next ("actually, make it 8 instead")
            router = self.c.router()
            one = decision.calls[0] if len(decision.calls) == 1 and result.results and result.results[-1].ok else None
            dialogue.done = Done(one, result.lang, router.clock() + router.clarify_timeout, result.results[-1].data) \
                if one is not None and one.name in CORRECTABLE else None
        if await self._not_kept(result, dialogue, speak):
            return
        self.trace.emit(ReplyEvent(text=result.reply, lang=result.lang))
        if speak:
            result.speech = await self._speak(result.reply, result.lang)
        if decision.kind == "call":  # after the speech: a slow notification server never delays the reply
            ok = all(r.ok for r in result.results)
            await self._notify("action" if ok else "error", result.reply, result.lang, replace=confirmed)

    async def _not_kept(self, result: TurnResult, dialogue: Dialogue, speak: bool) -> bool:
        """A question this conversation cannot keep is not asked (its answer would find nothing): when the
        conversations are full of other doors' open questions (Dialogues), the requester hears that, nothing is
        held, and it may ask again."""
        if dialogue.kept or not dialogue.is_open():
            return False
        dialogue.pending = dialogue.held = dialogue.choice = None
        self.trace.emit(ErrorEvent(code="dialogue-full", message="every place for an open question is taken by "
                                   "another requester's; this one is not asked"))
        result.error = result.error or "dialogue-full"
        await self._reply(result, phrase(result.lang, "confirm.too_many_open"), speak)
        return True

    def _hush(self, result: TurnResult) -> Decision | None:
        """An alarm or a timer rings: an utterance that only asks for quiet, as the stop phrases list them ("turn it
        off", "выключи", "बंद करो"), stops it; never "which device?" (a verb said alone asks that otherwise)."""
        if not self.c.alarms.ringing():
            return None
        langs = read_with(result.lang)
        if stop_phrase(result.transcript, *langs) is None and off_phrase(result.transcript, *langs) is None:
            return None
        return Decision("call", calls=[ToolCall("stop", {})], source="fastpath")

    def _rung(self, decision: Decision) -> Decision:
        """An alarm or a timer rings: one switched off or cancelled with nothing said of which ("turn off the alarm",
        "выключи будильник", "अलार्म बंद कर दो") is the ringing one, stopped. Before, the next alarm was cancelled while
        this one rang on, or "You have no alarms" was said over it."""
        if decision.kind not in ("call", "clarify") or not decision.calls or any(
                c.name not in ("cancel_alarm", "cancel_timer") or c.arguments for c in decision.calls) \
                or not self.c.alarms.ringing():
            return decision
        return Decision("call", calls=[ToolCall("stop", {})], source=decision.source,
                        reason=f"{decision.calls[0].name} while it rings: stopped")

    def _chosen(self, result: TurnResult, dialogue: Dialogue) -> Decision | None:
        """The answer to this conversation's "which one?": the held call with the named device, or None (the
        question is dropped, and the utterance is a request of its own)."""
        choice, dialogue.choice = dialogue.choice, None  # (closed at its deadline when the turn began: Dialogue.expire)
        if choice is None:
            return None
        name = chosen(choice, result.transcript)
        if name is None:
            return None
        result.lang = choice.lang
        return Decision("call", calls=[resolved_call(choice, name)], source="chosen")

    async def _reply(self, result: TurnResult, text: str, speak: bool) -> None:
        result.reply = text
        self.trace.emit(ReplyEvent(text=text, lang=result.lang))
        if speak:
            result.speech = await self._speak(text, result.lang)

    async def _notify(self, kind: str, body: str, lang: str, replace: bool = False) -> None:
        """A desktop notification (dbus.notifications); never fails the turn."""
        if self.c.notifier is None:
            return
        nid = await self.c.notifier.notify(phrase(lang, f"notify.{kind}"), body,
                                           urgency="critical" if kind == "alarm" else "normal", replace=replace)
        if nid:
            self.trace.emit(NotifyEvent(id=nid, kind=kind))

    async def _execute(self, name: str, arguments: dict[str, Any], confirmed: bool = False,
                       lang: str = DEFAULT_LANGUAGE) -> ToolResult:
        started = time.monotonic()
        try:
            # Validated again here: the registry, not the model, is the authority on what may run.
            args = self.c.tools.validate(name, arguments)
            tool = self.c.tools.get(name)
            if self.c.policy.needs_confirmation(ToolCall(name, args)) and not confirmed:
                raise PermissionError(f"{name} needs a spoken yes")  # defence in depth: review() holds these
            turn_language.set(lang)  # an alarm remembers the language it was set in
            outcome = await tool.handler(args)
        except (UnknownTool, SchemaError) as e:
            outcome = ToolResult(False, {"error": str(e)}, "agent.invalid_call")
        except PermissionError as e:
            outcome = ToolResult(False, {"error": str(e)}, "confirm.cancelled")
        except StateWriteError as e:  # a full or read-only disk: this change is not made; reads still work
            outcome = ToolResult(False, {"error": e.message, "code": e.code}, e.phrase_key)
            self.trace.emit(ErrorEvent(code=e.code, message=e.message))
        except Exception as e:  # a failing tool must not take the daemon down; the user hears an apology
            failed = stage_error(Stage.TOOL, e, ToolFailed, "tool-failed")
            outcome = ToolResult(False, {"error": f"{type(e).__name__}: {e}"}, "error.tool_failed")
            self.trace.emit(ErrorEvent(code=failed.code, message=failed.message))
        self.trace.timing(Stage.TOOL, time.monotonic() - started)
        self.trace.emit(ToolResultEvent(name=name, ok=outcome.ok, result=outcome.data))
        return outcome

    async def _speak(self, text: str, lang: str) -> Speech | None:
        try:
            speech = await self._blocking(Stage.TTS, self.c.voices.synthesize, text, lang)
        except Exception as e:  # no voice is not a lost turn: the reply text is already out
            stage_error(Stage.TTS, e, TtsError, "tts-failed")  # logged when unexpected; the event's code is the stage's
            self.trace.emit(ErrorEvent(code="tts-failed", message=str(e)))
            return None
        self.trace.emit(AudioOutEvent(seconds=round(speech.seconds, 2), rate=speech.rate))
        return speech

    async def _fail(self, result: TurnResult, error: HearthdError, speak: bool = True) -> None:
        result.error = error.code
        self.trace.emit(ErrorEvent(code=error.code, message=error.message))
        result.reply = phrase(result.lang, error.phrase_key)
        self.trace.emit(ReplyEvent(text=result.reply, lang=result.lang))
        if speak:
            result.speech = await self._speak(result.reply, result.lang)


@contextlib.contextmanager
def _in_room(dialogue: Dialogue) -> Iterator[None]:
    """The turn runs in its conversation's room: "here" (library.turn_area) is a satellite's area, for the local
    conversation (no area of its own) the configured one."""
    token = turn_area.set(dialogue.area) if dialogue.area else None
    try:
        yield
    finally:
        if token is not None:
            turn_area.reset(token)


@dataclass
class Guess:
    """A decision made in the pause (Pipeline.guess), not acted on until the end of speech is confirmed."""

    transcript: Any  # what speech to text heard of the utterance so far
    found: tuple[Rescored, str] | None = None  # the template sentence rescoring chose, and its language
    read: bool = False  # rescoring ran (`found` is its answer)
    text: str = ""  # the words the turn will read, and their language
    lang: str = ""
    decision: Decision | None = None  # None: left to the turn
    pending: Pending | None = None  # the question `decision` opens (a missing detail)
    complete: bool = False  # a whole command: the utterance may end on vad.complete_silence_ms


@dataclass
class _Scratch:
    """A conversation of the decision's own, so a question it would open stays unasked until the turn asks it."""

    pending: Pending | None = None


def _wordless(result: TurnResult) -> Decision | None:
    """" ", "???", "…!": no letter or digit, nothing to understand: declined at once, and no model is asked (Home
    Assistant's blank texts ran it to the turn's budget)."""
    if any(ch.isalnum() for ch in result.transcript):
        return None
    return Decision("abstain", reason="the text has no letter or digit", source="text", say="agent.not_understood")


def _unasked(result: TurnResult, dialogue: Dialogue, fast_path: Any = None, dropped: bool = False
             ) -> Decision | None:
    """A bare "yes" or "no" in a conversation with no question open: said so (and why, when its question was closed
    to make room), never read as someone else's answer (nor sent to the model). A word that is also a command
    ("stop" a ringing alarm) stays a command."""
    if dialogue.is_open() or answer_of(result.transcript, result.lang) == "other":
        return None
    if fast_path is not None and fast_path.match(result.transcript, result.lang) is not None:
        return None
    if dropped:  # there was one, closed to make room for newer questions of its door: nothing ran
        return Decision("abstain", reason="this conversation's question was closed to make room", source="dialogue",
                        say="confirm.dropped")
    return Decision("abstain", reason="no question is open in this conversation", source="dialogue",
                    say="confirm.nothing_open")
