"""The Python host: every case of the conformance corpus (conformance/,
replayed as tests/conformance.rs, bindings/c and bindings/php replay it)
through the package's public API, and the plain-Python gate
(tests/plain_gate.py) on every context case it models."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Optional

import pytest

import toolgate
from conftest import CORPUS
from plain_gate import PlainGate

MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
assert MANIFEST["format"] == "toolgate-conformance/1"

# The reason letters of compact decisions, from the library's catalogue
# (the manifest's gates are the same list: tests/test_codes.py).
LETTERS = {g["code"]: g["letter"] for g in toolgate.codes()["gates"]}


def _cases() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for suite in MANIFEST["suites"]:
        data = json.loads((CORPUS / suite["path"]).read_text())
        assert data["format"] == "toolgate-conformance/1"
        assert len(data["cases"]) == suite["cases"], suite["path"]
        out.extend((suite["path"], c) for c in data["cases"])
    return out


CASES = _cases()


@lru_cache(maxsize=None)
def table(rel: str) -> toolgate.Table:
    return toolgate.Table.load(CORPUS / rel)


@lru_cache(maxsize=None)
def plain(rel: str) -> PlainGate:
    return PlainGate(table(rel).policy())


def letter(d: toolgate.Decision) -> str:
    if d.allowed and d.needs_approval:
        return "B" if d.observed_only else "A"
    if d.allowed:
        return "O" if d.observed_only else "Y"
    assert d.reason is not None
    return LETTERS[d.reason]


def refusal_dict(r: Optional[toolgate.Refusal]) -> Optional[dict[str, Any]]:
    return None if r is None else r.to_dict()


def pairs(items: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"tool": t, "reason": r} for t, r in items]


def live_tool(x: dict[str, Any]) -> toolgate.LiveTool:
    """A live tool from its corpus object, through the constructor."""
    return toolgate.LiveTool(
        x["name"],
        x["group"],
        remote=x["remote"],
        enabled=x["enabled"],
        admin_only=x["adminOnly"],
        class_=x["class"],
    )


def rejected(x: dict[str, Any]) -> str:
    """The message of a live tool the runtime refuses to make: the
    constructor and ``LiveTool.from_json`` both raise it."""
    with pytest.raises(toolgate.ArgumentError) as by_args:
        live_tool(x)
    with pytest.raises(toolgate.ArgumentError) as by_json:
        toolgate.LiveTool.from_json(json.dumps(x))
    assert str(by_json.value) == str(by_args.value)
    return str(by_args.value)


def expect_context(case: dict[str, Any]) -> dict[str, Any]:
    t = table(case["table"])
    c = case["context"]
    run = None if c["run"] is None else toolgate.RunState.from_bytes(c["run"])
    try:
        ctx = t.context(
            c["configuration"],
            role=c["role"],
            consumer=c["consumer"],
            run=run,
            enforcement=c["enforcement"],
        )
    except toolgate.UnknownConfigurationError as e:
        return {"error": {"code": "unknownConfiguration", "message": str(e)}}
    except toolgate.UnknownConsumerError as e:
        return {"error": {"code": "unknownConsumer", "message": str(e)}}
    e: dict[str, Any] = {}
    e["decisionsById"] = "".join(letter(d) for d in ctx.decisions())
    e["decisions"] = [ctx.decide(n).to_dict() for n in case.get("decide", [])]
    e["refusals"] = [refusal_dict(ctx.refusal(n)) for n in case.get("refuse", [])]
    live = [live_tool(x) for x in case.get("live", [])]
    answers = []
    for tool in live:
        d = ctx.decide_live(tool)
        a: dict[str, Any] = {"allowed": d.allowed, "reason": d.reason, "observedOnly": d.observed_only}
        if case.get("refuseLive"):
            a["refusal"] = refusal_dict(ctx.refusal(d))
            # The live tool itself gives the same refusal as its decision.
            assert refusal_dict(ctx.refusal(tool)) == a["refusal"]
        answers.append(a)
    e["live"] = answers
    if "liveRejected" in case:
        e["liveRejected"] = [rejected(x) for x in case["liveRejected"]]
    compact = case.get("compact") is True
    if live:
        with_live = pairs(ctx.unavailable(live))
        if compact:
            e["unavailableWithLiveTail"] = with_live[ctx.unavailable_count():]
        else:
            e["unavailableWithLive"] = with_live
            e["promptWithLive"] = ctx.unavailable_prompt(live=live)
    if compact:
        marks = ["."] * len(t)
        for i, r in ctx.unavailable_ids_list():
            marks[i] = LETTERS[r]
        e["unavailableById"] = "".join(marks)
    else:
        e["offered"] = ctx.offered()
        e["unavailable"] = pairs(ctx.unavailable())
        e["prompt"] = ctx.unavailable_prompt()
    return e


def expect_call_granted(case: dict[str, Any]) -> dict[str, Any]:
    """Calls checked with grants, in order, in this process's ledger of used
    grants (each case's grant ids are its own)."""
    c = case["context"]
    ctx = table(case["table"]).context(
        c["configuration"], role=c["role"], consumer=c["consumer"], enforcement=c["enforcement"]
    )
    calls = []
    for call in case["calls"]:
        arguments = None if call["argumentsJson"] is None else json.loads(call["argumentsJson"])
        request = ctx.approval_request(call["tool"], arguments, "request-1")
        try:
            d = ctx.check_call(
                call["tool"],
                arguments,
                grant=call["grant"],
                approver_keys=call["approverKeys"],
                now=call["now"],
            )
            calls.append({"decision": d.to_dict(), "refusal": None, "approvalRequest": request})
        except toolgate.PolicyViolation as e:
            assert type(e) is toolgate.exception_for(e.refusal.kind)
            assert e.grant_error == e.refusal.grant_error == e.refusal.to_dict().get("grantError")
            assert e.decision is not None
            calls.append({"decision": e.decision.to_dict(), "refusal": e.refusal.to_dict(), "approvalRequest": request})
    return {"calls": calls}


def expect(case: dict[str, Any]) -> dict[str, Any]:
    kind = case["kind"]
    if kind == "load":
        source = CORPUS / case["table"] if "table" in case else bytes.fromhex(case["bytesHex"])
        try:
            t = toolgate.Table.load(source)
        except toolgate.LoadError as e:
            return {"ok": False, "error": e.code, "message": str(e)}
        return {"ok": True, "digest": t.digest, "tools": t.tools, "configurations": t.configurations}
    if kind == "context":
        return expect_context(case)
    if kind == "classify":
        a = case["answer"]
        body = bytes.fromhex(a["bodyHex"]) if "bodyHex" in a else a["body"].encode()
        t = None if case["table"] is None else table(case["table"])
        return toolgate.classify(
            body, origin=a.get("origin"), http_status=a.get("httpStatus"), tool=a.get("tool"), table=t
        ).to_dict()
    if kind == "callGranted":
        return expect_call_granted(case)
    if kind == "runStart":
        try:
            r = toolgate.RunState.start(table(case["table"]), case["configuration"], case["skills"])
        except toolgate.UnknownConfigurationError as e:
            return {"ok": False, "error": "unknownConfiguration", "message": str(e)}
        except toolgate.UnknownSkillError as e:
            return {"ok": False, "error": "unknownSkill", "message": str(e)}
        return {"ok": True, "run": r.to_json()}
    if kind == "runRead":
        return {"run": toolgate.RunState.from_bytes(case["stored"]).to_json()}
    if kind == "runResume":
        stored = toolgate.RunState.from_bytes(case["stored"])
        live = toolgate.RunState.from_bytes(case["live"])
        return {"run": stored.resume(live).to_json()}
    raise AssertionError(f"unknown case kind {kind!r}")


def test_the_corpus_is_whole() -> None:
    assert len(CASES) == sum(s["cases"] for s in MANIFEST["suites"]) == 3875
    kinds = {c["kind"] for _, c in CASES}
    assert kinds == {"load", "context", "classify", "runStart", "runRead", "runResume", "callGranted"}


@pytest.mark.parametrize("suite,case", CASES, ids=[c["id"] for _, c in CASES])
def test_case(suite: str, case: dict[str, Any]) -> None:
    assert expect(case) == case["expect"]


CONTEXT_CASES = [
    c for _, c in CASES if c["kind"] == "context" and "error" not in c["expect"]
]


@pytest.mark.parametrize("case", CONTEXT_CASES, ids=[c["id"] for c in CONTEXT_CASES])
def test_plain_python_gate_agrees(case: dict[str, Any]) -> None:
    t = table(case["table"])
    gate = plain(case["table"])
    x = case["context"]
    run = None
    if x["run"] is not None:
        # The stored run as the runtime normalises it (False = unreadable).
        run = json.loads(toolgate.RunState.from_bytes(x["run"]).to_json())
    args = (x["configuration"], x["role"], x["consumer"], run, x["enforcement"])
    by_id = ""
    for name in t.tools:
        allowed, reason, observed = gate.decide(name, *args)
        approval = allowed and gate.needs_approval(name, x["configuration"], x["consumer"])
        by_id += (("B" if observed else "A") if approval else ("O" if observed else "Y")) if allowed else LETTERS[reason]  # type: ignore[index]
    e = case["expect"]
    assert by_id == e["decisionsById"]
    listed = gate.unavailable(*args)
    if "unavailable" in e:
        assert pairs(listed) == e["unavailable"]
    else:
        marks = ["."] * len(t)
        for name, reason in listed:
            marks[t.tool_id(name)] = LETTERS[reason]  # type: ignore[index]
        assert "".join(marks) == e["unavailableById"]
