"""Document keys in natural order."""

from __future__ import annotations

from plumbline.services.testmgmt.store import key_sort


def test_document_keys_sort_in_natural_order() -> None:
    keys = ["P-TSTRN-10", "P-TSTRN-9", "Q-TSTRN-1", "P-TSTRN-100", "odd"]
    assert sorted(keys, key=key_sort) == [
        "P-TSTRN-9",
        "P-TSTRN-10",
        "P-TSTRN-100",
        "Q-TSTRN-1",
        "odd",
    ]
