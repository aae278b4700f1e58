"""The command line explains itself."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from plumbline.cli import main, parser, would


def _options(command: argparse.ArgumentParser) -> list[argparse.Action]:
    found = []
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _options(sub)
        elif not isinstance(action, argparse._HelpAction):
            found.append(action)
    return found


def test_top_level_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parser().parse_args(["--help"])
    text = capsys.readouterr().out
    for command in ("run", "list-targets", "migrate", "credentials", "config", "import"):
        assert f"\n    {command}" in text, command
    assert "PLUMBLINE_" in text


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        parser().parse_args(["--version"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("plumbline ")
    assert out.strip() != "plumbline"


def test_every_option_has_help() -> None:
    missing = [a.option_strings or a.dest for a in _options(parser()) if not a.help]
    assert missing == []


def test_a_dry_run_says_what_would_happen() -> None:
    assert would("created item type REQ") == "would create item type REQ"
    assert would("updated pick list 'Status'") == "would update pick list 'Status'"
    assert would("added rule REQ verifies TC") == "would add rule REQ verifies TC"
    assert would("project P uses relationship rule set 'x'") == (
        "would make: project P uses relationship rule set 'x'"
    )


def test_offline_commands_say_which_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PLUMBLINE_DATABASE_URL", raising=False)
    monkeypatch.delenv("PLUMBLINE_IDENTITY_DATABASE_URL", raising=False)
    assert main(["migrate", "--target", "identity", "--data-dir", str(tmp_path / "d")]) == 0
    err = capsys.readouterr().err
    assert f"the identity database: sqlite+aiosqlite:///{tmp_path / 'd' / 'identity.db'}" in err
