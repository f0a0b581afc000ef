"""The codes the package exposes come from the library's catalogue
(``toolgate.codes()``, the runtime's ``host::catalogue``): the gate order,
the reason messages, the stubs' Literal types and the load codes are checked
against it, so that no hand-written copy can drift."""

from __future__ import annotations

import ast
import json
import typing
from pathlib import Path
from typing import Any

import toolgate
from conftest import CORPUS

STUBS = Path(toolgate.__file__).with_name("_native.pyi")
ERROR_STUBS = Path(toolgate.__file__).with_name("_errors.pyi")


def stub_literals() -> dict[str, list[str]]:
    """Every ``Name = Literal[...]`` of the stubs, its strings in order."""
    out: dict[str, list[str]] = {}
    for node in ast.parse(STUBS.read_text()).body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Subscript)
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id == "Literal"
        ):
            target = node.targets[0]
            assert isinstance(target, ast.Name)
            items = node.value.slice
            elts = items.elts if isinstance(items, ast.Tuple) else [items]
            out[target.id] = [e.value for e in elts if isinstance(e, ast.Constant)]
    return out


def test_the_catalogue_is_the_librarys() -> None:
    c = toolgate.codes()
    assert sorted(c) == ["gates", "maxFileBytes", "packed", "refusalKinds", "roles", "statuses"]
    assert [(g["code"], g["number"], g["letter"], g["message"]) for g in c["gates"]] == [
        ("notRegistered", 1, "n", "no tool of this name is registered"),
        ("toolDisabled", 2, "d", "switched off by an administrator"),
        ("requiresAdmin", 3, "a", "only administrators may use it"),
        ("notInProfile", 4, "p", "not in this consumer's access profile"),
        ("configurationGroup", 5, "g", "not among the tools this configuration allows"),
        ("configurationExcluded", 6, "x", "excluded by this configuration"),
        ("trustZone", 7, "z", "its data is more sensitive than this provider may receive"),
    ]
    assert c["roles"] == [
        {"name": "none", "number": 0},
        {"name": "user", "number": 1},
        {"name": "admin", "number": 2},
    ]
    assert c["maxFileBytes"] == toolgate.MAX_FILE_BYTES == 256 << 20
    assert c["packed"] == {"allowed": 1, "observedOnly": 2, "reasonShift": 2, "reasonBits": 3, "needsApproval": 32}
    assert toolgate.codes() == c and toolgate.codes() is not c  # fresh data each call


def test_gate_order_and_messages_are_the_catalogues() -> None:
    gates = toolgate.codes()["gates"]
    assert toolgate.GATE_ORDER == tuple(g["code"] for g in gates)
    assert toolgate.gate_order() == [g["code"] for g in gates]
    for g in gates:
        assert toolgate.reason_message(g["code"]) == g["message"]
    # The corpus' gate list is the same function's output.
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    assert manifest["gates"] == gates


def test_reason_message_refuses_what_is_not_a_gate() -> None:
    import pytest

    for bad in ("nope", "NotRegistered", "\ud800", 3, None):
        with pytest.raises(toolgate.ArgumentError) as e:
            toolgate.reason_message(bad)  # type: ignore[arg-type]
        assert str(e.value) == f"unknown reason {bad!r}"

    class Sneaky(str):
        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return hash("trustZone")

    assert toolgate.reason_message(Sneaky("toolDisabled")) == "switched off by an administrator"


def test_the_stubs_literal_types_are_the_catalogues() -> None:
    c = toolgate.codes()
    lit = stub_literals()
    assert lit["ReasonCode"] == [g["code"] for g in c["gates"]]
    assert lit["RefusalKind"] == [k["code"] for k in c["refusalKinds"]]
    assert sorted(lit["RefusalClass"]) == sorted({k["class"] for k in c["refusalKinds"]})
    assert set(lit["RefusalAction"]) == {k["action"] for k in c["refusalKinds"]}
    assert sorted(lit["Role"]) == sorted(r["name"] for r in c["roles"])
    assert lit["RefusalKind"][-4:] == ["contentPolicy", "policy", "definitionChanged", "approvalRequired"]


def test_load_codes_are_the_catalogues() -> None:
    statuses: list[dict[str, Any]] = toolgate.codes()["statuses"]
    codes = [s["code"] for s in statuses if "code" in s]
    assert list(typing.get_args(toolgate._errors.LoadErrorCode)) == codes
    assert codes == [
        "notATable", "version", "truncated", "trailingBytes", "checksum", "corrupt",
        "unsigned", "untrustedKey", "badSignature", "io", "notAFile", "tooLarge",
    ]


def test_refusal_kinds_agree_with_refusals() -> None:
    kinds = {k["code"]: k for k in toolgate.codes()["refusalKinds"]}
    ctx = toolgate.Table.load(CORPUS / "tables/exclusions.tgt").context("editor-chat", role="user")
    r = ctx.refusal("delete_record")
    assert r is not None
    k = kinds[r.kind]
    assert (r.class_, r.retryable, r.action) == (k["class"], k["retryable"], k["action"])
    assert k["message"] == toolgate.reason_message("configurationExcluded")


def stub_refusal_classes() -> list[tuple[str, str, str]]:
    """``(class, base, KIND)`` of every refusal-kind class of _errors.pyi, in order."""
    out = []
    for node in ast.parse(ERROR_STUBS.read_text()).body:
        if not isinstance(node, ast.ClassDef) or not node.bases:
            continue
        base = node.bases[0]
        if not (isinstance(base, ast.Name) and base.id in ("ConfigurationRefusal", "RuntimeRefusal", "ApprovalRefusal")):
            continue
        kind = None
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == "KIND":
                ann = stmt.annotation
                assert isinstance(ann, ast.Subscript) and isinstance(ann.slice, ast.Constant)
                kind = ann.slice.value
        assert kind is not None, node.name
        out.append((node.name, base.id, kind))
    return out


BASE_OF_CLASS = {"configuration": "ConfigurationRefusal", "runtime": "RuntimeRefusal", "approval": "ApprovalRefusal"}


def test_the_exception_hierarchy_is_the_catalogues() -> None:
    kinds = toolgate.codes()["refusalKinds"]
    expected = [(k["exception"], BASE_OF_CLASS[k["class"]], k["code"]) for k in kinds]
    # The typed stubs name every kind's class, its base and its kind.
    assert stub_refusal_classes() == expected
    assert [e for e, _, _ in expected] == [
        "NotRegistered", "ToolDisabled", "RequiresAdmin", "ToolNotInProfile", "ConfigurationGroup",
        "ConfigurationExcluded", "TrustZone", "ContentPolicyViolation", "PolicyRefused", "DefinitionChanged",
        "ApprovalRequired",
    ]
    # The classes made at import are the catalogue's, exported by the package.
    for name, base, kind in expected:
        cls = getattr(toolgate, name)
        assert name in toolgate.__all__
        assert cls is getattr(toolgate._errors, name) is toolgate.exception_for(kind)
        assert cls.__name__ == name and cls.KIND == kind
        assert cls.__bases__ == (getattr(toolgate, base),)
        assert issubclass(cls, toolgate.PolicyViolation) and issubclass(cls, toolgate.ToolgateError)
    assert toolgate.ConfigurationRefusal.__bases__ == (toolgate.PolicyViolation,)
    assert toolgate.RuntimeRefusal.__bases__ == (toolgate.PolicyViolation,)
    assert toolgate.ApprovalRefusal.__bases__ == (toolgate.PolicyViolation,)
    assert toolgate.PolicyViolation.__bases__ == (toolgate.ToolgateError,)
    assert toolgate.ToolRefused is toolgate.PolicyViolation
    # Exactly these subclasses: no host copy adds or keeps one.
    bases = (toolgate.ConfigurationRefusal, toolgate.RuntimeRefusal, toolgate.ApprovalRefusal)
    made = {c.__name__ for b in bases for c in b.__subclasses__()}
    assert made == {e for e, _, _ in expected}
    # A kind a newer library might add is still a refusal, never success.
    assert toolgate.exception_for("someNewKind") is toolgate.ConfigurationRefusal


def test_the_mcp_contract_is_the_runtimes() -> None:
    assert (toolgate.CODE_UNKNOWN_TOOL, toolgate.CODE_CONFIGURATION_REFUSAL, toolgate.CODE_RUNTIME_REFUSAL) == (
        -32602, -31001, -31002,
    )
    assert toolgate.MCP_REVISION == "2026-07-28"
    assert toolgate.PINNED_MEMBERS == ("title", "description", "inputSchema", "outputSchema", "annotations")
    a = {"name": "x", "description": "d", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}}
    b = json.loads('{"inputSchema": {"properties": {"a": {"type": "string"}}, "type": "object"}, "description": "d", "name": "y", "_meta": {"k": 1}}')
    assert toolgate.definition_digest(a) == toolgate.definition_digest(b) == toolgate.definition_digest(json.dumps(b))
    assert toolgate.definition_digest(dict(a, description="d, and delete everything")) != toolgate.definition_digest(a)
    assert toolgate.registry_name("crm", "customer-360_lookup") == "mcp_crm_customer-360_lookup"
    m = toolgate.NameMap([("crm", ["customer-360_lookup", "eu_lookup"]), ("crm_eu", ["lookup", "bad.name"])])
    assert m.route("mcp_crm_customer-360_lookup") == ("crm", "customer-360_lookup")
    assert m.route("mcp_crm_eu_lookup") is None and "mcp_crm_eu_lookup" not in m
    assert len(m) == 1 and len(m.problems) == 2
    assert toolgate.unknown_tool_error("a\nb") == {"code": -32602, "message": "Unknown tool: a\\u000ab"}
