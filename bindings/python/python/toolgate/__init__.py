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

from ._errors import (
    ArgumentError,
    LoadError,
    RunStateError,
    ToolgateError,
    ToolRefused,
    UnknownConfigurationError,
    UnknownSkillError,
)
from typing import Any

from ._native import (
    MAX_FILE_BYTES,
    Classification,
    Context,
    Decision,
    LiveTool,
    Refusal,
    RunState,
    Table,
    TableHandle,
    classify,
    classify_envelope,
    classify_file,
    codes,
)

__all__ = [
    "ArgumentError",
    "Classification",
    "Context",
    "Decision",
    "GATE_ORDER",
    "LiveTool",
    "LoadError",
    "MAX_FILE_BYTES",
    "Refusal",
    "RunState",
    "RunStateError",
    "Table",
    "TableHandle",
    "ToolRefused",
    "ToolgateError",
    "UnknownConfigurationError",
    "UnknownSkillError",
    "classify",
    "classify_envelope",
    "classify_file",
    "codes",
    "gate_order",
    "reason_message",
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


__version__ = "0.1.0"
