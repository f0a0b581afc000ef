"""The exceptions of toolgate. Every error is one of these (or a plain
``TypeError``/``OverflowError`` for a mistyped argument): nothing fails
silently, and nothing that fails is ever treated as allowed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Optional

if TYPE_CHECKING:  # pragma: no cover
    from ._native import Decision, Refusal, RunState


#: ``LoadError.code``: the catalogue's load and file codes
#: (``toolgate.codes()["statuses"]``; a test checks this list against it).
# generated: load error codes (UPDATE_HOST_LISTS=1 cargo test -p toolgate-reference --test host_lists)
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
# end generated: load error codes


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


class UnknownConsumerError(ToolgateError, LookupError):
    """A consumer name the policy does not know (no ``consumer`` block binds
    it and the policy does not say ``unknown-consumers admitted``, or a slip
    for a bound one); ``suggestion`` is the bound name it resembles."""

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


class PolicyViolation(ToolgateError):
    """A call the policy refuses: raised by ``Context.check_call``, by a
    raising classify (``raise_for_answer``, ``Table.classify_or_raise``), by
    the LangChain guard when asked to (``raise_on``) and by the governed MCP
    client session. Its subclasses are the two classes of docs/refusals.md,
    ``ConfigurationRefusal`` (stop: a person must change a policy) and
    ``RuntimeRefusal`` (the agent may succeed with a changed request), and
    under them one class per refusal kind, named by the library's catalogue
    (``codes()["refusalKinds"][i]["exception"]``): ``ToolNotInProfile``,
    ``ToolDisabled``, ... They are made from the catalogue when the package
    is imported (``toolgate._errors``); no list of kinds is written here.

    ``refusal`` is the typed refusal (for the model: ``model_text``),
    ``decision`` the gate's decision when the gate refused (the true reason,
    for the host), else ``None`` (a classified gateway answer)."""

    #: The refusal kind this class stands for (``None`` on the bases).
    KIND: "Optional[str]" = None

    def __init__(self, refusal: "Refusal", decision: "Optional[Decision]" = None) -> None:
        super().__init__(refusal.model_text)
        self.refusal = refusal
        self.decision = decision

    @property
    def kind(self) -> str:
        return self.refusal.kind

    @property
    def class_(self) -> str:
        return self.refusal.class_

    @property
    def tool_name(self) -> "Optional[str]":
        return self.refusal.tool

    @property
    def profile(self) -> "Optional[str]":
        return self.refusal.profile

    @property
    def consumer(self) -> "Optional[str]":
        return self.refusal.consumer

    @property
    def configuration(self) -> "Optional[str]":
        return self.refusal.configuration

    @property
    def remediation(self) -> str:
        return self.refusal.remediation

    @property
    def retryable(self) -> bool:
        return self.refusal.retryable

    @property
    def action(self) -> str:
        return self.refusal.action

    @property
    def model_text(self) -> str:
        return self.refusal.model_text

    @property
    def grant_error(self) -> "Optional[str]":
        """Why a grant given did not let the call run (``grantReplayed``,
        ``grantExpired``, ...; ``refusal.detail`` says it in words), else None."""
        return self.refusal.grant_error

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kind={self.kind!r}, tool_name={self.tool_name!r})"


#: The name this exception had before the hierarchy: every refusal is one.
ToolRefused = PolicyViolation


class ConfigurationRefusal(PolicyViolation):
    """A refusal a person must fix (the configuration class): never retryable."""


class RuntimeRefusal(PolicyViolation):
    """A refusal the agent may fix by changing its request (the runtime class)."""


class ApprovalRefusal(PolicyViolation):
    """A call that waits for a person's approval (the approval class): the
    host asks a person (or an approver approves it) and calls again; the
    model must not retry it on its own."""


_CLASS_BASES: "dict[str, type[PolicyViolation]]" = {
    "configuration": ConfigurationRefusal,
    "runtime": RuntimeRefusal,
    "approval": ApprovalRefusal,
}

#: Refusal kind code -> its exception class, made from the catalogue below.
BY_KIND: "dict[str, type[PolicyViolation]]" = {}


def _make_kinds() -> None:
    from ._native import codes

    for k in codes()["refusalKinds"]:
        base = _CLASS_BASES[k["class"]]
        doc = (
            f"The refusal kind ``{k['code']}`` ({k['class']} class, action "
            f"``{k['action']}``): {k['message']}."
        )
        cls = type(k["exception"], (base,), {"__doc__": doc, "KIND": k["code"], "__module__": __name__})
        BY_KIND[k["code"]] = cls
        globals()[k["exception"]] = cls


_make_kinds()


def exception_for(kind: str) -> "type[PolicyViolation]":
    """The exception class of a refusal kind code (``notInProfile`` ->
    ``ToolNotInProfile``); a kind this package does not know (a newer
    library's) is a ``ConfigurationRefusal``, never a success."""
    return BY_KIND.get(kind, ConfigurationRefusal)


def _refused(refusal: "Refusal", decision: "Optional[Decision]" = None) -> PolicyViolation:
    """The exception of a refusal, of its kind's class (used by the native module)."""
    return exception_for(refusal.kind)(refusal, decision)
