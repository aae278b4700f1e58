"""The error hierarchy and its two mapping tables."""

from __future__ import annotations

import inspect

import grpc
import pytest

from plumbline.common import errors

DOMAIN_ERRORS = sorted(
    (
        cls
        for _, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, errors.PlumblineError) and cls is not errors.PlumblineError
    ),
    key=lambda cls: cls.__name__,
)
MAPPED = [e for e in DOMAIN_ERRORS if e is not errors.Internal]
GENERIC = "The server could not complete the request."


def test_every_domain_error_is_in_the_table() -> None:
    assert set(errors.GRPC_CODES) == set(DOMAIN_ERRORS)
    assert len(DOMAIN_ERRORS) == 12


@pytest.mark.parametrize("error", MAPPED, ids=lambda e: e.__name__)
def test_every_error_survives_the_trip_through_grpc(error: type[errors.PlumblineError]) -> None:
    code = errors.GRPC_CODES[error]
    assert code is error.grpc_code
    assert errors.FROM_GRPC[code] is error
    back = errors.from_grpc(code, "Project 7 was not found.")
    assert type(back) is error
    assert back.message == "Project 7 was not found."
    assert str(back) == "Project 7 was not found."
    assert errors.HTTP_STATUS[code] == error.http_status


def test_codes_are_not_shared() -> None:
    codes = [errors.GRPC_CODES[e] for e in DOMAIN_ERRORS]
    assert len(set(codes)) == len(codes)


def test_http_status_covers_exactly_the_mapped_codes() -> None:
    assert set(errors.HTTP_STATUS) == set(errors.FROM_GRPC)
    for code, status in errors.HTTP_STATUS.items():
        assert status == errors.FROM_GRPC[code].http_status
        assert 400 <= status < 600


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (grpc.StatusCode.DEADLINE_EXCEEDED, errors.Unavailable),
    ],
)
def test_codes_no_service_raises_still_map(
    code: grpc.StatusCode, error: type[errors.PlumblineError]
) -> None:
    assert type(errors.from_grpc(code, "x")) is error


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (errors.InvalidArgument, 400),
        (errors.AlreadyExists, 400),
        (errors.FailedPrecondition, 400),
        (errors.NotFound, 404),
        (errors.Unauthenticated, 401),
        (errors.PermissionDenied, 401),  # the contract has no 403
        (errors.MethodNotAllowed, 405),
        (errors.TooLarge, 413),
        (errors.Throttled, 429),
        (errors.Unavailable, 503),
        (errors.Internal, 500),
    ],
)
def test_contract_statuses(error: type[errors.PlumblineError], status: int) -> None:
    assert error.http_status == status


def test_already_exists_is_an_invalid_argument_with_its_own_code() -> None:
    assert issubclass(errors.AlreadyExists, errors.InvalidArgument)
    assert errors.AlreadyExists.grpc_code is grpc.StatusCode.ALREADY_EXISTS
    assert errors.HTTP_STATUS[grpc.StatusCode.ALREADY_EXISTS] == 400


def test_a_key_used_for_something_else_is_a_422() -> None:
    assert errors.HTTP_STATUS[grpc.StatusCode.ABORTED] == 422
    assert type(errors.from_grpc(grpc.StatusCode.ABORTED, "used")) is errors.Unprocessable


@pytest.mark.parametrize(
    "code",
    [
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DATA_LOSS,
        grpc.StatusCode.CANCELLED,
    ],
)
def test_unknown_codes_are_internal_and_hide_details(code: grpc.StatusCode) -> None:
    error = errors.from_grpc(code, "disk on fire at /var/lib/postgresql")
    assert type(error) is errors.Internal
    assert error.message == GENERIC
    assert error.http_status == 500
