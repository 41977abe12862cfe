"""The agent model's weights as the CPU evaluates prompts fastest: 8-bit, made once from a 4-6-bit GGUF.

Every turn on the model path evaluates the request's ~20 tokens after the cached catalogue, and the relevance check
~15 more: on 2 cores that is compute, not memory (a batch of tokens reads each weight once). llama.cpp's CPU kernels
multiply Q8_0 blocks faster than the K-quants the shipped model comes in (Q4_K_M, with Q5_0/Q6_K tensors): the request
of a turn, evaluated after a 3,700-token prefix, took 263-302 ms from Q4_K_M and 195-218 ms from the same weights
written as Q8_0 (bench/agent.py prints the turn). One token decoded alone reads the weights from memory and costs
the same either way (~30 ms). The 8-bit copy holds the 4-bit values all but exactly (Q8_0's step is 1/127 of a
32-weight block's largest value; Q4_K's 1/15 of its sub-block's range), so the model decides as before.

Made by llama.cpp's own quantizer (`llama_model_quantize`, allow_requantize), a few seconds, once per model file,
into the cache beside the prompt states; the file the user named is never touched. 16- and 32-bit weights and 8-bit
ones are used as they are (a user who chose bf16 chose precision), and so is anything that cannot be made (a full
disk: the original, with a warning)."""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import logging
import os
import shutil
import threading
from pathlib import Path

log = logging.getLogger(__name__)

# llama.cpp's file types (enum llama_ftype) whose matrices are 4-6-bit blocks: worth the 8-bit copy
_LOW_BIT_FILE_TYPES = {
    2,  # Q4_0
    3,  # Q4_1
    8,  # Q5_0
    9,  # Q5_1
    10, 11, 12, 13,  # Q2_K, Q3_K_S/M/L
    14, 15,  # Q4_K_S, Q4_K_M
    16, 17,  # Q5_K_S, Q5_K_M
    18,  # Q6_K
    19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,  # IQ2/IQ3/IQ1/IQ4 families
}
_Q8_0 = 7
CHOICES = ("q8_0", "as-is")
_lock = threading.Lock()


def file_type(path: Path) -> int | None:
    """The GGUF's `general.file_type` (llama_ftype), or None when the header does not say or cannot be read. Read by
    llama.cpp with the vocabulary only (~0.3 s; gguf's reader maps every tensor first, ~7 s)."""
    try:
        from llama_cpp import Llama

        value = Llama(model_path=str(path), vocab_only=True, verbose=False).metadata.get("general.file_type")
        return int(value) if value is not None else None
    except Exception:  # noqa: BLE001 — not a GGUF llama.cpp can read: used as it is, its load says what is wrong
        return None


def for_prompts(path: Path, choice: str, cache_dir: Path, threads: int = 0) -> Path:
    """The file to load for `path` under agent.weights = `choice`: the 8-bit copy in `cache_dir` (made now if it is not
    there) for a 4-6-bit GGUF with "q8_0", else `path` itself."""
    target = _target(path, cache_dir) if choice == "q8_0" else None
    if target is None:
        return path
    with _lock:
        if target.is_file():  # (written whole and checked, then renamed into place: only ever a whole copy)
            return target
        if file_type(path) not in _LOW_BIT_FILE_TYPES:
            return path
        try:
            made = _quantize(path, target, threads)
        except Exception as e:  # noqa: BLE001 — a full disk, a read-only cache, a quantizer error: the original file
            log.warning("could not write the 8-bit copy of %s (%s); the model runs from its own weights", path.name,
                        e)
            return path
    for stale in cache_dir.glob(f"{path.stem}-*-q8_0.gguf"):  # copies of an earlier version of the same file
        if stale != made:
            with contextlib.suppress(OSError):
                stale.unlink()
    return made


def _target(path: Path, cache_dir: Path) -> Path | None:
    """Where the 8-bit copy of this version of `path` is kept (None when `path` cannot be read)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    digest = hashlib.sha256(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    return cache_dir / f"{path.stem}-{digest}-q8_0.gguf"


def describe(path: Path, choice: str, cache_dir: Path) -> str:
    """Which weights the model runs from, for `hearthd doctor` and `hearthd models list` (never makes the copy)."""
    target = _target(path, cache_dir) if choice == "q8_0" else None
    if target is not None and target.is_file():
        return f"runs from its 8-bit copy {target} (agent.weights)"
    if target is not None and file_type(path) in _LOW_BIT_FILE_TYPES:
        return "its 8-bit copy is made at the first load, a few seconds (agent.weights)"
    return "runs from its own weights" + (" (agent.weights = \"as-is\")" if choice != "q8_0" else "")


def _quantize(source: Path, target: Path, threads: int) -> Path:
    import llama_cpp

    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    free = shutil.disk_usage(target.parent).free
    need = source.stat().st_size * 2  # Q8_0 is at most twice a 4-bit file, and a little room left over
    if free < need + 256 * 1024 * 1024:
        raise OSError(f"{free // 2**20} MiB free in {target.parent}, {need // 2**20} MiB needed")
    partial = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.part")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = _Q8_0
    params.allow_requantize = True
    params.nthread = threads or (os.cpu_count() or 2)
    log.info("writing the model's weights at 8 bits for faster prompts: %s (once)", target)
    try:
        failed = llama_cpp.llama_model_quantize(str(source).encode(), str(partial).encode(), ctypes.byref(params))
        if failed or file_type(partial) != _Q8_0:
            raise OSError(f"llama.cpp's quantizer failed ({failed})")
        os.chmod(partial, 0o600)
        os.replace(partial, target)
    finally:
        with contextlib.suppress(OSError):
            partial.unlink()
    return target
