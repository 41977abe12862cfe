"""Command line: argument parsing only; the work happens in the packages it calls."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from . import __version__
from .assets import AssetError
from .config import Config, ConfigError, dump_toml, load_config, masked_dict
from .errors import HearthdError
from .locale import languages

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _trace(args: argparse.Namespace, keep: int | None = None) -> Any:
    from .events import Trace, json_printer, text_printer

    trace = Trace(keep)
    trace.listen(json_printer(sys.stdout) if args.json else text_printer(sys.stdout))
    return trace


def _components(cfg: Config, trace: Any) -> Any:
    from .assets import make_progress_printer
    from .daemon.components import Components, make_store

    store = make_store(cfg, progress=make_progress_printer())
    return Components(cfg, store, on_load=lambda name, s: trace.timing(f"load_{name}", s))


def _write_speech(path: str, speech: Any) -> None:
    from .audio.wavio import write_wav

    write_wav(path, speech.audio, speech.rate)


DAEMON_TRACE_KEEP = 2000


def _run_daemon(args: argparse.Namespace, cfg: Config, audio: Any = None) -> int:
    from .daemon.run import run_daemon

    trace = _trace(args, keep=DAEMON_TRACE_KEEP)  # it runs for days: the recent events only (each turn's are audited)
    asyncio.run(run_daemon(_components(cfg, trace), trace, args.ring_output, config_path=args.config, audio=audio))
    return EXIT_OK


def _run_live(args: argparse.Namespace, cfg: Config) -> int:
    """The daemon with a microphone and a speaker (audio.input_device / audio.output_device)."""
    from .audio.io import AudioDeviceError, open_sink, open_source

    try:
        source, sink = open_source(cfg.audio), open_sink(cfg.audio)
    except AudioDeviceError as e:
        print(f"hearthd run: {e} ({e.code}); `hearthd run --headless` runs without audio", file=sys.stderr)
        return EXIT_FAIL
    return _run_daemon(args, cfg, audio=(source, sink))


def cmd_run(args: argparse.Namespace, cfg: Config) -> int:
    from .audio.wavio import read_wav
    from .daemon.logs import configure_logging
    from .daemon.pipeline import Pipeline

    configure_logging(args.log_level)
    if args.headless:
        return _run_daemon(args, cfg)
    if not args.input:
        return _run_live(args, cfg)
    if args.no_wake:
        cfg.wake.enabled = False
    audio = read_wav(args.input, cfg.audio.max_input_s)
    trace = _trace(args)
    pipeline = Pipeline(_components(cfg, trace), trace)
    return _ended(asyncio.run(pipeline.run_audio(audio, language=args.lang)), args.output)


def cmd_ask(args: argparse.Namespace, cfg: Config) -> int:
    from .daemon.pipeline import Pipeline

    trace = _trace(args)
    components = _components(cfg, trace)

    async def turn(text: str, **kwargs: Any) -> Any:
        try:
            return await Pipeline(components, trace).run_text(text, speak=bool(args.speak), **kwargs)
        finally:
            await components.close()  # a command queued for an absent broker is answered before we exit

    result = asyncio.run(turn(args.text, language=args.lang, request_id=args.request_id))
    for answer in args.then or []:
        # the next utterance of the same conversation: the answer to "Cancel all your alarms?" or "For what time?"
        result = asyncio.run(turn(answer))
    return _ended(result, args.speak)


def _ended(result: Any, speech_path: str | None) -> int:
    """A one-shot turn's exit status, its reply written to `speech_path` (a WAV) when one was asked for."""
    if result.speech is not None and speech_path:
        _write_speech(speech_path, result.speech)
    return EXIT_OK if not result.error else EXIT_FAIL


def cmd_transcribe(args: argparse.Namespace, cfg: Config) -> int:
    from .audio.wavio import read_wav
    from .events import TranscriptEvent

    trace = _trace(args)
    components = _components(cfg, trace)
    audio = read_wav(args.file, cfg.audio.max_input_s)
    stt = components.stt()
    import time

    started = time.monotonic()
    transcript = stt.transcribe(audio, args.lang)
    trace.timing("stt", time.monotonic() - started)
    trace.emit(TranscriptEvent(text=transcript.text, lang=transcript.lang, prob=transcript.prob))
    return EXIT_OK


def cmd_say(args: argparse.Namespace, cfg: Config) -> int:
    import time

    from .events import AudioOutEvent

    trace = _trace(args)
    components = _components(cfg, trace)
    started = time.monotonic()
    speech = components.voices.synthesize(args.text, args.lang or cfg.general.language)
    trace.timing("tts", time.monotonic() - started)
    trace.emit(AudioOutEvent(seconds=round(speech.seconds, 2), rate=speech.rate, path=args.output))
    _write_speech(args.output, speech)
    return EXIT_OK


def cmd_doctor(args: argparse.Namespace, cfg: Config) -> int:
    from .daemon.components import make_store
    from .doctor import run_checks

    findings = run_checks(cfg, make_store(cfg))
    if args.json:
        for f in findings:
            print(json.dumps(f.__dict__, ensure_ascii=False))
    else:
        print(f"hearthd {__version__} doctor (config: {cfg.source})")
        area = ""
        for f in findings:
            if f.area != area:
                area = f.area
                print(f"\n[{area}]")
            mark = "ok  " if f.ok else ("MISS" if f.required else "warn")
            print(f"  {mark} {f.name}: {f.detail}")
            if not f.ok and f.fix:
                print(f"       fix: {f.fix}")
    missing = [f for f in findings if f.required and not f.ok]
    if not args.json:
        print(f"\n{len(missing)} required part(s) missing" if missing else "\nall required parts present")
    return EXIT_FAIL if missing else EXIT_OK


def cmd_models(args: argparse.Namespace, cfg: Config) -> int:
    import contextlib

    from .assets import CATALOGUE, make_progress_printer
    from .daemon.components import make_store

    store = make_store(cfg, progress=make_progress_printer())
    if args.quant and not args.names:
        print("hearthd models: --quant needs a model name, e.g. `hearthd models fetch botpsy --quant Q8_0`",
              file=sys.stderr)
        return EXIT_USAGE
    if args.names:  # aliases (botpsy) and groups (voices) stand for catalogue names
        names = [n for name in args.names for n in store.expand(name, args.quant)]
    else:
        names = sorted(CATALOGUE) if args.action == "list" else _default_models(cfg)
    failed = 0
    for name in names:
        if args.action == "list":
            spec = store.spec(name)
            status = store.status(name)
            with contextlib.suppress(AssetError):
                spec = store.pinned_spec(name)
            size = f"{spec.total_size / 1e6:8.1f}" if spec.total_size else f"{'?':>8}"
            print(f"{name:<20} {spec.kind:<4} {size} MB  {status.source:<8} {status.detail}")
        elif args.action == "fetch":
            try:
                # Naming a download-only model is the consent to download it (assets.allow_download aside).
                path = store.fetch(name, force=args.force, refresh=args.refresh, consent=bool(args.names))
            except AssetError as e:
                print(f"hearthd: {e.code}: {e.message}", file=sys.stderr)
                failed += 1
                continue
            print(f"{name}: {path}")
            if store.spec(name).kind == "llm" and cfg.agent.engine == "local" and not cfg.agent.model_path \
                    and store.canonical(cfg.agent.model) == name:
                # the configured model's 8-bit copy (agent.weights), made here rather than at the daemon's first start
                from .agent.model import default_weights_dir
                from .agent.weights import for_prompts

                loaded = for_prompts(path, cfg.agent.weights, default_weights_dir())
                if loaded != path:
                    print(f"  runs from its 8-bit copy {loaded} (agent.weights)")
            for hint in _fetch_hints(cfg, store, name, path):
                print(f"  {hint}")
            if name == "kokoro-82m":
                failed += _fetch_kokoro_voices(store, explicit=bool(args.names))
        else:
            problems = store.verify(name)
            print(f"{name}: {'ok' if not problems else '; '.join(problems)}")
            failed += bool(problems)
    if args.action == "list":
        if cfg.tts.engine != "wyoming":
            from .doctor import voice_choices

            for choice in voice_choices(cfg, store):
                print(f"voice {choice.lang}: {choice.spec} — {choice.why}")
        print(_agent_model_line(cfg, store))
    return EXIT_FAIL if failed else EXIT_OK


def _fetch_kokoro_voices(store: Any, explicit: bool) -> int:
    """Kokoro's voices beside its model (npm pack of kokoro-js, sha256-checked): 1 when that failed and the model
    was asked for by name; without a name (the set-up) a missing npm is said, and the language speaks with
    espeak-ng meanwhile."""
    from .audio import kokoro
    from .audio.tts import TtsError

    try:
        print(f"kokoro voices: {kokoro.fetch_voices(store.cache_dir)}")
    except TtsError as e:
        print(f"hearthd: {e.code}: {e.message}" + ("" if explicit else "; until then the languages whose voice is "
                                                   "Kokoro speak with espeak-ng"), file=sys.stderr)
        return 1 if explicit else 0
    return 0


def _agent_model_line(cfg: Config, store: Any) -> str:
    """The configured agent model and what its GGUF says it is (read without loading the weights)."""
    from .doctor import check_agent_model

    finding = check_agent_model(cfg, store)
    where = cfg.agent.model_path or cfg.agent.model
    return f"agent model ({where}): {finding.detail}" + (f" — {finding.fix}" if finding.fix else "")


def _fetch_hints(cfg: Config, store: Any, name: str, path: Path) -> list[str]:
    """What was verified against what, and how the config uses the fetched model."""
    from .config import TtsConfig

    spec = store.spec(name)
    hints = []
    pins = store.pins(name)
    if pins:
        hints.append(f"verified against the sha256 the hub lists for {spec.hub_repo}@{spec.hub_revision}; "
                     f"pinned in {store.pins_path(name)}")
    if spec.kind == "llm":
        if cfg.agent.model_path:
            hints.append(f'agent.model_path is set ({cfg.agent.model_path}); to use this model set '
                         f'[agent] model_path = "{path}" or clear it and set model = "{name}"')
        elif store.canonical(cfg.agent.model) == name:
            hints.append("the config's agent.model already names it")
        else:
            hints.append(f'to use it: [agent] model = "{name}" in the config (or model_path = "{path}")')
    elif name == "kokoro-82m":
        users = [lang for lang, voice in sorted(cfg.tts.voices.items()) if voice.startswith("kokoro:")]
        hints.append(f"speaks {', '.join(users)} (tts.voices)" if users
                     else 'to use it: [tts.voices] hi = "kokoro:hf_alpha" (or en = "kokoro:af_heart")')
    elif spec.kind == "tts" and spec.config_key.startswith("tts.voices."):
        lang = spec.config_key.rsplit(".", 1)[1]
        voice = cfg.tts.voices.get(lang, "")
        if voice == f"piper:{name}":
            hints.append(f"tts.voices.{lang} uses it")
        elif voice == TtsConfig().voices.get(lang):
            hints.append(f"speaks {lang} in place of {voice} (tts.voices.{lang} is the default)")
        else:
            hints.append(f'tts.voices.{lang} is "{voice}"; set it to "piper:{name}" to use this voice')
    return hints


def _default_models(cfg: Config) -> list[str]:
    from .audio.tts import VOICE_ENGINES

    names = [cfg.stt.model, cfg.agent.model]
    for voice in cfg.tts.voices.values():
        engine, _, name = voice.partition(":")
        names += VOICE_ENGINES[engine].assets(name) if engine in VOICE_ENGINES else []
    return list(dict.fromkeys(names))


def _eval_model(args: argparse.Namespace, cfg: Config) -> Any:
    from .agent.model import ChatModel
    from .daemon.components import make_store

    path = Path(args.model) if args.model else make_store(cfg).resolve(cfg.agent.model,
                                                                        cfg.agent.model_path or None)
    return ChatModel(path, cfg.agent)


def cmd_eval(args: argparse.Namespace, cfg: Config) -> int:
    if bool(args.bfcl) == bool(args.suite):
        print("hearthd eval: give --bfcl DIR or --suite YAML", file=sys.stderr)
        return EXIT_USAGE
    return _eval_bfcl(args, cfg) if args.bfcl else _eval_suites(args, cfg)


def _eval_bfcl(args: argparse.Namespace, cfg: Config) -> int:
    from .evaluation.bfcl import categories as bfcl_categories
    from .evaluation.evaluate import evaluate

    root = Path(args.bfcl)
    cats = args.category or bfcl_categories(root)
    model = _eval_model(args, cfg)

    def show(category: str, r: Any) -> None:
        if args.json:
            print(json.dumps({"type": "eval_case", "category": category, "id": r.id, "ok": r.ok, "reason": r.reason,
                              "calls": r.calls, "abstained": r.abstained, "error": r.error, "ms": round(r.ms, 1)},
                             ensure_ascii=False))
        elif r.error:
            print(f"  error {r.id}: {r.error}", file=sys.stderr)
        elif args.verbose and not r.ok:
            print(f"  miss {r.id}: {r.reason} {r.calls}", file=sys.stderr)

    reports = evaluate(model, root, cats, args.limit, show, cfg.agent.min_tool_probability,
                       cfg.agent.min_relevance, cfg.agent.thinking_budget)
    if args.json:
        for rep in reports:
            print(json.dumps(rep.summary()))
    else:
        print(f"model: {model.path.name} ({model.capabilities.summary()})")
        print(f"{'category':<22}{'cases':>6}{'accuracy':>10}{'abstained':>11}{'errors':>8}{'p50 ms':>9}{'p95 ms':>9}")
        for rep in reports:
            s = rep.summary()
            print(f"{rep.category:<22}{s['cases']:>6}{100 * s['accuracy']:>9.1f}%{100 * s['abstention_rate']:>10.1f}%"
                  f"{s['errors']:>8}{s['p50_ms']:>9.0f}{s['p95_ms']:>9.0f}")
    # A case that crashed is not a miss: the run failed, and says so in its exit status.
    return EXIT_OK if not any(rep.errors for rep in reports) else EXIT_FAIL


def _eval_suites(args: argparse.Namespace, cfg: Config) -> int:
    from .agent.agent import Agent
    from .agent.declines import refusal_phrase
    from .daemon.components import prompt_cache_dir
    from .evaluation.evaluate import NoModel, load_home, load_suite, route, run_suite

    suites = [Path(s) for s in args.suite]
    home = load_home(Path(args.home) if args.home else suites[0].parent / "home.yaml")
    registry = home.registry
    agents: list[Any] = []

    def agent() -> Agent:  # the model loads only when a case reaches it
        if not agents:
            agents.append(NoModel() if args.no_model else  # the daemon's bars (Agent.configured)
                          Agent.configured(_eval_model(args, cfg), registry, cfg.agent, state_dir=prompt_cache_dir()))
        return cast(Agent, agents[0])

    # as the daemon decides: hearthd's templates and the sentence library over the suites' home, out-of-scope
    # requests declined by code, then the model
    router = home.router(agent, not args.no_fast_path, cfg.agent.clarify_timeout_s, cfg.agent.clarify_turns,
                         tolerant=cfg.agent.tolerant and not args.no_tolerant,
                         domain_hint=cfg.agent.domain_hint and not args.no_domain_hint)

    def show(r: Any) -> None:
        d = r.decision
        got = [[c.name, c.arguments] for c in d.calls]
        if args.json:
            print(json.dumps({"type": "eval_case", "lang": r.command.lang, "family": r.command.family,
                              "text": r.command.text, "ok": r.ok, "kind": d.kind, "calls": got, "missing": d.missing,
                              "source": d.source, "route": route(d), "reason": d.reason,
                              "relevance": d.relevance, "ms": round(r.ms, 1)}, ensure_ascii=False))
        elif args.verbose and not r.ok:
            c = r.command
            said = f" says {refusal_phrase(d, c.text, c.lang)}" if d.kind == "abstain" else ""
            print(f"  miss [{c.lang}/{c.family}] {c.text!r}: {d.kind} {got} {d.missing} ({d.reason}; {route(d)}"
                  f"{said}) want {c.expected}", file=sys.stderr)

    reports = []
    for path in suites:
        cases = load_suite(path, path.stem)[: args.limit]
        reports.append(run_suite(router, cases, home, show))
    rows = [rep.summary() for rep in reports]
    if args.json:
        for rep, row in zip(reports, rows, strict=True):
            for family, f in sorted(rep.families().items()):
                print(json.dumps({"type": "eval_family", "lang": rep.lang, "family": family, **f},
                                 ensure_ascii=False))
            print(json.dumps(row))
        return EXIT_OK
    print(f"suites: {', '.join(str(p) for p in suites)}; fast path {'off' if args.no_fast_path else 'on'}"
          f"{'; no model (what reaches it is counted as declined)' if args.no_model else ''}")
    print(f"{'lang':<6}{'cases':>6}{'exact':>8}{'calls':>8}{'abstain':>9}{'clarify':>9}{'unsafe':>8}"
          f"{'fast':>7}{'p50 ms':>9}{'p95 ms':>9}{'fast p50':>10}{'model p50':>11}{'rel. refused':>14}")
    for r in rows:
        fast = "-" if r["fast_p50_ms"] is None else f"{r['fast_p50_ms']:.1f}"
        slow = "-" if r["model_p50_ms"] is None else f"{r['model_p50_ms']:.0f}"
        refused = f"{r['relevance_refusals']}+{r['relevance_declines']}"
        print(f"{r['lang']:<6}{r['cases']:>6}{100 * r['accuracy']:>7.1f}%{100 * r['calls']:>7.1f}%"
              f"{100 * r['abstain']:>8.1f}%{100 * r['clarify']:>8.1f}%{r['unsafe']:>8}"
              f"{100 * r['fast_path_share']:>6.0f}%"
              f"{r['p50_ms']:>9.0f}{r['p95_ms']:>9.0f}{fast:>10}{slow:>11}{refused:>14}")
    print("rel. refused: calls the relevance check turned down, on in-scope requests + on out-of-scope ones")
    print()
    print(f"{'lang':<6}{'family':<16}{'cases':>6}{'exact':>8}{'templates':>11}{'tolerant':>10}{'declined':>10}"
          f"{'rel. refused':>14}")
    for rep in reports:
        for family, f in sorted(rep.families().items()):
            print(f"{rep.lang:<6}{family:<16}{f['cases']:>6}{100 * f['accuracy']:>7.1f}%{f['templates']:>11}"
                  f"{f['tolerant']:>10}{f['declined']:>10}{f['relevance_refusals']:>14}")
    return EXIT_OK


def cmd_tools(args: argparse.Namespace, cfg: Config) -> int:
    from .daemon.components import Components

    registry = Components(cfg).tools
    lang = args.lang or cfg.general.language
    for tool in registry:
        row = {"name": tool.name, "family": tool.family, "description": tool.describe(lang),
               "consequential": tool.consequential or tool.name in cfg.policy.confirm,
               "parameters": tool.parameters}
        if args.json:
            print(json.dumps(row, ensure_ascii=False))
        else:
            flag = " [asks first]" if row["consequential"] else ""
            props = ", ".join(tool.parameters.get("properties", {}))
            print(f"{tool.name}({props}){flag}: {row['description']}")
    return EXIT_OK


def cmd_history(args: argparse.Namespace, cfg: Config) -> int:
    from .config import state_dir
    from .daemon.audit import AuditLog

    log = AuditLog(state_dir() / "audit.jsonl", cfg.policy.audit_max_bytes, cfg.policy.audit_keep)
    rows = log.tail(args.n)
    for row in rows:
        if args.json:
            print(json.dumps(row, ensure_ascii=False))
            continue
        try:
            said = row.get("utterance", f"<sha256 {str(row.get('utterance_sha256', ''))[:12]}>")
            calls = ", ".join(f"{c['name']}{json.dumps(c.get('arguments') or {}, ensure_ascii=False)}"
                              for c in row.get("proposed", []))
            done = ", ".join(f"{r['name']}:{'ok' if r['ok'] else 'failed'}" for r in row.get("results", []))
        except (KeyError, TypeError, AttributeError):  # a record damaged into other JSON: skipped, counted
            log.skipped += 1
            continue
        extra = f" answer={row['answer']}" if "answer" in row else ""
        if row.get("conversation") not in (None, "local"):  # who asked, when not the microphone or the CLI
            extra += f" from={row['conversation']}"
        if isinstance(row.get("lost"), int) and row["lost"] > 0:  # the disk took no writes for a while
            print(f"({row['lost']} turn{'s' if row['lost'] != 1 else ''} before this one could not be recorded)")
        print(f"{row.get('ts', '')} [{row.get('lang', '')}] {said!r} -> {calls or '-'} policy={row.get('policy')}"
              f"{extra} ran={done or '-'} reply={row.get('reply', '')!r}")
    if log.skipped:
        print(f"skipped {log.skipped} unreadable line{'s' if log.skipped != 1 else ''} of {log.path}", file=sys.stderr)
    for problem in log.unreadable:
        print(f"cannot read {problem}", file=sys.stderr)
    if not rows and not args.json and not log.unreadable:
        print(f"no history yet ({log.path})")
    return EXIT_FAIL if log.unreadable and not rows else EXIT_OK


def cmd_service(args: argparse.Namespace, cfg: Config) -> int:
    from .daemon.unit import install

    return install("system" if args.system else "user", args.dir, enable=not args.no_enable, headless=args.headless)


def cmd_config(args: argparse.Namespace, cfg: Config) -> int:
    print(json.dumps(masked_dict(cfg), indent=2, ensure_ascii=False) if args.json else dump_toml(cfg), end="")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hearthd", description="A private voice assistant on your own machine.")
    parser.add_argument("--version", action="version", version=f"hearthd {__version__}")
    parser.add_argument("--config", help="config file (default: $XDG_CONFIG_HOME/hearthd/config.toml)")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, fn: Callable[[argparse.Namespace, Config], int], help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        p.add_argument("--json", action="store_true", help="print the trace as JSON lines")
        p.set_defaults(fn=fn)
        return p

    p = command("run", cmd_run, "run the whole chain on a WAV file: wake word → ... → reply WAV")
    p.add_argument("--input", "-i", help="16 kHz (or any PCM) WAV with the wake word and a command")
    p.add_argument("--output", "-o", help="where to write the spoken reply")
    p.add_argument("--lang", choices=languages(), help="force the language instead of detecting it")
    p.add_argument("--no-wake", action="store_true", help="the file holds only the command (skip the wake word)")
    p.add_argument("--headless", action="store_true",
                   help="run the daemon without audio: ring alarms and timers from the store until stopped")
    p.add_argument("--ring-output", metavar="DIR",
                   help="with --headless: write each ring (chime + spoken label) as DIR/ring-ID-N.wav")
    p.add_argument("--log-level", choices=["debug", "info", "warning", "error"], default="info",
                   help="the log on stderr (the journal under systemd); default info")

    p = command("ask", cmd_ask, "send a text request through the agent and the tools")
    p.add_argument("text")
    p.add_argument("--lang", choices=languages(), help="language of the text (default: from its script)")
    p.add_argument("--speak", metavar="OUT.wav", help="also speak the reply into a WAV file")
    p.add_argument("--request-id", metavar="ID",
                   help="make the request idempotent: sent again with the same id, its actions do not run twice")
    p.add_argument("--then", metavar="TEXT", action="append",
                   help="what the user says next (repeatable): answers a confirmation or a clarification question")

    p = command("transcribe", cmd_transcribe, "speech to text on a WAV file")
    p.add_argument("file")
    p.add_argument("--lang", choices=languages())

    p = command("say", cmd_say, "speak text into a WAV file")
    p.add_argument("text")
    p.add_argument("--lang", choices=languages(), help="default: general.language")
    p.add_argument("--output", "-o", required=True)

    command("doctor", cmd_doctor, "check models, audio devices, D-Bus and MQTT, and say how to fix what is missing")

    p = command("models", cmd_models, "list, fetch (assemble or download) or verify the models")
    p.add_argument("action", choices=["list", "fetch", "verify"])
    p.add_argument("names", nargs="*",
                   help="asset names, `botpsy`, or `voices` (a natural voice per language); default: the configured "
                        "ones. Naming a download-only model is the consent to download it")
    p.add_argument("--quant", metavar="TAG",
                   help="the named model's quantisation: Q4_K_M (default), Q8_0 or bf16 for botpsy")
    p.add_argument("--force", action="store_true", help="with fetch: re-hash cached files instead of trusting them")
    p.add_argument("--refresh", action="store_true",
                   help="with fetch: read the hub's listing again and take a changed file instead of refusing it")

    p = command("eval", cmd_eval, "score the agent on BFCL v4 cases or on hearthd's own command suites")
    p.add_argument("--bfcl", metavar="DIR", help="a directory with BFCL_v4_<category>.json and possible_answer/")
    p.add_argument("--suite", metavar="YAML", action="append",
                   help="a command suite, tests/data/commands/<lang>.yaml (repeatable; the language is the file name)")
    p.add_argument("--home", "--catalogue", metavar="YAML", dest="home",
                   help="the suites' home: devices, floors and the microphone's room, over which hearthd's real tools "
                        "are declared (default: home.yaml beside them)")
    p.add_argument("--no-fast-path", action="store_true", help="send every suite case to the model")
    p.add_argument("--no-tolerant", action="store_true", help="without the tolerant tier (templates, then the model)")
    p.add_argument("--no-domain-hint", action="store_true",
                   help="the model chooses among every tool, not the domain the tiers point at")
    p.add_argument("--no-model", action="store_true",
                   help="load no model: what the templates and the sentence library do not read counts as declined "
                        "(the fast path's coverage)")
    p.add_argument("--category", action="append", help="a category (repeatable; default: all in DIR)")
    p.add_argument("--limit", type=int, help="the first N cases of each category")
    p.add_argument("--model", help="a GGUF to evaluate instead of the configured agent model")
    p.add_argument("--verbose", "-v", action="store_true", help="list the misses")

    p = command("tools", cmd_tools, "the tools hearthd can use, with what each needs and whether it asks first")
    p.add_argument("--lang", choices=languages(), help="default: general.language")

    p = command("history", cmd_history, "the audit trail: what was asked, decided, confirmed, done and said")
    p.add_argument("-n", type=int, default=20, help="the last N turns (default 20)")

    p = sub.add_parser("service", help="run hearthd as a systemd service",
                       description="run hearthd as a systemd service")
    actions = p.add_subparsers(dest="action", required=True)
    install = actions.add_parser("install", help="write the unit for this installation, then enable and start it",
                                 description="write the unit for this installation, then enable and start it")
    scope = install.add_mutually_exclusive_group()
    scope.add_argument("--user", action="store_true", help="a user unit, ~/.config/systemd/user (the default)")
    scope.add_argument("--system", action="store_true", help="the system unit, /etc/systemd/system (as root)")
    install.add_argument("--dir", metavar="DIR", help="write the unit into DIR instead")
    install.add_argument("--no-enable", action="store_true", help="only write it; print the systemctl commands")
    install.add_argument("--headless", action="store_true", help="run the daemon without audio (run --headless)")
    install.set_defaults(fn=cmd_service)

    p = command("config", cmd_config, "show the effective configuration")
    p.add_argument("action", choices=["show"])
    return parser


def _undecodable(args: argparse.Namespace) -> str:
    """The first text argument that is not valid UTF-8 (Python keeps such argv bytes as lone surrogates, which
    fail later, far from their cause), said as the byte that is wrong; "" when all are fine."""
    texts = [("text", getattr(args, "text", None))] + [("--then", t) for t in getattr(args, "then", None) or []]
    for name, text in texts:
        if not isinstance(text, str):
            continue
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            fix = "use a UTF-8 locale (LANG=C.UTF-8)"
            try:
                raw = text.encode("utf-8", "surrogateescape")
                at = len(text[: e.start].encode("utf-8", "surrogateescape"))
            except UnicodeEncodeError:  # a surrogate no byte stands for (not from argv)
                return f"{name} is not valid Unicode text (a lone surrogate at character {e.start}); {fix}"
            return f"{name} is not valid UTF-8 (byte 0x{raw[at]:02x} at offset {at}); {fix}"
    return ""


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if bad := _undecodable(args):
        print(f"hearthd {args.command}: {bad}", file=sys.stderr)
        return EXIT_USAGE
    try:
        cfg = load_config(args.config)
        return int(args.fn(args, cfg))
    except ConfigError as e:
        print(f"hearthd: config error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except AssetError as e:
        print(f"hearthd: {e.code}: {e.message}", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # the user gets one clear line; HEARTHD_DEBUG=1 shows the traceback
        import os

        if os.environ.get("HEARTHD_DEBUG"):
            raise
        if isinstance(e, HearthdError):  # an AudioFileError, a StateWriteError…: its stable code and what happened
            print(f"hearthd: {e.code}: {e.message}", file=sys.stderr)
        else:
            print(f"hearthd: internal: {e}", file=sys.stderr)
        return EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
