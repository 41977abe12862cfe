import pytest

from hearthd.agent.parsing import ToolCall, ToolCallParseError, parse_tool_calls


def test_qwen_tool_call_block() -> None:
    text = '<tool_call>\n{"name": "set_alarm", "arguments": {"time": "07:30"}}\n</tool_call>'
    assert parse_tool_calls(text) == [ToolCall("set_alarm", {"time": "07:30"})]


def test_several_blocks_and_unclosed_last_block() -> None:
    text = ('<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>\n'
            '<tool_call>\n{"name": "b", "arguments": {"x": 1}}')
    assert [c.name for c in parse_tool_calls(text)] == ["a", "b"]


def test_fenced_json() -> None:
    text = 'Sure:\n```json\n{"name": "list_alarms", "arguments": {}}\n```'
    assert parse_tool_calls(text) == [ToolCall("list_alarms", {})]


def test_bare_json_and_openai_shape_and_string_arguments() -> None:
    assert parse_tool_calls('{"name": "x", "parameters": {"a": 1}}') == [ToolCall("x", {"a": 1})]
    assert parse_tool_calls('{"function": {"name": "x", "arguments": "{\\"a\\": 2}"}}') == [ToolCall("x", {"a": 2})]
    assert [c.name for c in parse_tool_calls('[{"name": "a"}, {"name": "b"}]')] == ["a", "b"]


def test_thinking_is_stripped() -> None:
    text = '<think>the user wants {"name": "wrong"}</think>\n<tool_call>{"name": "x", "arguments": {}}</tool_call>'
    assert parse_tool_calls(text) == [ToolCall("x", {})]


@pytest.mark.parametrize("text", [
    '<tool_call>\n{"name": "set_alarm", "arguments": {"time": "07:30"}\n</tool_call>',  # missing brace
    '<tool_call>{"arguments": {}}</tool_call>',  # no name
    '<tool_call>{"name": "x", "arguments": [1]}</tool_call>',  # arguments not an object
    '<tool_call>"set_alarm"</tool_call>',
    '```json\n{"name": "x", "arguments": {"a": }\n```',
])
def test_broken_calls_raise(text: str) -> None:
    with pytest.raises(ToolCallParseError):
        parse_tool_calls(text)


@pytest.mark.parametrize("text", ["The capital of France is Paris.", "", "I can't help with that {sorry}."])
def test_no_call(text: str) -> None:
    assert parse_tool_calls(text) == []
