"""The transfer pool, in all and per user (API admission: ``test_admission.py``)."""

from __future__ import annotations

from plumbline.gateway.throttle import Transfers


def test_transfers_are_bounded_in_all_and_per_user() -> None:
    transfers = Transfers(concurrency=3, per_user=2)
    assert transfers.start(7, body=True) is None
    assert transfers.start(7, body=True) is None
    refused = transfers.start(7, body=True)
    assert refused is not None
    assert "2 files or reports" in refused
    assert transfers.start(7, body=False) is None  # a download is no upload of the user's
    full = transfers.start(8, body=True)
    assert full is not None
    assert "most transfers at once (3)" in full
    transfers.end(7, body=True)
    assert transfers.start(8, body=True) is None
    assert transfers.sending == {7: 1, 8: 1}
    for user in (7, 8):
        transfers.end(user, body=True)
    transfers.end(7, body=False)
    assert (transfers.open, transfers.sending) == (0, {})
