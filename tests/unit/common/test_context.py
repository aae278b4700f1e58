"""The caller's context and its gRPC metadata form."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from plumbline.common.context import (
    ORG_ADMIN,
    SYSTEM,
    USER_ADMIN,
    Principal,
    from_metadata,
    principal_var,
    request_id_var,
    to_metadata,
)


def _printable_ascii(metadata: list[tuple[str, str]]) -> bool:
    return all(all(0x20 <= ord(c) <= 0x7E for c in value) for _, value in metadata)


def test_roles() -> None:
    assert Principal(1, "a", frozenset({ORG_ADMIN})).is_admin
    assert Principal(1, "a", frozenset({ORG_ADMIN})).may_manage_users
    assert Principal(1, "a", frozenset({USER_ADMIN})).may_manage_users
    assert not Principal(1, "a", frozenset({USER_ADMIN})).is_admin
    assert not Principal(1, "a").may_manage_users
    assert SYSTEM.is_admin


def test_without_a_principal_only_the_request_id_travels() -> None:
    token = request_id_var.set("abc")
    try:
        metadata = to_metadata()
    finally:
        request_id_var.reset(token)
    assert metadata == [("x-request-id", "abc")]
    assert from_metadata(dict(metadata)) == (None, "abc")


def test_missing_metadata_means_no_principal() -> None:
    assert from_metadata({}) == (None, "-")


@given(
    st.integers(min_value=0, max_value=2**62),
    st.text(min_size=1, max_size=30),
    st.frozensets(st.sampled_from([ORG_ADMIN, USER_ADMIN, "READER"])),
    st.text(max_size=30),
)
def test_metadata_round_trips_and_is_printable_ascii(
    user_id: int, username: str, roles: frozenset[str], request_id: str
) -> None:
    principal = Principal(user_id, username, roles)
    p_token = principal_var.set(principal)
    r_token = request_id_var.set(request_id)
    try:
        metadata = to_metadata()
    finally:
        request_id_var.reset(r_token)
        principal_var.reset(p_token)
    assert _printable_ascii(metadata)  # gRPC refuses anything else
    assert from_metadata(dict(metadata)) == (principal, request_id)
