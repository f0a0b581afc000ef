"""The gate written by hand in plain Python, as a host would write it before
it had a compiled table: the same seven gates in the same order, over the
policy as dicts (``Table.policy()``; in an application, its configuration
records). It is the baseline of BENCHMARKS.md ("Python") and is checked
against the conformance corpus (tests/test_conformance.py), so the
comparison is between two correct gates."""

from __future__ import annotations

from typing import Any, Optional


class PlainGate:
    def __init__(self, policy: dict[str, Any]) -> None:
        self.policy = policy
        self.tools = {t["name"]: t for t in policy["tools"]}
        self.configurations = {c["name"]: c for c in policy["configurations"]}
        self.profiles = {p["name"]: p for p in policy["profiles"]}

    def decide(
        self,
        name: str,
        configuration: str,
        role: str,
        consumer: Optional[str],
        run: Optional[dict[str, Any]],
        enforcement: Optional[str],
    ) -> tuple[bool, Optional[str], bool]:
        """(allowed, reason, observed only). ``run``: the stored run, decoded; None for a new run."""
        t = self.tools.get(name)
        if t is None:
            return False, "notRegistered", False
        c = self.configurations[configuration]
        if not t["enabled"]:
            return False, "toolDisabled", False
        if t["adminOnly"] and role != "admin":
            return False, "requiresAdmin", False
        if consumer is not None and not self._in_profile(t, consumer):
            return False, "notInProfile", False
        allow = c["allowList"] if run is None else run.get("allowedToolNames")
        if allow is False:
            return False, "configurationGroup", False
        if name != self.policy["skillLoader"]:
            in_groups = c["groups"] is None or t["group"] in c["groups"]
            if not in_groups or (allow is not None and name not in allow):
                return False, "configurationGroup", False
        run_excluded = [] if run is None else run.get("excludedToolNames", [])
        if name in c["excluded"] or run_excluded is False or name in run_excluded:
            return False, "configurationExcluded", False
        if t["class"] > c["ceiling"]:
            if enforcement is None:
                observe = self.policy["observe"]
            else:
                trimmed = enforcement.strip(" \t\n\r\0\x0b")
                observe = trimmed.isascii() and trimmed.lower() == "observe"
            if t["remote"] or not observe:
                return False, "trustZone", False
            return True, "trustZone", True
        return True, None, False

    def needs_approval(self, name: str, configuration: str, consumer: Optional[str]) -> bool:
        """Whether a person approves each call of an offered tool: the
        configuration's ``needs-approval`` selects it, or the consumer's
        profile's does (docs/approvals.md)."""
        t = self.tools.get(name)
        if t is None:
            return False
        if self._selects(self.configurations[configuration]["approval"], t):
            return True
        profile_name = None if consumer is None else self.policy["consumers"].get(consumer)
        return profile_name is not None and self._selects(self.profiles[profile_name]["approval"], t)

    @staticmethod
    def _selects(s: dict[str, Any], t: dict[str, Any]) -> bool:
        if t["name"] in s["tools"] or t["group"] in s["groups"]:
            return True
        return any(t["name"].startswith(prefix) for prefix in s["prefixes"])

    def unavailable(
        self,
        configuration: str,
        role: str,
        consumer: Optional[str],
        run: Optional[dict[str, Any]],
        enforcement: Optional[str],
    ) -> list[tuple[str, str]]:
        """Every registered tool refused, in registry order; remote tools only where names are visible."""
        visibility = self.policy["remoteVisibility"]
        visible = visibility == "everyone" or (visibility == "admins" and role == "admin")
        out = []
        for name, t in self.tools.items():
            if t["remote"] and not visible:
                continue
            allowed, reason, _ = self.decide(name, configuration, role, consumer, run, enforcement)
            if not allowed:
                out.append((name, reason))
        return out

    def _in_profile(self, t: dict[str, Any], consumer: str) -> bool:
        profile_name = self.policy["consumers"].get(consumer)
        if profile_name is None:
            return self.policy["unprofiled"] != "refused"
        p = self.profiles[profile_name]
        if t["name"] in p["tools"] or t["group"] in p["groups"]:
            return True
        return any(t["name"].startswith(prefix) for prefix in p["prefixes"])
