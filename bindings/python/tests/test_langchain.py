"""toolgate.langchain with the real langchain-core and langgraph, driven by
langchain-core's fake chat model (no network, no key)."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

import toolgate
from conftest import CORPUS, HERE, SUPPORT_BOT, Compile
from toolgate.langchain import GuardedTool, ToolGate

sys.path.insert(0, str(HERE.parent / "examples"))
from langgraph_agent import build_graph, tool_named  # noqa: E402


class FakeModel(GenericFakeChatModel):
    """langchain-core's fake chat model; records the tools it was bound to."""

    bound: list[list[str]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        self.bound.append([t.name for t in tools])
        return self


def model(*replies: AIMessage) -> FakeModel:
    return FakeModel(messages=iter(replies))


def call(name: str, call_id: str, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


class Tools:
    """One LangChain tool per name; records every body that ran."""

    def __init__(self, names: list[str]) -> None:
        self.ran: list[str] = []
        self.tools: list[BaseTool] = [tool_named(n, self._body(n)) for n in names]

    def _body(self, name: str) -> Any:
        def body(**kwargs: Any) -> str:
            self.ran.append(name)
            return f"{name} done"

        return body


def exclusions() -> toolgate.Table:
    return toolgate.Table.load(CORPUS / "tables/exclusions.tgt")


def mcp_profiles() -> toolgate.Table:
    return toolgate.Table.load(CORPUS / "tables/mcp-profiles.tgt")


def tool_messages(out: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in out["messages"] if isinstance(m, ToolMessage)]


def test_the_model_is_offered_exactly_the_tables_tools() -> None:
    t = exclusions()
    # Every registry tool plus one the registry does not know, in registry order.
    tools = Tools(t.tools + ["shell_exec"])
    m = model(AIMessage("hello"))
    app = build_graph(t, "editor-chat", tools.tools, m, checkpointer=InMemorySaver())
    app.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "a"}})
    ctx = t.context("editor-chat", role="user", run=toolgate.RunState.start(t, "editor-chat"))
    assert m.bound == [ctx.offered()]
    assert "delete_record" not in m.bound[0] and "shell_exec" not in m.bound[0]
    assert len(m.bound[0]) == 25
    gate = ToolGate(ctx)
    assert [x.name for x in gate.offered(tools.tools)] == ctx.offered()
    assert gate.unavailable_prompt() == (
        "Tools that exist but are not available in this conversation, and why:\n"
        "- delete_record: excluded by this configuration\n"
        "- flush_cache: not among the tools this configuration allows\n"
    )


def test_an_excluded_tool_is_refused_and_its_body_never_runs(caplog: pytest.LogCaptureFixture) -> None:
    t = exclusions()
    tools = Tools(t.tools)
    m = model(call("delete_record", "c1", uid=7), AIMessage("cannot"))
    app = build_graph(t, "editor-chat", tools.tools, m, checkpointer=InMemorySaver())
    with caplog.at_level(logging.WARNING, logger="toolgate.langchain"):
        out = app.invoke({"messages": [HumanMessage("delete 7")]}, {"configurable": {"thread_id": "b"}})
    assert tools.ran == []
    [msg] = tool_messages(out)
    assert msg.status == "error" and msg.tool_call_id == "c1" and msg.name == "delete_record"
    refusal = json.loads(msg.content)  # type: ignore[arg-type]
    assert refusal == msg.artifact
    expected = t.context("editor-chat", role="user").refusal("delete_record")
    assert expected is not None and refusal == expected.to_dict()
    assert refusal["kind"] == "configurationExcluded"
    assert refusal["configuration"] == "editor-chat"
    assert refusal["modelText"] == (
        "The tool `delete_record` cannot be used here: excluded by this configuration. "
        "Retrying will not help; tell the user that a person must change the configuration."
    )
    [record] = [r for r in caplog.records if r.name == "toolgate.langchain"]
    assert record.toolgate_reason == "configurationExcluded"  # type: ignore[attr-defined]
    assert record.toolgate_tool == "delete_record"  # type: ignore[attr-defined]
    assert out["messages"][-1].content == "cannot"


def test_an_allowed_call_runs_its_body() -> None:
    t = exclusions()
    tools = Tools(t.tools)
    m = model(call("get_page_content", "c1", page=1), AIMessage("ok"))
    app = build_graph(t, "editor-chat", tools.tools, m, checkpointer=InMemorySaver())
    out = app.invoke({"messages": [HumanMessage("read 1")]}, {"configurable": {"thread_id": "c"}})
    assert tools.ran == ["get_page_content"]
    [msg] = tool_messages(out)
    assert msg.content == "get_page_content done" and msg.status == "success"


def test_a_call_outside_the_consumers_profile_is_not_in_profile() -> None:
    t = mcp_profiles()
    tools = Tools(t.tools)
    m = model(call("refund.issue", "c1", amount=5), AIMessage("no"))
    app = build_graph(
        t, "support-chat", tools.tools, m, consumer="support-bot", checkpointer=InMemorySaver()
    )
    out = app.invoke({"messages": [HumanMessage("refund")]}, {"configurable": {"thread_id": "d"}})
    assert tools.ran == []
    [msg] = tool_messages(out)
    refusal = json.loads(msg.content)  # type: ignore[arg-type]
    assert refusal["kind"] == "notInProfile"
    assert refusal["profile"] == "support-readonly"
    assert refusal["consumer"] == "support-bot"
    # An identity gate: nothing about configurations, groups or zones.
    assert refusal["configuration"] is None
    assert m.bound == [SUPPORT_BOT, SUPPORT_BOT]  # before and after the tool call


def test_a_resumed_thread_keeps_an_exclusion_the_policy_dropped(compile_project: Compile) -> None:
    before = compile_project("exclusions")
    after = compile_project(
        "exclusions",
        "configurations.tg",
        "  exclude [delete_record]\n}\n\n# The same groups",
        "}\n\n# The same groups",
    )
    assert before.tools == exclusions().tools
    assert after.context("editor-chat", role="user").decide("delete_record").allowed
    handle = toolgate.TableHandle(before)
    tools = Tools(before.tools)
    m = model(
        AIMessage("hello"),  # thread 1, turn 1: the run starts under the old policy
        call("delete_record", "c1", uid=7),  # thread 1, turn 2, after the change
        AIMessage("refused"),
        call("delete_record", "c2", uid=7),  # thread 2: a new run under the new policy
        AIMessage("deleted"),
    )
    saver = InMemorySaver()
    app = build_graph(handle, "editor-chat", tools.tools, m, checkpointer=saver)
    t1 = {"configurable": {"thread_id": "t1"}}
    out = app.invoke({"messages": [HumanMessage("hi")]}, t1)
    assert out["run"] == '{"allowedToolNames":null,"excludedToolNames":["delete_record"]}'

    handle.swap(after)  # the policy drops the exclusion while the thread is stored
    assert handle.current().digest == after.digest
    out = app.invoke({"messages": [HumanMessage("delete 7")]}, t1)
    assert tools.ran == []
    [msg] = tool_messages(out)
    assert json.loads(msg.content)["kind"] == "configurationExcluded"  # type: ignore[arg-type]
    assert out["run"] == '{"allowedToolNames":null,"excludedToolNames":["delete_record"]}'
    # The resumed thread is offered what its stored run allows: still not delete_record.
    assert "delete_record" not in m.bound[-1]

    out = app.invoke({"messages": [HumanMessage("delete 7")]}, {"configurable": {"thread_id": "t2"}})
    assert tools.ran == ["delete_record"]
    assert out["run"] == '{"allowedToolNames":null}'
    assert "delete_record" in m.bound[-1]


def test_a_skill_allow_list_is_kept_by_the_stored_run() -> None:
    t = exclusions()
    tools = Tools(t.tools)
    m = model(call("update_record", "c1"), AIMessage("no"))
    app = build_graph(t, "translator-chat", tools.tools, m, checkpointer=InMemorySaver())
    out = app.invoke({"messages": [HumanMessage("x")]}, {"configurable": {"thread_id": "s"}})
    assert json.loads(out["run"]) == {
        "allowedToolNames": [
            "get_page_content",
            "list_pages",
            "translate_page",
            "translate_content_element",
            "publish_workspace",
        ],
        "excludedToolNames": ["publish_workspace"],
    }
    offered = ["get_page_content", "list_pages", "translate_page", "translate_content_element", "load_skill"]
    assert m.bound == [offered, offered]
    [msg] = tool_messages(out)
    assert json.loads(msg.content)["kind"] == "configurationGroup"  # type: ignore[arg-type]
    assert tools.ran == []


def test_the_guard_outside_a_graph() -> None:
    t = exclusions()
    tools = Tools(["delete_record", "get_page_content"])
    gate = ToolGate(lambda: t.context("editor-chat", role="user"))
    guarded = gate.guard(tools.tools)
    assert all(isinstance(g, GuardedTool) for g in guarded)
    assert [g.name for g in guarded] == ["delete_record", "get_page_content"]
    assert gate.guard(guarded)[0] is guarded[0]
    direct = guarded[0].invoke({})
    assert json.loads(direct)["kind"] == "configurationExcluded"
    msg = guarded[0].invoke({"type": "tool_call", "name": "delete_record", "args": {}, "id": "x"})
    assert isinstance(msg, ToolMessage) and msg.status == "error"
    assert guarded[1].invoke({}) == "get_page_content done"
    assert tools.ran == ["get_page_content"]


def test_a_tool_list_guarded_for_one_user_is_guarded_again_for_another() -> None:
    t = exclusions()
    tools = Tools(["delete_record", "get_page_content"])
    # reviewer-chat allows delete_record; editor-chat excludes it.
    reviewer = ToolGate(t.context("reviewer-chat", role="user"))
    editor = ToolGate(t.context("editor-chat", role="user"))
    for_reviewer = reviewer.guard(tools.tools)
    for_editor = editor.guard(for_reviewer)
    assert for_editor[0] is not for_reviewer[0] and isinstance(for_editor[0], GuardedTool)
    assert editor.guard(for_editor)[0] is for_editor[0]  # the same gate wraps once
    refused = json.loads(for_editor[0].invoke({"uid": 7}))
    assert (refused["kind"], refused["tool"], refused["configuration"]) == (
        "configurationExcluded",
        "delete_record",
        "editor-chat",
    )
    assert tools.ran == []  # the editor's refused call never ran the body
    assert for_reviewer[0].invoke({"uid": 7}) == "delete_record done"
    assert for_editor[1].invoke({}) == "get_page_content done"
    assert tools.ran == ["delete_record", "get_page_content"]
    # Stacked gates: a call runs only when every gate allows it.
    for_reviewer_again = reviewer.guard(editor.guard(tools.tools))
    assert json.loads(for_reviewer_again[0].invoke({}))["configuration"] == "editor-chat"
    assert tools.ran == ["delete_record", "get_page_content"]


def test_a_coroutine_only_tool_is_guarded_through_ainvoke_and_arun() -> None:
    import asyncio

    from langchain_core.tools import StructuredTool

    ran: list[str] = []

    def coroutine_tool(name: str) -> BaseTool:
        async def body(uid: int = 0) -> str:
            ran.append(name)
            return f"{name} done {uid}"

        return StructuredTool.from_function(coroutine=body, name=name, description=f"The {name} tool.")

    t = exclusions()
    gate = ToolGate(t.context("editor-chat", role="user"))
    allowed, refused = gate.guard([coroutine_tool("get_page_content"), coroutine_tool("delete_record")])
    want = t.context("editor-chat", role="user").refusal("delete_record")
    assert want is not None

    async def scenario() -> list[Any]:
        call_ = {"type": "tool_call", "name": "delete_record", "args": {"uid": 7}, "id": "c9"}
        return [
            await allowed.ainvoke({"uid": 1}),
            await allowed.arun({"uid": 2}),
            await refused.ainvoke({"uid": 3}),
            await refused.arun({"uid": 4}),
            await refused.ainvoke(call_),
        ]

    a, b, c, d, msg = asyncio.run(scenario())
    assert (a, b) == ("get_page_content done 1", "get_page_content done 2")
    assert c == d == want.to_json()
    assert isinstance(msg, ToolMessage) and (msg.status, msg.tool_call_id, msg.artifact) == (
        "error",
        "c9",
        want.to_dict(),
    )
    assert ran == ["get_page_content", "get_page_content"]


def test_the_unavailable_prompt_takes_live_tools_and_is_the_librarys() -> None:
    t = mcp_profiles()
    group = next(x["group"] for x in t.policy()["tools"] if x["name"] == "refund.issue")
    live = [
        toolgate.LiveTool("new_admin_tool", group, admin_only=True),
        # A remote live tool refused by an early gate: its name is hidden from users.
        toolgate.LiveTool("mcp_live_hidden", group, remote=True, enabled=False),
    ]
    user = t.context("support-chat", role="user", consumer="support-bot")
    gate = ToolGate(user)
    assert gate.unavailable_prompt(live) == user.unavailable_prompt(live=live) == (
        "Tools that exist but are not available in this conversation, and why:\n"
        "- refund.issue: not in this consumer's access profile\n"
        "- new_admin_tool: only administrators may use it\n"
    )
    assert gate.unavailable_prompt() == user.unavailable_prompt()
    admin = t.context("support-chat", role="admin", consumer="support-bot")
    assert ToolGate(admin).unavailable_prompt(live).endswith(
        "- mcp_live_hidden: switched off by an administrator\n"
    )


def test_offered_matches_names_by_value() -> None:
    class Sneaky(str):
        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return hash("get_page_content")

    t = exclusions()
    tools = Tools(["delete_record", "get_page_content"])
    tools.tools[0].name = Sneaky("delete_record")  # assignment keeps the subclass
    gate = ToolGate(t.context("editor-chat", role="user"))
    assert [x.name for x in gate.offered(tools.tools)] == ["get_page_content"]
    assert json.loads(gate.guard(tools.tools)[0].invoke({}))["kind"] == "configurationExcluded"
    assert tools.ran == []


def test_a_gate_can_raise_the_typed_refusal_out_of_the_graph() -> None:
    import asyncio

    t = mcp_profiles()
    for raise_on in ({"notInProfile"}, {"notInProfile": True, "contentPolicy": False}, True):
        tools = Tools(t.tools)
        m = model(call("refund.issue", "c1", query="r"), AIMessage("unreachable"))
        app = build_graph(t, "support-chat", tools.tools, m, consumer="support-bot", raise_on=raise_on)
        with pytest.raises(toolgate.ToolNotInProfile) as e:
            asyncio.run(app.ainvoke({"messages": [HumanMessage("refund")]}))
        assert isinstance(e.value, toolgate.ConfigurationRefusal)
        assert (e.value.tool_name, e.value.profile, e.value.consumer) == ("refund.issue", "support-readonly", "support-bot")
        assert e.value.decision is not None and e.value.decision.reason == "notInProfile"
        assert tools.ran == []
    # Kinds not chosen keep answering the model.
    tools = Tools(t.tools)
    m = model(call("refund.issue", "c1", query="r"), AIMessage("I cannot refund."))
    app = build_graph(t, "support-chat", tools.tools, m, consumer="support-bot", raise_on={"trustZone"})
    out = asyncio.run(app.ainvoke({"messages": [HumanMessage("refund")]}))
    [msg] = tool_messages(out)
    assert msg.status == "error" and json.loads(str(msg.content))["kind"] == "notInProfile"
    assert tools.ran == []
    ctx = t.context("support-chat", role="user", consumer="support-bot")
    assert ToolGate(ctx).raise_on == frozenset()
    for bad in ({"notAKind"}, {"NotInProfile": True}, "notInProfile"):
        with pytest.raises(toolgate.ArgumentError):
            ToolGate(ctx, raise_on=bad)  # type: ignore[arg-type]


def test_the_readme_sketch_runs_as_written_for_the_graph() -> None:
    """The typed-refusal sketch of bindings/python/README.md ("Refusals as
    exceptions"), the graph half (names adapted only): a configuration
    refusal stops, a runtime one is recoverable."""
    import asyncio

    t = mcp_profiles()
    log = logging.getLogger("sketch")
    retried: list[Any] = []

    async def rephrase_and_retry(exc: toolgate.PolicyViolation) -> str:
        retried.append(exc)
        return "retried"

    async def handle(graph: Any, state: Any) -> Any:
        try:
            await graph.ainvoke(state)
        except toolgate.ToolNotInProfile as exc:  # configuration problem: stop, don't retry
            log.error("not provisioned: %s (profile %s)", exc.tool_name, exc.profile)
            raise
        except toolgate.PolicyViolation as exc:  # runtime problem: recoverable
            return await rephrase_and_retry(exc)

    tools = Tools(t.tools)
    graph = build_graph(
        t, "support-chat", tools.tools, model(call("refund.issue", "c1")), consumer="support-bot", raise_on=True
    )
    with pytest.raises(toolgate.ToolNotInProfile):
        asyncio.run(handle(graph, {"messages": [HumanMessage("refund")]}))
    # Another kind reaches the second clause.
    graph = build_graph(
        t, "support-chat-eu", tools.tools, model(call("payment.status", "c1")), consumer="support-bot", raise_on=True
    )
    assert asyncio.run(handle(graph, {"messages": [HumanMessage("pay")]})) == "retried"
    assert type(retried[0]) is toolgate.TrustZone and tools.ran == []


def test_a_call_that_needs_approval_interrupts_the_graph_and_runs_once_resumed_with_the_grant(
    compile_project: Compile, toolgate_bin: Any, tmp_path: Any
) -> None:
    """docs/approvals.md: LangGraph's own human in the loop. The thread
    waits in its checkpoint with the approval request; resumed with the
    grant `toolgate approve` signed, the call runs once; resumed with None,
    it is declined; a table swapped while it waited voids the grant."""
    import subprocess

    from langgraph.types import Command

    subprocess.run([str(toolgate_bin), "keygen", "-o", str(tmp_path / "approver")], check=True, capture_output=True)
    keys = (tmp_path / "approver.pub").read_text()
    table = compile_project("approvals")

    def approve(request: dict[str, Any]) -> str:
        (tmp_path / "request.json").write_text(json.dumps(request))
        out = subprocess.run(
            [str(toolgate_bin), "approve", str(tmp_path / "request.json"), "--key", str(tmp_path / "approver.key"),
             "--approver", "alice"],
            check=True, capture_output=True, text=True,
        )
        return out.stdout.strip()

    def thread(tables: Any, tid: str) -> tuple[Any, Tools, dict[str, Any], dict[str, Any]]:
        tools = Tools(table.tools)
        m = model(call("refund.issue", f"call-{tid}", order=17), AIMessage("done"))
        app = build_graph(tables, "support-desk", tools.tools, m, checkpointer=InMemorySaver(), approver_keys=keys)
        cfg = {"configurable": {"thread_id": tid}}
        out = app.invoke({"messages": [HumanMessage("refund order 17")]}, cfg)
        [pending] = out["__interrupt__"]
        assert tools.ran == []
        return app, tools, cfg, pending.value

    # Interrupted with what to approve; resumed with the grant: runs once.
    app, tools, cfg, asked = thread(table, "t1")
    request = asked["request"]
    assert asked["toolgate"] == "approvalRequired" and asked["refusal"]["kind"] == "approvalRequired"
    assert {k: request[k] for k in ("tool", "configuration", "consumer", "role", "tableDigest", "requestId")} == {
        "tool": "refund.issue", "configuration": "support-desk", "consumer": None, "role": "user",
        "tableDigest": table.digest, "requestId": "call-t1",
    }
    out = app.invoke(Command(resume=approve(request)), cfg)
    assert tools.ran == ["refund.issue"]
    [msg] = tool_messages(out)
    assert (msg.status, msg.content) == ("success", "refund.issue done")

    # Declined: never runs, and the model is told a person said no.
    app, tools, cfg, asked = thread(table, "t2")
    out = app.invoke(Command(resume=False), cfg)
    assert tools.ran == []
    [msg] = tool_messages(out)
    body = json.loads(str(msg.content))
    assert msg.status == "error" and (body["kind"], body["declined"]) == ("approvalRequired", True)

    # A table swapped while the thread waited: the grant, given for the old
    # table, does not let the call run; it is refused grantOtherTable.
    handle = toolgate.TableHandle(table)
    app, tools, cfg, asked = thread(handle, "t3")
    grant = approve(asked["request"])
    handle.swap(compile_project("approvals", "policy.tg", "consumer senior-bot", "consumer senior-bot-2"))
    out = app.invoke(Command(resume=grant), cfg)
    assert tools.ran == []
    [msg] = tool_messages(out)
    body = json.loads(str(msg.content))
    assert (body["kind"], body["grantError"]) == ("approvalRequired", "grantOtherTable")

    # Outside a graph nobody can be asked: refused approvalRequired.
    gate = ToolGate(table.context("support-desk", role="user"), approver_keys=keys)
    found = gate.check("refund.issue", {"order": 17})
    assert found is not None and found[1].kind == "approvalRequired"
