"""An ingest's answer: stored, read back as a replay, and as its message."""

from __future__ import annotations

from plumbline.services.testmgmt.api.results import answer_message
from plumbline.services.testmgmt.results import Answer, Match, Unmatched


def _answer() -> Answer:
    return Answer(
        test_cycle=7,
        test_cases=3,
        matched=[Match("login", "Auth", 11, 5, "P-TC-5", "property testcase=P-TC-5", "PASSED", "")],
        unmatched=[Unmatched("logout", "Auth", ["P-TC-9", "42"], "FAILED")],
    )


def test_the_stored_answer_reads_back_as_a_replay() -> None:
    answer = _answer()
    again = Answer.from_json(answer.to_json())
    assert again.replayed and not answer.replayed
    assert (again.matched, again.unmatched) == (answer.matched, answer.unmatched)
    assert (again.test_cycle, again.test_cases) == (7, 3)


def test_the_answer_message_carries_every_member() -> None:
    message = answer_message(_answer())
    assert (message.test_cycle, message.test_cases, message.replayed) == (7, 3, False)
    match = message.matched[0]
    assert (match.test_run, match.test_case, match.document_key) == (11, 5, "P-TC-5")
    assert (match.matched_by, match.status) == ("property testcase=P-TC-5", "PASSED")
    assert list(message.unmatched[0].references) == ["P-TC-9", "42"]
    assert message.unmatched[0].status == "FAILED"
