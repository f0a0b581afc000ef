"""toolgate for Python: load a compiled tool-access table and decide, per
tool, whether an agent is offered it and whether a call may run.

Every answer comes from the Rust runtime (``toolgate-runtime``) through the
native module ``toolgate._native``; this package adds types and errors.

>>> import toolgate
>>> table = toolgate.Table.load("policy.tgt")            # doctest: +SKIP
>>> ctx = table.context("editor-chat", role="user")      # doctest: +SKIP
>>> ctx.decide("delete_record").reason                   # doctest: +SKIP
'configurationExcluded'
"""

from __future__ import annotations

from typing import Any, Optional, Union

from ._errors import (
    ApprovalRefusal,
    ArgumentError,
    ConfigurationRefusal,
    LoadError,
    PolicyViolation,
    RunStateError,
    RuntimeRefusal,
    ToolgateError,
    ToolRefused,
    UnknownConfigurationError,
    UnknownConsumerError,
    UnknownSkillError,
    exception_for,
    _refused,
)

# One exception class per refusal kind, made from the library's catalogue
# when toolgate._errors is imported (tests/test_codes.py checks that this
# list is the catalogue's, in its order).
from ._errors import (
    NotRegistered,
    ToolDisabled,
    RequiresAdmin,
    ToolNotInProfile,
    ConfigurationGroup,
    ConfigurationExcluded,
    TrustZone,
    ContentPolicyViolation,
    PolicyRefused,
    DefinitionChanged,
    ApprovalRequired,
)
from ._toolset import ToolExclusion, ToolSet

from ._native import (
    CODE_APPROVAL_REQUIRED,
    CODE_CONFIGURATION_REFUSAL,
    CODE_RUNTIME_REFUSAL,
    CODE_UNKNOWN_TOOL,
    MAX_FILE_BYTES,
    MCP_REVISION,
    PINNED_MEMBERS,
    Classification,
    Context,
    Decision,
    LiveTool,
    NameMap,
    PageWalk,
    Refusal,
    RunState,
    Table,
    TableHandle,
    classify,
    classify_envelope,
    classify_file,
    codes,
    definition_digest,
    refusal_error,
    registry_name,
    unknown_tool_error,
)

__all__ = [
    "ArgumentError",
    "CODE_CONFIGURATION_REFUSAL",
    "CODE_RUNTIME_REFUSAL",
    "CODE_APPROVAL_REQUIRED",
    "CODE_UNKNOWN_TOOL",
    "Classification",
    "ConfigurationExcluded",
    "ConfigurationGroup",
    "ConfigurationRefusal",
    "ContentPolicyViolation",
    "Context",
    "Decision",
    "DefinitionChanged",
    "ApprovalRequired",
    "GATE_ORDER",
    "LiveTool",
    "LoadError",
    "MAX_FILE_BYTES",
    "MCP_REVISION",
    "NameMap",
    "NotRegistered",
    "PINNED_MEMBERS",
    "PageWalk",
    "PolicyRefused",
    "PolicyViolation",
    "Refusal",
    "RequiresAdmin",
    "RuntimeRefusal",
    "ApprovalRefusal",
    "RunState",
    "RunStateError",
    "Table",
    "TableHandle",
    "ToolDisabled",
    "ToolExclusion",
    "ToolNotInProfile",
    "ToolRefused",
    "ToolSet",
    "TrustZone",
    "ToolgateError",
    "UnknownConfigurationError",
    "UnknownConsumerError",
    "UnknownSkillError",
    "classify",
    "classify_envelope",
    "classify_file",
    "codes",
    "definition_digest",
    "exception_for",
    "gate_order",
    "raise_for_answer",
    "reason_message",
    "refusal_error",
    "registry_name",
    "unknown_tool_error",
]

# Every gate name and message comes from the library's catalogue
# (``codes()``, the runtime's ``host::catalogue``): no copy is written here.
_GATES: tuple[dict[str, Any], ...] = tuple(codes()["gates"])

#: The gates in their fixed order, as reason codes.
GATE_ORDER: tuple[str, ...] = tuple(g["code"] for g in _GATES)

_MESSAGES: dict[str, str] = {g["code"]: g["message"] for g in _GATES}


def gate_order() -> list[str]:
    """The gates in their fixed order, as reason codes (the catalogue's)."""
    return list(GATE_ORDER)


def reason_message(code: str) -> str:
    """The human text of a reason code, as the prompt shows it (the
    catalogue's). An unknown code raises ``ArgumentError``."""
    try:
        # The exact value of a str subclass, never its own __eq__/__hash__.
        return _MESSAGES[str.__str__(code)]
    except (KeyError, TypeError):
        raise ArgumentError(f"unknown reason {code!r}") from None


def raise_for_answer(
    answer: Any,
    *,
    origin: Optional[str] = None,
    http_status: Optional[int] = None,
    tool: Optional[str] = None,
    table: Optional[Table] = None,
    headers: Any = None,
) -> Classification:
    """Classify a gateway answer (or take a ``Classification``) and raise
    for a refusal: the exception of its kind (``ToolNotInProfile``, ...,
    every one a ``PolicyViolation``). Success and a tool failure
    (``isError: true``) are returned, never raised. With ``table``, its
    declared rules for the origin come first (``Table.classify_or_raise``)."""
    if isinstance(answer, Classification):
        c = answer
    else:
        c = classify(answer, origin=origin, http_status=http_status, tool=tool, table=table, headers=headers)
    if c.refusal is not None:
        raise _refused(c.refusal)
    return c


__version__ = "0.1.0"
