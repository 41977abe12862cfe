"""The two call syntaxes without a model: grammars made from every schema compile, and what they allow parses
back to typed, valid arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from llama_cpp import LlamaGrammar

from hearthd.agent.dialect import JsonDialect, XmlDialect, typed_arguments
from hearthd.agent.parsing import ToolCall, ToolCallParseError, parse_tool_calls
from hearthd.config import ConfigError, load_config
from hearthd.evaluation.evaluate import load_catalogue
from hearthd.tools.registry import SchemaError, Tool, ToolRegistry

CATALOGUE = Path(__file__).resolve().parent / "data" / "commands" / "tools.yaml"


async def _never(args: dict[str, Any]) -> Any:
    raise AssertionError("not run")


THERMOSTAT = Tool("set_climate", "Set a thermostat.", {
    "type": "object",
    "properties": {
        "device": {"type": "string", "minLength": 1, "maxLength": 60},
        "temperature": {"type": "number", "minimum": 5, "maximum": 35},
        "mode": {"type": "string", "enum": ["heat", "cool", "auto"]},
        "at": {"type": "string", "pattern": r"^([01]\d|2[0-3]):[0-5]\d$"},
        "eco": {"type": "boolean"},
        "rooms": {"type": "array", "items": {"type": "string"}},
        "hold": {"type": "integer"},
    },
    "required": ["device", "temperature"],
    "additionalProperties": False,
}, _never)


@pytest.mark.parametrize("dialect", [JsonDialect(), XmlDialect()], ids=["json", "xml"])
def test_every_declared_schema_gives_a_grammar_llama_cpp_accepts(dialect) -> None:  # type: ignore[no-untyped-def]
    registry = load_catalogue(CATALOGUE)
    for tool in [*registry, THERMOSTAT]:
        text = dialect.grammar(tool)
        assert LlamaGrammar.from_string(text, verbose=False) is not None, tool.name


def test_the_xml_grammar_makes_required_parameters_mandatory_and_ends_the_function() -> None:
    text = XmlDialect().grammar(THERMOSTAT)
    root = next(line for line in text.splitlines() if line.startswith("root ::="))
    assert root.index("device") < root.index("temperature")  # required first, in declared order
    assert root.endswith('"</function>"')
    assert '"<parameter=device>\\n"' in text and '"\\n</parameter>\\n"' in text
    assert "[^\\n]{1,60}" in text  # one line of text: it cannot hold "\n</parameter>"
    assert '"heat" | "cool" | "auto"' in text


def test_an_xml_call_parses_back_to_typed_valid_arguments() -> None:
    raw = ("<tool_call>\n<function=set_climate>\n<parameter=device>\nLiving room\n</parameter>\n"
           "<parameter=temperature>\n21.5\n</parameter>\n<parameter=mode>\nheat\n</parameter>\n"
           "<parameter=eco>\ntrue\n</parameter>\n<parameter=rooms>\n[\"hall\", \"kitchen\"]\n</parameter>\n"
           "<parameter=hold>\n2\n</parameter>\n</function>\n</tool_call>")
    (call,) = parse_tool_calls(raw)
    assert call.textual and call.name == "set_climate"
    args = typed_arguments(call.arguments, THERMOSTAT.parameters)
    assert args == {"device": "Living room", "temperature": 21.5, "mode": "heat", "eco": True,
                    "rooms": ["hall", "kitchen"], "hold": 2}
    ToolRegistry([THERMOSTAT]).validate("set_climate", args)


def test_xml_text_that_does_not_fit_its_type_stays_text_and_fails_validation() -> None:
    args = typed_arguments({"temperature": "warm", "device": "123"}, THERMOSTAT.parameters)
    assert args == {"temperature": "warm", "device": "123"}  # a string property keeps digits as text
    with pytest.raises(SchemaError):  # a HearthdError, no longer a ValueError
        ToolRegistry([THERMOSTAT]).validate("set_climate", args)


def test_two_xml_calls_and_the_xml_form_without_its_wrapper() -> None:
    raw = ("<tool_call>\n<function=a>\n</function>\n</tool_call>\n"
           "<tool_call>\n<function=b>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>")
    assert parse_tool_calls(raw) == [ToolCall("a", {}), ToolCall("b", {"x": "1"})]
    assert parse_tool_calls("<function=list_alarms>\n</function>") == [ToolCall("list_alarms", {})]
    assert parse_tool_calls("<think>\nthe user wants\n</think>\n\n<tool_call>\n<function=a>\n</function>"
                            "\n</tool_call>") == [ToolCall("a", {})]


@pytest.mark.parametrize("raw", ["<tool_call>\n<function=>\n</function>\n</tool_call>",
                                 "<tool_call>\n<functio=x>\n</tool_call>"])
def test_a_broken_xml_call_is_a_parse_error_not_a_call(raw: str) -> None:
    with pytest.raises(ToolCallParseError):
        parse_tool_calls(raw)


@pytest.mark.parametrize("dialect", [JsonDialect(), XmlDialect()], ids=["json", "xml"])
def test_arguments_written_by_code_read_back_the_same(dialect) -> None:  # type: ignore[no-untyped-def]
    args = {"device": "Кухня", "temperature": 20, "rooms": ["a"]}
    (call,) = parse_tool_calls(dialect.call_text("set_climate", dialect.arguments_text(args)))
    got = typed_arguments(call.arguments, THERMOSTAT.parameters) if call.textual else call.arguments
    assert (call.name, got) == ("set_climate", args)


def test_the_name_pieces_end_where_the_name_surely_has() -> None:
    assert JsonDialect().name_pieces("set_alarm") == ["set_alarm", '"']
    assert XmlDialect().name_pieces("set_alarm") == ["=set_alarm>\n"]
    assert XmlDialect().prefill.endswith("<function") and JsonDialect().prefill.endswith('{"name": "')


@pytest.mark.parametrize(("value", "budget"), [('"off"', 0), ('"OFF"', 0), ("128", 128), ('"64"', 64)])
def test_thinking_is_off_or_a_token_budget(tmp_path: Path, value: str, budget: int) -> None:
    file = tmp_path / "c.toml"
    file.write_text(f"[agent]\nthinking = {value}\n")
    assert load_config(file, environ={}).agent.thinking_budget == budget


@pytest.mark.parametrize("value", ['"lots"', "0", "-3", "99999", "true"])
def test_a_bad_thinking_value_names_its_key(tmp_path: Path, value: str) -> None:
    file = tmp_path / "c.toml"
    file.write_text(f"[agent]\nthinking = {value}\n")
    with pytest.raises(ConfigError) as e:
        load_config(file, environ={})
    assert "agent.thinking" in str(e.value)
