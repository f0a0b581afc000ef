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
    gate_order,
    reason_message,
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
    "gate_order",
    "reason_message",
]

#: The gates in their fixed order, as reason codes.
GATE_ORDER: tuple[str, ...] = tuple(gate_order())

__version__ = "0.1.0"
