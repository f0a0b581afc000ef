"""Requiring a signature: conformance/signed/ replayed, each outcome exact."""

from __future__ import annotations

import json

import pytest

import toolgate
from conftest import CORPUS

SIGNED = CORPUS / "signed"
TRUSTED = (SIGNED / "trusted.pub").read_text()
EXPECT = json.loads((SIGNED / "expect.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_each_fixture_loads_or_is_refused_as_expected(name: str) -> None:
    expect = EXPECT[name]
    if expect["ok"]:
        t = toolgate.Table.load(SIGNED / name, trusted_keys=TRUSTED)
        assert t.digest == expect["digest"]
    else:
        with pytest.raises(toolgate.LoadError) as e:
            toolgate.Table.load(SIGNED / name, trusted_keys=TRUSTED)
        assert (e.value.code, str(e.value)) == (expect["error"], expect["message"])


def test_without_keys_a_signed_table_loads_like_any_other() -> None:
    assert toolgate.Table.load(SIGNED / "signed.tgt").digest == EXPECT["signed.tgt"]["digest"]


def test_a_handle_with_trusted_keys_keeps_its_table_on_a_refused_reload() -> None:
    first = toolgate.Table.load(SIGNED / "signed.tgt", trusted_keys=TRUSTED)
    h = toolgate.TableHandle(first, trusted_keys=TRUSTED)
    for name, code in [("unsigned.tgt", "unsigned"), ("untrusted.tgt", "untrustedKey")]:
        with pytest.raises(toolgate.LoadError) as e:
            h.reload((SIGNED / name).read_bytes())
        assert e.value.code == code
        assert h.current().digest == first.digest
    old = h.reload(SIGNED / "signed-next.tgt")
    assert old.digest == first.digest
    assert h.current().digest != first.digest


def test_keys_that_are_not_public_keys_are_an_argument_error() -> None:
    with pytest.raises(toolgate.ArgumentError, match="no public key found"):
        toolgate.Table.load(SIGNED / "signed.tgt", trusted_keys=(SIGNED / "trusted.key").read_text())
