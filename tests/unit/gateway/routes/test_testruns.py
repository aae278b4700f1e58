"""The bulk test run update's entries (``PATCH /testruns``, read by the route itself)."""

from __future__ import annotations

from typing import Any

import pytest

from plumbline.common.errors import InvalidArgument
from plumbline.gateway.routes.testruns import _update


@pytest.mark.parametrize("sent", [12, "12"])
def test_an_entry_id_is_a_number_or_a_string_of_digits(sent: Any) -> None:
    update = _update(0, {"id": sent, "fields": {"testRunStatus": "PASSED"}})
    assert update.id == 12


@pytest.mark.parametrize("sent", ["12a", "", "1.5", " 12", True, 1.5, str(2**63)])
def test_any_other_entry_id_is_named(sent: Any) -> None:
    with pytest.raises(InvalidArgument) as info:
        _update(3, {"id": sent, "fields": {}})
    assert info.value.message.startswith('element 3 must be {"id": <test run id>')
