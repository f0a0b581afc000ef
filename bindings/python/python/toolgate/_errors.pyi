"""Stubs of toolgate._errors. The refusal classes (from ``ToolNotInProfile``
on) are made from the library's catalogue at import; tests/test_codes.py
checks this list, its bases and kinds against ``codes()["refusalKinds"]``."""

from typing import Literal, Optional

from ._native import Decision, Refusal, RefusalAction, RefusalClass, RefusalKind, RunState

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

class ToolgateError(Exception): ...
class ArgumentError(ToolgateError, ValueError): ...

class LoadError(ToolgateError):
    code: LoadErrorCode
    message: str
    def __init__(self, code: LoadErrorCode, message: str) -> None: ...

class UnknownConfigurationError(ToolgateError, LookupError):
    message: str
    name: str
    suggestion: Optional[str]
    def __init__(self, message: str, name: str, suggestion: Optional[str] = None) -> None: ...

class UnknownConsumerError(ToolgateError, LookupError):
    message: str
    name: str
    suggestion: Optional[str]
    def __init__(self, message: str, name: str, suggestion: Optional[str] = None) -> None: ...

class UnknownSkillError(ToolgateError, LookupError):
    message: str
    name: str
    def __init__(self, message: str, name: str) -> None: ...

class RunStateError(ToolgateError, ValueError):
    message: str
    state: RunState
    def __init__(self, message: str, state: RunState) -> None: ...

class PolicyViolation(ToolgateError):
    KIND: Optional[RefusalKind]
    refusal: Refusal
    decision: Optional[Decision]
    def __init__(self, refusal: Refusal, decision: Optional[Decision] = None) -> None: ...
    @property
    def kind(self) -> RefusalKind: ...
    @property
    def class_(self) -> RefusalClass: ...
    @property
    def tool_name(self) -> Optional[str]: ...
    @property
    def profile(self) -> Optional[str]: ...
    @property
    def consumer(self) -> Optional[str]: ...
    @property
    def configuration(self) -> Optional[str]: ...
    @property
    def remediation(self) -> str: ...
    @property
    def retryable(self) -> bool: ...
    @property
    def action(self) -> RefusalAction: ...
    @property
    def model_text(self) -> str: ...
    @property
    def grant_error(self) -> Optional[str]: ...

ToolRefused = PolicyViolation

class ConfigurationRefusal(PolicyViolation): ...
class RuntimeRefusal(PolicyViolation): ...
class ApprovalRefusal(PolicyViolation): ...

# One class per refusal kind, in the catalogue's order.
# generated: refusal kinds (UPDATE_HOST_LISTS=1 cargo test -p toolgate-reference --test host_lists)
class NotRegistered(ConfigurationRefusal):
    KIND: Literal["notRegistered"]
class ToolDisabled(ConfigurationRefusal):
    KIND: Literal["toolDisabled"]
class RequiresAdmin(ConfigurationRefusal):
    KIND: Literal["requiresAdmin"]
class ToolNotInProfile(ConfigurationRefusal):
    KIND: Literal["notInProfile"]
class ConfigurationGroup(ConfigurationRefusal):
    KIND: Literal["configurationGroup"]
class ConfigurationExcluded(ConfigurationRefusal):
    KIND: Literal["configurationExcluded"]
class TrustZone(ConfigurationRefusal):
    KIND: Literal["trustZone"]
class ContentPolicyViolation(RuntimeRefusal):
    KIND: Literal["contentPolicy"]
class PolicyRefused(ConfigurationRefusal):
    KIND: Literal["policy"]
class DefinitionChanged(ConfigurationRefusal):
    KIND: Literal["definitionChanged"]
class ApprovalRequired(ApprovalRefusal):
    KIND: Literal["approvalRequired"]
# end generated: refusal kinds

BY_KIND: dict[str, type[PolicyViolation]]

def exception_for(kind: str) -> type[PolicyViolation]: ...
def _refused(refusal: Refusal, decision: Optional[Decision] = None) -> PolicyViolation: ...
