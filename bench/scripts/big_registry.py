#!/usr/bin/env python3
"""Write a project with a large registry of MCP-like tools (descriptions,
input schemas, annotations) for peak-memory measurements:

    python3 bench/scripts/big_registry.py DIR MIB json|toml [mcp|bare|deep]

then `/usr/bin/time -v toolgate check DIR`. Deterministic."""
import json
import os
import sys

out, mib, fmt = sys.argv[1], int(sys.argv[2]), sys.argv[3]
shape = sys.argv[4] if len(sys.argv) > 4 else "mcp"
target = mib * 1024 * 1024
os.makedirs(out, exist_ok=True)


def tool(i):
    if shape == "bare":
        return {"name": f"tool{i}", "group": f"group{i % 1000}"}
    if shape == "deep":
        # many tiny objects: the worst case for a generic value tree
        return {
            "name": f"mcp_s_t{i}",
            "group": "mcp_s",
            "server": "s",
            "input_schema": {"type": "object", "properties": {f"p{k}": {"type": "string"} for k in range(20)}},
        }
    server = f"srv{i % 50}"
    props = {
        f"arg{k}": {
            "type": ["string", "integer", "boolean"][k % 3],
            "description": f"argument {k} of tool {i}: what it is for",
        }
        for k in range(4)
    }
    return {
        "name": f"mcp_{server}_tool{i}",
        "group": f"mcp_{server}",
        "server": server,
        "enabled": i % 7 != 0,
        "admin_only": i % 3 == 0,
        "description": f"Tool {i} reads and writes records of kind {i % 97} for the agent.",
        "input_schema": {
            "type": "object",
            "properties": props,
            "required": ["arg0", "arg1"],
        },
        "annotations": {"readOnlyHint": i % 2 == 0, "idempotentHint": True},
    }


def toml_str(s):
    return json.dumps(s)


def toml_inline(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return toml_str(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_inline(x) for x in v) + "]"
    return "{ " + ", ".join(f"{toml_str(k)} = {toml_inline(x)}" for k, x in v.items()) + " }"


tools = []
size = 0
i = 0
while size < target:
    t = tool(i)
    tools.append(t)
    size += len(json.dumps(t)) + 2
    i += 1

if fmt == "json":
    reg = "registry.json"
    with open(os.path.join(out, reg), "w") as f:
        json.dump({"tool": tools}, f)
else:
    reg = "registry.toml"
    with open(os.path.join(out, reg), "w") as f:
        for t in tools:
            f.write("[[tool]]\n")
            for k, v in t.items():
                f.write(f"{k} = {toml_inline(v)}\n")
            f.write("\n")
with open(os.path.join(out, "toolgate.toml"), "w") as f:
    f.write(f'registry = "{reg}"\npolicies = ["policy.tg"]\n')
with open(os.path.join(out, "policy.tg"), "w") as f:
    f.write("configuration chat {\n  exclude [mcp_srv1_tool1]\n}\n")
print(f"{len(tools)} tools, {os.path.getsize(os.path.join(out, reg))} bytes")
