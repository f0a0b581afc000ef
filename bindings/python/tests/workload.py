"""A generated policy project of N tools (deterministic from the seed), in the
shape of bench/src/lib.rs's workloads: about forty tools a group, a tenth of
the groups remote MCP servers, admin-only and disabled tools, group classes,
exclusions of offered tools, a consumer with a profile. Used by the API tests
(large tables) and by bench/bench.py."""

from __future__ import annotations

import random
from pathlib import Path

CLASSES = ["publicContent", "editorContent", "sourceCode", "internalConfiguration", "systemDiagnostics"]


def write_project(d: Path, tools: int, seed: int = 42) -> list[str]:
    """Write toolgate.toml, registry.toml and policy.tg; return the tool names in registry order."""
    rng = random.Random(seed)
    d.mkdir(parents=True, exist_ok=True)
    groups = max(1, tools // 40)
    names: list[str] = []
    reg: list[str] = []
    policy: list[str] = ["enforcement enforce", "remote-tools visible-to admins"]
    remote_groups = set(range(0, groups, 10))
    for g in range(groups):
        remote = g in remote_groups
        gname = f"mcp_srv{g}" if remote else f"g{g}"
        policy.append(f"group {gname} {{ class {CLASSES[g % len(CLASSES)]} }}")
    for i in range(tools):
        g = i % groups
        remote = g in remote_groups
        gname = f"mcp_srv{g}" if remote else f"g{g}"
        name = f"mcp_srv{g}_tool{i}" if remote else f"tool_{i}"
        names.append(name)
        entry = [f'[[tool]]\nname = "{name}"\ngroup = "{gname}"\ndescription = "Tool {i}."']
        if remote:
            entry.append(f'server = "srv{g}"')
            entry.append(f"enabled = {'true' if rng.random() < 0.8 else 'false'}")
            entry.append("admin_only = false")
        else:
            if rng.random() < 0.05:
                entry.append("admin_only = true")
            if rng.random() < 0.05:
                entry.append("enabled = false")
        reg.append("\n".join(entry))
    allowed = sorted(rng.sample(range(groups), max(1, groups * 2 // 3)))
    group_list = ", ".join(f"mcp_srv{g}" if g in remote_groups else f"g{g}" for g in allowed)
    excluded = rng.sample(names, max(1, tools // 50))
    policy.append("provider cloud { zone externalEu }")
    policy.append(
        "configuration config0 {\n  provider cloud\n  groups [" + group_list + "]\n  exclude ["
        + ", ".join(excluded) + "]\n}"
    )
    profile_groups = ", ".join(
        f"group {'mcp_srv' if g in remote_groups else 'g'}{g}" for g in allowed[: max(1, len(allowed) // 2)]
    )
    policy.append(f"profile p0 {{\n  allow [{profile_groups}]\n}}")
    policy.append("consumer k0 { profile p0 }")
    (d / "registry.toml").write_text("\n\n".join(reg) + "\n")
    (d / "policy.tg").write_text("\n".join(policy) + "\n")
    (d / "toolgate.toml").write_text('registry = "registry.toml"\npolicies = ["policy.tg"]\n')
    return names
