"""Type stubs of the native module (PyO3 over toolgate-runtime)."""

import os

from ._toolset import ToolSet
from typing import Any, Iterable, Literal, Mapping, Optional, Sequence, Union, final

# The Literal types below are checked against the library's catalogue
# (codes()) by tests/test_codes.py: gates, refusal kinds, classes, actions, roles.
# generated: types (UPDATE_HOST_LISTS=1 cargo test -p toolgate-reference --test host_lists)
Role = Literal["admin", "user", "none"]
ReasonCode = Literal[
    "notRegistered",
    "toolDisabled",
    "requiresAdmin",
    "notInProfile",
    "configurationGroup",
    "configurationExcluded",
    "trustZone",
]
RefusalClass = Literal["configuration", "runtime", "approval"]
RefusalAction = Literal["stop", "rephrase", "escalate", "askPerson"]
RefusalKind = Literal[
    "notRegistered",
    "toolDisabled",
    "requiresAdmin",
    "notInProfile",
    "configurationGroup",
    "configurationExcluded",
    "trustZone",
    "contentPolicy",
    "policy",
    "definitionChanged",
    "approvalRequired",
]
# end generated: types
Bytes = Union[bytes, bytearray, memoryview]
TableSource = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]"]
StoredRun = Union["RunState", str, bytes]
# HTTP headers of an answer: name to value (or values), or (name, value) pairs.
Headers = Union[Mapping[str, Union[str, Sequence[str]]], Iterable[tuple[str, str]]]

MAX_FILE_BYTES: int

# The MCP contract (the runtime's toolgate_runtime::mcp).
MCP_REVISION: str
CODE_UNKNOWN_TOOL: int
CODE_CONFIGURATION_REFUSAL: int
CODE_RUNTIME_REFUSAL: int
CODE_APPROVAL_REQUIRED: int
PINNED_MEMBERS: tuple[str, ...]

def definition_digest(tool: Union[str, Bytes, Mapping[str, Any]]) -> str:
    """``sha256:`` and 64 hex digits over a tool definition's pinned members
    (title, description, inputSchema, outputSchema, annotations)."""
def unknown_tool_error(name: str) -> dict[str, Any]:
    """``{"code": -32602, "message": "Unknown tool: NAME"}`` (the name escaped)."""
def refusal_error(
    refusal: Refusal,
    *,
    decision_id: Optional[str] = None,
    table_digest: Optional[str] = None,
    stealth: bool = False,
) -> dict[str, Any]:
    """The JSON-RPC error object of a refused call: ``code`` (-32602 for
    notRegistered and in stealth mode, -31001 configuration, -31002
    runtime), ``message``, ``data`` (``toolgate``: the refusal; absent in
    stealth mode)."""
def registry_name(server: str, name: str) -> str:
    """``mcp_SERVER_NAME``: the registry name of server ``server``'s tool ``name``."""

@final
class NameMap:
    def __init__(
        self, listed: Union[Mapping[str, Sequence[str]], Iterable[tuple[str, Sequence[str]]]]
    ) -> None:
        """Raises ArgumentError for a server name that breaks MCP's naming rule."""
    def route(self, registry_name: str) -> Optional[tuple[str, str]]:
        """``(server, the server's own name)``, or None."""
    @property
    def problems(self) -> list[str]: ...
    def __len__(self) -> int: ...
    def __contains__(self, registry_name: object) -> bool: ...

@final
class PageWalk:
    """The walk through a peer's pages of one list (the runtime's
    ``page_walk``): at most ``max_pages`` pages and ``max_items`` items, no
    cursor twice."""
    def __init__(self, max_pages: int, max_items: int) -> None: ...
    def next(self, items: int, next_cursor: Optional[str]) -> Optional[str]:
        """The cursor to ask the next page with, None when the list is whole;
        raises ValueError saying why the walk stops."""
    @property
    def pages(self) -> int: ...
    @property
    def items(self) -> int: ...

def codes() -> dict[str, Any]:
    """Every code of the library, as data (the runtime's catalogue): ``gates``
    (``code``, ``number``, ``letter``, ``message``, in gate order),
    ``refusalKinds`` (``code``, ``class``, ``retryable``, ``action``,
    ``message``), ``roles`` (``name``, ``number``), ``statuses`` (``name``,
    ``number``, ``code`` for load and file errors), ``packed``, ``maxFileBytes``."""

@final
class Table:
    @staticmethod
    def load(source: TableSource, *, trusted_keys: Optional[str] = None) -> Table:
        """Load from bytes, or from a file path (str or os.PathLike; a regular
        file under MAX_FILE_BYTES). Raises LoadError.

        With ``trusted_keys`` (one or more PEM public keys), the table must be
        signed by one of them (LoadError ``unsigned``, ``untrustedKey``,
        ``badSignature``); keys that are not Ed25519 public keys raise ArgumentError.
        """
    def context(
        self,
        configuration: str,
        *,
        role: Role = "none",
        consumer: Optional[str] = None,
        run: Optional[StoredRun] = None,
        enforcement: Optional[str] = None,
    ) -> Context:
        """Raises UnknownConfigurationError, ArgumentError, RunStateError (a stored form that cannot be read)."""
    @property
    def digest(self) -> str: ...
    @property
    def verified_by(self) -> Optional[str]:
        """The id of the key the table was verified with (loaded with ``trusted_keys``)."""
    @property
    def tools(self) -> list[str]: ...
    @property
    def configurations(self) -> list[str]: ...
    @property
    def consumers(self) -> list[str]: ...
    @property
    def skills(self) -> list[str]: ...
    @property
    def skill_loader(self) -> str: ...
    def __len__(self) -> int: ...
    def tool_id(self, name: str) -> Optional[int]: ...
    def tool_name(self, id: int) -> str: ...
    def policy(self) -> dict[str, object]: ...
    def classify(
        self,
        answer: Union[Bytes, str],
        *,
        origin: Optional[str] = None,
        http_status: Optional[int] = None,
        tool: Optional[str] = None,
        headers: Optional[Headers] = None,
    ) -> Classification: ...
    def classify_or_raise(
        self,
        answer: Union[Bytes, str],
        *,
        origin: Optional[str] = None,
        http_status: Optional[int] = None,
        tool: Optional[str] = None,
        headers: Optional[Headers] = None,
    ) -> Classification:
        """``classify``, raising the refusal kind's ``PolicyViolation`` for a
        refusal; success and a tool failure are returned."""

@final
class Context:
    def decide(self, name: str) -> Decision:
        """Decided on the exact value of ``name`` (a str subclass's own
        ``__eq__``/``__hash__`` are never used). A str that is not valid
        Unicode raises ArgumentError."""
    def is_allowed(self, name: str) -> bool: ...
    def approval_request(
        self, name: str, arguments: Optional[dict[str, Any]] = None, request_id: str = ""
    ) -> dict[str, Any]:
        """What a person is asked to approve for a call of ``name`` with
        ``arguments``: ``tool``, ``argumentsDigest``, ``configuration``,
        ``consumer``, ``role``, ``tableDigest``, ``requestId``. An approver
        signs it (``toolgate approve REQUEST.json``); the grant lets this
        very call run once through ``check_call``."""
    def check_call(
        self,
        name: str,
        arguments: Optional[dict[str, Any]] = None,
        *,
        grant: Union[str, Bytes, None] = None,
        approver_keys: Optional[str] = None,
        now: Optional[int] = None,
    ) -> Decision:
        """The decision when the call may run; otherwise raises the refusal
        kind's exception (``ToolNotInProfile``, ..., a ``PolicyViolation``).
        A tool a person approves call by call runs only with ``grant``, the
        signed grant's JSON of this very call (``arguments``), signed by one
        of ``approver_keys`` (PEM), unexpired at ``now`` (Unix seconds; None
        or 0: the system clock), unused in this process; otherwise
        ``ApprovalRequired``, its ``refusal.grant_error`` naming why a grant
        given did not fit (None without one)."""
    def tool_set(self, *, audience: Literal["host", "model"] = "host") -> ToolSet:
        """The runtime's ``Context::tool_set``: offered, excluded (with
        ``name_visible``; the model form leaves hidden names out), cost."""
    def decide_live(self, tool: LiveTool) -> Decision: ...
    def refusal(self, target: Union[str, Decision, LiveTool]) -> Optional[Refusal]:
        """None when allowed. A hidden remote name (table or live tool) is
        refused word for word as an unregistered name."""
    def decisions(self) -> list[Decision]: ...
    def offered(self) -> list[str]: ...
    def offered_count(self) -> int: ...
    def unavailable(self, live: Optional[Sequence[LiveTool]] = None) -> list[tuple[str, ReasonCode]]: ...
    def unavailable_ids_list(self) -> list[tuple[int, ReasonCode]]: ...
    def unavailable_count(self) -> int: ...
    def unavailable_prompt(self, live: Optional[Sequence[LiveTool]] = None) -> str:
        """The system-prompt section over the table's tools, then ``live`` ("" when none is refused)."""
    @property
    def table(self) -> Table: ...
    @property
    def configuration(self) -> str: ...
    @property
    def role(self) -> Role: ...
    @property
    def consumer(self) -> Optional[str]: ...
    @property
    def profile(self) -> Optional[str]: ...
    @property
    def mode(self) -> Literal["observe", "enforce"]: ...

@final
class Decision:
    @property
    def tool(self) -> str: ...
    @property
    def allowed(self) -> bool: ...
    @property
    def reason(self) -> Optional[ReasonCode]: ...
    @property
    def observed_only(self) -> bool: ...
    @property
    def needs_approval(self) -> bool: ...
    @property
    def class_(self) -> Optional[str]: ...
    @property
    def zone(self) -> Optional[str]: ...
    @property
    def ceiling(self) -> Optional[str]: ...
    @property
    def hidden(self) -> bool:
        """A refused remote tool whose name this user may not see (refused as unregistered)."""
    def to_dict(self) -> dict[str, object]: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Refusal:
    @property
    def kind(self) -> RefusalKind: ...
    @property
    def class_(self) -> RefusalClass: ...
    @property
    def retryable(self) -> bool: ...
    @property
    def action(self) -> RefusalAction: ...
    @property
    def tool(self) -> Optional[str]: ...
    @property
    def profile(self) -> Optional[str]: ...
    @property
    def consumer(self) -> Optional[str]: ...
    @property
    def configuration(self) -> Optional[str]: ...
    @property
    def file(self) -> Optional[str]: ...
    @property
    def policy(self) -> Optional[str]: ...
    @property
    def origin(self) -> Optional[str]: ...
    @property
    def rule(self) -> Optional[str]: ...
    @property
    def detail(self) -> Optional[str]: ...
    @property
    def grant_error(self) -> Optional[str]:
        """For ``approvalRequired`` with a grant that did not let the call
        run: its code (``grantReplayed``, ``grantExpired``, ...); else None."""
    @property
    def model_text(self) -> str: ...
    @property
    def remediation(self) -> str: ...
    def to_dict(self) -> dict[str, object]: ...
    def to_json(self) -> str: ...
    @staticmethod
    def from_json(text: Union[str, Bytes]) -> Refusal: ...
    @staticmethod
    def of_kind(
        kind: RefusalKind,
        *,
        tool: Optional[str] = None,
        profile: Optional[str] = None,
        consumer: Optional[str] = None,
        configuration: Optional[str] = None,
        origin: Optional[str] = None,
        detail: Optional[str] = None,
    ) -> Refusal:
        """The runtime's refusal of ``kind`` (class, action, texts its own)."""
    def __eq__(self, other: object) -> bool: ...

@final
class Classification:
    @property
    def outcome(self) -> Literal["success", "toolFailure", "refusal"]: ...
    @property
    def text(self) -> Optional[str]: ...
    @property
    def refusal(self) -> Optional[Refusal]: ...
    def to_dict(self) -> dict[str, object]: ...

@final
class RunState:
    def __init__(
        self,
        allowed_tool_names: Optional[Sequence[str]] = None,
        excluded_tool_names: Sequence[str] = (),
    ) -> None: ...
    @staticmethod
    def start(table: Table, configuration: str, skills: Sequence[str] = ()) -> RunState: ...
    @staticmethod
    def parse(data: Union[str, Bytes]) -> RunState:
        """Strict; raises RunStateError (its .state admits nothing)."""
    @staticmethod
    def from_bytes(data: Union[str, Bytes]) -> RunState: ...
    @staticmethod
    def unreadable() -> RunState: ...
    def resume(self, live: RunState) -> RunState: ...
    def to_json(self) -> str: ...
    @property
    def is_readable(self) -> bool: ...
    @property
    def allowed_tool_names(self) -> Union[None, list[str], Literal[False]]: ...
    @property
    def excluded_tool_names(self) -> Union[list[str], Literal[False]]: ...
    def __eq__(self, other: object) -> bool: ...

@final
class LiveTool:
    def __init__(
        self,
        name: str,
        group: str,
        *,
        remote: bool = False,
        enabled: bool = True,
        admin_only: bool = False,
        class_: Optional[str] = None,
    ) -> None:
        """Raises ArgumentError (the runtime's message) for a name or group
        that breaks the registry's naming rule (remote: ``[a-zA-Z0-9_-]{1,64}``)."""
    @staticmethod
    def from_json(text: Union[str, Bytes]) -> LiveTool:
        """From ``{"name", "group", "remote", "enabled", "adminOnly", "class"}``; raises ArgumentError."""
    @property
    def name(self) -> str: ...
    @property
    def group(self) -> str: ...
    @property
    def remote(self) -> bool: ...
    @property
    def enabled(self) -> bool: ...
    @property
    def admin_only(self) -> bool: ...
    @property
    def class_(self) -> Optional[str]: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class TableHandle:
    def __init__(self, table: Table, *, trusted_keys: Optional[str] = None) -> None:
        """With ``trusted_keys``, ``table`` and every table ``swap`` or
        ``reload`` puts in place must be verified by one of them (LoadError
        ``unsigned``, ``untrustedKey``, ``badSignature``)."""
    def current(self) -> Table: ...
    def swap(self, table: Table) -> Table: ...
    def reload(self, data: TableSource) -> Table: ...
    @property
    def trusted_key_ids(self) -> Optional[list[str]]: ...
    def context(
        self,
        configuration: str,
        *,
        role: Role = "none",
        consumer: Optional[str] = None,
        run: Optional[StoredRun] = None,
        enforcement: Optional[str] = None,
    ) -> Context: ...

def classify(
    answer: Union[Bytes, str],
    *,
    origin: Optional[str] = None,
    http_status: Optional[int] = None,
    tool: Optional[str] = None,
    table: Optional[Table] = None,
    headers: Optional[Headers] = None,
) -> Classification: ...
def classify_envelope(
    data: Union[Bytes, str],
    *,
    origin: Optional[str] = None,
    http_status: Optional[int] = None,
    tool: Optional[str] = None,
    table: Optional[Table] = None,
    headers: Optional[Headers] = None,
) -> Classification: ...
def classify_file(
    path: Union[str, "os.PathLike[str]"],
    *,
    origin: Optional[str] = None,
    http_status: Optional[int] = None,
    tool: Optional[str] = None,
    table: Optional[Table] = None,
    headers: Optional[Headers] = None,
) -> Classification: ...
