"""The agent on a real `qwen35` GGUF (hybrid recurrent + attention, built by the suite with random weights), once
with a Qwen3.5-format template (XML calls, thinking) and once with the default model's (JSON calls): every path of
the agent runs, turn after turn, on a cache that cannot be rewound part-way.

Random weights give nonsense answers, so these tests assert what must hold whatever the model says: each decision
is a call that parses in the model's own syntax and validates, or an abstention or a question; the same request
gets the same decision; and a turn costs its own tokens, not the catalogue again.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hearthd.agent.agent import Agent, Decision
from hearthd.agent.model import ChatModel
from hearthd.agent.parsing import parse_tool_calls
from hearthd.config import Config
from hearthd.evaluation.evaluate import evaluate, load_catalogue

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "tests" / "data" / "commands" / "tools.yaml"
BFCL = Path(os.environ.get("HEARTHD_BFCL_DIR", ROOT.parent / "shared" / "eval" / "bfcl"))

# Requests that reach the model (no fast path in these tests), in the styles people use.
REQUESTS = [
    ("could you wake me up at half past six tomorrow", "en"),
    ("it's too dark in here", "en"),
    ("what's the capital of Peru", "en"),
    ("поставь будильник на семь", "ru"),
    ("बत्ती बंद कर दो", "hi"),
]


def tiny_config(base: Config, model: Path, **agent: Any) -> Config:
    cfg = copy.deepcopy(base)
    cfg.agent.model_path = str(model)
    cfg.agent.threads = 1  # two spinning threads on a busy 2-core machine make each batch slower, not faster
    cfg.agent.fast_path = False
    for key, value in agent.items():
        setattr(cfg.agent, key, value)
    return cfg


@pytest.fixture(scope="module", params=["xml", "json"])
def tiny(request: pytest.FixtureRequest, base_config: Config) -> Iterator[tuple[str, Path, ChatModel]]:
    """(dialect, path, loaded model): each tiny model is loaded once for this module."""
    path: Path = request.getfixturevalue(f"qwen35_{request.param}_model")
    model = ChatModel(path, tiny_config(base_config, path).agent)
    yield request.param, path, model
    model.llm.close()


@pytest.fixture(scope="module")
def catalogue():  # type: ignore[no-untyped-def]
    return load_catalogue(CATALOGUE)


def assert_well_formed(agent: Agent, decision: Decision) -> None:
    """A call parses in the model's own syntax and validates; anything else is an abstention or a question."""
    assert decision.kind in ("call", "abstain", "clarify"), decision
    if decision.kind == "call":
        assert decision.calls
        for call in decision.calls:
            assert call.name in agent.registry
            agent.registry.validate(call.name, call.arguments)
        if decision.source == "model" and decision.raw:
            parsed = parse_tool_calls(decision.raw)
            assert [c.name for c in parsed] == [c.name for c in decision.calls]
            assert agent.dialect.prefill in decision.raw
    elif decision.kind == "clarify":
        assert decision.missing and decision.calls


def summary(d: Decision) -> tuple[Any, ...]:
    return d.kind, [(c.name, c.arguments) for c in d.calls], d.missing, d.reason


def test_capabilities_come_from_the_gguf(tiny) -> None:  # type: ignore[no-untyped-def]
    dialect, _, model = tiny
    caps = model.capabilities
    assert (caps.architecture, caps.hybrid, caps.rewinds) == ("qwen35", True, False)
    assert caps.dialect == dialect
    assert caps.thinking == (dialect == "xml")  # the default model's template has no thinking mode
    assert Agent(model, load_catalogue(CATALOGUE)).dialect.name == dialect


def test_turn_after_turn_on_a_cache_that_cannot_rewind(tiny, catalogue, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, _, model = tiny
    agent = Agent(model, catalogue, state_dir=tmp_path, min_relevance=0.55, max_calls=3)
    first = [agent.decide(text, lang) for text, lang in REQUESTS]
    again = [agent.decide(text, lang) for text, lang in REQUESTS]
    for d in first + again:
        assert_well_formed(agent, d)
    assert [summary(d) for d in again] == [summary(d) for d in first]  # the same request, the same decision
    # The catalogue prefix is evaluated once; later turns restore its snapshot and pay for their own tokens.
    prefix = len(model.tokens(agent.prefix("en")))
    assert first[0].prefix == "evaluated" and all(d.prefix == "warm" for d in again)
    assert max(d.evaluated for d in again) < prefix / 4, [d.evaluated for d in again]
    assert model.restores >= len(again)


def test_the_prefix_saved_and_loaded_gives_the_same_probabilities(tiny, catalogue, base_config: Config,
                                                                  tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, path, _ = tiny
    text = "set an alarm for 7:30 please"
    runs = []
    for _ in range(2):  # two processes' worth: the first evaluates and saves, the second loads
        model = ChatModel(path, tiny_config(base_config, path).agent)
        try:
            agent = Agent(model, catalogue, state_dir=tmp_path)
            tokens = agent._turn(text, "en", None)
            status = agent.prefix_status
            probs, _ = agent.name_probabilities(tokens)
            agent._turn(text, "en", None)
            runs.append((status, probs, agent.prefix_status, model.evaluated))
        finally:
            model.llm.close()
    (saved, expected, warm1, evaluated1), (loaded, got, warm2, evaluated2) = runs
    assert (saved, loaded, warm1, warm2) == ("evaluated", "loaded", "warm", "warm")
    assert list(tmp_path.glob("*.kv"))
    assert got.keys() == expected.keys()
    assert all(abs(got[k] - expected[k]) < 1e-6 for k in got)
    assert evaluated2 < evaluated1 / 4  # the loaded process evaluated the user's words, not the catalogue


def test_a_missing_detail_is_asked_for_and_the_answer_decoded(tiny, catalogue) -> None:  # type: ignore[no-untyped-def]
    _, _, model = tiny
    agent = Agent(model, catalogue)
    question = agent.decide("set an alarm please", "en", only="set_alarm")
    assert (question.kind, question.missing, question.calls[0].name) == ("clarify", "time", "set_alarm")
    # The answer to "which device?" is decoded under the grammar of the one tool already chosen.
    for answer in ("the one by the window", "the lamp in the kids room"):
        decisions = [agent.decide(answer, "en", only="turn_on") for _ in range(2)]
        for d in decisions:
            assert_well_formed(agent, d)
        assert summary(decisions[0]) == summary(decisions[1])


def test_arguments_are_decoded_in_the_models_own_syntax(tiny, catalogue) -> None:  # type: ignore[no-untyped-def]
    dialect, _, model = tiny
    agent = Agent(model, catalogue)
    decoded = 0
    # an integer with bounds, an enum, a free device name: all need decoding (nothing here is read by code)
    for name, text in (("set_brightness", "dim the lamp a bit"), ("set_volume", "make it quieter"),
                       ("media", "skip this one"), ("turn_on", "switch on the thing over there")):
        d = agent.decide(text, "en", only=name)
        assert_well_formed(agent, d)
        if d.raw:  # decoded (not an over-long abstention): it parses whatever it says
            head = "<function=" if dialect == "xml" else '{"name": '
            assert head in d.raw and parse_tool_calls(d.raw)[0].name == name
            decoded += d.completion_tokens > 0
    assert decoded >= 2


class Steered(Agent):
    """The real agent with the tool choice pinned to a list of names, one per call: random weights rarely pick two
    useful tools in a row, and the continuation after a call is what is under test."""

    def __init__(self, *args: Any, picks: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.picks = picks
        self.calls_made = 0

    def name_probabilities(self, tokens: list[int]) -> tuple[dict[str, float], list[int]]:
        probs, shared = super().name_probabilities(tokens)  # evaluates the real prompt
        pick = self.picks[min(self.calls_made, len(self.picks) - 1)]
        self.calls_made += 1
        return {n: (1.0 if n == pick else 0.0) for n in probs}, shared

    def choose_tool(self, tokens: list[int], probs: dict[str, float], shared: list[int]) -> str:
        super().choose_tool(tokens, probs, shared)  # follows the names sharing the first token on the real model
        return max(probs, key=lambda n: probs[n])

    def _another_call(self, tokens: list[int]) -> bool:
        super()._another_call(tokens)  # evaluates the real continuation
        return self.calls_made < len(self.picks)


def test_two_requests_in_one_utterance_continue_the_same_context(tiny, catalogue) -> None:  # type: ignore[no-untyped-def]
    _, _, model = tiny
    text = "turn on the kitchen light and set a timer for 5 minutes"
    outcomes = []
    for _ in range(2):
        agent = Steered(model, catalogue, picks=["turn_on", "set_timer"], max_calls=3)
        before = model.evaluated_total
        d = agent.decide(text, "en")
        outcomes.append((summary(d), model.evaluated_total - before))
        assert [(c.name, c.arguments) for c in d.calls] == [("turn_on", {"device": "kitchen light"}),
                                                            ("set_timer", {"seconds": 300})]
        assert d.raw.count("<tool_call>") == 2
    assert outcomes[0][0] == outcomes[1][0]


def test_the_relevance_check_keeps_its_own_prefix(tiny, catalogue) -> None:  # type: ignore[no-untyped-def]
    _, _, model = tiny
    agent = Agent(model, catalogue, min_relevance=0.5)
    texts = ["wake me at six", "how tall is the eiffel tower", "wake me at six"]
    values = [agent.relevant("set_alarm", t) for t in texts]
    assert all(v is not None and 0.0 <= v <= 1.0 for v in values)
    assert values[0] == pytest.approx(values[2], abs=1e-6)
    side = model.side(0)
    before = side.evaluated
    agent.relevant("set_alarm", "wake me at six")
    assert side.evaluated - before < 60  # the request and the signature, not the worked examples again
    other = next(t.name for t in catalogue.offered() if t.name != "set_alarm")
    agent.relevant(other, "wake me at six")  # another tool's check between: on a cache that cannot rewind
    before = side.evaluated
    assert agent.relevant("set_alarm", "wake me at six") == pytest.approx(values[0], abs=0.03)
    assert side.evaluated - before < 20  # the request only: the alarm's signature was kept after the examples
    before = side.evaluated  # the same tool again, other words: the cache cannot drop the last request's
    agent.relevant("set_alarm", "how tall is the eiffel tower")
    assert side.evaluated - before < 20


def test_thinking_is_bounded_and_then_the_call_follows(tiny, catalogue) -> None:  # type: ignore[no-untyped-def]
    dialect, _, model = tiny
    agent = Agent(model, catalogue, thinking=12)
    decisions = [agent.decide("could you wake me up at half past six tomorrow", "en") for _ in range(2)]
    for d in decisions:
        assert_well_formed(agent, d)
    assert summary(decisions[0]) == summary(decisions[1])
    if dialect == "xml":
        assert agent.thinking == 12 and 0 < decisions[0].thinking_tokens <= 12
    else:
        assert agent.thinking == 0 and decisions[0].thinking_tokens == 0  # no thinking mode in this template


@pytest.mark.skipif(not (BFCL / "BFCL_v4_simple_python.json").is_file(), reason=f"no BFCL data in {BFCL}")
def test_bfcl_cases_run_without_errors(tiny) -> None:  # type: ignore[no-untyped-def]
    _, _, model = tiny
    reports = evaluate(model, BFCL, ["simple_python", "irrelevance"], 3, min_relevance=0.55)
    assert [len(r.results) for r in reports] == [3, 3]
    assert [r.errors for r in reports] == [0, 0], [x.error for r in reports for x in r.results]


def _events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_ask_answers_turn_after_turn_in_one_process(tiny, base_config: Config, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, path, _ = tiny
    config = tmp_path / "config.toml"
    config.write_text(f'[agent]\nmodel_path = "{path}"\nthreads = 1\nfast_path = false\n')
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    texts = ["set an alarm for 7:30", "it's too dark in here", "what's the capital of Peru", "set an alarm for 7:30",
             "поставь будильник на семь"]
    args = [sys.executable, "-m", "hearthd", "--config", str(config), "ask", texts[0], "--json"]
    for text in texts[1:]:
        args += ["--then", text]
    out = subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "internal" not in out.stderr
    events = _events(out.stdout)
    assert not [e for e in events if e["type"] == "error"]
    assert len([e for e in events if e["type"] == "reply"]) == 5
    model_turns = [e for e in events if e["type"] == "model"]
    assert len(model_turns) >= 4  # the clarification answered by code needs no model


async def test_the_headless_daemon_answers_model_requests_over_dbus(qwen35_xml_model: Path, dbus_address: str,
                                                                    tmp_path: Path) -> None:
    """`hearthd run --headless` with the qwen35 model configured: ten Ask calls that all reach the model (no fast
    path) are all answered, repeats get the same decision, and the tokens each turn evaluates stay flat."""
    import asyncio

    from .test_dbus_service import Client

    (tmp_path / "hearthd").mkdir()
    (tmp_path / "hearthd" / "config.toml").write_text(
        f'[agent]\nmodel_path = "{qwen35_xml_model}"\nthreads = 1\nfast_path = false\n[mqtt]\nenabled = false\n')
    env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": dbus_address, "DBUS_SYSTEM_BUS_ADDRESS": dbus_address,
           "XDG_CONFIG_HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    daemon = await asyncio.create_subprocess_exec(sys.executable, "-m", "hearthd", "run", "--headless", "--json",
                                                  env=env, cwd=ROOT, stdout=subprocess.PIPE)
    assert daemon.stdout is not None
    events: list[dict[str, Any]] = []

    async def until(kind: str, timeout: float = 120) -> dict[str, Any]:
        async def scan() -> dict[str, Any]:
            assert daemon.stdout is not None
            while line := await daemon.stdout.readline():
                if line.startswith(b"{"):
                    events.append(json.loads(line))
                    if events[-1]["type"] == kind:
                        return events[-1]
            raise AssertionError(f"the daemon ended before a {kind!r} event")

        return await asyncio.wait_for(scan(), timeout)

    client = None
    texts = ["it's too dark in here", "what's the capital of Peru", "could you wake me up at half past six",
             "сделай погромче", "बत्ती बंद कर दो"] * 2
    try:
        await until("ready", 90)
        client = await Client.connect(dbus_address)
        replies, turns = [], []
        for text in texts:
            replies.append(await client.ask(text))
            reply = await until("reply")
            turn = events[events.index(reply) - 1::-1]
            start = next(i for i, e in enumerate(turn) if e["type"] == "transcript")
            turns.append(turn[: start + 1][::-1])
        assert all(replies) and not [e for e in events if e["type"] == "error"]
        decisions = [[(e["type"], e.get("name"), json.dumps(e.get("arguments"), sort_keys=True)) for e in turn
                      if e["type"] in ("tool_call", "abstain", "clarify", "confirm_request")] for turn in turns]
        assert decisions[:5] == decisions[5:]
        assert replies[:5] == replies[5:]
        evaluated = [next(e["evaluated"] for e in turn if e["type"] == "model") for turn in turns]
        print("tokens evaluated per turn:", evaluated)
        # the first turn in each language evaluates that language's catalogue prefix; every later one only its own
        # words and answer
        assert max(evaluated[5:]) < evaluated[0] / 4
        assert max(evaluated[5:]) <= 2 * min(evaluated[5:]) + 60
    finally:
        if client is not None:
            client.bus.disconnect()
        daemon.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(daemon.wait(), 30) == 0


def test_doctor_and_models_list_say_what_the_model_is(tiny, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dialect, path, _ = tiny
    config = tmp_path / "config.toml"
    config.write_text(f'[agent]\nmodel_path = "{path}"\nthinking = 32\n')
    said = f"qwen35, hybrid (recurrent + attention) cache, {dialect.upper()} tool calls"
    listed = subprocess.run([sys.executable, "-m", "hearthd", "--config", str(config), "models", "list"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    last = listed.stdout.strip().splitlines()[-1]
    assert last.startswith(f"agent model ({path})") and said in last
    assert ("thinking up to 32 tokens" in last) == (dialect == "xml")
    assert ("agent.thinking = 32 is ignored" in last) == (dialect == "json")
    doctor = subprocess.run([sys.executable, "-m", "hearthd", "--config", str(config), "doctor"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert said in doctor.stdout
    assert "Traceback" not in doctor.stderr


async def test_a_consequential_call_from_the_model_waits_for_a_yes(tiny, base_config: Config, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """The daemon's text chain on the qwen35 model: the model's call to cancel every alarm is asked back; a no
    keeps them, a yes cancels them, and model turns go on working around the question."""
    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import EventType, Trace

    _, path, model = tiny
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = tiny_config(base_config, path, min_relevance=0.0)
    c = Components(cfg)
    c._cache["agent"] = Steered(model, c.tools, picks=["cancel_all_alarms"])  # what a trained model would pick
    trace = Trace()
    pipeline = Pipeline(c, trace)
    for at in ("06:45", "07:15"):  # two alarms to lose
        assert (await c.tools.get("set_alarm").handler({"time": at})).ok
    assert len(c.alarms.pending()) == 2
    for answer, left in (("no", 2), ("yes", 0)):
        c._cache["agent"].calls_made = 0
        first = len(trace.events)
        reply = (await pipeline.run_text("could you get rid of every alarm I have")).reply
        asked = [e for e in trace.events[first:] if e.type == EventType.CONFIRM_REQUEST]
        assert asked and asked[0].name == "cancel_all_alarms" and reply == asked[0].question
        assert len(c.alarms.pending()) == 2  # nothing done before the answer
        await pipeline.run_text(answer)
        assert len(c.alarms.pending()) == left
    await c.close()


@pytest.mark.parametrize(("lang", "text"), [("en", "please set an alarm for half past seven and "),
                                            ("ru", "пожалуйста, поставь будильник на семь тридцать и "),
                                            ("hi", "कृपया साढ़े सात बजे का अलार्म लगा दो और ")])
async def test_a_request_too_long_for_the_context_is_refused_in_its_language(tiny, base_config: Config,
                                                                             tmp_path: Path, lang: str, text: str,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import EventType, Trace
    from hearthd.locale import phrase

    _, path, model = tiny
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = tiny_config(base_config, path, min_relevance=0.55)
    cfg.agent.max_text_chars = 100_000  # the context's own limit, not the text bound in front of it
    c = Components(cfg)
    c._cache["agent"] = Agent(model, c.tools, min_relevance=0.55)
    trace = Trace()
    pipeline = Pipeline(c, trace)
    for size in (80, 400):  # over the relevance check's room, then over the whole context
        before = model.evaluated_total
        result = await pipeline.run_text(text * size, language=lang)
        assert result.reply == phrase(lang, "agent.too_much")
        assert model.evaluated_total == before  # refused before anything was evaluated
    assert not trace.of_type(EventType.ERROR)
    assert (await pipeline.run_text("what's the capital of Peru", language="en")).reply  # and it goes on
    await c.close()


async def test_a_failed_decode_is_one_error_and_the_next_turn_works(tiny, base_config: Config, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """llama.cpp refusing a batch ("llama_decode returned -1", as a hybrid cache did on a bad rewind) ends that
    turn with one error event and an apology; the context is cleared and the next turn is decided as before."""
    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import EventType, Trace
    from hearthd.locale import phrase

    _, path, _ = tiny
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = tiny_config(base_config, path)
    c = Components(cfg)
    model = ChatModel(path, cfg.agent)
    c._cache["agent"] = Agent(model, c.tools, min_relevance=0.55)
    trace = Trace()
    pipeline = Pipeline(c, trace)
    text = "it's too dark in here"
    expected = (await pipeline.run_text(text, language="en")).reply
    real_eval = model.llm.eval
    calls = {"n": 0}

    def failing_once(tokens: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("llama_decode returned -1")
        real_eval(tokens)

    monkeypatch.setattr(model.llm, "eval", failing_once)
    failed = await pipeline.run_text("and now set a timer, the usual one", language="en")
    errors = trace.of_type(EventType.ERROR)
    assert [e.code for e in errors] == ["agent-model-failed"]
    assert failed.reply == phrase("en", "error.internal") and model.llm.n_tokens == 0
    assert (await pipeline.run_text(text, language="en")).reply == expected
    model.llm.close()
    await c.close()


def test_a_reload_turns_thinking_on_only_where_the_model_can_think(tiny, base_config: Config, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from hearthd.config import load_config
    from hearthd.daemon.components import Components
    from hearthd.daemon.reload import apply_config

    dialect, path, model = tiny
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    c = Components(tiny_config(base_config, path))
    agent = c._cache["agent"] = Agent(model, c.tools)
    (tmp_path / "new.toml").write_text(f'[agent]\nmodel_path = "{path}"\nthreads = 1\nfast_path = false\n'
                                       "thinking = 24\n")
    done = apply_config(c, load_config(tmp_path / "new.toml", environ={}))
    assert "agent.thinking" in done.changed
    assert agent.thinking == (24 if dialect == "xml" else 0)


@pytest.mark.parametrize("broken", ["missing", "not-a-gguf"])
async def test_a_model_that_cannot_load_ends_its_turn_and_the_fast_path_keeps_working(
        base_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: str) -> None:
    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import EventType, Trace
    from hearthd.locale import phrase

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    path = tmp_path / "model.gguf"
    if broken == "not-a-gguf":
        path.write_bytes(b"GGUF but not really" * 100)
    cfg = tiny_config(base_config, path, fast_path=True)
    c = Components(cfg)
    trace = Trace()
    pipeline = Pipeline(c, trace)
    for _ in range(2):  # every model turn says so; none takes the daemon down
        result = await pipeline.run_text("tell me something about the moon", language="en")
        assert result.reply == phrase("en", "error.internal")
    codes = [e.code for e in trace.of_type(EventType.ERROR)]
    assert codes == 2 * ["asset-path-missing" if broken == "missing" else "agent-model-invalid"], codes
    done = await pipeline.run_text("set an alarm for 7:30", language="en")  # the templates need no model
    assert [e.name for e in trace.of_type(EventType.TOOL_CALL)] == ["set_alarm"]
    assert done.reply and len(c.alarms.pending()) == 1
    await c.close()
