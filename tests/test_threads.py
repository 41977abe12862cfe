"""hearthd's OpenMP wait policy: threads sleep, not spin, while they wait (a shared machine's worst case)."""

from __future__ import annotations

import os
import subprocess
import sys


def test_hearthd_sets_a_passive_wait_policy_unless_the_user_chose_one() -> None:
    code = "import os, hearthd.agent.model; print(os.environ['OMP_WAIT_POLICY'])"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "PASSIVE"
    out = subprocess.run([sys.executable, "-c", code], env={**env, "OMP_WAIT_POLICY": "ACTIVE"},
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ACTIVE"


# -- threads sized to the free cores (issue 14.4) ---------------------------------------------------------------


def test_free_cores_are_the_allowed_ones_less_what_others_use() -> None:
    from hearthd.cores import free_from

    # 2 cores over one second (100 ticks each): idle; one busy elsewhere; both busy; this process using them
    assert free_from(2, 0, 200, 0.0, 1.0) == 2
    assert free_from(2, 100, 200, 0.0, 1.0) == 1
    assert free_from(2, 200, 200, 0.0, 1.0) == 1  # never fewer than one
    assert free_from(2, 200, 200, 2.0, 1.0) == 2  # our own threads' time is not someone else's
    assert free_from(8, 350, 800, 0.5, 1.0) == 5  # 3.5 cores busy, half of one is ours: 5 free
    assert free_from(4, 0, 0, 0.0, 0.0) == 4  # nothing to go by: all of them


def test_only_the_cores_this_process_may_use_are_counted(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from hearthd.cores import _busy_ticks

    stat = tmp_path / "stat"
    stat.write_text("cpu  300 0 100 600 0 0 0 0 0 0\n"
                    "cpu0 100 0 0 0 0 0 0 0 0 0\n"  # fully busy
                    "cpu1 0 0 0 100 0 0 0 0 0 0\n"  # idle
                    "cpu2 200 0 100 500 0 0 0 0 0 0\n"
                    "intr 12345\n")
    assert _busy_ticks({0}, stat) == (100, 100)
    assert _busy_ticks({1}, stat) == (0, 100)
    assert _busy_ticks({0, 1}, stat) == (100, 200)
    assert _busy_ticks({7}, stat) is None


def test_a_cpu_hog_per_core_leaves_one_thread() -> None:
    """With every allowed core busy elsewhere, `threads = 0` means one thread, not one per core."""
    import multiprocessing
    import time

    from hearthd.cores import FreeCores, allowed_cores

    cores = allowed_cores()
    hogs = [multiprocessing.Process(target=_hog, daemon=True) for _ in cores]
    for h in hogs:
        h.start()
    try:
        free = FreeCores()
        free.count()
        time.sleep(0.6)
        assert free.count() == 1
    finally:
        for h in hogs:
            h.terminate()


def _hog() -> None:
    while True:
        pass


def test_the_model_uses_the_configured_threads_for_prompts_too(qwen35_xml_model, base_config,  # type: ignore[no-untyped-def]
                                                              monkeypatch) -> None:
    import copy

    import llama_cpp

    from hearthd.agent import model as model_module
    from hearthd.agent.model import ChatModel

    cfg = copy.deepcopy(base_config)
    cfg.agent.threads = 3
    model = ChatModel(qwen35_xml_model, cfg.agent)
    try:  # llama-cpp-python gives prompt batches every core unless told otherwise
        assert llama_cpp.llama_n_threads(model.llm._ctx.ctx) == 3
        assert llama_cpp.llama_n_threads_batch(model.llm._ctx.ctx) == 3
        assert model.fit_threads() == 3  # configured: fixed
    finally:
        model.llm.close()
    cfg.agent.threads = 0
    model = ChatModel(qwen35_xml_model, cfg.agent)
    try:  # 0: what is free, looked at again each turn
        monkeypatch.setattr(model_module, "threads_for", lambda configured: 1)
        assert model.fit_threads() == 1
        assert llama_cpp.llama_n_threads(model.llm._ctx.ctx) == 1
        assert llama_cpp.llama_n_threads_batch(model.llm._ctx.ctx) == 1
        monkeypatch.setattr(model_module, "threads_for", lambda configured: 2)
        assert model.fit_threads() == 2
        assert llama_cpp.llama_n_threads_batch(model.llm._ctx.ctx) == 2
    finally:
        model.llm.close()


# -- one inference at a time -----------------------------------------------------------------------------------


def test_a_turn_waits_for_the_running_speculative_job_and_queued_ones_wait_for_it() -> None:
    import threading
    import time

    from hearthd.daemon.inference import InferenceGate, Skipped

    gate = InferenceGate()
    spans: dict[str, tuple[float, float]] = {}
    started = threading.Event()

    def job(name: str, seconds: float) -> str:
        begin = time.monotonic()
        started.set()
        time.sleep(seconds)
        spans[name] = (begin, time.monotonic())
        return name

    first = threading.Thread(target=gate.speculative, args=(job, "stale", 0.3))
    first.start()
    assert started.wait(5)
    stale = threading.Event()
    queued = threading.Thread(target=lambda: _skipped(gate, job, stale, spans))
    queued.start()
    time.sleep(0.05)
    stale.set()  # more speech came: that transcript is not wanted any more
    since = gate.enter(123.0)  # the end of speech: the turn waits for the decode under way, only
    entered = time.monotonic()
    later = threading.Thread(target=gate.speculative, args=(job, "later", 0.0))
    later.start()
    time.sleep(0.1)
    assert "later" not in spans  # nothing speculative runs beside the turn
    with gate.turn() as nested:  # the agent inside the live loop's turn holds it again
        assert nested == 123.0  # and its budget runs from the end of speech
    gate.leave(123.0)
    for t in (first, queued, later):
        t.join(5)
    assert since == 123.0
    assert spans["stale"][1] <= entered
    assert spans["queued"] == (0.0, 0.0)  # skipped, never ran
    assert spans["later"][0] >= entered + 0.1
    assert not gate.busy
    assert Skipped


def _skipped(gate, job, stale, spans) -> None:  # type: ignore[no-untyped-def]
    from hearthd.daemon.inference import Skipped

    try:
        gate.speculative(job, "queued", 0.0, cancelled=stale)
    except Skipped:
        spans["queued"] = (0.0, 0.0)
