"""The deterministic heuristics: per-field factors, reasons and provenance spans."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vetq.core.extraction import cross_checks as X
from vetq.core.extraction import field_checks as F
from vetq.core.extraction import heuristics
from vetq.core.extraction.currencies import ISO_4217
from vetq.core.extraction.field_checks import FieldCheck
from vetq.core.schemas import builtin

INVOICE = builtin("invoice")
FIELD_NAMES = ("vendor_name", "invoice_number", "invoice_date", "subtotal", "tax", "total", "currency")


def InvoiceData(**fields: object) -> dict:
    return INVOICE.validate_data(fields)


def _raw(**fields: object) -> dict:
    """A record that skipped validation: the checks must survive any value in it."""
    return {**dict.fromkeys(FIELD_NAMES), **fields}


InvoiceData.model_construct = _raw  # type: ignore[attr-defined]


def run_heuristics(text: str, record: dict) -> dict[str, FieldCheck]:
    return heuristics.run_heuristics(text, record, INVOICE)


FLAGSHIP = """Hi team, forwarding the bill from Globex Ltd below.
Ref: GLX/2026/778
Billing date 2026-02-28.
Items came to 540.00 before tax, tax was 43.20, and the amount due is 583.20. Please pay in GBP. Thanks!
"""

GOOD = dict(
    vendor_name="Globex Ltd",
    invoice_number="GLX/2026/778",
    invoice_date=date(2026, 2, 28),
    subtotal=540.0,
    tax=43.2,
    total=583.2,
    currency="GBP",
)


def _data(**over: object) -> dict:
    return InvoiceData(**{**GOOD, **over})


def _assert_span_texts(text: str, fc: FieldCheck) -> None:
    for sp in fc.spans:
        assert text[sp.start : sp.end] == sp.text


def test_constants_respect_the_contract() -> None:
    assert F.UNGROUNDED_FACTOR < 0.5
    assert 0.95 * F.AMBIGUOUS_CURRENCY_FACTOR >= 0.70
    assert 0.95 * F.NO_ROLE_LABEL_FACTOR >= 0.70
    assert 0.95 * F.ROLE_MISMATCH_FACTOR < 0.70
    assert X.EXTRA_CHARGE_FACTOR >= 0.8
    # an unexplained mismatch and a label conflict each flag a field on their own
    assert 0.95 * X.ARITHMETIC_FACTOR < 0.70
    assert 0.95 * X.CONFLICT_FACTOR < 0.70
    for c in (
        F.UNGROUNDED_FACTOR,
        F.ROLE_MISMATCH_FACTOR,
        X.ARITHMETIC_FACTOR,
        F.AMBIGUOUS_CURRENCY_FACTOR,
        F.NO_ROLE_LABEL_FACTOR,
        F.INVALID_DATE_FACTOR,
        X.EXTRA_CHARGE_FACTOR,
    ):
        assert 0 < c <= 1


def test_flagship_correct_record_is_fully_grounded() -> None:
    checks = run_heuristics(FLAGSHIP, _data())
    assert set(checks) == set(FIELD_NAMES)
    expected_text = {
        "vendor_name": "Globex Ltd",
        "invoice_number": "GLX/2026/778",
        "invoice_date": "2026-02-28",
        "subtotal": "540.00",
        "tax": "43.20",
        "total": "583.20",
        "currency": "GBP",
    }
    for name, fc in checks.items():
        assert fc.field == name
        assert fc.factor == 1.0, (name, fc.reasons)
        assert fc.reasons == []
        assert fc.spans and fc.spans[0].text == expected_text[name]
        _assert_span_texts(FLAGSHIP, fc)


def test_flagship_wrong_total() -> None:
    checks = run_heuristics(FLAGSHIP, _data(total=683.2))
    total = checks["total"]
    assert total.factor < 0.5
    joined = " | ".join(total.reasons)
    assert "540.00 + 43.20" in joined
    assert "683.2" in joined
    assert "not found" in joined
    for name in FIELD_NAMES:
        if name != "total":
            assert checks[name].factor == 1.0, (name, checks[name].reasons)


def test_null_fields_are_absent() -> None:
    checks = run_heuristics(FLAGSHIP, InvoiceData(vendor_name="Globex Ltd"))
    assert list(checks) == ["vendor_name"]
    assert run_heuristics(FLAGSHIP, InvoiceData()) == {}


def test_ungrounded_vendor_and_number() -> None:
    checks = run_heuristics(FLAGSHIP, _data(vendor_name="Globex Inc", invoice_number="GLX/2026/779"))
    assert checks["vendor_name"].factor == F.UNGROUNDED_FACTOR
    assert "'Globex Inc' not found in the source" in checks["vendor_name"].reasons
    assert checks["invoice_number"].factor == F.UNGROUNDED_FACTOR
    assert checks["vendor_name"].spans == []


def test_string_grounding_is_normalised() -> None:
    checks = run_heuristics(FLAGSHIP, _data(vendor_name="GLOBEX LTD.", invoice_number="GLX-2026-778"))
    assert checks["vendor_name"].factor == 1.0
    assert checks["vendor_name"].spans[0].text == "Globex Ltd"
    assert checks["invoice_number"].factor == 1.0
    assert checks["invoice_number"].spans[0].text == "GLX/2026/778"
    assert run_heuristics(FLAGSHIP, _data(vendor_name="Ex"))["vendor_name"].factor < 0.5


def test_wrong_date_is_ungrounded() -> None:
    fc = run_heuristics(FLAGSHIP, _data(invoice_date=date(2026, 3, 1)))["invoice_date"]
    assert fc.factor == F.UNGROUNDED_FACTOR
    assert fc.reasons == ["date 2026-03-01 not found in the source in any written form"]


def test_invalid_raw_date_string() -> None:
    data = InvoiceData.model_construct(**{**GOOD, "invoice_date": "2026-02-30"})
    fc = run_heuristics(FLAGSHIP, data)["invoice_date"]
    assert fc.factor <= F.INVALID_DATE_FACTOR
    assert fc.reasons
    ok = InvoiceData.model_construct(**{**GOOD, "invoice_date": "2026-02-28"})
    assert run_heuristics(FLAGSHIP, ok)["invoice_date"].factor == 1.0


def test_swapped_subtotal_and_tax() -> None:
    checks = run_heuristics(FLAGSHIP, _data(subtotal=43.2, tax=540.0))
    sub, tax, total = checks["subtotal"], checks["tax"], checks["total"]
    assert sub.factor == F.ROLE_MISMATCH_FACTOR
    assert tax.factor == F.ROLE_MISMATCH_FACTOR
    assert "43.20 appears in the source but not as a labelled subtotal (labelled subtotal: 540.00)" in sub.reasons
    assert any("labelled tax: 43.20" in r for r in tax.reasons)
    assert total.factor == 1.0  # 43.2 + 540 still adds up
    assert 0.95 * sub.factor < 0.70


def test_subtotal_committed_as_total_is_a_role_mismatch() -> None:
    fc = run_heuristics(FLAGSHIP, _data(total=540.0))["total"]
    assert fc.factor < 0.5  # role mismatch and the arithmetic fails
    assert any("not as a labelled total (labelled total: 583.20)" in r for r in fc.reasons)
    assert any(r.startswith("arithmetic:") for r in fc.reasons)


LINE_ITEMS = """ACME Supplies - Invoice 4471
Widget A            120.00
Widget B            80.00
Cable pack          40.00
Total               240.00
"""


def test_line_item_as_total() -> None:
    data = InvoiceData(vendor_name="ACME Supplies", total=120.0)
    fc = run_heuristics(LINE_ITEMS, data)["total"]
    assert fc.factor == F.ROLE_MISMATCH_FACTOR
    assert 0.95 * fc.factor < 0.70
    assert fc.spans[0].text == "120.00"
    assert run_heuristics(LINE_ITEMS, InvoiceData(total=240.0))["total"].factor == 1.0


def test_line_item_total_without_any_total_label() -> None:
    text = "Widget A 120.00\nWidget B 80.00\n"
    fc = run_heuristics(text, InvoiceData(total=120.0))["total"]
    assert fc.factor == F.NO_ROLE_LABEL_FACTOR
    assert 0.95 * fc.factor >= 0.70
    assert fc.reasons


COLUMNS = """GLOBEX LTD                       INVOICE GLX/2026/778
Date: 28/02/2026

Subtotal      Tax       Total
540.00        43.20     583.20

Payment in GBP
"""


def test_column_layout() -> None:
    checks = run_heuristics(COLUMNS, _data(invoice_date=date(2026, 2, 28)))
    for name, fc in checks.items():
        assert fc.factor == 1.0, (name, fc.reasons)
        _assert_span_texts(COLUMNS, fc)
    swapped = run_heuristics(COLUMNS, _data(subtotal=43.2, tax=540.0))
    assert swapped["subtotal"].factor == F.ROLE_MISMATCH_FACTOR
    assert swapped["tax"].factor == F.ROLE_MISMATCH_FACTOR


def test_label_after_and_labels_inline() -> None:
    text = "Subtotal 540.00 Tax 43.20 Total 583.20 GBP"
    checks = run_heuristics(text, InvoiceData(subtotal=540.0, tax=43.2, total=583.2))
    assert all(fc.factor == 1.0 for fc in checks.values())
    text2 = "Goods 540.00 before tax plus 43.20 VAT, so 583.20 in total"
    checks = run_heuristics(text2, InvoiceData(subtotal=540.0, tax=43.2))
    assert checks["subtotal"].factor == 1.0
    assert checks["tax"].factor == 1.0


def test_percent_rates_are_not_role_amounts() -> None:
    text = "Net 100.00\nVAT 20% 20.00\nTotal 120.00"
    checks = run_heuristics(text, InvoiceData(subtotal=100.0, tax=20.0, total=120.0))
    assert all(fc.factor == 1.0 for fc in checks.values()), {k: v.reasons for k, v in checks.items()}
    fc = run_heuristics("VAT 20%\nAmount 100.00", InvoiceData(tax=20.0))["tax"]
    assert fc.factor < 0.5


EUROPEAN = """Müller Bürobedarf GmbH
Rechnung Nr. RE-2026-0117
Rechnungsdatum: 28.02.2026

Nettobetrag          1.037,44 EUR
MwSt. 19 %             197,12 EUR
Gesamtbetrag         1.234,56 EUR
"""


def test_european_invoice() -> None:
    data = InvoiceData(
        vendor_name="Müller Bürobedarf GmbH",
        invoice_number="RE-2026-0117",
        invoice_date=date(2026, 2, 28),
        subtotal=1037.44,
        tax=197.12,
        total=1234.56,
        currency="EUR",
    )
    checks = run_heuristics(EUROPEAN, data)
    for name, fc in checks.items():
        assert fc.factor == 1.0, (name, fc.reasons)
        _assert_span_texts(EUROPEAN, fc)
    assert checks["total"].spans[0].text == "1.234,56"
    assert checks["invoice_date"].spans[0].text == "28.02.2026"
    assert checks["vendor_name"].spans[0].text == "Müller Bürobedarf GmbH"
    # folded matching: no umlauts in the committed value still grounds
    assert run_heuristics(EUROPEAN, InvoiceData(vendor_name="MULLER BUROBEDARF GMBH"))["vendor_name"].factor == 1.0


def test_total_including_shipping() -> None:
    text = "Subtotal 540.00\nVAT 43.20\nShipping 15.00\nTotal 598.20\nAll amounts in GBP"
    checks = run_heuristics(text, InvoiceData(subtotal=540.0, tax=43.2, total=598.2, currency="GBP"))
    assert checks["subtotal"].factor == 1.0
    assert checks["tax"].factor == 1.0
    assert checks["currency"].factor == 1.0
    assert checks["total"].factor == X.EXTRA_CHARGE_FACTOR
    assert checks["total"].factor >= 0.8
    assert "extra charge" in checks["total"].reasons[0]


def test_arithmetic_adds_up_no_reason() -> None:
    checks = run_heuristics(FLAGSHIP, _data())
    assert not any("arithmetic" in r for fc in checks.values() for r in fc.reasons)


@pytest.mark.parametrize(
    ("text", "code", "factor"),
    [
        ("Total €583.20", "EUR", 1.0),
        ("Total 583.20 euros", "EUR", 1.0),
        ("Total 1 234,56 zł", "PLN", 1.0),
        ("Total CHF 583.20", "CHF", 1.0),
        ("Total US$583.20", "USD", 1.0),
        ("Total $583.20", "USD", F.AMBIGUOUS_CURRENCY_FACTOR),
        ("Total $583.20", "CAD", F.AMBIGUOUS_CURRENCY_FACTOR),
        ("Total C$583.20", "USD", F.UNGROUNDED_FACTOR),
        ("Total C$583.20", "CAD", 1.0),
        ("Total €583.20", "USD", F.UNGROUNDED_FACTOR),
        ("Total 583.20", "USD", F.UNGROUNDED_FACTOR),
        ("Please pay in GBP", "GBP", 1.0),
        ("Please pay in GBPX", "GBP", F.UNGROUNDED_FACTOR),
    ],
)
def test_currency(text: str, code: str, factor: float) -> None:
    fc = run_heuristics(text, InvoiceData(currency=code))["currency"]
    assert fc.factor == pytest.approx(factor)
    if factor == 1.0:
        assert fc.spans and not fc.reasons
    else:
        assert fc.reasons
    _assert_span_texts(text, fc)


def test_ambiguous_currency_passes_threshold_and_wrong_currency_names_the_other() -> None:
    fc = run_heuristics("Amount due: $583.20", InvoiceData(currency="USD"))["currency"]
    assert 0.95 * fc.factor >= 0.70
    assert "$" in fc.reasons[0]
    wrong = run_heuristics("Amount due: €583.20", InvoiceData(currency="USD"))["currency"]
    assert wrong.factor < 0.5
    assert "EUR" in wrong.reasons[0]


def test_large_document_is_fast() -> None:
    text = (FLAGSHIP + "Société Générale ref 12/34, 1.234,56 EUR on 28.02.2026\n") * 1500
    assert len(text) > 200_000
    checks = run_heuristics(text, _data())
    assert checks["vendor_name"].factor == 1.0


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\x00\x01\x02",
        "\ud800 lone surrogate",
        "((((((((((" * 1000,
        "1" * 100_000,
        "1,234," * 20_000,
        "Total " * 20_000,
        "\n" * 50_000,
        "İstanbul ß ﬁ ǅ \u0301\u0301",
        "9" * 5000 + ".5",
    ],
)
def test_never_raises_on_nasty_input(text: str) -> None:
    checks = run_heuristics(text, _data())
    assert set(checks) == set(FIELD_NAMES)
    for fc in checks.values():
        assert 0 < fc.factor <= 1


def test_non_string_values_via_model_construct() -> None:
    data = InvoiceData.model_construct(
        vendor_name=12,
        invoice_number=["x"],
        invoice_date=12345,
        subtotal="540.00",
        tax=True,
        total=float("inf"),
        currency=7,
    )
    checks = run_heuristics(FLAGSHIP, data)
    for fc in checks.values():
        assert 0 < fc.factor <= 1
    assert checks["subtotal"].factor == 1.0  # "540.00" parses and is grounded
    assert checks["tax"].factor < 0.5
    assert checks["total"].factor < 0.5


_invoice = st.builds(
    InvoiceData,
    vendor_name=st.none() | st.text(max_size=40),
    invoice_number=st.none() | st.text(max_size=20),
    invoice_date=st.none() | st.dates(),
    subtotal=st.none() | st.floats(allow_nan=False, allow_infinity=False),
    tax=st.none() | st.floats(allow_nan=False, allow_infinity=False),
    total=st.none() | st.floats(allow_nan=False, allow_infinity=False),
    currency=st.none() | st.sampled_from(sorted(ISO_4217)),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(), _invoice)
def test_run_heuristics_never_raises(text: str, data: dict) -> None:
    checks = run_heuristics(text, data)
    assert set(checks) == {name for name, value in data.items() if value is not None}
    for name, fc in checks.items():
        assert fc.field == name
        assert 0 < fc.factor <= 1
        assert all(isinstance(r, str) and r for r in fc.reasons)
        for sp in fc.spans:
            assert text[sp.start : sp.end] == sp.text


_money_text = st.text(alphabet="0123456789.,' \u00a0\u202f$€£-()/:%\nTotalTaxSubtotalVATNet", max_size=200)


@settings(max_examples=200, deadline=None)
@given(_money_text, _invoice)
def test_run_heuristics_never_raises_on_money_like_text(text: str, data: dict) -> None:
    for fc in run_heuristics(text, data).values():
        assert 0 < fc.factor <= 1
        for sp in fc.spans:
            assert text[sp.start : sp.end] == sp.text


def test_labels_and_months_beyond_the_first_languages():
    swedish = "Faktura 2026-114\nFakturadatum: 5 marca 2026\nSumma exkl. moms 4 000,00 kr\nMoms 1 000,00 kr\nSumma att betala 5 000,00 SEK\n"
    checks = run_heuristics(
        swedish, InvoiceData(subtotal=4000.0, tax=1000.0, total=5000.0, invoice_date="2026-03-05", currency="SEK")
    )
    assert {name: check.factor for name, check in checks.items()} == {
        "invoice_date": 1.0,
        "subtotal": 1.0,
        "tax": 1.0,
        "total": 1.0,
        "currency": 1.0,
    }, {name: check.reasons for name, check in checks.items()}
    indian = "Taxable value 1,00,000.00\nIGST 18% 18,000.00\nTotal 1,18,000.00 INR\n"
    checks = run_heuristics(indian, InvoiceData(subtotal=100000.0, tax=18000.0, total=118000.0, currency="INR"))
    assert checks["subtotal"].factor == 1.0, checks["subtotal"].reasons


# --- two labelled totals, and a mismatch nothing in the source explains ----------------
CONFLICTING_TOTALS = "Subtotal 540.00, tax 43.20, total 583.20 GBP. The total is 999.99."


@pytest.mark.parametrize("committed_total", [999.99, 583.2])
def test_two_different_labelled_totals_are_a_conflict(committed_total: float) -> None:
    data = InvoiceData(subtotal=540.0, tax=43.2, total=committed_total, currency="GBP")
    checks = run_heuristics(CONFLICTING_TOTALS, data)
    total = checks["total"]
    assert 0.95 * total.factor < 0.70, total.reasons
    [conflict] = [r for r in total.reasons if r.startswith("conflicting total")]
    assert "583.20" in conflict and "999.99" in conflict
    assert checks["subtotal"].factor == checks["tax"].factor == 1.0


def test_subtotal_and_tax_labelled_twice_with_different_values_conflict() -> None:
    text = "Subtotal 540.00\nVAT 43.20\nTotal 583.20\n\nSummary: subtotal 450.00, VAT 90.00"
    checks = run_heuristics(text, InvoiceData(subtotal=540.0, tax=43.2, total=583.2))
    assert checks["subtotal"].factor == X.CONFLICT_FACTOR
    assert any("conflicting subtotal" in r and "450.00" in r for r in checks["subtotal"].reasons)
    assert checks["tax"].factor == X.CONFLICT_FACTOR
    assert any("conflicting tax" in r and "90.00" in r for r in checks["tax"].reasons)
    assert checks["total"].factor == 1.0


@pytest.mark.parametrize(
    ("text", "data"),
    [
        (
            "Subtotal 540.00\nTax 43.20\nTotal 583.20\n...\nTotal 583.20 GBP",
            dict(subtotal=540.0, tax=43.2, total=583.2),
        ),
        ("Subtotal 540.00\nTax 43.20\nTotal 583.20\nAmount due 583.20", dict(subtotal=540.0, tax=43.2, total=583.2)),
        ("Total 583.20\nAmount paid 200.00\nBalance due 383.20", dict(total=583.2)),
        ("Total 583.20\nTotal paid 200.00, balance due 383.20", dict(total=583.2)),
        ("Total 583.20\nPaid by card 583.20\nBalance due 0.00", dict(total=583.2)),
        ("Total 583.20\nLess deposit 100.00\nAmount due 483.20", dict(total=583.2)),
        ("Total 583.20 incl. VAT 43.20", dict(total=583.2)),
        ("Page 1 subtotal 300.00\nPage 2 subtotal 240.00\nSubtotal 540.00", dict(subtotal=540.0)),
        ("Subtotal 300.00\n--- page 2 ---\nSubtotal 240.00\nSubtotal 540.00", dict(subtotal=540.0)),
        ("Subtotal carried forward 300.00\nSubtotal 540.00", dict(subtotal=540.0)),
        ("VAT 20% 100.00\nVAT 5% 10.00\nTotal VAT 110.00", dict(tax=110.0)),
        ("Tax 20% on 216.00\nTax 43.20", dict(tax=43.2)),
        ("Total GBP 583.20\nTotal EUR 680.00", dict(total=583.2, currency="GBP")),
        ("VAT 43.20 GBP\nVAT in EUR: 50.12 EUR", dict(tax=43.2, currency="GBP")),
        ("Total: 3 items\nTotal 583.20", dict(total=583.2)),
        ("Minimum amount due 50.00\nTotal 583.20", dict(total=583.2)),
        ("Shipping total 15.00\nSubtotal 540.00\nVAT 43.20\nTotal 598.20", dict(subtotal=540.0, tax=43.2, total=598.2)),
        ("Total before discount 600.00\nDiscount 16.80\nTotal 583.20", dict(total=583.2)),
        (
            "Page 1 of 2\nWidget A 300.00\nSubtotal 300.00\nPage 2 of 2\nWidget B 240.00\nSubtotal 540.00\n"
            "VAT 20% 108.00\nTotal 648.00",
            dict(subtotal=540.0, tax=108.0, total=648.0),
        ),
        ("Your last invoice total was 450.00.\nThis invoice: total 583.20", dict(total=583.2)),
        ("Total 583.20\nTotal savings 20.00", dict(total=583.2)),
        ("TOTAL 583.20\nTotal tendered 600.00\nChange 16.80", dict(total=583.2)),
        ("Total £583.20\nTotal $735.00", dict(total=583.2, currency="GBP")),
        ("Invoice 1 total 100.00\nInvoice 2 total 200.00\nTotal due 300.00", dict(total=300.0)),
        ("Total 583.20\nTip 10.00\nTotal 593.20", dict(total=593.2)),
        ("MwSt 19% 95,00\nMwSt 7% 2,80\nTotal VAT 97,80", dict(tax=97.8)),
    ],
)
def test_what_is_not_two_different_labelled_totals(text: str, data: dict) -> None:
    checks = run_heuristics(text, InvoiceData(**data))
    for name, fc in checks.items():
        assert not any(r.startswith("conflicting") for r in fc.reasons), (name, fc.reasons)
        assert 0.95 * fc.factor >= 0.70, (name, fc.reasons)


@pytest.mark.parametrize(
    ("text", "data", "role", "other"),
    [
        ("Total 583.20 GBP\nTotal 599.00 GBP", dict(total=583.2, currency="GBP"), "total", "599.00"),
        ("Total 583.20\n\nAmount due: 600.00", dict(total=583.2), "total", "600.00"),
        (
            "Gesamtbetrag 1.234,56 EUR\nZu zahlen: 1.234,56 EUR\nGesamt 1.300,00",
            dict(total=1234.56),
            "total",
            "1.300,00",
        ),
        ("Invoice 1 total 100.00\nInvoice 2 total 200.00\nTotal due 300.00", dict(total=100.0), "total", "200.00"),
        ("Tax 43.20\nVAT 50.00", dict(tax=43.2), "tax", "50.00"),
    ],
)
def test_what_is_two_different_labelled_amounts(text: str, data: dict, role: str, other: str) -> None:
    fc = run_heuristics(text, InvoiceData(**data))[role]
    assert fc.factor == X.CONFLICT_FACTOR
    assert any(r.startswith(f"conflicting {role}") and other in r for r in fc.reasons), fc.reasons


def test_mismatch_far_beyond_charges_is_never_forgiven_however_grounded() -> None:
    text = "Subtotal 540.00\nVAT 43.20\nTotal 683.20\nPaid in GBP"
    checks = run_heuristics(text, InvoiceData(subtotal=540.0, tax=43.2, total=683.2, currency="GBP"))
    assert checks["subtotal"].factor == checks["tax"].factor == 1.0  # all three are grounded and labelled
    total = checks["total"]
    assert total.factor == X.ARITHMETIC_FACTOR
    assert 0.95 * total.factor < 0.70
    assert any("100.00 is beyond rounding" in r for r in total.reasons)


def test_a_labelled_charge_of_another_size_does_not_forgive_the_mismatch() -> None:
    text = "Subtotal 540.00\nVAT 43.20\nShipping 15.00\nTotal 683.20"
    fc = run_heuristics(text, InvoiceData(subtotal=540.0, tax=43.2, total=683.2))["total"]
    assert fc.factor == X.ARITHMETIC_FACTOR


@pytest.mark.parametrize(
    ("text", "total", "explained_by"),
    [
        (
            "Subtotal 540.00\nVAT 43.20\nShipping 10.00\nHandling fee 5.00\nTotal 598.20",
            598.2,
            "shipping 10.00 + handling fee 5.00",
        ),
        ("Subtotal 540.00\nVAT 43.20\nDiscount -10.00\nTotal 573.20", 573.2, "discount -10.00"),
        ("Subtotal 540.00\nVAT 43.20\nDiscount 10.00\nTotal 573.20", 573.2, "discount 10.00"),
        ("Subtotal 540.00\nVAT 43.20\nRounding 0.30\nTotal 583.50", 583.5, "rounding 0.30"),
        ("Subtotal 540.00\nVAT 43.20\nTotal 583.23", 583.23, "within rounding"),
    ],
)
def test_plausible_differences_are_forgiven_with_their_reason(text: str, total: float, explained_by: str) -> None:
    checks = run_heuristics(text, InvoiceData(subtotal=540.0, tax=43.2, total=total))
    fc = checks["total"]
    assert fc.factor == X.EXTRA_CHARGE_FACTOR
    assert 0.95 * fc.factor >= 0.70
    assert any(explained_by in r for r in fc.reasons), fc.reasons


def test_a_discount_does_not_explain_a_total_that_is_larger() -> None:
    text = "Subtotal 540.00\nVAT 43.20\nDiscount 10.00\nTotal 593.20"
    fc = run_heuristics(text, InvoiceData(subtotal=540.0, tax=43.2, total=593.2))["total"]
    assert fc.factor == X.ARITHMETIC_FACTOR


_TOTAL_LABELS = ["Total", "Amount due", "Total due", "Balance due", "Grand total", "Invoice total", "Total amount"]


@settings(max_examples=150, deadline=None)
@given(
    st.integers(min_value=100, max_value=10_000_000),
    st.integers(min_value=0, max_value=2_000_000),
    st.lists(st.sampled_from(_TOTAL_LABELS), min_size=1, max_size=4),
    st.sampled_from([", ", ".\n", "\n\n", ". The "]),
)
def test_a_total_repeated_under_any_total_label_never_conflicts(sub_cents, tax_cents, labels, sep) -> None:
    sub, tax = Decimal(sub_cents) / 100, Decimal(tax_cents) / 100
    total = sub + tax
    text = f"Subtotal {sub:,.2f}{sep}Tax {tax:,.2f}{sep}" + sep.join(f"{label} {total:,.2f}" for label in labels)
    checks = run_heuristics(text, InvoiceData(subtotal=float(sub), tax=float(tax), total=float(total)))
    for name, fc in checks.items():
        assert fc.factor == 1.0, (text, name, fc.reasons)
