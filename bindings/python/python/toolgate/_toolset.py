"""``Context.tool_set()``: what a consumer is offered and what is held back,
as the runtime's ``Context::tool_set`` computes it (nothing is recomputed
here; the native module hands over the runtime's JSON)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass(frozen=True)
class ToolExclusion:
    """One tool held back: its name and its reason (a gate's reason code).

    ``name_visible`` says whether this user may be shown the name
    (``remote-tools visible-to``): the host-facing form
    (``tool_set(audience="host")``) lists every held-back tool and marks a
    hidden remote one with ``name_visible=False``; the model-facing form
    (``audience="model"``) leaves those out, as every model-facing output
    does. Render for people or models only the entries with ``name_visible``.
    """

    name: str
    reason: str
    name_visible: bool = field(default=True, compare=True)

    def __repr__(self) -> str:
        hidden = "" if self.name_visible else ", name_visible=False"
        return f"ToolExclusion(name={self.name!r}, reason={self.reason!r}{hidden})"


@dataclass(frozen=True)
class ToolSet:
    """What a consumer is given (``offered``, registry order), what it is not
    and why (``excluded``), and what the offered descriptors cost in the
    prompt (``descriptor_bytes``, ``estimated_tokens``, an estimate: 4 bytes
    a token). ``audience`` is ``"host"`` or ``"model"``."""

    audience: str
    configuration: str
    consumer: Optional[str]
    profile: Optional[str]
    offered: tuple[str, ...]
    excluded: tuple[ToolExclusion, ...]
    descriptor_bytes: int
    estimated_tokens: int

    @classmethod
    def _from_native(cls, data: dict[str, Any]) -> "ToolSet":
        return cls(
            audience=data["audience"],
            configuration=data["configuration"],
            consumer=data["consumer"],
            profile=data["profile"],
            offered=tuple(data["offered"]),
            excluded=tuple(ToolExclusion(e["tool"], e["reason"], e["nameVisible"]) for e in data["excluded"]),
            descriptor_bytes=data["descriptorBytes"],
            estimated_tokens=data["estimatedTokens"],
        )

    def __contains__(self, name: object) -> bool:
        return name in self.offered

    def exclusion(self, name: str) -> Optional[ToolExclusion]:
        """The exclusion of ``name``, if it is held back."""
        return next((e for e in self.excluded if e.name == name), None)
