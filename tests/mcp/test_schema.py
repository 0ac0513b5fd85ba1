"""MCP tool definitions → OpenAI / LiteLLM ``tools``: name rules, empty schemas, reverse map."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

import pytest

from pytest_egi.mcp.schema import (
    OPENAI_NAME_RE,
    McpToolSpec,
    ToolNames,
    openai_name,
    openai_parameters,
    openai_tool,
)


def test_valid_names_are_kept():
    assert openai_name("airbnb_search") == "airbnb_search"
    assert openai_name("getParkDetails") == "getParkDetails"
    assert openai_name("get-teams") == "get-teams"


def test_dots_spaces_and_slashes_become_underscores():
    assert openai_name("ns.dotted") == "ns_dotted"
    assert openai_name("search web pages") == "search_web_pages"
    assert openai_name("fs/read:file") == "fs_read_file"
    assert openai_name("") == "tool"


def test_prefix_uses_double_underscore():
    assert openai_name("calculate", prefix="calculator") == "calculator__calculate"
    assert openai_name("ns.tool", prefix="srv") == "srv__ns_tool"


def test_over_long_names_are_cut_with_a_hash_suffix():
    long = "x" * 70
    mapped = openai_name(long)
    assert mapped == "x" * 55 + "_" + hashlib.sha256(long.encode()).hexdigest()[:8]
    assert len(mapped) == 64 and OPENAI_NAME_RE.match(mapped)
    # two long names sharing their first 55 characters stay distinct
    assert openai_name("y" * 60 + "a" * 10) != openai_name("y" * 60 + "b" * 10)
    assert openai_name("z" * 64) == "z" * 64  # exactly 64 is valid


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (None, {"type": "object", "properties": {}}),
        ({}, {"type": "object", "properties": {}}),
        ({"type": "object"}, {"type": "object", "properties": {}}),
        ({"properties": {"q": {}}}, {"type": "object", "properties": {"q": {}}}),
        (
            {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
            {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        ),
    ],
)
def test_parameters_fill_in_empty_and_missing_schemas(schema, expected):
    assert openai_parameters(schema) == expected


def test_parameters_copy_and_refuse_non_object_schemas():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    out = openai_parameters(schema)
    out["properties"]["a"]["type"] = "string"
    assert schema["properties"]["a"]["type"] == "integer"
    with pytest.raises(ValueError, match="must have type 'object', got 'array'"):
        openai_parameters({"type": "array"})


def test_openai_tool_shape_and_name_check():
    empty = {"type": "object", "properties": {}}
    assert openai_tool("no_args", None, None) == {
        "type": "function",
        "function": {"name": "no_args", "description": "", "parameters": empty},
    }
    with pytest.raises(ValueError, match=r"'ns\.dotted' is not a valid OpenAI function name"):
        openai_tool("ns.dotted", "", {})


def test_spec_from_sdk_objects_of_both_majors_and_dicts():
    v2 = SimpleNamespace(name="a", description=None, input_schema={"type": "object"}, output_schema=None)
    v1 = SimpleNamespace(name="b", description="d", inputSchema={"type": "object", "properties": {}})
    wire = {"name": "c", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}
    assert McpToolSpec.from_sdk(v2) == McpToolSpec("a", "", {"type": "object"}, None)
    assert McpToolSpec.from_sdk(v1) == McpToolSpec("b", "d", {"type": "object", "properties": {}}, None)
    assert McpToolSpec.from_sdk(wire).output_schema == {"type": "object"}
    assert McpToolSpec.from_sdk(wire).to_mcp_dict() == {
        "name": "c",
        "description": "",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object"},
    }


def test_tool_names_map_both_ways_and_keep_listing_order():
    names = ToolNames.build(
        {"srv": [McpToolSpec("ns.dotted"), McpToolSpec("echo", "Echo", {"type": "object"})]}, prefix=False
    )
    assert [t["function"]["name"] for t in names.tools()] == ["ns_dotted", "echo"]
    assert names.to_mcp("ns_dotted") == ("srv", "ns.dotted")
    assert names.to_mcp("ns.dotted") is None
    assert names.to_openai("srv", "ns.dotted") == "ns_dotted"
    with pytest.raises(KeyError, match="no tool 'x' on server 'srv'"):
        names.to_openai("srv", "x")


def test_tool_names_with_several_servers():
    tools = {"finance": [McpToolSpec("calculate")], "calculator": [McpToolSpec("calculate")]}
    with pytest.raises(ValueError, match="'calculate' is listed by both 'finance' and 'calculator'"):
        ToolNames.build(tools)
    names = ToolNames.build(tools, prefix=True)
    assert list(names.by_openai) == ["finance__calculate", "calculator__calculate"]
    assert names.to_mcp("calculator__calculate") == ("calculator", "calculate")


def test_names_that_clash_after_mapping_get_distinct_names():
    names = ToolNames.build({"s": [McpToolSpec("a.b"), McpToolSpec("a_b"), McpToolSpec("a b")]})
    mapped = list(names.by_openai)
    assert mapped[1] == "a_b_" + hashlib.sha256(b"a_b").hexdigest()[:8]
    assert len(set(mapped)) == 3 and all(OPENAI_NAME_RE.match(n) for n in mapped)
    assert [names.to_mcp(n) for n in mapped] == [("s", "a.b"), ("s", "a_b"), ("s", "a b")]
