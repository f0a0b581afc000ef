"""Arguments are read strictly: a str that cannot be encoded as UTF-8 (a
lone surrogate) is an ArgumentError naming the argument in every argument,
never a bare UnicodeEncodeError; a str subclass is read by its value, so it
can never select another tool's decision."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

import toolgate
from conftest import CORPUS

DEMO = CORPUS / "tables/demo.tgt"
EXCLUSIONS = CORPUS / "tables/exclusions.tgt"
BAD = "\ud800"
ENCODE = "('utf-8' codec can't encode character '\\ud800' in position 0: surrogates not allowed)"


def bad_arg(what: str) -> str:
    return f"{what}: a str that is not valid Unicode {ENCODE}"


T = toolgate.Table.load(EXCLUSIONS)
CTX = T.context("editor-chat", role="user")
H = toolgate.TableHandle(T)

CALLS: list[tuple[str, Callable[[], Any], str]] = [
    ("load keys", lambda: toolgate.Table.load(DEMO, trusted_keys=BAD), bad_arg("trusted_keys")),
    ("load path", lambda: toolgate.Table.load(BAD), "table: a path that cannot be encoded ('utf-8' codec can't encode character '\\ud800' in position 0: surrogates not allowed)"),
    ("configuration", lambda: T.context(BAD), bad_arg("configuration")),
    ("role", lambda: T.context("editor-chat", role=BAD), bad_arg("role")),
    ("consumer", lambda: T.context("editor-chat", consumer=BAD), bad_arg("consumer")),
    ("enforcement", lambda: T.context("editor-chat", enforcement=BAD), bad_arg("enforcement")),
    ("run text", lambda: T.context("editor-chat", run=BAD), bad_arg("run")),
    ("handle context", lambda: H.context(BAD), bad_arg("configuration")),
    ("decide", lambda: CTX.decide(BAD), bad_arg("tool name")),
    ("is_allowed", lambda: CTX.is_allowed(BAD), bad_arg("tool name")),
    ("check_call", lambda: CTX.check_call(BAD), bad_arg("tool name")),
    ("refusal", lambda: CTX.refusal(BAD), bad_arg("tool name")),
    ("tool_id", lambda: T.tool_id(BAD), bad_arg("tool name")),
    ("live name", lambda: toolgate.LiveTool(BAD, "editing"), bad_arg("live tool name")),
    ("live group", lambda: toolgate.LiveTool("x", BAD), bad_arg("live tool group")),
    ("live class", lambda: toolgate.LiveTool("x", "editing", class_=BAD), bad_arg("live tool class")),
    ("live json", lambda: toolgate.LiveTool.from_json(BAD), bad_arg("live tool")),
    ("run allowed", lambda: toolgate.RunState([BAD]), bad_arg("allowed_tool_names[0]")),
    ("run excluded", lambda: toolgate.RunState(None, ["a", BAD]), bad_arg("excluded_tool_names[1]")),
    ("run start configuration", lambda: toolgate.RunState.start(T, BAD), bad_arg("configuration")),
    ("run start skills", lambda: toolgate.RunState.start(T, "editor-chat", [BAD]), bad_arg("skills[0]")),
    ("run parse", lambda: toolgate.RunState.parse(BAD), bad_arg("run")),
    ("run from_bytes", lambda: toolgate.RunState.from_bytes(BAD), bad_arg("run")),
    ("classify body", lambda: toolgate.classify(BAD), bad_arg("answer")),
    ("classify origin", lambda: toolgate.classify(b"", origin=BAD), bad_arg("origin")),
    ("classify tool", lambda: toolgate.classify(b"", tool=BAD), bad_arg("tool")),
    ("classify header name", lambda: toolgate.classify(b"", headers={BAD: "x"}), bad_arg("header name")),
    ("classify header value", lambda: toolgate.classify(b"", headers={"x": [BAD]}), bad_arg("header value")),
    ("classify header pair", lambda: toolgate.classify(b"", headers=[("x", BAD)]), bad_arg("header value")),
    ("table classify", lambda: T.classify(b"", origin=BAD), bad_arg("origin")),
    ("envelope", lambda: toolgate.classify_envelope(BAD), bad_arg("answer")),
    ("envelope tool", lambda: toolgate.classify_envelope(b"{}", tool=BAD), bad_arg("tool")),
    ("classify file", lambda: toolgate.classify_file(BAD), "answer: a path that cannot be encoded ('utf-8' codec can't encode character '\\ud800' in position 0: surrogates not allowed)"),
    ("refusal json", lambda: toolgate.Refusal.from_json(BAD), bad_arg("refusal")),
    ("reason message", lambda: toolgate.reason_message(BAD), "unknown reason '\\ud800'"),
]


@pytest.mark.parametrize("call,message", [(c, m) for _, c, m in CALLS], ids=[n for n, _, _ in CALLS])
def test_an_unencodable_str_is_an_argument_error(call: Callable[[], Any], message: str) -> None:
    with pytest.raises(toolgate.ArgumentError) as e:
        call()
    assert not isinstance(e.value, UnicodeError)
    assert str(e.value) == message


def test_a_surrogate_anywhere_in_a_name_is_refused_not_decided() -> None:
    with pytest.raises(toolgate.ArgumentError) as e:
        CTX.decide("delete_record" + BAD)
    assert "position 13" in str(e.value)
    # Valid non-ASCII names decide as usual (not registered here).
    assert CTX.decide("größe_prüfen").reason == "notRegistered"


def test_non_str_arguments_are_argument_errors() -> None:
    with pytest.raises(toolgate.ArgumentError) as e:
        T.context(b"editor-chat")  # type: ignore[arg-type]
    assert str(e.value) == "configuration: expected str, got bytes"
    with pytest.raises(toolgate.ArgumentError) as e:
        toolgate.RunState("abc")  # type: ignore[arg-type]
    assert str(e.value) == "allowed_tool_names: expected a sequence of str, got str"
    with pytest.raises(toolgate.ArgumentError) as e:
        CTX.refusal(42)  # type: ignore[arg-type]
    assert str(e.value) == "refusal: expected a tool name (str), a Decision or a LiveTool, got int"


class Sneaky(str):
    """A str that claims to equal (and hashes as) another name."""

    pretend = ""

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return hash(self.pretend)

    def __str__(self) -> str:
        return self.pretend


def sneaky(value: str, pretend: str) -> str:
    s = Sneaky(value)
    s.pretend = pretend
    return s


def test_a_str_subclass_gets_the_decision_of_its_own_value() -> None:
    # get_page_content is allowed, delete_record excluded in editor-chat.
    assert CTX.decide("get_page_content").allowed and not CTX.decide("delete_record").allowed
    d = CTX.decide(sneaky("get_page_content", "delete_record"))
    assert (d.tool, type(d.tool), d.allowed, d.reason) == ("get_page_content", str, True, None)
    assert d == CTX.decide("get_page_content")
    refused = CTX.decide(sneaky("delete_record", "get_page_content"))
    assert (refused.tool, refused.allowed, refused.reason) == ("delete_record", False, "configurationExcluded")
    assert CTX.is_allowed(sneaky("get_page_content", "delete_record")) is True
    assert CTX.is_allowed(sneaky("delete_record", "get_page_content")) is False
    with pytest.raises(toolgate.ToolRefused) as e:
        CTX.check_call(sneaky("delete_record", "get_page_content"))
    assert e.value.decision.reason == "configurationExcluded"
    r = CTX.refusal(sneaky("delete_record", "get_page_content"))
    assert r is not None and (r.kind, r.tool) == ("configurationExcluded", "delete_record")
    assert CTX.refusal(sneaky("get_page_content", "delete_record")) is None
    assert T.tool_id(sneaky("delete_record", "get_page_content")) == T.tool_id("delete_record") == 20
    # Not a name at all, whatever it claims.
    nothing = CTX.decide(sneaky("no_such_tool", "get_page_content"))
    assert (nothing.tool, nothing.allowed, nothing.reason) == ("no_such_tool", False, "notRegistered")


def test_a_str_subclass_configuration_and_role_are_read_by_value() -> None:
    ctx = T.context(sneaky("editor-chat", "reviewer-chat"), role=sneaky("user", "admin"))
    assert (ctx.configuration, ctx.role) == ("editor-chat", "user")


def test_paths_may_be_any_os_pathlike(tmp_path: Path) -> None:
    f = tmp_path / "t.tgt"
    f.write_bytes(EXCLUSIONS.read_bytes())
    assert toolgate.Table.load(f).digest == T.digest
    with pytest.raises(toolgate.LoadError) as e:
        toolgate.Table.load(tmp_path)
    assert e.value.code == "notAFile"
    assert str(e.value) == f"table {tmp_path}: not a regular file (a directory)"


def test_a_fifo_or_a_device_is_refused_without_blocking(tmp_path: Path) -> None:
    import os
    import signal

    fifo = tmp_path / "fifo.tgt"
    os.mkfifo(fifo)
    # The old reader opened the path first: a FIFO with no writer blocked forever.
    signal.alarm(10)
    try:
        for path, kind in [(fifo, "a FIFO"), (Path("/dev/zero"), "a device")]:
            with pytest.raises(toolgate.LoadError) as e:
                toolgate.Table.load(path)
            assert (e.value.code, str(e.value)) == ("notAFile", f"table {path}: not a regular file ({kind})")
            with pytest.raises(toolgate.LoadError) as e:
                toolgate.classify_file(path)
            assert e.value.code == "notAFile"
            with pytest.raises(toolgate.LoadError) as e:
                H.reload(path)
            assert e.value.code == "notAFile"
    finally:
        signal.alarm(0)
    assert H.current() is T
