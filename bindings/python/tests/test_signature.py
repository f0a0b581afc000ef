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


UNTRUSTED = (SIGNED / "untrusted.pub").read_text()


def refused(table: toolgate.Table) -> tuple[str, str]:
    """The LoadError of a handle with the trusted keys over `table`."""
    with pytest.raises(toolgate.LoadError) as e:
        toolgate.TableHandle(table, trusted_keys=TRUSTED)
    return e.value.code, str(e.value)


def test_a_handle_with_trusted_keys_verifies_its_first_table() -> None:
    unsigned = ("unsigned", EXPECT["unsigned.tgt"]["message"])
    assert refused(toolgate.Table.load(SIGNED / "unsigned.tgt")) == unsigned
    # Signed, but loaded without verification: not vouched for either.
    assert refused(toolgate.Table.load(SIGNED / "signed.tgt")) == unsigned
    other = toolgate.Table.load(SIGNED / "untrusted.tgt", trusted_keys=UNTRUSTED)
    assert refused(other) == ("untrustedKey", EXPECT["untrusted.tgt"]["message"])
    first = toolgate.Table.load(SIGNED / "signed.tgt", trusted_keys=TRUSTED)
    h = toolgate.TableHandle(first, trusted_keys=TRUSTED)
    assert h.current() is first
    assert first.verified_by is not None and h.trusted_key_ids == [first.verified_by]
    assert toolgate.Table.load(SIGNED / "signed.tgt").verified_by is None
    assert toolgate.TableHandle(first).trusted_key_ids is None


def test_every_swap_on_a_handle_with_trusted_keys_is_verified() -> None:
    first = toolgate.Table.load(SIGNED / "signed.tgt", trusted_keys=TRUSTED)
    h = toolgate.TableHandle(first, trusted_keys=TRUSTED)
    bad = [
        (toolgate.Table.load(SIGNED / "unsigned.tgt"), "unsigned", EXPECT["unsigned.tgt"]["message"]),
        (toolgate.Table.load(SIGNED / "signed-next.tgt"), "unsigned", EXPECT["unsigned.tgt"]["message"]),
        (
            toolgate.Table.load(SIGNED / "untrusted.tgt", trusted_keys=UNTRUSTED),
            "untrustedKey",
            EXPECT["untrusted.tgt"]["message"],
        ),
    ]
    for table, code, message in bad:
        with pytest.raises(toolgate.LoadError) as e:
            h.swap(table)
        assert (e.value.code, str(e.value)) == (code, message)
        assert h.current() is first  # the current table stays
    nxt = toolgate.Table.load(SIGNED / "signed-next.tgt", trusted_keys=TRUSTED)
    assert h.swap(nxt) is first
    assert h.current() is nxt and nxt.digest == EXPECT["signed-next.tgt"]["digest"]
    # Without keys, a handle swaps in any loaded table.
    open_handle = toolgate.TableHandle(first)
    assert open_handle.swap(bad[0][0]) is first
