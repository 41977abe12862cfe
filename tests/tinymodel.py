"""A tiny random-weight GGUF of llama.cpp's `qwen35` architecture (Qwen3.5) for the tests.

Qwen3.5 is a hybrid: three linear-attention layers (a gated delta net, a recurrent state per sequence) then one
full-attention layer (a KV cache), repeated. Its recurrent state cannot be rolled back to an earlier position the
way a KV cache can, which is what hearthd's agent must cope with; a 4-layer model with the real layer pattern
exercises that in seconds, without shipping a real Qwen3.5.

The tokenizer (the Qwen2 BPE vocabulary, ~151k tokens) is copied from a source GGUF, so prompts tokenize exactly
as they do for the default model. The weights are random, deterministic for a seed, and scaled so that the
activations stay finite; the output layer is tied to the token embedding (qwen35 falls back to it when
`output.weight` is absent), stored as Q4_0, which keeps the file at a few MB.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

ARCH = "qwen35"
# hearthd's own Qwen3.5-format template (XML tool calls), for the tiny model
QWEN35_TEMPLATE = Path(__file__).resolve().parent / "data" / "qwen35_chat_template.jinja"


@dataclass(frozen=True)
class TinyHparams:
    """The shape of the tiny model (the real Qwen3.5-0.8B in comments)."""

    n_embd: int = 64  # 1024
    n_layer: int = 4  # 24; layers 0-2 linear attention, layer 3 full attention
    full_attention_interval: int = 4  # 4
    n_ff: int = 128  # 3584
    n_head: int = 2  # 8
    n_head_kv: int = 1  # 2
    head_dim: int = 32  # 256
    n_rot: int = 8  # 64 (partial rotary factor 0.25)
    rope_sections: tuple[int, int, int, int] = (2, 1, 1, 0)  # (11, 11, 10, 0): sums to n_rot / 2
    rope_freq_base: float = 10_000_000.0
    rms_eps: float = 1e-6
    n_ctx_train: int = 32768  # 262144
    ssm_conv_kernel: int = 4  # 4
    ssm_state_size: int = 16  # 128: head_k_dim == head_v_dim
    ssm_group_count: int = 2  # 16: linear-attention key heads
    ssm_time_step_rank: int = 4  # 16: linear-attention value heads (a multiple of the key heads)

    @property
    def ssm_inner_size(self) -> int:
        return self.ssm_state_size * self.ssm_time_step_rank

    def is_recurrent(self, layer: int) -> bool:
        return (layer + 1) % self.full_attention_interval != 0


HPARAMS = TinyHparams()


@dataclass(frozen=True)
class _KV:
    key: str
    value: Any
    vtype: Any  # gguf.GGUFValueType
    sub_type: Any  # gguf.GGUFValueType | None


@dataclass(frozen=True)
class _SourceMetadata:
    tokenizer: tuple[_KV, ...]  # every `tokenizer.*` key except the chat template, with its GGUF types
    chat_template: str | None


@functools.cache
def _source_metadata(source_gguf: Path) -> _SourceMetadata:
    """The tokenizer keys and chat template of a GGUF (parsed once per file: ~300k strings take seconds)."""
    import gguf

    reader = gguf.GGUFReader(source_gguf)
    fields: list[_KV] = []
    template: str | None = None
    for key, field in reader.fields.items():
        if key == "tokenizer.chat_template":
            template = str(field.contents())
        elif key.startswith("tokenizer."):
            vtype = gguf.GGUFValueType(field.types[0])
            sub_type = gguf.GGUFValueType(field.types[1]) if vtype == gguf.GGUFValueType.ARRAY else None
            fields.append(_KV(key, field.contents(), vtype, sub_type))
    return _SourceMetadata(tuple(fields), template)


def read_chat_template(source_gguf: Path) -> str:
    """The `tokenizer.chat_template` stored in a GGUF."""
    template = _source_metadata(Path(source_gguf).resolve()).chat_template
    if template is None:
        raise ValueError(f"{source_gguf} has no tokenizer.chat_template")
    return template


def write_tiny_qwen35(path: Path, source_gguf: Path, chat_template: str, seed: int = 0) -> Path:
    """Write the tiny qwen35 model to `path` (the same bytes for the same seed, source and template)."""
    import gguf

    hp = HPARAMS
    tok_fields = _source_metadata(Path(source_gguf).resolve()).tokenizer
    tokens = next(f.value for f in tok_fields if f.key == "tokenizer.ggml.tokens")
    n_vocab = len(tokens)
    rng = np.random.default_rng(seed)

    def normal(*shape: int, std: float) -> npt.NDArray[np.float32]:
        return (rng.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(np.float32)

    def linear(n_out: int, n_in: int) -> npt.NDArray[np.float16]:
        # numpy shape is ggml's reversed: ggml {n_in, n_out} is (n_out, n_in); 1/sqrt(fan_in) keeps unit scale
        return normal(n_out, n_in, std=1.0 / np.sqrt(n_in)).astype(np.float16)

    def norm(n: int) -> npt.NDArray[np.float32]:
        return (1.0 + normal(n, std=0.05)).astype(np.float32)

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    w = gguf.GGUFWriter(path, ARCH)
    w.add_name(f"hearthd tiny qwen35 (random weights, seed {seed})")
    w.add_context_length(hp.n_ctx_train)
    w.add_embedding_length(hp.n_embd)
    w.add_block_count(hp.n_layer)
    w.add_feed_forward_length(hp.n_ff)
    w.add_head_count(hp.n_head)
    w.add_head_count_kv(hp.n_head_kv)
    w.add_key_length(hp.head_dim)
    w.add_value_length(hp.head_dim)
    w.add_rope_dimension_count(hp.n_rot)
    w.add_rope_dimension_sections(list(hp.rope_sections))
    w.add_rope_freq_base(hp.rope_freq_base)
    w.add_layer_norm_rms_eps(hp.rms_eps)
    w.add_full_attention_interval(hp.full_attention_interval)
    w.add_ssm_conv_kernel(hp.ssm_conv_kernel)
    w.add_ssm_state_size(hp.ssm_state_size)
    w.add_ssm_group_count(hp.ssm_group_count)
    w.add_ssm_inner_size(hp.ssm_inner_size)
    w.add_ssm_time_step_rank(hp.ssm_time_step_rank)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)

    for f in tok_fields:
        w.add_key_value(f.key, f.value, f.vtype, f.sub_type)
    w.add_chat_template(chat_template)

    names = gguf.TENSOR_NAMES
    T = gguf.MODEL_TENSOR

    def name(t: gguf.MODEL_TENSOR, bid: int | None = None, suffix: str = ".weight") -> str:
        return names[t].format(bid=bid) + suffix

    # Tied embedding / LM head. std 1/8 gives logits of about unit spread over the 64-dim normalised hidden state.
    embd = normal(n_vocab, hp.n_embd, std=0.125)
    embd_q = gguf.quants.quantize(embd, gguf.GGMLQuantizationType.Q4_0)
    w.add_tensor(name(T.TOKEN_EMBD), embd_q, raw_dtype=gguf.GGMLQuantizationType.Q4_0)
    w.add_tensor(name(T.OUTPUT_NORM), norm(hp.n_embd))

    head_k, head_v = hp.ssm_state_size, hp.ssm_state_size
    key_dim = head_k * hp.ssm_group_count
    value_dim = head_v * hp.ssm_time_step_rank
    conv_dim = 2 * key_dim + value_dim
    for il in range(hp.n_layer):
        w.add_tensor(name(T.ATTN_NORM, il), norm(hp.n_embd))
        w.add_tensor(name(T.ATTN_POST_NORM, il), norm(hp.n_embd))
        if hp.is_recurrent(il):
            n_v = hp.ssm_time_step_rank
            w.add_tensor(name(T.ATTN_QKV, il), linear(conv_dim, hp.n_embd))
            w.add_tensor(name(T.ATTN_GATE, il), linear(value_dim, hp.n_embd))
            conv = normal(conv_dim, hp.ssm_conv_kernel, std=1.0 / np.sqrt(hp.ssm_conv_kernel))
            w.add_tensor(name(T.SSM_CONV1D, il), conv)
            w.add_tensor(name(T.SSM_DT, il, ".bias"), normal(n_v, std=0.5))
            # ssm_a = -exp(A_log), A_log ~ log U(1, 16) as in the reference initialisation
            a = -rng.uniform(1.0, 16.0, size=n_v).astype(np.float32)
            w.add_tensor(name(T.SSM_A, il, ""), a)
            w.add_tensor(name(T.SSM_BETA, il), linear(n_v, hp.n_embd))
            w.add_tensor(name(T.SSM_ALPHA, il), linear(n_v, hp.n_embd))
            w.add_tensor(name(T.SSM_NORM, il), norm(head_v))
            w.add_tensor(name(T.SSM_OUT, il), linear(hp.n_embd, value_dim))
        else:
            q_dim = hp.head_dim * hp.n_head
            kv_dim = hp.head_dim * hp.n_head_kv
            w.add_tensor(name(T.ATTN_Q, il), linear(2 * q_dim, hp.n_embd))  # query and its output gate
            w.add_tensor(name(T.ATTN_K, il), linear(kv_dim, hp.n_embd))
            w.add_tensor(name(T.ATTN_V, il), linear(kv_dim, hp.n_embd))
            w.add_tensor(name(T.ATTN_OUT, il), linear(hp.n_embd, q_dim))
            w.add_tensor(name(T.ATTN_Q_NORM, il), norm(hp.head_dim))
            w.add_tensor(name(T.ATTN_K_NORM, il), norm(hp.head_dim))
        w.add_tensor(name(T.FFN_GATE, il), linear(hp.n_ff, hp.n_embd))
        w.add_tensor(name(T.FFN_UP, il), linear(hp.n_ff, hp.n_embd))
        w.add_tensor(name(T.FFN_DOWN, il), linear(hp.n_embd, hp.n_ff))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
