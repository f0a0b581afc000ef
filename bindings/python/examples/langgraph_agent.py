"""A LangGraph agent behind toolgate (the example of bindings/python/README.md).

The graph keeps the run state (toolgate's stored form) in its own state, so a
thread resumed from its checkpoint keeps the exclusions and the skill
allow-list it started with (docs/gate-semantics.md §13), even after the
policy changed:

    START -> run_state -> agent -> (tool calls?) -> tools -> agent ... -> END

- ``run_state`` starts the run (``RunState.start``) on the first turn and, on
  every later turn, narrows the stored state by the live one
  (``RunState.parse(stored).resume(live)``): never wider than either.
- ``agent`` binds only the tools the table offers and adds the
  unavailable-tools section to the system prompt.
- ``tools`` runs every tool behind the guard: a call the table refuses (the
  model may name a tool it was not offered) gets the typed refusal as its tool
  message and never runs; a call a person approves first (``needs-approval``)
  interrupts the thread until it is resumed with the signed grant
  (``Command(resume=grant)``), checked against ``approver_keys``.

Run it: ``python examples/langgraph_agent.py`` (a fake chat model, no network).
"""

from __future__ import annotations

from typing import Annotated, Any, Callable, Optional, Sequence, TypedDict, Union

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition

import toolgate
from toolgate.langchain import ToolGate

SYSTEM = "You are an editor's assistant."


class AgentState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    #: toolgate's stored run state (``RunState.to_json()``), kept with the thread.
    run: Optional[str]


def build_graph(
    tables: Union[toolgate.Table, toolgate.TableHandle],
    configuration: str,
    tools: Sequence[BaseTool],
    model: BaseChatModel,
    *,
    role: str = "user",
    consumer: Optional[str] = None,
    skills: Sequence[str] = (),
    checkpointer: Any = None,
    raise_on: Any = None,
    approver_keys: Optional[str] = None,
) -> Any:
    def table() -> toolgate.Table:
        return tables.current() if isinstance(tables, toolgate.TableHandle) else tables

    def gate(state: AgentState) -> ToolGate:
        t = table()
        return ToolGate(
            lambda: t.context(configuration, role=role, consumer=consumer, run=state["run"]),
            raise_on=raise_on,
            approver_keys=approver_keys,
        )

    def run_state(state: AgentState) -> dict[str, Any]:
        live = toolgate.RunState.start(table(), configuration, list(skills))
        stored = state.get("run")
        if stored is None:
            return {"run": live.to_json()}
        # Strict: a stored run that cannot be read raises (RunStateError).
        return {"run": toolgate.RunState.parse(stored).resume(live).to_json()}

    def agent(state: AgentState) -> dict[str, Any]:
        g = gate(state)
        bound = model.bind_tools(g.offered(tools))
        system = SYSTEM + ("\n\n" + g.unavailable_prompt() if g.unavailable_prompt() else "")
        return {"messages": [bound.invoke([SystemMessage(system), *state["messages"]])]}

    def run_tools(state: AgentState, config: RunnableConfig) -> Any:
        return ToolNode(gate(state).guard(tools)).invoke(state, config)

    graph = StateGraph(AgentState)
    graph.add_node("run_state", run_state)
    graph.add_node("agent", agent)
    graph.add_node("tools", run_tools)
    graph.add_edge(START, "run_state")
    graph.add_edge("run_state", "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer)


def tool_named(name: str, body: Callable[..., str]) -> BaseTool:
    """A LangChain tool of a registry name (names like ``refund.issue`` are
    not Python identifiers, so tools are built, not decorated)."""
    from langchain_core.tools import StructuredTool

    return StructuredTool.from_function(func=body, name=name, description=f"The {name} tool.")


if __name__ == "__main__":  # pragma: no cover - a demonstration
    import sys
    from pathlib import Path

    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    class FakeModel(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            print("offered:", [t.name for t in tools])
            return self

    path = sys.argv[1] if len(sys.argv) > 1 else str(
        Path(__file__).resolve().parents[3] / "conformance/tables/exclusions.tgt"
    )
    table = toolgate.Table.load(path)
    tools = [tool_named(n, lambda **_: "ok") for n in table.tools]
    model = FakeModel(
        messages=iter(
            [
                AIMessage("", tool_calls=[{"name": "delete_record", "args": {}, "id": "call-1"}]),
                AIMessage("I cannot delete records here."),
            ]
        )
    )
    app = build_graph(table, "editor-chat", tools, model, checkpointer=InMemorySaver())
    out = app.invoke({"messages": [HumanMessage("delete record 7")]}, {"configurable": {"thread_id": "1"}})
    for m in out["messages"]:
        print(type(m).__name__, getattr(m, "status", ""), str(m.content)[:120])
    print("run:", out["run"])
