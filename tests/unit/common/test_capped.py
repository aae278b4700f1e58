"""A capped table sheds what expired, and everything when that is not enough."""

from __future__ import annotations

from plumbline.common.capped import with_room


def test_expired_entries_go_first() -> None:
    table = {"a": 1.0, "b": 5.0, "c": 2.0, "d": 9.0}
    assert with_room(table, lambda until: until > 3.0, keep_under=4) == {"b": 5.0, "d": 9.0}
    assert len(table) == 4  # a new table: the one given is left as it was


def test_all_go_when_too_many_are_alive() -> None:
    table = {n: 10.0 for n in range(5)}
    assert with_room(table, lambda until: until > 3.0, keep_under=5) == {}
    assert with_room(table, lambda until: until > 3.0, keep_under=6) == table
