"""LangChain / LangGraph adapter (extra ``toolgate[langchain]``).

Given LangChain tools (``langchain_core.tools.BaseTool``) and a toolgate
``Context``:

- :meth:`ToolGate.offered` is the tools the model is offered (the table's
  offered set, in the order given);
- :meth:`ToolGate.unavailable_prompt` is the system-prompt section naming
  the tools that exist but may not be used, and why (the library's
  rendering, ``Context.unavailable_prompt``, with the host's live tools);
- :meth:`ToolGate.guard` wraps every tool so that a call the table refuses
  (a model may still name a tool it was not offered) never runs the tool's
  body: the model gets the typed refusal as a tool message
  (``status="error"``, content = the refusal's JSON, artifact = its dict),
  and the refusal is logged with its reason on the ``toolgate.langchain``
  logger. A tool another gate already guarded is wrapped again: it runs
  only when every gate it passes through allows it (a tool list guarded for
  one user and reused for another is held to both; guard the original
  tools per user to hold each to its own gate alone). Coroutine-only tools
  (no sync function) are guarded through ``ainvoke`` and ``arun``.

By default a refused call answers the model (it can tell the user, or pick
another tool). A gate can instead raise the refusal out of the graph, per
kind: ``ToolGate(ctx, raise_on={"notInProfile", "trustZone"})`` raises
``ToolNotInProfile`` / ``TrustZone`` (the typed exceptions of ``toolgate``,
every one a ``PolicyViolation``) from the tool, so ``graph.ainvoke(...)``
raises it; ``raise_on=True`` raises every kind; a mapping
``{"notInProfile": True, "contentPolicy": False}`` names kinds one by one.
LangGraph's ``ToolNode`` re-raises an exception that is not a tool
invocation error (its default ``handle_tool_errors``); a ``ToolNode`` told to
handle every error would turn it back into a message.

The context may be a ``Context`` or a callable returning one (for example a
context of ``TableHandle.context(...)`` built per call, or one that reads the
run state from a LangGraph state): every call is decided by the context of
that moment.

A tool a person approves call by call (``needs-approval``, docs/approvals.md)
becomes LangGraph's own human in the loop. Inside a graph, its call
``interrupt``s the run with ``{"toolgate": "approvalRequired", "request":
..., "refusal": ...}``: the approval request (the call's tool, arguments
digest, configuration, consumer, role, table digest; ``requestId`` is the tool
call's id) and the typed refusal. The thread waits in its checkpoint. Resume it
with ``Command(resume=GRANT)``, where GRANT is the signed grant of that request
(``toolgate approve``, JSON text or its dict), and the call is decided again
(``Context.check_call`` with the grant, checked against ``approver_keys``). It
runs once when the grant fits the call and the table of that moment. A table
changed while the thread waited voids the grant, so the call is refused with
``grant_error`` ``grantOtherTable`` and asked again at the next call. Resuming
with ``False`` declines (LangGraph reads ``Command(resume=None)`` as no
resume at all), and the call never runs. Outside a graph,
or without ``approver_keys``, the call is refused ``approvalRequired``.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import ConfigDict

from . import ArgumentError, Context, Decision, LiveTool, PolicyViolation, Refusal, codes
from ._errors import _refused

__all__ = ["GuardedTool", "ToolGate", "refusal_message"]

logger = logging.getLogger("toolgate.langchain")

ContextSource = Union[Context, Callable[[], Context]]
#: Which refusal kinds a gate raises instead of answering the model.
RaiseOn = Union[None, bool, Iterable[str], Mapping[str, bool]]


def _raise_set(raise_on: RaiseOn) -> frozenset[str]:
    kinds = [k["code"] for k in codes()["refusalKinds"]]
    if raise_on is None or raise_on is False:
        return frozenset()
    if raise_on is True:
        return frozenset(kinds)
    if isinstance(raise_on, str):
        raise ArgumentError("raise_on: expected kinds (a set of refusal kind codes), a mapping or a bool, got a str")
    if isinstance(raise_on, Mapping):
        chosen = [k for k, v in raise_on.items() if v]
        named = list(raise_on)
    else:
        chosen = named = list(raise_on)
    unknown = [k for k in named if k not in kinds]
    if unknown:
        raise ArgumentError(f"raise_on: unknown refusal kind(s) {unknown!r} (the kinds are {kinds!r})")
    return frozenset(chosen)


def refusal_message(refusal: Refusal, tool_call_id: str, name: str, *, declined: bool = False) -> ToolMessage:
    """The tool message a refused call answers with: the typed refusal as
    JSON for the model (its ``modelText`` says what to do), its dict as the
    artifact for the host. A call a person declined says so
    (``"declined": true``)."""
    return ToolMessage(
        content=_content(refusal, declined),
        tool_call_id=tool_call_id,
        name=name,
        status="error",
        artifact=dict(refusal.to_dict(), declined=True) if declined else refusal.to_dict(),
    )


def _content(refusal: Refusal, declined: bool) -> str:
    if not declined:
        return refusal.to_json()
    out = dict(refusal.to_dict())
    out["declined"] = True
    out["modelText"] = "A person declined this call: it did not run. Do not retry it on your own."
    return json.dumps(out)


class ToolGate:
    """The table's view of a set of LangChain tools, for one context."""

    def __init__(
        self,
        context: ContextSource,
        *,
        log: Optional[logging.Logger] = None,
        raise_on: RaiseOn = None,
        approver_keys: Optional[str] = None,
    ) -> None:
        self._context = context
        self._log = log or logger
        #: The refusal kinds this gate raises (the others answer the model).
        self.raise_on: frozenset[str] = _raise_set(raise_on)
        #: The public keys (PEM) approvers sign grants with; None: no grant lets a call run.
        self.approver_keys = approver_keys

    def context(self) -> Context:
        c = self._context
        return c if isinstance(c, Context) else c()

    def offered(self, tools: Sequence[BaseTool]) -> list[BaseTool]:
        """The tools the model is offered: those the table offers, in the order given."""
        offered = set(self.context().offered())
        # The name's exact value: a str subclass's own __eq__/__hash__ never
        # match another tool's name (the gate decides on values too).
        return [t for t in tools if str.__str__(t.name) in offered]

    def unavailable_prompt(self, live: Optional[Sequence[LiveTool]] = None) -> str:
        """The unavailable-tools section for the system prompt ("" when
        none): the library's rendering over the table's tools, then the
        ``live`` tools the host registered after compilation (names escaped,
        hidden remote names left out, as ``Context.unavailable_prompt``)."""
        return self.context().unavailable_prompt(live=live)

    def guard(self, tools: Sequence[BaseTool]) -> list[BaseTool]:
        """Every tool wrapped so that a refused call never runs (give the
        tool executor all tools, not only the offered ones: a call of a tool
        that was not offered is then refused with its reason, not "unknown").

        A tool this gate already guards is returned as it is; one another
        gate guards is wrapped again, so this gate's refusals always hold."""
        return [t if isinstance(t, GuardedTool) and t.gate is self else GuardedTool.wrap(t, self) for t in tools]

    def check(
        self, name: str, arguments: Optional[Mapping[str, Any]] = None, call_id: Optional[str] = None
    ) -> Optional[tuple[Decision, Refusal]]:
        """``None`` when a call of ``name`` with ``arguments`` may run; else
        the decision (the true reason, for the host) and the typed refusal
        (for the model), logged. A call that needs a person's approval
        interrupts the graph it runs in (see the module's text)."""
        found = self._verdict(name, arguments, call_id)
        return None if found is None else found[:2]

    def _verdict(
        self, name: str, arguments: Optional[Mapping[str, Any]], call_id: Optional[str]
    ) -> Optional[tuple[Decision, Refusal, bool]]:
        ctx = self.context()
        try:
            ctx.check_call(name)
            return None
        except PolicyViolation as e:
            decision, refusal = e.decision, e.refusal
        declined = False
        if refusal.kind == "approvalRequired":
            args = dict(arguments or {})
            answer = self._ask(ctx, name, args, call_id, refusal)
            if answer is _DECLINED:
                declined = True
            elif answer is not None:
                try:
                    ctx.check_call(name, args, grant=answer, approver_keys=self.approver_keys)
                    return None
                except PolicyViolation as e:
                    decision, refusal = e.decision, e.refusal
        self._log.warning(
            "toolgate refused tool call %r: %s (configuration %s, consumer %s)",
            name,
            "declined by a person" if declined else (refusal.grant_error or decision.reason or refusal.kind),
            ctx.configuration,
            ctx.consumer,
            extra={
                "toolgate_tool": name,
                "toolgate_reason": decision.reason,
                "toolgate_kind": refusal.kind,
                "toolgate_grant_error": refusal.grant_error,
                "toolgate_declined": declined,
                "toolgate_configuration": ctx.configuration,
                "toolgate_consumer": ctx.consumer,
            },
        )
        return decision, refusal, declined

    def _ask(
        self, ctx: Context, name: str, arguments: dict[str, Any], call_id: Optional[str], refusal: Refusal
    ) -> Any:
        """The person's answer through LangGraph's ``interrupt``: the grant
        (as JSON text), ``_DECLINED``, or None outside a graph. The first
        time, ``interrupt`` stops the run here (it raises LangGraph's own
        ``GraphInterrupt``, which is let through)."""
        try:
            from langgraph.types import interrupt
        except ImportError:  # langchain-core without langgraph: nobody to ask
            return None
        request = ctx.approval_request(name, arguments, call_id or "")
        try:
            answer = interrupt({"toolgate": "approvalRequired", "request": request, "refusal": refusal.to_dict()})
        except RuntimeError:  # not inside a graph's run: nobody to ask
            return None
        if answer is None or answer is False:
            return _DECLINED
        if isinstance(answer, Mapping):
            return json.dumps(dict(answer))
        return answer


#: The person declined (a resume value of False; None is also read as no).
_DECLINED = object()


def _tool_call_id(value: Any) -> Optional[str]:
    if isinstance(value, dict) and value.get("type") == "tool_call":
        return value.get("id")
    return None


def _arguments(value: Any) -> Optional[Mapping[str, Any]]:
    """A call's arguments: a tool call's ``args``, or the input dict itself."""
    if isinstance(value, dict):
        if value.get("type") == "tool_call":
            args = value.get("args")
            return args if isinstance(args, Mapping) else None
        return value
    return None


class GuardedTool(BaseTool):
    """A tool behind the gate: same name, description and arguments; a
    refused call answers with the typed refusal and never reaches ``inner``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseTool
    gate: Any

    @classmethod
    def wrap(cls, tool: BaseTool, gate: ToolGate) -> "GuardedTool":
        return cls(
            name=tool.name,
            description=tool.description,
            args_schema=tool.args_schema,
            return_direct=tool.return_direct,
            inner=tool,
            gate=gate,
        )

    def _refused(self, value: Any) -> Any:
        found = self.gate._verdict(self.name, _arguments(value), _tool_call_id(value))
        if found is None:
            return None
        decision, refusal, declined = found
        if refusal.kind in self.gate.raise_on:
            raise _refused(refusal, decision)
        call_id = _tool_call_id(value)
        if call_id is not None:
            return refusal_message(refusal, call_id, self.name, declined=declined)
        # Called directly (not from a model's tool call): the refusal's JSON.
        return _content(refusal, declined)

    def invoke(self, input: Any, config: Optional[RunnableConfig] = None, **kwargs: Any) -> Any:
        refused = self._refused(input)
        if refused is not None:
            return refused
        return self.inner.invoke(input, config, **kwargs)

    async def ainvoke(self, input: Any, config: Optional[RunnableConfig] = None, **kwargs: Any) -> Any:
        refused = self._refused(input)
        if refused is not None:
            return refused
        return await self.inner.ainvoke(input, config, **kwargs)

    @staticmethod
    def _input(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        kwargs.pop("run_manager", None)
        kwargs.pop("config", None)
        return kwargs if kwargs or not args else args[0]

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        # Reached through BaseTool.run() only (invoke is overridden above).
        value = self._input(args, kwargs)
        refused = self._refused(value)
        if refused is not None:
            return refused
        return self.inner.invoke(value)

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        # Reached through BaseTool.arun() only (ainvoke is overridden above):
        # the inner tool's own async path, so a coroutine-only tool works.
        value = self._input(args, kwargs)
        refused = self._refused(value)
        if refused is not None:
            return refused
        return await self.inner.ainvoke(value)
