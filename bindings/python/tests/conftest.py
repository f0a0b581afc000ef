from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
CORPUS = Path(os.environ.get("TOOLGATE_CONFORMANCE", REPO / "conformance"))
POLICIES = REPO / "policies"
# What policies/mcp-profiles offers the consumer support-bot, in registry order.
SUPPORT_BOT = [
    "search_help_center",
    "get_help_article",
    "payment.status",
    "mcp_crm_customer-360_lookup",
    "mcp_crm_customer-360_timeline",
    "mcp_crm_customer-360_contacts",
]

sys.path.insert(0, str(HERE))

import json
import shutil
import subprocess
from typing import Callable, Optional

import pytest

import toolgate


def _toolgate_bin() -> Path:
    """The CLI binary: $TOOLGATE_BIN (set by .ci/run), else built here."""
    env = os.environ.get("TOOLGATE_BIN")
    if env:
        p = Path(env)
        assert p.is_file(), f"TOOLGATE_BIN={env} is not a file"
        return p
    subprocess.run(["cargo", "build", "-q", "-p", "toolgate"], cwd=REPO, check=True)
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps"],
            cwd=REPO,
            check=True,
            capture_output=True,
        ).stdout
    )
    p = Path(meta["target_directory"]) / "debug" / "toolgate"
    assert p.is_file(), p
    return p


@pytest.fixture(scope="session")
def toolgate_bin() -> Path:
    return _toolgate_bin()


Compile = Callable[..., toolgate.Table]


@pytest.fixture(scope="session")
def compile_project(toolgate_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Compile:
    """Copy a policy project, optionally edit a file (old -> new text, which
    must occur), compile it with the CLI and load the table."""

    def compile(project: str, file: Optional[str] = None, old: str = "", new: str = "") -> toolgate.Table:
        d = tmp_path_factory.mktemp(project)
        shutil.copytree(POLICIES / project, d, dirs_exist_ok=True)
        if file is not None:
            text = (d / file).read_text()
            assert old in text, (file, old)
            (d / file).write_text(text.replace(old, new))
        out = d / "policy.tgt"
        subprocess.run([str(toolgate_bin), "compile", str(d), "-o", str(out)], check=True)
        return toolgate.Table.load(out)

    return compile
