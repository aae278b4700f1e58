"""Subject matching and choosing a bus by URL."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plumbline.common.bus import create_bus, subject_matches
from plumbline.common.bus._memory import MemoryBus
from plumbline.common.bus._nats import NatsBus
from plumbline.common.errors import InvalidArgument


@pytest.mark.parametrize(
    ("pattern", "subject", "expected"),
    [
        ("pl.items.project.created", "pl.items.project.created", True),
        ("pl.items.project.created", "pl.items.project.deleted", False),
        ("pl.*.project.created", "pl.items.project.created", True),
        ("pl.*.*.*", "pl.items.project.created", True),
        ("pl.*", "pl.items.project.created", False),  # * is exactly one token
        ("pl.*.project", "pl.items.project.created", False),
        ("pl.items.project.created.*", "pl.items.project.created", False),
        ("pl.>", "pl.items.project.created", True),
        ("pl.items.>", "pl.items.project", True),
        ("pl.>", "pl", False),  # > needs at least one token
        ("pl.items.>", "pl.identity.user.created", False),
        (">", "pl.items", True),
        ("pl.items", "pl.items.project", False),  # length mismatch
        ("pl.items.project", "pl.items", False),
        ("pl.*.>", "pl.items.project.created", True),
        ("pl.*.>", "pl.items", False),
        ("pla.>", "pl.items", False),
    ],
)
def test_subject_matches(pattern: str, subject: str, expected: bool) -> None:
    assert subject_matches(pattern, subject) is expected


tokens = st.text(alphabet="abcxyz_-0123", min_size=1, max_size=4)
subjects = st.lists(tokens, min_size=1, max_size=6)


def _reference(pattern: str, subject: str) -> bool:
    """NATS semantics, spelled as a regular expression."""
    parts = []
    for index, token in enumerate(pattern.split(".")):
        sep = r"\." if index else ""
        if token == ">":
            parts.append(sep + r"[^.]+(\.[^.]+)*")
            break
        parts.append(sep + ("[^.]+" if token == "*" else re.escape(token)))
    return re.fullmatch("".join(parts), subject) is not None


@given(subjects, st.data())
def test_a_pattern_made_from_a_subject_matches_it(parts: list[str], data: st.DataObject) -> None:
    subject = ".".join(parts)
    stars = data.draw(st.lists(st.booleans(), min_size=len(parts), max_size=len(parts)))
    pattern = [("*" if star else token) for token, star in zip(parts, stars, strict=True)]
    assert subject_matches(".".join(pattern), subject)
    cut = data.draw(st.integers(min_value=0, max_value=len(parts) - 1))
    assert subject_matches(".".join([*pattern[:cut], ">"]), subject)
    # Nothing matches a subject with a token more or less than the pattern (without >).
    assert not subject_matches(".".join([*pattern, "*"]), subject)
    if len(pattern) > 1:
        assert not subject_matches(".".join(pattern[:-1]), subject)
    # ">" needs at least one token where it stands.
    assert not subject_matches(".".join([*parts, ">"]), subject)


@given(subjects, subjects, st.data())
def test_matching_agrees_with_the_nats_rules(
    pattern_parts: list[str], subject_parts: list[str], data: st.DataObject
) -> None:
    wild = data.draw(
        st.lists(
            st.sampled_from(["keep", "star"]),
            min_size=len(pattern_parts),
            max_size=len(pattern_parts),
        )
    )
    pattern_tokens = [
        "*" if how == "star" else token for token, how in zip(pattern_parts, wild, strict=True)
    ]
    if data.draw(st.booleans()):
        pattern_tokens[-1] = ">"
    pattern, subject = ".".join(pattern_tokens), ".".join(subject_parts)
    assert subject_matches(pattern, subject) == _reference(pattern, subject)


def test_create_bus_by_url() -> None:
    memory = create_bus("memory://", "S", "pre")
    assert isinstance(memory, MemoryBus)
    assert memory.prefix == "pre"
    nats = create_bus("nats://127.0.0.1:4222", "STREAM", "pre")
    assert isinstance(nats, NatsBus)
    assert (nats.url, nats.stream, nats.prefix) == ("nats://127.0.0.1:4222", "STREAM", "pre")


def test_create_bus_refuses_other_urls() -> None:
    with pytest.raises(InvalidArgument, match="unsupported bus URL 'kafka://k:9092'"):
        create_bus("kafka://k:9092", "S", "p")
