"""Targets (--target) and their start order."""

from __future__ import annotations

import itertools

import pytest

from plumbline.common.errors import InvalidArgument
from plumbline.common.settings import SERVICES
from plumbline.modules import ALL, APART, MODULES, resolve


def test_all_is_every_module_but_those_apart_with_the_gateway_last() -> None:
    order = resolve("all")
    assert (
        set(order)
        == set(MODULES) - set(APART)
        == {
            "identity",
            "items",
            "testmgmt",
            "attachments",
            "activity",
            "baselines",
            "hooks",
            "reports",
            "gateway",
        }
    )
    assert order[-1] == "gateway"
    assert order.index("activity") > order.index("identity")
    assert order.index("activity") > order.index("items")
    assert order.index("baselines") > order.index("attachments")
    assert order == (
        "identity",
        "items",
        "testmgmt",
        "attachments",
        "activity",
        "baselines",
        "hooks",
        "reports",
        "gateway",
    )


def test_a_subset_keeps_dependency_order() -> None:
    assert resolve("gateway,identity") == ("identity", "gateway")
    assert resolve("activity, items") == ("items", "activity")
    assert resolve(" items ") == ("items",)


def test_a_target_does_not_pull_in_its_dependencies() -> None:
    assert resolve("gateway") == ("gateway",)
    assert resolve("activity") == ("activity",)


def test_repeats_and_all_combine() -> None:
    assert resolve("items,items") == ("items",)
    assert resolve("gateway,all") == resolve("all")


@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_every_subset_in_any_spelling_respects_dependencies(size: int) -> None:
    for combination in itertools.permutations(MODULES, size):
        order = resolve(",".join(combination))
        assert sorted(order) == sorted(combination)
        for name in order:
            for dep in MODULES[name][1]:
                if dep in order:
                    assert order.index(dep) < order.index(name), (combination, order)


def test_services_are_the_modules_but_the_gateway() -> None:
    assert tuple(m for m in ALL if m != "gateway") == SERVICES


def test_trace_runs_only_when_named_after_items_and_before_the_gateway() -> None:
    assert APART == ("trace",)
    assert "trace" not in resolve("all")
    assert resolve("trace") == ("trace",)
    assert resolve("gateway,trace,items") == ("items", "trace", "gateway")
    assert resolve("all,trace")[-2:] == ("trace", "gateway")


def test_an_unknown_target_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidArgument) as info:
        resolve("items,dashboards")
    assert "'dashboards'" in info.value.message
    assert (
        "all, identity, items, testmgmt, attachments, activity, baselines, hooks, reports, "
        "trace, gateway" in info.value.message
    )


@pytest.mark.parametrize("spec", ["", " , ", ","])
def test_an_empty_target_is_refused(spec: str) -> None:
    with pytest.raises(InvalidArgument, match="at least one target"):
        resolve(spec)
