"""The Python API beyond the corpus: loading, errors, immutability, hidden
names, strict run state, classification, hot reload, threads."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path

import pytest

import toolgate
from conftest import CORPUS, REPO, Compile, POLICIES
from workload import write_project

DEMO = CORPUS / "tables/demo.tgt"
PROFILES = CORPUS / "tables/mcp-profiles.tgt"
EXCLUSIONS = CORPUS / "tables/exclusions.tgt"


def demo_digest() -> str:
    """The digest the corpus' load case expects of tables/demo.tgt."""
    cases = json.loads((CORPUS / "suites/tables.json").read_text())["cases"]
    [digest] = [c["expect"]["digest"] for c in cases if c.get("table") == "tables/demo.tgt"]
    assert len(digest) == 64
    return digest


def test_load_from_every_source() -> None:
    data = DEMO.read_bytes()
    digests = {
        toolgate.Table.load(src).digest
        for src in (data, bytearray(data), memoryview(data), str(DEMO), DEMO)
    }
    assert digests == {demo_digest()}
    t = toolgate.Table.load(DEMO)
    assert len(t) == 23 and t.tools[0] == "get_page_content" and t.tool_id("load_skill") == 5
    assert t.tool_name(5) == "load_skill" and t.tool_id("nope") is None
    assert t.configurations == ["demo-chat", "developer-chat"] and t.skill_loader == "load_skill"
    with pytest.raises(toolgate.ArgumentError):
        t.tool_name(23)


def test_every_defect_raises_and_nothing_loads(tmp_path: Path) -> None:
    data = bytearray(DEMO.read_bytes())
    with pytest.raises(toolgate.LoadError) as e:
        toolgate.Table.load(b"")
    assert e.value.code == "notATable"
    with pytest.raises(toolgate.LoadError) as e:
        toolgate.Table.load(bytes(data[:-1]))
    assert e.value.code == "truncated"
    data[-3] ^= 0x01
    with pytest.raises(toolgate.LoadError) as e:
        toolgate.Table.load(bytes(data))
    assert e.value.code == "checksum"
    with pytest.raises(toolgate.LoadError) as e:
        toolgate.Table.load(tmp_path)  # a directory: refused before it is opened
    assert (e.value.code, str(e.value)) == ("notAFile", f"table {tmp_path}: not a regular file (a directory)")
    with pytest.raises(toolgate.LoadError) as e:
        toolgate.Table.load(tmp_path / "missing.tgt")
    assert e.value.code == "io"
    with pytest.raises(toolgate.ArgumentError):
        toolgate.Table.load(42)  # type: ignore[arg-type]
    assert issubclass(toolgate.LoadError, toolgate.ToolgateError)


@pytest.mark.parametrize(
    "name,suggestion",
    [
        ("Support-bot", "support-bot"),
        ("support-bot ", "support-bot"),
        ("support_bot", "support-bot"),
        ("support-bot\u200b", "support-bot"),
        ("", None),
        ("zz-other-app", None),
    ],
)
def test_a_consumer_the_policy_does_not_know_is_a_typed_error(name: str, suggestion: "str | None") -> None:
    t = toolgate.Table.load(PROFILES)
    with pytest.raises(toolgate.UnknownConsumerError) as e:
        t.context("support-chat", consumer=name)
    assert e.value.name == name and e.value.suggestion == suggestion
    assert str(e.value).startswith("the policy knows no consumer `")
    assert t.context("support-chat", consumer="support-bot").decide("refund.issue").reason == "notInProfile"


def test_context_errors() -> None:
    t = toolgate.Table.load(DEMO)
    with pytest.raises(toolgate.UnknownConfigurationError) as e:
        t.context("demo-chatt")
    assert e.value.name == "demo-chatt" and e.value.suggestion == "demo-chat"
    assert str(e.value) == "unknown configuration `demo-chatt`; did you mean `demo-chat`?"
    with pytest.raises(toolgate.ArgumentError):
        t.context("demo-chat", role="root")  # type: ignore[arg-type]
    ctx = t.context("demo-chat", role="user")
    with pytest.raises(toolgate.ArgumentError):
        ctx.decide(b"read_source")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        t.context("demo-chat", "user")  # type: ignore[misc]


def test_decisions_are_immutable_values() -> None:
    ctx = toolgate.Table.load(DEMO).context("demo-chat", role="user")
    d = ctx.decide("get_page_content")
    assert (d.tool, d.allowed, d.reason, d.observed_only) == ("get_page_content", True, None, False)
    assert (d.class_, d.zone, d.ceiling) == ("editorContent", "externalEu", "internalConfiguration")
    with pytest.raises(AttributeError):
        d.allowed = False  # type: ignore[misc]
    assert d == ctx.decide("get_page_content") and hash(d) == hash(ctx.decide("get_page_content"))
    refused = ctx.decide("read_source")
    assert refused.reason == "configurationGroup" and refused.class_ is None  # no zone facts
    assert refused.to_dict() == {
        "tool": "read_source",
        "allowed": False,
        "reason": "configurationGroup",
        "observedOnly": False,
    }
    assert not ctx.is_allowed("read_source") and ctx.is_allowed("get_page_content")
    # Not valid Unicode: an argument error (tests/test_arguments.py), never a decision.
    with pytest.raises(toolgate.ArgumentError):
        ctx.decide("\ud800")
    assert not dataclasses.is_dataclass(d)  # a native frozen class, dataclass-like


def test_context_properties_and_enforcement() -> None:
    t = toolgate.Table.load(PROFILES)
    ctx = t.context("support-chat-eu", role="user", consumer="billing-bot", enforcement=" OBSERVE\n")
    assert (ctx.configuration, ctx.role, ctx.consumer, ctx.profile, ctx.mode) == (
        "support-chat-eu",
        "user",
        "billing-bot",
        "billing-agent",
        "observe",
    )
    d = ctx.decide("payment.status")  # builtin above the EU ceiling, observed
    assert (d.allowed, d.reason, d.observed_only) == (True, "trustZone", True)
    # Remote tools are enforced in both modes.
    assert ctx.decide("mcp_billing_invoice_get").reason == "trustZone"
    # U+00A0 padding is not ASCII white space: enforce.
    strict = t.context("support-chat-eu", role="user", enforcement="\u00a0observe")
    assert strict.mode == "enforce" and not strict.is_allowed("payment.status")


def test_refusals_mask_hidden_remote_names() -> None:
    t = toolgate.Table.load(PROFILES)
    user = t.context("support-chat", role="user", consumer="support-bot")
    d = user.decide("mcp_billing_invoice_list")
    assert d.reason == "notInProfile"  # the host keeps the truth
    hidden = user.refusal(d)
    missing = user.refusal("no_such_tool")
    assert hidden is not None and missing is not None
    assert hidden.kind == "notRegistered"
    assert hidden.to_json() == missing.to_json().replace("no_such_tool", "mcp_billing_invoice_list")
    assert user.refusal("mcp_billing_invoice_list") == hidden
    assert "mcp_billing_invoice_list" not in user.unavailable_prompt()
    admin = t.context("support-chat", role="admin", consumer="support-bot")
    shown = admin.refusal("mcp_billing_invoice_list")
    assert shown is not None and shown.kind == "notInProfile" and shown.profile == "support-readonly"
    assert user.refusal("payment.status") is None


def test_check_call() -> None:
    ctx = toolgate.Table.load(EXCLUSIONS).context("editor-chat", role="user")
    assert ctx.check_call("get_page_content").allowed
    with pytest.raises(toolgate.ToolRefused) as e:
        ctx.check_call("delete_record")
    assert e.value.decision.reason == "configurationExcluded"
    assert e.value.refusal.kind == "configurationExcluded"
    assert str(e.value) == e.value.refusal.model_text
    assert toolgate.Refusal.from_json(e.value.refusal.to_json()) == e.value.refusal


def test_check_call_raises_the_kinds_exception() -> None:
    ctx = toolgate.Table.load(PROFILES).context("support-chat", role="user", consumer="support-bot")
    with pytest.raises(toolgate.ToolNotInProfile) as e:
        ctx.check_call("refund.issue")
    exc = e.value
    assert isinstance(exc, toolgate.ConfigurationRefusal) and isinstance(exc, toolgate.PolicyViolation)
    assert isinstance(exc, toolgate.ToolRefused)
    assert (exc.kind, exc.tool_name, exc.profile, exc.consumer, exc.configuration) == (
        "notInProfile", "refund.issue", "support-readonly", "support-bot", None,
    )
    assert (exc.retryable, exc.action, exc.class_) == (False, "stop", "configuration")
    assert exc.model_text == exc.refusal.model_text == str(exc)
    assert exc.remediation == exc.refusal.remediation and "support-readonly" in exc.remediation
    assert exc.decision is not None and exc.decision.reason == "notInProfile"
    # A hidden remote tool is refused as a name that does not exist.
    with pytest.raises(toolgate.NotRegistered) as hidden:
        ctx.check_call("mcp_billing_invoice_list")
    assert hidden.value.decision is not None and hidden.value.decision.reason == "notInProfile"


GATEWAY = REPO / "tests/fixtures/gateway"


def test_a_raising_classify_raises_refusals_only() -> None:
    t = toolgate.Table.load(PROFILES)
    success = (GATEWAY / "success.json").read_bytes()
    failure = (GATEWAY / "tool-failure-isError.json").read_bytes()
    assert toolgate.raise_for_answer(toolgate.classify_envelope(success)).outcome == "success"
    failed = toolgate.raise_for_answer(toolgate.classify_envelope(failure))
    assert failed.outcome == "toolFailure"
    assert t.classify_or_raise(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": []}})).outcome == "success"
    assert t.classify_or_raise(
        json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"isError": True, "content": [{"type": "text", "text": "boom"}]}})
    ).outcome == "toolFailure"
    rbac = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32003, "message": "Access denied"}}
    with pytest.raises(toolgate.ToolNotInProfile) as e:
        t.classify_or_raise(json.dumps(rbac), tool="refund.issue")
    assert e.value.decision is None and e.value.tool_name == "refund.issue"
    with pytest.raises(toolgate.ToolNotInProfile):
        toolgate.raise_for_answer(json.dumps(rbac))
    plugin = toolgate.classify_envelope((GATEWAY / "C-contextforge-plugin-violation.json").read_bytes())
    with pytest.raises(toolgate.RuntimeRefusal) as r:
        toolgate.raise_for_answer(plugin)
    assert type(r.value) is toolgate.ContentPolicyViolation and r.value.retryable and r.value.action == "rephrase"
    with pytest.raises(toolgate.PolicyRefused):
        toolgate.raise_for_answer(b"<html>403</html>", http_status=403)


def test_tool_set_is_the_runtimes() -> None:
    t = toolgate.Table.load(PROFILES)
    ctx = t.context("support-chat", role="user", consumer="support-bot")
    ts = ctx.tool_set()
    assert ts.audience == "host" and ts.profile == "support-readonly" and ts.consumer == "support-bot"
    assert list(ts.offered) == ctx.offered()
    # The host-facing form lists every refused tool, hidden ones marked.
    assert [(e.name, e.reason) for e in ts.excluded] == [(d.tool, d.reason) for d in ctx.decisions() if not d.allowed]
    assert ts.excluded[0] == toolgate.ToolExclusion(name="refund.issue", reason="notInProfile")
    assert repr(ts.excluded[0]) == "ToolExclusion(name='refund.issue', reason='notInProfile')"
    hidden = [e.name for e in ts.excluded if not e.name_visible]
    assert hidden and all(n.startswith("mcp_") for n in hidden)
    # The model-facing form leaves the hidden names out, as the prompt does.
    model = ctx.tool_set(audience="model")
    assert model.audience == "model" and model.offered == ts.offered
    assert [e.name for e in model.excluded] == [u for u, _ in ctx.unavailable()] == ["refund.issue"]
    assert ts.descriptor_bytes > 0 and ts.estimated_tokens > 0
    admin = t.context("support-chat", role="admin", consumer="support-bot").tool_set()
    assert all(e.name_visible for e in admin.excluded)
    with pytest.raises(toolgate.ArgumentError):
        ctx.tool_set(audience="person")  # type: ignore[arg-type]


def test_lists() -> None:
    ctx = toolgate.Table.load(EXCLUSIONS).context("editor-chat", role="user")
    assert ctx.offered_count() == len(ctx.offered()) == 25
    assert ctx.unavailable() == [("delete_record", "configurationExcluded"), ("flush_cache", "configurationGroup")]
    assert ctx.unavailable_count() == 2
    assert ctx.unavailable_ids_list() == [(20, "configurationExcluded"), (26, "configurationGroup")]
    live = [
        toolgate.LiveTool("new_tool", "editing", class_="editorContent"),
        toolgate.LiveTool("new_admin_tool", "editing", admin_only=True),
    ]
    assert ctx.unavailable(live)[2:] == [("new_admin_tool", "requiresAdmin")]
    assert ctx.decide_live(live[0]).allowed
    assert [d.tool for d in ctx.decisions()] == ctx.table.tools
    assert toolgate.GATE_ORDER == (
        "notRegistered",
        "toolDisabled",
        "requiresAdmin",
        "notInProfile",
        "configurationGroup",
        "configurationExcluded",
        "trustZone",
    )
    assert toolgate.reason_message("configurationExcluded") == "excluded by this configuration"


def test_run_state_is_strict() -> None:
    t = toolgate.Table.load(EXCLUSIONS)
    run = toolgate.RunState.start(t, "translator-chat")
    assert run.allowed_tool_names == [
        "get_page_content",
        "list_pages",
        "translate_page",
        "translate_content_element",
        "publish_workspace",
    ]
    assert run.excluded_tool_names == ["publish_workspace"]
    assert toolgate.RunState.parse(run.to_json()) == run
    with pytest.raises(toolgate.UnknownSkillError):
        toolgate.RunState.start(t, "translator-chat", ["no-such-skill"])
    with pytest.raises(toolgate.UnknownConfigurationError):
        toolgate.RunState.start(t, "nope")
    for bad in (
        '{"allowedToolNames": null, "allowedToolNames": null}',
        '{"allowed_tool_names": null}',
        "not json",
        b"\xff",
        "[]",
    ):
        with pytest.raises(toolgate.RunStateError) as e:
            toolgate.RunState.parse(bad)
        assert e.value.state == toolgate.RunState.unreadable()
        assert not e.value.state.is_readable
        # run= reads strictly too: the context is never made from it.
        with pytest.raises(toolgate.RunStateError):
            t.context("editor-chat", run=bad)
        ctx = t.context("editor-chat", role="admin", run=toolgate.RunState.from_bytes(bad))
        assert ctx.offered() == []  # what cannot be read admits nothing, the loader included
    with pytest.raises(toolgate.RunStateError) as e:
        toolgate.RunState.parse('{"excludedToolNames": 3}')
    assert e.value.state.allowed_tool_names is None and e.value.state.excluded_tool_names is False
    stored = toolgate.RunState(None, ["delete_record"])
    assert stored.resume(toolgate.RunState(["a", "b"])).to_json() == (
        '{"allowedToolNames":["a","b"],"excludedToolNames":["delete_record"]}'
    )
    ctx = t.context("reviewer-chat", role="user", run=stored.to_json())
    assert ctx.decide("delete_record").reason == "configurationExcluded"


def test_classify() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32003, "message": "Access denied"}})
    c = toolgate.classify(body, tool="refund.issue")
    assert c.outcome == "refusal" and c.refusal is not None and c.refusal.kind == "notInProfile"
    assert c.refusal.rule == "contextforge-rbac" and c.refusal.tool == "refund.issue"
    ok = toolgate.classify(b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}')
    assert (ok.outcome, ok.refusal, ok.to_dict()) == ("success", None, {"outcome": "success"})
    failed = toolgate.classify('{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"boom"}]}}')
    assert (failed.outcome, failed.text) == ("toolFailure", "boom")
    # Strict: a key named twice is never success.
    dup = toolgate.classify(b'{"jsonrpc":"2.0","id":1,"result":{},"result":{}}')
    assert dup.outcome == "refusal" and dup.refusal.kind == "policy"  # type: ignore[union-attr]
    assert toolgate.classify(b"\xff\xfe").refusal.kind == "policy"  # type: ignore[union-attr]
    # The table's declared gateway rules apply for their origin.
    t = toolgate.Table.load(PROFILES)
    text = '{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"Authorization failed: x"}]}}'
    assert toolgate.classify(text, origin="fastmcp").outcome == "toolFailure"
    declared = t.classify(text, origin="fastmcp")
    assert declared.refusal.kind == "notInProfile" and declared.refusal.rule == "authorization-failed"  # type: ignore[union-attr]


def test_classify_envelopes_and_files(tmp_path: Path) -> None:
    env = {"httpStatus": 403, "origin": "mulesoft", "body": {"error": {"code": 403, "message": "Access denied to: refund.issue"}}}
    f = tmp_path / "answer.json"
    f.write_text(json.dumps(env))
    c = toolgate.classify_file(f)
    assert c.refusal is not None and c.refusal.kind == "notInProfile" and c.refusal.origin == "mulesoft"
    assert toolgate.classify_envelope(f.read_bytes()).to_dict() == c.to_dict()
    # The caller's status wins over the envelope's: under 500 the 403 rule does not match.
    other = toolgate.classify_envelope(f.read_bytes(), http_status=500)
    assert other.refusal is not None and other.refusal.rule != "mulesoft-access-denied"
    with pytest.raises(toolgate.LoadError):
        toolgate.classify_file(tmp_path)


def test_classify_transport_denials_with_headers_and_raw_bodies() -> None:
    # Built in: HTTP 403 with an insufficient_scope challenge, whatever the body (here empty).
    challenge = 'Bearer error="insufficient_scope", scope="crm:write"'
    c = toolgate.classify(b"", http_status=403, headers={"WWW-Authenticate": challenge})
    assert c.refusal is not None and (c.refusal.kind, c.refusal.rule) == ("notInProfile", "mcp-insufficient-scope")
    assert c.refusal.detail == "WWW-Authenticate: " + challenge
    # The same as pairs; without the header it is the generic policy refusal.
    pairs = toolgate.classify(b"", http_status=403, headers=[("www-authenticate", challenge)])
    assert pairs.refusal is not None and pairs.refusal.rule == "mcp-insufficient-scope"
    assert toolgate.classify(b"", http_status=403).refusal.kind == "policy"  # type: ignore[union-attr]
    # A project's transport rules: plain text (body), HTML (status alone), tool and profile from headers.
    t = toolgate.Table.load(PROFILES)
    envoy = t.classify("RBAC: access denied", origin="envoy", http_status=403)
    assert envoy.refusal is not None and envoy.refusal.rule == "rbac-denied"
    vendor = t.classify(
        b"", origin="corp-api", http_status=403,
        headers={"x-denied-tool": "refund.issue", "X-Access-Profile": ["support-readonly"]},
    )
    assert vendor.refusal is not None
    assert (vendor.refusal.tool, vendor.refusal.profile) == ("refund.issue", "support-readonly")
    assert vendor.refusal.remediation == "add `refund.issue` to plan `support-readonly` in the corporate API portal"
    # An envelope file carries headers and a body that is not JSON.
    fixture = Path(__file__).parents[3] / "tests/fixtures/gateway/T-corp-api-empty-vendor-headers.json"
    f = toolgate.classify_file(fixture, table=t)
    assert f.refusal is not None
    assert (f.refusal.rule, f.refusal.tool, f.refusal.profile, f.refusal.remediation) == (
        "denied-in-headers", "refund.issue", "support-readonly", vendor.refusal.remediation
    )
    assert f.refusal.detail == "X-Denied-Tool: refund.issue"
    with pytest.raises(toolgate.ArgumentError):
        toolgate.classify(b"", headers=42)


def test_table_handle_swaps_and_keeps_a_good_table() -> None:
    demo = toolgate.Table.load(DEMO)
    h = toolgate.TableHandle(demo)
    assert h.current().digest == demo.digest and h.current() is h.current()
    old = h.swap(toolgate.Table.load(EXCLUSIONS))
    assert old.digest == demo.digest
    assert h.context("editor-chat", role="user").decide("delete_record").reason == "configurationExcluded"
    before = h.current().digest
    with pytest.raises(toolgate.LoadError):
        h.reload(b"TGTABLE\0 garbage")
    assert h.current().digest == before  # a table that fails to load never replaces the current one
    h.reload(DEMO)
    assert h.current().digest == demo.digest
    # A context outlives a swap: it keeps deciding with its own table.
    ctx = h.context("demo-chat", role="user")
    h.swap(toolgate.Table.load(EXCLUSIONS))
    del demo, old
    assert ctx.decide("get_page_content").zone == "externalEu"


@pytest.fixture(scope="module")
def large(compile_project: Compile, tmp_path_factory: pytest.TempPathFactory) -> toolgate.Table:
    d = tmp_path_factory.mktemp("large")
    write_project(d / "project", 3000)
    import subprocess

    from conftest import _toolgate_bin

    subprocess.run([str(_toolgate_bin()), "compile", str(d / "project"), "-o", str(d / "t.tgt")], check=True)
    return toolgate.Table.load(d / "t.tgt")


def test_threads_share_a_large_table(large: toolgate.Table) -> None:
    """Lists over >= 1024 tools run with the GIL released; many threads on
    one context get exactly the single-threaded answers."""
    ctx = large.context("config0", role="user", consumer="k0")
    want = (ctx.offered(), ctx.unavailable(), ctx.unavailable_prompt(), [d.to_dict() for d in ctx.decisions()])
    assert len(large) == 3000 and len(want[1]) > 1000
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                got = (ctx.offered(), ctx.unavailable(), ctx.unavailable_prompt(), [d.to_dict() for d in ctx.decisions()])
                assert got == want
                assert [ctx.decide(n).allowed for n in large.tools[:200]] == [
                    d["allowed"] for d in want[3][:200]
                ]
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []


def test_policy_is_plain_data() -> None:
    p = toolgate.Table.load(PROFILES).policy()
    assert p["consumers"] == {"support-bot": "support-readonly", "billing-bot": "billing-agent"}
    assert p["remoteVisibility"] == "admins" and p["unprofiled"] == "unrestricted"
    assert POLICIES.is_dir()


def test_live_tools_are_checked_by_the_runtime() -> None:
    with pytest.raises(toolgate.ArgumentError) as e:
        toolgate.LiveTool("purge_caches\n- delete_record: available again", "editing")
    assert str(e.value) == (
        "live tool `purge_caches\\u000a- delete_record: available again`: "
        "it contains U+000A at byte 12, a control or format character"
    )
    with pytest.raises(toolgate.ArgumentError) as e:
        toolgate.LiveTool("", "editing")
    assert str(e.value) == "live tool ``: it is empty"
    with pytest.raises(toolgate.ArgumentError) as e:
        toolgate.LiveTool("mcp_live_a.b", "editing", remote=True)
    assert str(e.value) == "live tool `mcp_live_a.b`: it contains `.`, outside [a-zA-Z0-9_-]"
    with pytest.raises(toolgate.ArgumentError) as e:
        toolgate.LiveTool("ok_name", "edit\u200bing")
    assert str(e.value) == (
        "live tool `ok_name`: its group `edit\\u200bing`: it contains U+200B at byte 4, a control or format character"
    )
    # Builtin live tools may use any visible name, remote ones MCP's rule only.
    assert toolgate.LiveTool("größe_prüfen", "editing").name == "größe_prüfen"
    t = toolgate.LiveTool.from_json('{"name":"x","group":"g","remote":false,"enabled":true,"adminOnly":false}')
    assert (t.name, t.group, t.remote, t.enabled, t.admin_only, t.class_) == ("x", "g", False, True, False, None)
    assert t == toolgate.LiveTool("x", "g") and hash(t) == hash(toolgate.LiveTool("x", "g"))
    assert t != toolgate.LiveTool("x", "g", admin_only=True)
    with pytest.raises(toolgate.ArgumentError) as e:
        toolgate.LiveTool.from_json('{"name":"x","group":"g","remote":false,"enabled":true}')
    assert str(e.value).startswith("live tool: missing field `adminOnly`")


def test_a_hidden_remote_live_tool_is_refused_as_an_unregistered_name() -> None:
    t = toolgate.Table.load(PROFILES)
    group = next(x["group"] for x in t.policy()["tools"] if x["name"] == "refund.issue")
    hidden = toolgate.LiveTool("mcp_live_hidden", group, remote=True, enabled=False)
    user = t.context("support-chat", role="user", consumer="support-bot")
    admin = t.context("support-chat", role="admin", consumer="support-bot")
    d = user.decide_live(hidden)
    assert (d.allowed, d.reason, d.hidden) == (False, "toolDisabled", True)  # the host keeps the truth
    missing = user.refusal("mcp_live_nothing")
    assert missing is not None
    want = missing.to_json().replace("mcp_live_nothing", "mcp_live_hidden")
    r = user.refusal(d)
    assert r is not None and r.kind == "notRegistered" and r.to_json() == want
    assert user.refusal(hidden) == r  # the live tool itself: decide_live + refusal
    shown = admin.refusal(hidden)
    assert shown is not None and shown.kind == "toolDisabled"
    a = admin.decide_live(hidden)
    assert (a.reason, a.hidden) == ("toolDisabled", False)
    # A decision made where the name is visible cannot unhide it elsewhere.
    assert user.refusal(a) == r
    assert user.refusal(admin.decide("mcp_billing_invoice_list")) == user.refusal("mcp_billing_invoice_list")
    assert "mcp_live_hidden" not in user.unavailable_prompt(live=[hidden])
    assert user.unavailable([hidden]) == user.unavailable()
    assert admin.unavailable([hidden])[-1] == ("mcp_live_hidden", "toolDisabled")
    assert admin.unavailable_prompt(live=[hidden]).endswith("- mcp_live_hidden: switched off by an administrator\n")
    # A hidden table tool carries the flag too; to_dict is the runtime's (true) JSON.
    h = user.decide("mcp_billing_invoice_list")
    assert h.hidden and "hidden" not in h.to_dict() and h != admin.decide("mcp_billing_invoice_list")
    assert repr(h).endswith("hidden=True)")
    assert not user.decide("payment.status").hidden


def test_a_call_with_a_grant_names_why_it_did_not_run() -> None:
    """The call forms of a check with a grant (docs/approvals.md, "Grants").
    Every outcome with real keys is the corpus' grants suite
    (test_conformance.py, ``callGranted``); no grant here is valid, so none
    is spent before the corpus replays its own."""
    ctx = toolgate.Table.load(CORPUS / "tables/approvals.tgt").context("support-desk", role="user")
    keys = (CORPUS / "signed/trusted.pub").read_text()
    now = 1_800_000_000
    for kwargs in ({}, {"now": now}, {"approver_keys": keys}, {"now": 0}):
        for arguments in (None, {}, {"order": 17}):
            with pytest.raises(toolgate.ApprovalRequired) as e:
                ctx.check_call("refund.issue", arguments, **kwargs)
            r = e.value.refusal
            assert (e.value.grant_error, r.grant_error, r.detail) == (None, None, None)
            assert "grantError" not in r.to_dict()
            assert e.value.decision == ctx.decide("refund.issue")
    for grant in ("not a grant", b"not a grant", bytearray(b"not a grant")):
        with pytest.raises(toolgate.ApprovalRequired) as e:
            ctx.check_call("refund.issue", {}, grant=grant, approver_keys=keys, now=now)
        assert (e.value.grant_error, e.value.refusal.grant_error) == ("grantMalformed", "grantMalformed")
        assert e.value.refusal.detail == "the grant is not a signed grant: expected ident at line 1 column 2"
        assert e.value.refusal.to_dict()["grantError"] == "grantMalformed"
        assert toolgate.Refusal.from_json(e.value.refusal.to_json()) == e.value.refusal
    # Without approver keys no grant is read: nothing is trusted to approve.
    with pytest.raises(toolgate.ApprovalRequired) as e:
        ctx.check_call("refund.issue", grant="not a grant", now=now)
    assert e.value.grant_error == "grantUntrustedKey"
    # A tool that needs no approval runs, its grant not read; a refused one
    # is refused as ever, whatever the grant.
    assert ctx.check_call("payment.status", {"a": 1}, grant="not a grant", now=now) == ctx.decide("payment.status")
    with pytest.raises(toolgate.RequiresAdmin) as refused:
        ctx.check_call("account.close", grant="not a grant", approver_keys=keys, now=now)
    assert refused.value.grant_error is None
    # What cannot be read is an error, never a check: for any tool.
    for tool in ("refund.issue", "payment.status"):
        with pytest.raises(toolgate.ArgumentError, match="^arguments: expected a dict, got list$"):
            ctx.check_call(tool, [1])
        with pytest.raises(toolgate.ArgumentError, match="^arguments: expected a dict, got str$"):
            ctx.check_call(tool, "{}")
        with pytest.raises(toolgate.ArgumentError, match="^arguments: not JSON data"):
            ctx.check_call(tool, {"x": object()})
        with pytest.raises(toolgate.ArgumentError, match="^arguments: not JSON data"):
            ctx.check_call(tool, {"x": float("nan")})
        with pytest.raises(toolgate.ArgumentError, match="^arguments: .*duplicate"):
            ctx.check_call(tool, {1: "a", "1": "b"})
        with pytest.raises(toolgate.ArgumentError, match="^approver_keys: "):
            ctx.check_call(tool, grant="{}", approver_keys="not a key")
        with pytest.raises(toolgate.ArgumentError, match="^approver_keys: expected str, got bytes$"):
            ctx.check_call(tool, approver_keys=keys.encode())
        with pytest.raises(toolgate.ArgumentError, match="^grant: expected str or bytes, got dict$"):
            ctx.check_call(tool, grant={})
        with pytest.raises(OverflowError):
            ctx.check_call(tool, now=-1)


def test_an_approval_request_binds_the_call_and_the_table() -> None:
    """What a person is asked to approve (the runtime's ApprovalRequest);
    its exact values per corpus call are test_conformance.py's."""
    table = toolgate.Table.load(CORPUS / "tables/approvals.tgt")
    ctx = table.context("support-desk", role="user")
    r = ctx.approval_request("refund.issue", {"b": 1, "a": 2}, "q-1")
    assert r == {
        "tool": "refund.issue",
        "argumentsDigest": r["argumentsDigest"],
        "configuration": "support-desk",
        "consumer": None,
        "role": "user",
        "tableDigest": table.digest,
        "requestId": "q-1",
    }
    # The digest is of canonical JSON: member order does not change it;
    # absent arguments are bound as {}.
    assert ctx.approval_request("refund.issue", {"a": 2, "b": 1}, "q-1") == r
    assert ctx.approval_request("refund.issue")["argumentsDigest"] == ctx.approval_request("refund.issue", {})["argumentsDigest"]
    assert ctx.approval_request("refund.issue")["requestId"] == ""
    assert r["argumentsDigest"] != ctx.approval_request("refund.issue", {"b": 2, "a": 2})["argumentsDigest"]
    with pytest.raises(toolgate.ArgumentError, match="^arguments: expected a dict, got list$"):
        ctx.approval_request("refund.issue", [1])
    with pytest.raises(toolgate.ArgumentError, match="^request_id: expected str, got int$"):
        ctx.approval_request("refund.issue", None, 7)


def test_decision_facts_are_owned_strings() -> None:
    t = toolgate.Table.load(DEMO)
    d = t.context("demo-chat", role="user").decide("get_page_content")
    del t
    import gc

    gc.collect()
    assert (type(d.class_), d.class_, d.zone, d.ceiling) == (str, "editorContent", "externalEu", "internalConfiguration")


def test_a_call_that_needs_approval_raises_approval_required(compile_project: Compile) -> None:
    t = compile_project(
        "mcp-profiles",
        "policy.tg",
        "provider onprem-llm\n  groups [knowledge, payments, mcp_crm, mcp_billing]\n",
        "provider onprem-llm\n  groups [knowledge, payments, mcp_crm, mcp_billing]\n  needs-approval [\"refund.issue\"]\n",
    )
    ctx = t.context("support-chat", role="user", consumer="billing-bot")
    d = ctx.decide("refund.issue")
    assert (d.allowed, d.reason, d.needs_approval) == (True, None, True)
    assert d.to_dict()["needsApproval"] is True
    assert not ctx.is_allowed("refund.issue")
    assert ctx.is_allowed("payment.status") and not ctx.decide("payment.status").needs_approval
    with pytest.raises(toolgate.ApprovalRequired) as e:
        ctx.check_call("refund.issue")
    exc = e.value
    assert isinstance(exc, toolgate.ApprovalRefusal) and isinstance(exc, toolgate.PolicyViolation)
    assert (exc.kind, exc.class_, exc.action, exc.retryable) == ("approvalRequired", "approval", "askPerson", False)
    assert (exc.tool_name, exc.configuration, exc.consumer) == ("refund.issue", "support-chat", "billing-bot")
    assert exc.decision == d
    assert toolgate.CODE_APPROVAL_REQUIRED == -31003
    # An offered tool has no refusal; the model is told a person approves it.
    assert ctx.refusal("refund.issue") is None
    assert ctx.unavailable_prompt().endswith(
        "Tools you may call, but a person is asked to approve each call before it runs:\n- refund.issue\n"
    )
