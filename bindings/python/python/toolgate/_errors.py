"""The exceptions of toolgate. Every error is one of these (or a plain
``TypeError``/``OverflowError`` for a mistyped argument): nothing fails
silently, and nothing that fails is ever treated as allowed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Optional

if TYPE_CHECKING:  # pragma: no cover
    from ._native import Decision, Refusal, RunState


#: ``LoadError.code``: the catalogue's load and file codes
#: (``toolgate.codes()["statuses"]``; a test checks this list against it).
LoadErrorCode = Literal[
    "notATable",
    "version",
    "truncated",
    "trailingBytes",
    "checksum",
    "corrupt",
    "unsigned",
    "untrustedKey",
    "badSignature",
    "io",
    "notAFile",
    "tooLarge",
]


class ToolgateError(Exception):
    """Base class of every toolgate error."""


class ArgumentError(ToolgateError, ValueError):
    """An argument the runtime cannot use: an unknown role, a tool name that
    is not a str, a live tool whose name breaks the registry's naming rule
    (the runtime's message), or a str that cannot be encoded as UTF-8 (a
    lone surrogate) in any argument."""


class LoadError(ToolgateError):
    """A table (or an input file) that cannot be used. The current table, if
    any, stays in place.

    ``code`` is one of ``notATable``, ``version``, ``truncated``,
    ``trailingBytes``, ``checksum``, ``corrupt`` (the conformance corpus'
    codes), ``unsigned``, ``untrustedKey``, ``badSignature`` (a signature
    was required: ``trusted_keys``), ``io`` (missing, unreadable),
    ``notAFile`` (a directory, a FIFO, a device) or ``tooLarge``.
    """

    def __init__(self, code: "LoadErrorCode", message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class UnknownConfigurationError(ToolgateError, LookupError):
    def __init__(self, message: str, name: str, suggestion: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.name = name
        self.suggestion = suggestion


class UnknownSkillError(ToolgateError, LookupError):
    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.message = message
        self.name = name


class RunStateError(ToolgateError, ValueError):
    """A stored run that cannot be read. ``state`` is the state to use
    instead: it admits no tool (a part of the wrong type refuses with its
    own gate's reason)."""

    def __init__(self, message: str, state: "RunState") -> None:
        super().__init__(message)
        self.message = message
        self.state = state


class ToolRefused(ToolgateError):
    """Raised by ``Context.check_call`` for a refused call: the decision (the
    true reason, for the host) and the typed refusal (for the model)."""

    def __init__(self, decision: "Decision", refusal: "Refusal") -> None:
        super().__init__(refusal.model_text)
        self.decision = decision
        self.refusal = refusal
