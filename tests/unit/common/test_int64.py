"""The signed 64-bit range and its error sentence."""

from __future__ import annotations

from plumbline.common import int64


def test_the_range_is_signed_64_bit() -> None:
    assert int64.fits(2**63 - 1)
    assert int64.fits(-(2**63))
    assert not int64.fits(2**63)
    assert not int64.fits(-(2**63) - 1)


def test_the_sentence_names_the_place_the_range_and_the_value() -> None:
    error = int64.out_of_range("fields.priority", 2**70)
    assert error.http_status == 400
    assert error.message == (
        "fields.priority must be between -9223372036854775808 and 9223372036854775807, "
        "got 1180591620717411303424."
    )


def test_huge_numbers_are_described_not_spelled_out() -> None:
    message = int64.out_of_range("x", 10**4000).message
    assert message.endswith("got a number of about 4001 digits.")
