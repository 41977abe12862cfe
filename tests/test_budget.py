"""A turn's budget that holds (issue 14.4): prompt evaluation is cut between chunks when the deadline passes, the
cache stays what it says it is, the budget covers the catalogue prefix, and the daemon prepares the prefix
before a first turn needs it (at start-up and after a reload). On the suite's tiny qwen35 models (hybrid: the
cache cannot be rewound, snapshots only) and the default model (attention: the cache rewinds)."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from hearthd.agent import model as model_module
from hearthd.agent.agent import Agent
from hearthd.agent.model import ChatModel, OutOfTime
from hearthd.agent.relevance import SIDE_CONTEXT_TOKENS
from hearthd.config import Config
from hearthd.evaluation.evaluate import load_catalogue

pytestmark = pytest.mark.models

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "tests" / "data" / "commands" / "tools.yaml"
LONG = " ".join(f"Rule {i}: answer briefly and only with a tool call when one fits." for i in range(16))


def config(base: Config, path: Path) -> Config:
    cfg = copy.deepcopy(base)
    cfg.agent.model_path = str(path)
    cfg.agent.threads = 1
    cfg.agent.fast_path = False
    return cfg


def ticking() -> object:
    """A clock that advances one second each time it is read."""
    counter = itertools.count()
    return lambda: float(next(counter))


@pytest.mark.parametrize("which", ["qwen35_xml_model", "default_model_gguf"])
def test_a_cut_evaluation_leaves_the_cache_consistent_and_the_prefix_not_ready(
        which: str, request: pytest.FixtureRequest, base_config: Config, tmp_path: Path) -> None:
    path: Path = request.getfixturevalue(which)
    model = ChatModel(path, config(base_config, path).agent)
    try:
        prefix = model.render([{"role": "system", "content": LONG}], None)
        tokens = model.prefix_tokens(prefix)
        chunk = model_module.EVAL_CHUNK_MIN
        assert len(tokens) > 3 * chunk
        model.budget_state.clock = ticking()  # type: ignore[assignment]
        with model.budget(0.5), pytest.raises(OutOfTime):  # one chunk (checked at 0), then past it (1)
            model.ensure_prefix(prefix, tmp_path)
        model.budget_state.clock = __import__("time").monotonic
        # exactly the chunk evaluated is cached; nothing counts as a ready prefix
        assert model.llm.n_tokens == chunk
        assert list(model.llm.input_ids[:chunk]) == tokens[:chunk]
        assert not model._snapshots and not list(tmp_path.glob("*.kv"))
        # the next turn goes on from there (nothing evaluated twice) and then the prefix is ready
        before = model.evaluated
        assert model.ensure_prefix(prefix, tmp_path) == "evaluated"
        assert model.evaluated - before == len(tokens) - chunk
        assert model.ensure_prefix(prefix, tmp_path) == "warm"
        rest = model.tokens_special("<|im_start|>user\nwake me at six<|im_end|>\n<|im_start|>assistant\n")
        after_cut = model.logprobs_after(tokens + rest)
    finally:
        model.llm.close()
    fresh = ChatModel(path, config(base_config, path).agent)  # the same prompt evaluated in one go
    try:
        whole = fresh.logprobs_after(tokens + rest)
        # the same next-token distribution (the default model's quantized kernels round differently for other
        # batch sizes: ~0.3 apart without any cut, near-ties swap; a cache out of step with its tokens differs
        # wholesale)
        assert set(np.argsort(-whole)[:3]) == set(np.argsort(-after_cut)[:3])
        np.testing.assert_allclose(whole, after_cut, atol=1e-3 if "qwen35" in which else 0.5)
    finally:
        fresh.llm.close()


@pytest.fixture(scope="module")
def tiny(qwen35_xml_model: Path, base_config: Config) -> ChatModel:
    model = ChatModel(qwen35_xml_model, config(base_config, qwen35_xml_model).agent)
    yield model  # type: ignore[misc]
    model.llm.close()


def test_the_budget_covers_the_catalogue_prefix(tiny: ChatModel, tmp_path: Path) -> None:
    """In the daemon (which prepares prefixes in the background) a prefix not ready yet is part of the turn: a
    budget that ends during it ends the turn ("took too long"), where the prefix used to be evaluated whole,
    outside the budget."""
    agent = Agent(tiny, load_catalogue(CATALOGUE), state_dir=tmp_path, max_turn_s=10.0)
    agent.prepared_in_background = True
    tokens = len(tiny.prefix_tokens(agent.prefix("ru")))
    with slowed(tiny, 0.1):  # a machine whose cores are busy: 0.1 s a chunk
        agent.max_turn_s = 0.35  # the budget ends after the first chunks of the prefix
        decision = agent.decide("поставь будильник на семь", "ru")
    assert decision.kind == "abstain" and decision.say == "agent.too_slow"
    assert decision.evaluated < tokens  # cut inside the prefix, not after it
    assert tiny.budget_state.deadline == float("inf")  # the next turn starts with no deadline left over


# The prefix made slow (each of its 4+ chunks), and the budget the turn has after it: the turn's own words and the
# decode must fit in it on a machine whose every core is busy (1.5 s did not: the random-weights model decodes to
# its token ceiling), and the prefix alone must take longer than it.
SLOW_CHUNK_S = 1.2
AFTER_PREFIX_S = 4.0


@contextlib.contextmanager
def slowed(model: ChatModel, seconds: float, min_batch: int = 0) -> Iterator[None]:
    """The model's evaluation as on a machine whose cores are busy: each chunk of at least `min_batch` tokens takes
    `seconds` longer (min_batch 64: the prefix's chunks are slow, a turn's own words are not)."""
    real_eval = model.llm.eval

    def slow_eval(batch: list[int]) -> None:
        if len(batch) >= min_batch:
            threading.Event().wait(seconds)
        real_eval(batch)

    model.llm.eval = slow_eval  # type: ignore[method-assign]
    try:
        yield
    finally:
        del model.llm.eval


def test_a_one_shot_first_use_prepares_the_prefix_before_the_clock_starts(tiny: ChatModel, tmp_path: Path) -> None:
    """`hearthd ask` on a fresh install (no saved prefix, no daemon warming it): the prefix is made ready first,
    so a slow machine is slow once instead of saying "took too long" to the first request."""
    agent = Agent(tiny, load_catalogue(CATALOGUE), state_dir=tmp_path, max_turn_s=10.0)
    with slowed(tiny, SLOW_CHUNK_S, min_batch=64):  # the prefix's chunks are slow; the turn's own words are not
        agent.max_turn_s = AFTER_PREFIX_S  # less than the prefix takes here (4+ slow chunks)
        started = time.monotonic()
        decision = agent.decide("поставь будильник на семь", "ru")
        took = time.monotonic() - started
    assert took > agent.max_turn_s  # the prefix alone took longer than a turn may
    assert decision.say != "agent.too_slow" and decision.prefix == "evaluated", decision  # by the preparation
    assert list(tmp_path.glob("*.kv"))  # and saved for the next one


def test_a_live_turn_that_prepares_its_prefix_gets_its_budget_after_it(tiny: ChatModel, tmp_path: Path) -> None:
    """The live loop without the daemon's warm-up: the gate says the turn began at the end of speech, before the
    prefix was prepared; the budget starts once the prefix is ready, or every first turn would be cut."""
    end_of_speech = time.monotonic()

    @contextlib.contextmanager
    def gate():  # type: ignore[no-untyped-def]
        yield end_of_speech

    agent = Agent(tiny, load_catalogue(CATALOGUE), state_dir=tmp_path, max_turn_s=AFTER_PREFIX_S, gate=gate)
    tiny._snapshots.clear()
    tiny.llm.reset()
    with slowed(tiny, SLOW_CHUNK_S, min_batch=64):
        decision = agent.decide("поставь будильник на семь", "ru")
    assert time.monotonic() - end_of_speech > agent.max_turn_s
    assert decision.say != "agent.too_slow", decision


def test_a_turn_in_another_language_does_not_cost_the_first_language_its_prefix(
        default_model_gguf: Path, base_config: Config) -> None:
    """A household speaking two languages: each language's catalogue is its own prefix. Back to the first language
    after a turn in the second, its prefix is restored from memory (no saved state needed), not evaluated again,
    and the model reads the next words exactly as after a fresh evaluation."""
    model = ChatModel(default_model_gguf, config(base_config, default_model_gguf).agent)
    try:
        first = model.render([{"role": "system", "content": LONG}], None)
        second = model.render([{"role": "system", "content": LONG.replace("briefly", "in Russian")}], None)
        assert model.ensure_prefix(first, None) == "evaluated"
        assert model.ensure_prefix(second, None) == "evaluated"
        before, restores = model.evaluated, model.restores
        assert model.ensure_prefix(first, None) == "warm"
        assert (model.evaluated, model.restores) == (before, restores + 1)
        rest = model.tokens_special("<|im_start|>user\nwake me at six<|im_end|>\n<|im_start|>assistant\n")
        restored = model.logprobs_after(model.prefix_tokens(first) + rest)
        assert model.evaluated - before == len(rest)  # only the user's words
    finally:
        model.llm.close()
    fresh = ChatModel(default_model_gguf, config(base_config, default_model_gguf).agent)
    try:
        whole = fresh.logprobs_after(fresh.prefix_tokens(first) + rest)
        assert set(np.argsort(-whole)[:3]) == set(np.argsort(-restored)[:3])
        np.testing.assert_allclose(whole, restored, atol=0.5)  # batch sizes differ: see the test above
    finally:
        fresh.llm.close()


def test_prepared_prefixes_make_the_first_turn_warm(tiny: ChatModel, tmp_path: Path) -> None:
    agent = Agent(tiny, load_catalogue(CATALOGUE), state_dir=tmp_path, min_relevance=0.5)
    done = agent.prepare(["hi", "en"])
    assert done == {"relevance": "evaluated", "hi": "evaluated", "en": "evaluated"}
    decision = agent.decide("could you wake me up at half past six tomorrow", "en")
    assert decision.prefix == "warm"
    assert decision.evaluated < len(tiny.prefix_tokens(agent.prefix("en")))  # the turn paid for its words only
    side = tiny.side(SIDE_CONTEXT_TOKENS)
    for tool in ("cancel_alarm", "set_alarm"):  # each tool's check was made ready too: its request's words only
        before = side.evaluated
        agent.relevant(tool, "could you wake me up at half past six tomorrow")
        assert side.evaluated - before < 25


def test_a_turn_during_the_warm_up_goes_first_and_the_warm_up_resumes(tiny: ChatModel, tmp_path: Path) -> None:
    agent = Agent(tiny, load_catalogue(CATALOGUE), state_dir=tmp_path)
    agent.prepared_in_background = True  # the daemon's warm-up
    tiny._snapshots.clear()  # nothing ready from the tests before: the warm-up has work to do
    tiny.llm.reset()
    slow = threading.Event()
    real_decode = tiny._decode

    def decode(tokens: list[int]) -> None:  # a warm-up that would take long: each chunk waits for the turn
        if agent._holder == "warm-up":
            slow.set()
            threading.Event().wait(0.05)
        real_decode(tokens)

    tiny._decode = decode  # type: ignore[method-assign]
    try:
        result: dict[str, str] = {}
        warm = threading.Thread(target=lambda: result.update(agent.prepare(["ru", "hi", "en"])))
        warm.start()
        assert slow.wait(10)
        decision = agent.decide("поставь будильник на семь", "ru")
        warm.join(60)
    finally:
        del tiny._decode
    assert decision.kind in ("call", "abstain", "clarify") and decision.say != "agent.too_slow"
    assert set(result) == {"ru", "hi", "en"}  # every prefix ready in the end


async def test_the_daemon_prepares_the_prefix_at_start_and_after_a_reload(qwen35_xml_model: Path,
                                                                          base_config: Config,
                                                                          tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from hearthd.daemon import components as components_module
    from hearthd.daemon.components import Components
    from hearthd.daemon.reload import apply_config

    monkeypatch.setattr(components_module, "prompt_cache_dir", lambda: tmp_path)
    cfg = config(base_config, qwen35_xml_model)
    cfg.mqtt.enabled = cfg.dbus.enabled = False
    cfg.agent.min_relevance = 0.0
    cfg.stt.languages = ["en", "ru"]
    cfg.general.language = "en"
    c = Components(cfg)
    done = await asyncio.get_running_loop().run_in_executor(None, c.prepare_model)
    assert list(done) == ["ru", "en"]  # the default language last: it stays in the cache
    agent = c.agent()
    assert agent.decide("wake me up at half past six", "en").prefix == "warm"
    new = copy.deepcopy(cfg)
    new.agent.thinking = "8"  # another prompt (thinking on): prepared again beside the next turns
    apply_config(c, new)
    for _ in range(200):
        await asyncio.sleep(0.05)
        if agent._holder == "" and len(agent.model._snapshots) >= 4:
            break
    assert agent.thinking == 8
    assert agent.decide("wake me up at half past six", "en").prefix == "warm"


def test_the_states_kept_for_later_turns_are_reported_and_bounded(tiny: ChatModel, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Each language's catalogue prefix is kept in memory for its next turn: a turn reports how much the model keeps
    (the trace's `kept_mb`, what tells a cache from a leak), and a language past SNAPSHOTS replaces the oldest."""
    tiny._snapshots.clear()
    tiny._held.clear()
    agent = Agent(tiny, load_catalogue(CATALOGUE), state_dir=tmp_path)
    english = agent.decide("could you wake me up at half past six", "en")
    assert english.kept_bytes == tiny.kept_bytes > 0
    russian = agent.decide("разбуди меня в половине седьмого", "ru")
    assert russian.kept_bytes > english.kept_bytes  # both prefixes kept
    monkeypatch.setattr(tiny, "SNAPSHOTS", 1)
    hindi = agent.decide("मुझे साढ़े छह बजे जगा देना", "hi")
    assert len(tiny._snapshots) == 1
    side = tiny.side(SIDE_CONTEXT_TOKENS).kept_bytes
    assert hindi.kept_bytes - side == len(next(iter(tiny._snapshots.values()))) < russian.kept_bytes


def test_a_request_that_waited_in_line_past_its_budget_is_answered_without_the_model(tiny: ChatModel,
                                                                                      tmp_path: Path) -> None:
    """A D-Bus, MQTT or Wyoming request that waited for other turns: its budget ran from when it arrived (issue 28.4:
    every caller answered within agent.max_turn_s of asking). One that waited longer than that is told at once, the
    model not asked; one that has time left decides in it."""
    from hearthd.agent.agent import asked_at

    agent = Agent(tiny, load_catalogue(CATALOGUE), state_dir=tmp_path, max_turn_s=5.0)
    agent.prepared_in_background = True  # the daemon
    agent.prepare(["en"])
    before = tiny.evaluated
    arrived = asked_at.set(time.monotonic() - 6.0)
    try:
        late = agent.decide("wake me up at half past six", "en")
    finally:
        asked_at.reset(arrived)
    assert late.kind == "abstain" and late.say == "error.busy", late  # not "try a bit shorter": it was the line
    assert tiny.evaluated == before  # nothing evaluated for it
    arrived = asked_at.set(time.monotonic() - 0.5)
    try:
        in_time = agent.decide("wake me up at half past six", "en")
    finally:
        asked_at.reset(arrived)
    assert in_time.say != "agent.too_slow" and tiny.evaluated > before, in_time


def test_a_turn_before_the_daemons_warm_up_has_begun_is_on_its_budget(qwen35_xml_model: Path, base_config: Config,
                                                                      tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon serves D-Bus and Wyoming before it starts making the model ready; a first model turn in that
    window found the agent not yet marked as warmed in the background and prepared the whole catalogue prefix first,
    outside its budget: 150 s with a cold cache on a loaded 2-core machine, while every other asker waited in line
    (found by the hostile D-Bus run with a busy loop per core). run_daemon marks the components before serving."""
    from hearthd.daemon import components as components_module
    from hearthd.daemon.components import Components

    monkeypatch.setattr(components_module, "prompt_cache_dir", lambda: tmp_path)
    cfg = config(base_config, qwen35_xml_model)
    cfg.mqtt.enabled = cfg.dbus.enabled = False
    cfg.agent.min_relevance = 0.0
    c = Components(cfg)
    c.prepares_in_background = True  # as run_daemon sets it, before anyone is served
    agent = c.agent()
    model = agent.model
    model._snapshots.clear()  # a cold prefix
    model.llm.reset()
    tokens = len(model.prefix_tokens(agent.prefix("ru")))
    with slowed(model, 0.1):  # a machine whose cores are busy: 0.1 s a chunk
        agent.max_turn_s = 0.35
        decision = agent.decide("поставь будильник на семь", "ru")
    assert decision.say == "agent.too_slow" and decision.evaluated < tokens, decision
