"""The error hierarchy and its two mapping tables."""

from __future__ import annotations

import grpc
import pytest

from plumbline.common import errors


@pytest.mark.parametrize("error", [e for e in errors.GRPC_CODES if e is not errors.Internal])
def test_every_error_survives_the_trip_through_grpc(error: type[errors.PlumblineError]) -> None:
    code = errors.GRPC_CODES[error]
    back = errors.from_grpc(code, "what went wrong")
    assert type(back) is error
    assert back.message == "what went wrong"
    assert errors.HTTP_STATUS[code] == error.http_status


def test_contract_statuses() -> None:
    assert errors.PermissionDenied.http_status == 401  # the contract has no 403
    assert errors.AlreadyExists.http_status == 400
    assert errors.NotFound.http_status == 404
    assert errors.Throttled.http_status == 429


def test_unknown_codes_hide_details() -> None:
    error = errors.from_grpc(grpc.StatusCode.DATA_LOSS, "disk on fire at /var/lib")
    assert isinstance(error, errors.Internal)
    assert "disk" not in error.message
