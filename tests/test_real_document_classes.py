"""What real invoices and receipts broke, class by class (issue 14): each test is a
small document in the shape that misled the heuristics, with the correct record
(which must now pass untouched) and, where the class is about catching, a wrong one
(which must still be caught)."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vetq.core.extraction import cross_checks as X
from vetq.core.extraction import field_checks as F
from vetq.core.extraction.amounts import currency_beside, find_amounts
from vetq.core.extraction.dates import find_date_mentions
from vetq.core.extraction.gate import BASE_CONFIDENCE_WITHOUT_CRITIC
from vetq.core.extraction.heuristics import run_heuristics
from vetq.core.extraction.roles import LABEL_BEFORE_WINDOW, laid_out_length, reach_start
from vetq.core.extraction.schema import DEFAULT_FIELD_THRESHOLD
from vetq.core.extraction.source import Source
from vetq.core.schemas import builtin, compile_schema

INVOICE = builtin("invoice")
RECEIPT = builtin("receipt")
ORDER = builtin("purchase_order")
NOTICE = builtin("shipping_notice")


def factors(text: str, record: dict, schema=INVOICE) -> dict[str, float]:
    return {path: check.factor for path, check in run_heuristics(text, schema.validate_data(record), schema).items()}


def reasons(text: str, record: dict, schema=INVOICE) -> dict[str, list[str]]:
    return {path: check.reasons for path, check in run_heuristics(text, schema.validate_data(record), schema).items()}


def amount_roles(text: str) -> list[tuple[str, str | None]]:
    """Each amount of an invoice's text as written, with the role the labels give it."""
    source = Source(text, INVOICE.lexicon, INVOICE.value_lexicon)
    return [(a.raw, role) for a, role in zip(source.amounts, source.roles, strict=True)]


def clean(text: str, record: dict, schema=INVOICE) -> None:
    lowered = {p: r for p, r in reasons(text, record, schema).items() if r}
    assert lowered == {}, lowered


def passes(text: str, record: dict, schema=INVOICE) -> None:
    """No field of `record` falls under the gate with the Critic off (a reason that
    explains a figure may stand)."""
    confidences = {p: BASE_CONFIDENCE_WITHOUT_CRITIC * f for p, f in factors(text, record, schema).items()}
    assert min(confidences.values()) >= DEFAULT_FIELD_THRESHOLD, reasons(text, record, schema)


def flagged(text: str, record: dict, field: str, *says: str) -> None:
    """`field` of `record` is flagged with a reason that says each of `says`."""
    wrong = reasons(text, record)[field]
    assert any(all(part in r for part in says) for r in wrong), wrong


# 1. Totals phrased as inclusive of tax ------------------------------------------------------
@pytest.mark.parametrize(
    "text,record",
    [
        (
            "Subtotal 100.00\nGST 6% 6.00\nTotal items: 3\nTotal sales (inclusive of GST) 106.00\n",
            {"subtotal": 100.0, "tax": 6.0, "total": 106.0},
        ),
        ("Total qty 4\nTotal incl GST 53.00\nGST 3.00\n", {"tax": 3.0, "total": 53.0}),
        ("TOTAL EUR (IVA incluido)      30,00\n   IVA incluido               4,67\n", {"tax": 4.67, "total": 30.0}),
        ("TOTAL (IVA 10% incl.)      67,70 €\nCuota IVA                 6,15 €\n", {"tax": 6.15, "total": 67.7}),
        ("Nett Total 45.50\nTotal Qty: 2\n", {"total": 45.5}),
        ("Net 100.00\nVAT 21% 21.00\nAmount incl. VAT 121.00\n", {"subtotal": 100.0, "tax": 21.0, "total": 121.0}),
        # After a figure, the same words name the tax that figure includes.
        ("Total CHF 185.00 (inkl. MWST 8.1 %: CHF 13.86)\n", {"tax": 13.86, "total": 185.0, "currency": "CHF"}),
        # A tax summary row ends with a total word: it is the tax's total, not the document's.
        (
            "SUMME EUR 11,70\nenthaltene MwSt  7%  0,58\nenthaltene MwSt 19%  0,46\nMwSt gesamt  1,04\n",
            {"tax": 1.04, "total": 11.7, "currency": "EUR"},
        ),
    ],
)
def test_totals_phrased_as_inclusive_of_tax_are_totals(text, record):
    clean(text, record)


# 2. Currency glued to the amount -------------------------------------------------------------
@pytest.mark.parametrize(
    "text,record,ambiguous",
    [
        ("TOTAL RM20.40\nCASH RM50.00\n", {"total": 20.4, "currency": "MYR"}, False),
        ("Grand Total Rs 1939\n", {"total": 1939.0, "currency": "INR"}, True),
        ("Razem 1.234,56 zł\n", {"total": 1234.56, "currency": "PLN"}, False),
        ("Total due USD1,200\n", {"total": 1200.0, "currency": "USD"}, False),
        ("Gesamt €593,36\n", {"total": 593.36, "currency": "EUR"}, False),
        ("Jumlah Rp45.000\n", {"total": 45000.0, "currency": "IDR"}, False),
        ("Grand Total ₹1,939.00\n", {"total": 1939.0, "currency": "INR"}, False),
    ],
)
def test_currency_glued_to_the_amount_hides_neither(text, record, ambiguous):
    got = factors(text, record)
    assert got["total"] == 1.0
    assert got["currency"] == (F.AMBIGUOUS_CURRENCY_FACTOR if ambiguous else 1.0)


# 3. Column headers --------------------------------------------------------------------------
TABLE = (
    "Item        Unit price   Total\n"
    "Widget      10.00        20.00\n"
    "Gadget      5.00         15.00\n"
    "\n"
    "Subtotal 35.00\nVAT 7.00\nAmount due 42.00\n"
)


def test_a_column_header_over_a_table_labels_none_of_its_rows():
    clean(TABLE, {"subtotal": 35.0, "tax": 7.0, "total": 42.0})
    # the first row's amount taken for the total is not "labelled total" by the header
    got = factors(TABLE, {"subtotal": 35.0, "tax": 7.0, "total": 20.0})
    assert got["total"] < 0.7 * F.ROLE_MISMATCH_FACTOR + 1e-9


def test_a_column_header_over_one_figure_labels_it():
    text = "Subtotal      VAT       Total\n435.50        87.10     522.60\n"
    clean(text, {"subtotal": 435.5, "tax": 87.1, "total": 522.6})


def test_a_header_stacked_high_over_a_tables_first_row_labels_none_of_its_rows():
    # Each rate's row, then a totals row, under a header three lines high: the header's
    # lookup reaches only the first row, whose figure is one rate's, not the total.
    text = (
        "Sales note 7/2024\n"
        "                      VAT       Total excl.  Total incl.\n"
        "                                                   VAT\n"
        "                      category  VAT          VAT\n"
        "Payment in 30 days    Z (0%)      8,20     0,00   8,20\n"
        "                      S (21%)   100,00    21,00  121,00\n"
        "                      Totals    108,20    21,00  129,20\n"
    )
    assert amount_roles(text)[1:4] == [("8,20", None), ("0,00", None), ("8,20", None)]
    said = reasons(text, {"subtotal": 108.2, "tax": 21.0, "total": 129.2})["total"]
    assert not any("labelled total" in reason for reason in said), said


@pytest.mark.parametrize(
    "text,record",
    [
        (  # a totals box, then what was paid
            "Consulting                100.00\nVAT 20%                    20.00\n"
            "                           Total\n                          120.00\n"
            "Amount paid               120.00\nBalance due                 0.00\n",
            {"subtotal": 100.0, "tax": 20.0, "total": 120.0},
        ),
        (  # a totals box, then the total restated in another currency
            "Invoice 7\n    Total amount\n    CHF 1,080.00\n    EUR 1,120.55\n",
            {"total": 1080.0, "currency": "CHF"},
        ),
    ],
)
def test_a_label_over_a_lone_figure_names_it_whatever_the_next_line_holds(text, record):
    # No table's first row: the figure stands alone on its line under its label.
    said = reasons(text, record)["total"]
    assert not any("labelled total" in reason for reason in said), said


# 4. The tax base is not the tax -----------------------------------------------------------
def test_the_base_of_a_rate_is_not_the_tax():
    text = "Subtotal $112.90\nTax 15% on $112.90   $16.94\nTotal $129.84\n"
    clean(text, {"subtotal": 112.9, "tax": 16.94, "total": 129.84})


# 5. Payment terms -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "terms", ["Zahlungsbedingungen 14 Tage netto", "Conditions : 30 jours net", "Payment terms: net 30 days"]
)
def test_numbers_in_payment_terms_are_not_amounts(terms):
    text = f"{terms}\nNettobetrag 200,00\nMwSt 38,00\nGesamt 238,00\n"
    clean(text, {"subtotal": 200.0, "tax": 38.0, "total": 238.0})


# 6. Subtotal labels in other languages --------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "Exclusief BTW 100,00\nBTW 21,00\nTotaal 121,00\n",
        "Imponibile 100,00\nIVA 21,00\nTotale 121,00\n",
        "Total HT 100,00\nTVA 21,00\nTotal TTC 121,00\n",
        "Netto 100,00\nMwSt 21,00\nBrutto 121,00\n",
    ],
)
def test_subtotal_labels_in_other_languages(text):
    clean(text, {"subtotal": 100.0, "tax": 21.0, "total": 121.0})


# A subtotal label said to include the tax names a gross figure, in any language: no
# rival to the net subtotal, and no subtotal either. (English "Subtotal incl. VAT" read
# so already, because "incl. vat" is a total label of its own.)
@pytest.mark.parametrize(
    "text",
    [
        "Exclusief BTW 100,00\nBTW 21,00\nSubtotaal incl. BTW 121,00\nTotaal 121,00\n",
        "Netto 100,00\nMwSt 21,00\nZwischensumme inkl. MwSt 121,00\nGesamt 121,00\n",
        "Imponibile 100,00\nIVA 21,00\nSubtotale IVA inclusa 121,00\nTotale 121,00\n",
        "Subtotal excl. VAT 100.00\nVAT 21.00\nSubtotal incl. VAT 121.00\nTotal 121.00\n",
    ],
)
def test_a_subtotal_including_the_tax_is_a_gross_figure_not_a_rival_subtotal(text):
    clean(text, {"subtotal": 100.0, "tax": 21.0, "total": 121.0})
    flagged(text, {"subtotal": 121.0, "tax": 21.0, "total": 121.0}, "subtotal", "not as a labelled subtotal")


def test_a_subtotal_excluding_the_tax_stays_a_subtotal():
    # The exclusion words qualify the same way but leave the label's figure a subtotal.
    text = "Subtotaal zonder BTW 100,00\nBTW 21,00\nTotaal 121,00\n"
    clean(text, {"subtotal": 100.0, "tax": 21.0, "total": 121.0})


# 7. A total that does not reconcile is not forgiven by a large "charge" ---------------------
def test_labelled_charges_explain_a_small_difference_but_not_a_large_one():
    text = "Subtotal 500.00\nTax 50.00\nShipping 12.00\nAmount paid 539.00\nTotal 562.00\nBalance 11.00\n"
    assert factors(text, {"subtotal": 500.0, "tax": 50.0, "total": 562.0})["total"] == X.EXTRA_CHARGE_FACTOR
    flagged(
        text, {"subtotal": 500.0, "tax": 50.0, "total": 11.0}, "total", "more than 25% of 550.00", "amount paid 539.00"
    )


# 8. OCR noise ---------------------------------------------------------------------------------
def test_a_name_read_with_ocr_noise_is_grounded_lower_with_its_span():
    text = "MR. D.I.Y. (M) SDN BND\nNo. 40, Jalan Seri\nTotal 10.00\n"
    checks = run_heuristics(text, INVOICE.validate_data({"vendor_name": "MR. D.I.Y. (M) SDN BHD"}), INVOICE)
    vendor = checks["vendor_name"]
    assert vendor.factor == F.NEAR_MATCH_FACTOR and 0.95 * vendor.factor >= 0.70  # lower, not flagged
    assert vendor.spans[0].text == "MR. D.I.Y. (M) SDN BND"
    assert "differs by 1 character" in vendor.reasons[0]


@pytest.mark.parametrize(
    "record,path",
    [
        ({"vendor_name": "Globex Inc"}, "vendor_name"),  # three characters off: another name
        ({"vendor_name": "Inform"}, "vendor_name"),  # inside a longer word
        ({"invoice_number": "INV-20461"}, "invoice_number"),  # an identifier is exact or nothing
        ({"total": 583.21}, "total"),  # an amount is exact or nothing
    ],
)
def test_near_matches_are_no_free_pass(record, path):
    text = "Globex Ltd, Information Services\nInvoice INV-20416\nTotal 583.20\n"
    assert factors(text, record)[path] <= F.UNGROUNDED_FACTOR


# 9. No total label at all -------------------------------------------------------------------
ITEMS = "Widget 10.00\nGadget 20.00\nThing 5.00\n\n35.00\n"


def test_without_a_total_label_a_line_amount_scores_lower_than_the_largest():
    largest, line = factors(ITEMS, {"total": 35.0})["total"], factors(ITEMS, {"total": 10.0})["total"]
    assert largest == F.NO_ROLE_LABEL_FACTOR and 0.95 * largest >= 0.70
    assert line == pytest.approx(F.NO_ROLE_LABEL_FACTOR * X.UNLABELLED_TOTAL_FACTOR) and 0.95 * line < 0.70


def test_without_a_total_label_a_total_that_reconciles_passes():
    text = "Net 100.00\nVAT 20.00\n\nWidget 100.00   120.00\nService 150.00\n"
    assert factors(text, {"subtotal": 100.0, "tax": 20.0, "total": 120.0})["total"] == F.NO_ROLE_LABEL_FACTOR


@pytest.mark.parametrize("last", ["****  BALANCE", "Summa", "Importe", "Net Amount"])
def test_without_a_total_label_the_subtotal_before_its_discount_is_no_total(last):
    # the goods' sum, the discount taken off it and what is left, under words that name no
    # total: the sum before the discount is not the total, what it leaves is; with a tax
    # after the discount, the subtotal, the tax and the discount make it
    text = f"Item A   5.99\nItem B   13.48\nSubtotal   19.47\nDiscount   -1.50\n{last}   17.97\n"
    flagged(text, {"total": 19.47}, "total", "most likely what they leave", "discount -1.50", "17.97")
    assert factors(text, {"total": 17.97})["total"] >= F.NO_ROLE_LABEL_FACTOR
    taxed = text.replace(f"{last}   17.97", f"Tax   0.81\n{last}   18.78")
    right = {"subtotal": 19.47, "tax": 0.81, "total": 18.78}
    assert not any("one line's amount" in r for r in reasons(taxed, right)["total"])
    assert 0.95 * factors(taxed, right)["total"] >= 0.70
    flagged(taxed, {"total": 19.47}, "total", "most likely what they leave", "18.78")
    # a payment is no discount: what it leaves is still owed of the same total
    for paid in (
        "SUBTOTAL   45.00\nCASH   20.00\nCARD   25.00\n",
        "Subtotal   4,800.00\nPayment received   -1,500.00\nBalance   3,300.00\n",
        "Subtotal   4,800.00\nPayment received:\n                 -1,500.00\nBalance   3,300.00\n",
    ):
        total = 45.0 if "CASH" in paid else 4800.0
        assert not any("most likely what they leave" in r for r in reasons(paid, {"total": total})["total"])
    # with no figure after the discount, the subtotal is still the largest figure's reading
    unpaid = text.replace(f"{last}   17.97\n", "")
    assert factors(unpaid, {"total": 19.47})["total"] == F.NO_ROLE_LABEL_FACTOR


# What the real-document set taught beyond the nine classes ------------------------------
def test_a_label_ending_its_line_names_the_lone_figure_below_it():
    """OCR of a receipt puts one token on a line: the label's figure is on the next one."""
    text = "3 X\n1,09\nMOSER ROTH\n3,27 C\nZU ZAHLEN EURO\n24,20\n-K-U-N-D-E-N-B-E-L-E-G-\n"
    clean(text, {"total": 24.2}, RECEIPT)
    trailing = "NETTO\n33,07 EUR BRUTTO\n39,35 EUR\nDanke\n"
    clean(trailing, {"total": 39.35}, RECEIPT)
    assert factors(trailing, {"total": 33.07}, RECEIPT)["total"] < 0.7  # the net is no total


def test_a_table_row_split_into_lines_is_not_read_as_label_and_figure():
    text = "Summe\n1,61\n14,08\n15,69\nDanke\nZu zahlen 15,69\n"
    clean(text, {"total": 15.69}, RECEIPT)


def test_a_tax_breakdown_row_gives_its_label_to_the_tax_not_the_base():
    text = (
        "Umsatzsteuer (S)  410,10  -6,55  403,55  19  76,67\n"
        "Rechnungssumme ohne USt.  403,55\nSteuerbetrag  76,67\nBruttosumme  480,22\n"
    )
    clean(text, {"subtotal": 403.55, "tax": 76.67, "total": 480.22})
    french = "TVA collectée (vente) 20,0%  81,90 €  16,38 €\nTotal HT 81,90 €\nTotal TTC 98,28 €\n"
    clean(french, {"subtotal": 81.9, "tax": 16.38, "total": 98.28})


def test_the_tax_of_each_rate_beside_their_sum_is_no_conflict():
    text = "MwSt 19%  -0,92\nMwSt 7%  -0,20\nSteuerbetrag  -1,12\nBrutto  -8,79\nNetto  -7,67\n"
    clean(text, {"subtotal": -7.67, "tax": -1.12, "total": -8.79})


def test_a_net_figure_named_by_exclusion_and_a_term_in_days_are_read_right():
    text = (
        "Rechnungssumme Netto (excl. USt.)  198,00\nUSt. 19%  198,00  37,62\nRechnungssumme Brutto  235,62\n"
        "Zahlbar innerhalb 30 Tagen netto, 3% Skonto innerhalb 10 Tagen\n"
    )
    clean(text, {"subtotal": 198.0, "tax": 37.62, "total": 235.62})


def test_counts_in_brackets_and_times_are_not_amounts():
    text = "Artikel (1)\nOffen 9.00 Uhr - 20.00 Uhr\nSUMME [3]\n12,50\nBar\n"
    clean(text, {"total": 12.5}, RECEIPT)


def test_cash_tendered_and_change_do_not_count_as_the_largest_figure():
    text = "Brot 2,50\nKaffee 6,33\n\n8,83\nBARGELD 20,03\nZURUCK 11,20\n"
    assert factors(text, {"total": 8.83}, RECEIPT)["total"] == F.NO_ROLE_LABEL_FACTOR
    assert factors(text, {"total": 6.33}, RECEIPT)["total"] < F.NO_ROLE_LABEL_FACTOR


def test_a_difference_no_word_for_cash_names_is_no_tender():
    # a service's value, its withholdings and what is left: 5.000,00 - 4.300,00 is the
    # withholdings' 700,00, but nothing says cash was handed over, so 700,00 given as the
    # total is a figure like any other, not the rest of a tender
    text = (
        "Número da NFS-e 888\nValor do Serviço   R$ 5.000,00\nRetido na fonte    R$ 700,00\n"
        "Valor Líquido      R$ 4.300,00\n"
    )
    assert factors(text, {"total": 700.0})["total"] < F.NO_ROLE_LABEL_FACTOR
    assert factors(text, {"total": 5000.0})["total"] == F.NO_ROLE_LABEL_FACTOR
    # with its words, the same figures are a tender: the cash and its change are set aside
    till = "Brot 2,50\nKaffee 4,50\n5.000,00\nBar  R$ 5.700,00\nTroco  R$ 700,00\n"
    assert factors(till, {"total": 5000.0}, RECEIPT)["total"] == F.NO_ROLE_LABEL_FACTOR
    # and so is a figure with a deduction taken off it, its minus set apart ("- 0,10")
    discounted = "Pos.  Menge  Bezeichnung      GP\n1     1,00   Toller Artikel  10,00\n     1,00 %  - 0,10\n\n9,90\n"
    assert factors(discounted, {"total": 9.9})["total"] == F.NO_ROLE_LABEL_FACTOR


@pytest.mark.parametrize("written", ["02.03,2020", "02,03.2020", "02 03.2020"])
def test_a_date_whose_separators_ocr_mixed_is_read(written):
    clean(f"Datum {written} 14:38\nSumme 5,00\n", {"date": "2020-03-02", "total": 5.0}, RECEIPT)


# What the held-out set taught (classes, not its documents) --------------------------------
# 1. A labelled sum of the goods beside the document's total is a subtotal, not the total.
GOODS_SUMS = [
    # a DANFE's tax block: headers over one row of figures each
    (
        "CÁLCULO DO IMPOSTO\n"
        "BASE DE CÁLCULO DO ICMS  VALOR DO ICMS   VALOR DO FRETE   VALOR TOTAL DOS PRODUTOS\n"
        "          13.200,00         1.584,00          0,00             13.200,00\n"
        "VALOR DO SEGURO   DESCONTO   OUTRAS DESPESAS   VALOR DO IPI   VALOR TOTAL DA NOTA\n"
        "     0,00            0,00         0,00            657,00          13.857,00\n",
        {"subtotal": 13200.0, "total": 13857.0},
    ),
    (
        "Total des produits 100,00\nFrais de port 5,00\nTVA 21,00\nTotal TTC 126,00\n",
        {"subtotal": 100.0, "total": 126.0},
    ),
    ("Summe Positionen 200,00\nVersand 10,00\nMwSt 39,90\nGesamtbetrag 249,90\n", {"subtotal": 200.0, "total": 249.9}),
    ("Merchandise total 80.00\nShipping 5.00\nSales tax 6.80\nTotal 91.80\n", {"subtotal": 80.0, "total": 91.8}),
    ("Totale merce 50,00\nIVA 11,00\nTotale documento 61,00\n", {"subtotal": 50.0, "total": 61.0}),
    ("Suma pozycji 100,00\nVAT 23,00\nDo zapłaty 123,00\n", {"subtotal": 100.0, "total": 123.0}),
    ("Product total 40.00\nTax 3.20\nAmount due 43.20\n", {"subtotal": 40.0, "total": 43.2}),
    (
        "VALOR TOTAL DO SERVIÇO = R$ 1.318,67\nISS 65,93\nVALOR TOTAL DA NOTA = R$ 1.384,60\n",
        {"subtotal": 1318.67, "total": 1384.6},
    ),
]


@pytest.mark.parametrize("text,record", GOODS_SUMS)
def test_a_labelled_sum_of_the_goods_is_a_subtotal_not_the_total(text, record):
    clean(text, record)
    flagged(text, {**record, "total": record["subtotal"]}, "total", "not as a labelled total")
    assert factors(text, {"total": record["subtotal"]})["total"] <= F.ROLE_MISMATCH_FACTOR


def test_a_goods_sum_label_names_no_role_in_a_schema_without_a_subtotal():
    from vetq.core.extraction.roles import find_labels
    from vetq.core.schemas import compile_schema

    schema = compile_schema({"name": "t", "fields": {"total": {"kind": "amount", "labels": ["@total"]}}})
    text = "VALOR TOTAL DOS PRODUTOS 10,00\nVALOR TOTAL DA NOTA 12,00\n"
    labels = find_labels(text, schema.lexicon)
    assert [(text[lb.start : lb.end], lb.role, lb.grand) for lb in labels] == [("TOTAL", "total", True)]


# A total label qualified as a tax's sum ("VALOR TOTAL DO IPI") names that tax, no rival
# of the document's total.
TAX_SUMS = [
    ("VALOR TOTAL DO IPI 50,00\nVALOR TOTAL 1266,50\n", {"tax": 50.0, "total": 1266.5}),
    ("Valor total dos tributos 180,00\nValor total 1180,00\n", {"tax": 180.0, "total": 1180.0}),
]


@pytest.mark.parametrize("text,record", TAX_SUMS)
def test_a_labelled_sum_of_a_tax_is_the_tax_not_a_rival_total(text, record):
    clean(text, {"total": record["total"]})
    clean(text, record)
    flagged(text, {**record, "total": record["tax"]}, "total", "not as a labelled total")


# A plain total label (what is left to pay after a payment) does not make its figure the
# total when a grand total label names another: labelled payments forgive no such pick.
OUTRANKED = [
    (
        "                                TOTAL HT  TOTAL TVA  TOTAL TTC\n"
        "                                 83,33    16,67      100,00\n"
        "Les réglements reçus avant la date d'échéance ne donneront pas lieu à escompte.\n"
        "Tout retard de paiement engendre une pénalité.\n"
        "Indemnité forfaitaire pour frais de recouvrement : 40 €\n"
        "                                           Acompte :   10,00\n"
        "Date d'échéance :  30/01/2019  NET A PAYER  90,00 EUR\n",
        {"subtotal": 83.33, "tax": 16.67, "total": 100.0},
        90.0,
    ),
    ("Invoice total 120.00\nPayment received 20.00\nAmount due 100.00\n", {"total": 120.0}, 100.0),
    ("Rechnungsbetrag 500,00\nAnzahlung 200,00\nZu zahlen 300,00\n", {"total": 500.0}, 300.0),
]


@pytest.mark.parametrize("text,record,lesser", OUTRANKED)
def test_a_figure_a_grand_total_label_outranks_is_not_the_total(text, record, lesser):
    clean(text, record)
    flagged(text, {**record, "total": lesser}, "total", "is not the document's total")


def test_a_total_that_the_tax_completes_to_another_labelled_total_is_a_sum_before_tax():
    # neither label says goods nor grand: the arithmetic does
    text = "TOTAL       MWST\n500,00      50,00\n\nGesamt: 550,00\n"
    clean(text, {"total": 550.0})
    assert factors(text, {"total": 500.0})["total"] <= X.CONFLICT_FACTOR


# 2. A line item's amount is no document total, under a "Total" column or beside its own
# "Total" cell: a quantity times a unit price on its row makes it.
def test_a_line_items_total_cell_is_no_document_total():
    text = (
        "Widget    Qty 2   Unit price 10.00   Total 20.00\n"
        "Gadget    Qty 1   Unit price 22.00   Total 22.00\n"
        "Subtotal 42.00\nVAT 8.40\nTotal due 50.40\n"
    )
    clean(text, {"subtotal": 42.0, "tax": 8.4, "total": 50.4})


@pytest.mark.parametrize(
    "text",
    [
        "Description   Qty   Unit price   Total\nConsulting    2     10.00        20.00\n\nVAT 4.00\nGrand total 24.00\n",
        "CÓDIGO  DESCRIÇÃO   QUANT.   VALOR UNIT.   VALOR TOTAL\n001     Produto A   1,0000   1.318,67      1.318,67\n\n"
        "VALOR TOTAL DA NOTA 1.450,54\n",
    ],
)
def test_the_total_column_of_a_one_row_table_labels_no_total(text):
    correct = 24.0 if "Grand" in text else 1450.54
    line = 20.0 if "Grand" in text else 1318.67
    clean(text, {"total": correct})
    flagged(text, {"total": line}, "total", "not as a labelled total")


# 3. The net figure of each tax rate is no rival for the document's subtotal.
@pytest.mark.parametrize(
    "text",
    [
        "TVA 20,00 %          TVA 10,00 %          TVA 5,50 %\n"
        "Base HT   60,00      Base HT   30,00      Base HT  7,00\n"
        "Total HT 100,00\nRemise 3,00\nTotal TVA 15,39\nTotal TTC 112,39\n",
        "20% Base HT 60,00  TVA 12,00\n10% Base HT 30,00  TVA 3,00\n5,5% Base HT 7,00  TVA 0,39\n"
        "Total HT 100,00\nRemise 3,00\nTotal TVA 15,39\nTotal TTC 112,39\n",
        "Netto 19 %  60,00   MwSt 11,40\nNetto 7 %  30,00   MwSt 2,10\nNetto 0 %  7,00\n"
        "Nettobetrag 100,00\nRabatt 3,00\nMwSt 13,50\nGesamtbetrag 110,50\n",
    ],
)
def test_the_net_figure_of_each_rate_is_no_rival_for_the_subtotal(text):
    total = 112.39 if "TTC" in text else 110.5
    tax = 15.39 if "TTC" in text else 13.5
    got = reasons(text, {"subtotal": 100.0, "tax": tax, "total": total})
    assert got["subtotal"] == [], got


def test_a_net_figure_beside_one_rate_still_rivals_a_wrong_subtotal():
    # one rate: its base is the subtotal, and a wrong subtotal still meets it
    text = "MwSt 19 %          19,00\nNettobetrag       100,00\nGesamtbetrag      119,00\n"
    clean(text, {"subtotal": 100.0, "tax": 19.0, "total": 119.0})
    flagged(text, {"subtotal": 19.0, "tax": 19.0, "total": 119.0}, "subtotal", "not as a labelled subtotal")


def test_a_grand_total_label_over_a_lesser_line_figure_outranks_nothing():
    text = "Pos  Bezeichnung   Gesamtbetrag\n1    Beratung      500,00\n\nNetto 500,00\nMwSt 95,00\nSumme 595,00\n"
    clean(text, {"subtotal": 500.0, "tax": 95.0, "total": 595.0})


def test_an_unlabelled_subtotal_beside_the_net_figures_of_each_rate_is_not_contradicted():
    text = (
        "TVA 20,00 %          TVA 10,00 %          TVA 5,50 %\n"
        "Base HT   60,00      Base HT   30,00      Base HT  7,00\n"
        "Montant des lignes   100,00\nRemise 3,00\nTotal TTC 112,39\n"
    )
    got = factors(text, {"subtotal": 100.0, "total": 112.39})
    assert got["subtotal"] == F.NO_ROLE_LABEL_FACTOR and 0.95 * got["subtotal"] >= 0.7


# The held-out set's false alarms, class by class (eval/golden/real_heldout/README.md).
# 1. Several figures under a net label that add up to less than the subtotal are its
# parts (each line's net), no rival for it, when the summary row's columns are misread.
def test_figures_under_a_label_that_add_up_to_less_are_parts_not_rivals():
    text = (
        "1  Paper A4      2  20,00\n   (Net): 40,00\n"
        "2  Toner         1  25,00\n   (Net): 25,00\n"
        "Carriage paid by the seller.   70,00   14,00   84,00\n"
    )
    got = reasons(text, {"subtotal": 70.0})["subtotal"]
    assert not any("not as a labelled subtotal" in r for r in got), got
    assert factors(text, {"subtotal": 70.0})["subtotal"] == F.NO_ROLE_LABEL_FACTOR
    # a figure smaller than the parts' sum still meets them as rivals
    flagged(text, {"subtotal": 14.0}, "subtotal", "not as a labelled subtotal")


# 2, 4. A total of something else than the document: the taxes a price includes ("Total
# aproximado de tributos"), the cargo a freight bill carries ("VALOR TOTAL DA CARGA").
@pytest.mark.parametrize(
    "text,record",
    [
        ("VALOR TOTAL: 250,00\nTotal aproximado de tributos: R$ 30,00 (12,00%)\n", {"total": 250.0}),
        ("Total: 250,00\nTotal de impuestos: 30,00\n", {"total": 250.0}),
        ("VALOR TOTAL DA CARGA R$ 5.000,00\nFrete 120,00\nTotal a pagar R$ 120,00\n", {"total": 120.0}),
    ],
)
def test_a_total_of_something_else_is_no_rival_for_the_document_total(text, record):
    clean(text, record)


def test_a_total_to_be_received_names_the_lone_figure_below_it():
    text = "VALOR TOTAL DA CARGA R$ 5.000,00\nFrete 120,00\nVALOR TOTAL A RECEBER\nR$ 120,00\n"
    clean(text, {"total": 120.0})
    flagged(text, {"total": 5000.0}, "total", "not as a labelled total")


# 3. A grand total's figure has no rival in lesser figures plain total labels name (what
# was paid, what is left to pay), also when a column of "netto" / "brutto" stands between
# the label and the figure; the lesser figure is still no total.
MAXIMAL = (
    "Gesamtsumme             netto   1.000,00\n"
    "Summe Umsatzsteuer              190,00\n"
    "Gesamtsumme             brutto  1.190,00\n"
    "Gezahlter Betrag        brutto  300,00\n"
    "Rundungsbetrag          brutto  0,10\n"
    "Fälliger Betrag         brutto  890,10\n"
)


def test_lesser_plain_totals_are_no_rivals_for_a_grand_total_across_a_column():
    clean(MAXIMAL, {"subtotal": 1000.0, "tax": 190.0, "total": 1190.0})
    flagged(MAXIMAL, {"subtotal": 1000.0, "tax": 190.0, "total": 890.1}, "total", "is not the document's total")


# 6. "Total parcial", "Sous-total", "Totale parziale": a subtotal, not a second total.
@pytest.mark.parametrize(
    "text",
    [
        "Total parcial:  10.00 €\nIVA de 21 %:    2.10 €\n Total:         12.10 €\n",
        "Sous-total  10,00 €\nTVA 21 %  2,10 €\nTotal  12,10 €\n",
        "Totale parziale 10,00\nIVA 21% 2,10\nTotale 12,10\n",
    ],
)
def test_a_partial_total_is_a_subtotal(text):
    clean(text, {"subtotal": 10.0, "tax": 2.1, "total": 12.1})


# 7. One labelled charge that is the whole difference to the cent explains it at any
# share, and so do all the labelled charges together (test 225); a deduction, or some of
# the charges together, do not beyond MAX_ADJUSTMENT_SHARE.
def test_one_labelled_charge_that_is_the_difference_to_the_cent_explains_it():
    text = "Taxable amount  8.00 €\nTotal taxes  1.20 €\nShipping  6.50 €\nTotal amount  15.70 €\n"
    got = run_heuristics(text, INVOICE.validate_data({"subtotal": 8.0, "tax": 1.2, "total": 15.7}), INVOICE)
    assert got["total"].factor == X.EXTRA_CHARGE_FACTOR, got["total"].reasons
    assert any("shipping 6.50" in r for r in got["total"].reasons), got["total"].reasons


@pytest.mark.parametrize(
    "text,total",
    [
        ("Subtotal  8.00\nTax  1.20\nShipping  3.50\nHandling  3.00\nInsurance  1.00\nTotal  15.70\n", 15.7),
        ("Subtotal  8.00\nTax  1.20\nDiscount  6.50\nTotal  2.70\n", 2.7),
    ],
)
def test_several_charges_or_a_deduction_beyond_the_share_explain_nothing(text, total):
    got = factors(text, {"subtotal": 8.0, "tax": 1.2, "total": total})
    assert got["total"] <= X.ARITHMETIC_FACTOR


# Round 2 of the held-out documents (issue 14) --------------------------------------------------
# 8. Two labelled net figures, before and after a discount and a charge printed between them:
# the difference is the discount less the charge, so they are no conflict.
@pytest.mark.parametrize(
    "text",
    [
        "Subtotal  200.00\nDiscount  -25.00\nDelivery fee  5.00\nNet amount  180.00\nVAT 10%  18.00\nTotal  198.00\n",
        "Zwischensumme  200,00\nRabatt  -25,00\nZuschlag Versand  5,00\nNettobetrag  180,00\n"
        "MwSt 10 %  18,00\nGesamtbetrag brutto  198,00\n",
    ],
)
def test_net_figures_before_and_after_a_discount_less_a_charge_are_no_conflict(text):
    clean(text, {"subtotal": 180.0, "tax": 18.0, "total": 198.0})
    wrong = reasons(text, {"subtotal": 180.0, "tax": 18.0, "total": 205.0})["total"]
    assert wrong, "an invented total is still caught"


# 9. A trailing net phrase ("HT") after a discount's word, or right after a label of its role,
# names the figure after it, not the figure before it on the row.
def test_a_trailing_phrase_after_another_word_names_the_figure_after_it():
    text = (
        "Rate    Net       Tax      Gross     Total HT          300,00 €\n"
        "20,00 %  200,00 €  40,00 €  240,00 €  Remise HT           0,00 €\n"
        "0,00 %   100,00 €   0,00 €  100,00 €  Total Net HT      300,00 €\n"
        "                                      Total TVA          40,00 €\n"
        "                                      Montant Total TTC 340,00 €\n"
    )
    clean(text, {"subtotal": 300.0, "tax": 40.0, "total": 340.0})


# 10. A total of the net beside the gross total, the tax between them: a sum before tax.
@pytest.mark.parametrize(
    "text",
    [
        "Summe:  400,00 €\n20% Mehrwertsteuer:  80,00 €\nGesamt:  480,00 €\n",
        "Stawka  Netto  VAT  Brutto\n20%  400,00  80,00  480,00\nRazem  400,00  80,00  480,00   Razem  480,00 zł\n",
    ],
)
def test_a_net_total_beside_the_gross_total_is_no_rival(text):
    # (the net under a total label is no subtotal's label either: the subtotal keeps its note)
    assert reasons(text, {"subtotal": 400.0, "tax": 80.0, "total": 480.0})["total"] == []
    wrong = reasons(text, {"subtotal": 400.0, "tax": 80.0, "total": 400.0})["total"]
    assert wrong, "the net read as the total is still flagged"


# 11. Identifiers under a label: a VAT number after "VAT", a label inside an e-mail domain.
def test_a_long_digit_run_after_a_tax_label_is_no_rival_for_the_tax():
    text = "VAT: 9876543210\nItems total  40,00 €\nTotal VAT  8,8 €\nTotal  48,8 €\n"
    assert reasons(text, {"subtotal": 40.0, "tax": 8.8, "total": 48.8})["tax"] == []


def test_a_label_inside_an_email_address_labels_nothing():
    text = "Mail: sales@example.net  Folio 5521\nSUBTOTAL $ 12.300\nTAX $ 2.337\nTOTAL $ 14.637\n"
    clean(text, {"subtotal": 12300.0, "tax": 2337.0, "total": 14637.0})


# 12. A zero tax printed as its rate ("Tax: 0.00%"), no figure of it.
def test_a_zero_tax_printed_as_a_zero_rate_is_grounded():
    text = "Item A  500.00\nTax: 0.00%\nNet total  500.00\nGross total  500.00\n"
    clean(text, {"subtotal": 500.0, "tax": 0.0, "total": 500.0})
    assert reasons("Item A  500.00\nNet total  500.00\nGross total  500.00\n", {"tax": 0.0})["tax"]


# 13. A running subtotal carried forward ("Übertrag" over the figure) beside the final net.
def test_a_subtotal_carried_forward_is_no_rival_for_the_final_one():
    text = (
        "Zwischensumme  1 000,00\n\nÜbertrag\n1 000,00\n\nReise  250,00\n"
        "Summe Netto  1 250,00\nUmsatzsteuer 19%  237,50\nSumme Brutto  1 487,50\n"
    )
    clean(text, {"subtotal": 1250.0, "tax": 237.5, "total": 1487.5})


# 14. What a converter or a producer varies and the document does not: a right-aligned
# figure far across the line from its label, spaces other than U+0020 (text taken from
# HTML or a word processor), a currency code not in capitals next to a sum.
def test_a_figure_right_aligned_far_from_its_label_is_under_it():
    wide = " " * 70
    text = (
        f"Summe Netto{wide}2 000,00\nSumme Umsatzsteuer{wide}380,00\nRechnungsbetrag{wide}2 380,00\nPos. 1  2 000,00\n"
    )
    clean(text, {"subtotal": 2000.0, "tax": 380.0, "total": 2380.0})
    flagged(text, {"subtotal": 2000.0, "tax": 380.0, "total": 2000.0}, "total", "labelled total")


def test_a_date_right_aligned_far_from_its_label_is_under_it():
    wide = " " * 70
    text = f"Invoice no.{wide}INV-2231\nInvoice date{wide}12.03.2024\nDue date{wide}11.04.2024\nTotal  100,00\n"
    clean(text, {"invoice_number": "INV-2231", "invoice_date": "2024-03-12", "total": 100.0})
    flagged(text, {"invoice_date": "2024-04-11"}, "invoice_date", "only under 'Due date'")


def test_a_label_reaches_a_far_value_only_across_blanks():
    words = "see the terms on the back of this page for the conditions that apply here "
    text = f"Invoice date {words}12.03.2024\nTotal {words}99,00\nTotal  1 190,00\n"
    wrong = reasons(text, {"invoice_date": "2024-03-12", "total": 99.0})
    assert wrong["total"], "a total label 70 characters of words away names no figure"


def test_spaces_other_than_the_plain_one_read_as_spaces():
    nbsp, narrow = "\u00a0", "\u202f"
    text = (
        f"Summe{nbsp}netto{nbsp}{nbsp}1{narrow}980,00\nUSt.{nbsp}19{nbsp}%{nbsp}auf{nbsp}1{narrow}980,00{nbsp}{nbsp}376,20\n"
        f"Gesamtbetrag{nbsp}{nbsp}2{narrow}356,20{nbsp}EUR\n"
    )
    record = {"subtotal": 1980.0, "tax": 376.2, "total": 2356.2, "currency": "EUR"}
    clean(text, record)  # the rate's base is no rival for the tax
    total = run_heuristics(text, INVOICE.validate_data(record), INVOICE)["total"].spans[0]
    assert (total.text, text[total.start : total.end]) == (f"2{narrow}356,20",) * 2, "spans quote the text as sent"


def test_a_currency_code_not_in_capitals_counts_only_next_to_a_sum():
    text = "Fattura 12\nImponibile  Eur 100,00\nIVA 22%  Eur 22,00\nTotale  Eur 122,00\n"
    clean(text, {"subtotal": 100.0, "tax": 22.0, "total": 122.0, "currency": "EUR"})
    words = "Order of all 3 items: try 2 sizes\nTotal  122,00\n"
    assert reasons(words, {"currency": "ALL"})["currency"], "'all 3' names no Albanian lek"


def test_the_digit_groups_of_an_iban_are_no_amounts():
    text = (
        "Net total  990.00\nTax: 0.00%\nGross total  990.00\nBank  IBAN DE89 3704 0044 0532 0130 00  BIC COBADEFFXXX\n"
    )
    clean(text, {"subtotal": 990.0, "tax": 0.0, "total": 990.0})
    assert 3704 not in {am.value for am in find_amounts(text)}


# 15. A header of labels over the one row of their figures, when the spacing no longer
# lines them up (text taken without its layout): paired in order, the columns' way.
def test_a_header_of_labels_names_its_row_in_order_without_the_layout():
    text = "Facture F-1\nTOTAL HT TOTAL TVA TOTAL TTC\nConditions de paiement : 30 jours\n 100,00 10,00 110,00\n"
    clean(text, {"subtotal": 100.0, "tax": 10.0, "total": 110.0})
    flagged(text, {"subtotal": 100.0, "tax": 10.0, "total": 100.0}, "total", "labelled total")


def _roles(text: str) -> list[str | None]:
    return Source(text, INVOICE.lexicon, INVOICE.value_lexicon).roles


@pytest.mark.parametrize(
    "text",
    [
        "Net VAT Gross\n100,00 19,00 119,00\n50,00 3,50 53,50\n",  # a table's rows, one per rate
        "Net VAT Gross\n100,00 see below 19,00 119,00\n",  # words among the figures
    ],
)
def test_the_order_pairs_no_table_row_and_no_row_it_cannot_line_up(text):
    assert "total" not in _roles(text) and "tax" not in _roles(text)


def test_the_order_pairs_no_header_with_a_column_no_label_names():
    # a DANFSE's grid: "Total das Retenções" is a total label, "Valor Líquido" is none
    wide = " " * 12
    text = (
        f"VALOR TOTAL DA NFS-E{wide}R$ 5.000,00\n"
        f"Total das Retenções (ISSQN / Federais){wide}Valor Líquido da NFS-e{wide}Total do IBS/CBS\n"
        f"R$ 700,00{wide}R$ 4.300,00{wide}-\n"
    )
    flagged(text, {"total": 4300.0}, "total", "not as a labelled total")


# 16. One token per line, as OCR gives: a charge's phrase alone over its figure explains it.
def test_a_discount_phrase_alone_over_its_figure_is_the_labelled_difference():
    text = "SUBTOTAL\n1440.00\nDISCOUNT\n4.00\nTOTAL TAX\n100.52\nBALANCE DUE\n$1,536.52\n"
    flagged(text, {"subtotal": 1440.0, "tax": 100.52, "total": 1536.52}, "total", "the source labels (discount 4.00)")
    flagged(text, {"subtotal": 1440.0, "tax": 100.52, "total": 1436.52}, "total", "no labelled charge or discount")


# 17. Dates written year, month, day with their CJK units.
@pytest.mark.parametrize("written", ["2025年12月5日", "2025 年 12 月 05 日", "2025년 12월 5일"])
def test_a_date_in_cjk_units_is_found(written):
    clean(f"請求書\n日付: {written}\n合計 11,000 円\n", {"invoice_date": "2025-12-05"})
    flagged(f"請求書\n日付: {written}\n", {"invoice_date": "2025-12-06"}, "invoice_date", "not found")


# 18. A tax label with its rate right after a net label names that rate's base
# ("Subtotal IVA 15%"), not a tax.
def test_a_net_label_qualified_by_a_tax_rate_is_that_rates_base():
    text = (
        "Subtotal IVA 15%   0.65\nSubtotal 0%        0.80\nSubtotal sin Impuestos   1.45\n"
        "IVA 15%            0.10\nVALOR TOTAL        1.55\n"
    )
    clean(text, {"subtotal": 1.45, "tax": 0.1, "total": 1.55})
    flagged(text, {"subtotal": 1.45, "tax": 0.65, "total": 1.55}, "tax", "labelled tax")


# 19. A total label over a row of sums names the one written as money, not the hours or
# the item count before it.
@pytest.mark.parametrize(
    "row,total",
    [(" TOTAL     55.00          $4555.00", 4555.0), ("Total  3  12,50 EUR", 12.5)],
)
def test_a_total_row_of_sums_names_the_money(row, total):
    text = f"Project 1  24.50  $75.00  $1837.50\n{row}\n"
    assert reasons(text, {"total": total})["total"] == []
    assert reasons(text, {"total": 55.0 if total > 100 else 3.0})["total"], "the count is no total"


# 20. A label word ending a sentence of a line item's description names no figure.
def test_a_label_word_ending_a_sentence_names_nothing():
    text = (
        "3/10/2018  Some things you did           10  $20  $200.00\n"
        "3/25/2018  Expenses. Amount added in Total.             $105.00\n\n"
        " Total       $305.00\n"
    )
    assert reasons(text, {"total": 305.0})["total"] == []
    assert reasons(text, {"total": 105.0})["total"], "the expense line is no total"


# 21. How software and tills write a deduction: the sign before the currency ("-$10.00"),
# accounting brackets around it ("($10.00)"), a minus after the figure ("0,25-"); and
# dot leaders glued to a figure ("TOTAL.......12,50").
@pytest.mark.parametrize(
    "written,value",
    [("-$10.00", -10.0), ("− € 10,00", -10.0), ("($10.00)", -10.0), ("10,00-", -10.0), ("$10.00", 10.0)],
)
def test_the_sign_of_a_deduction_as_it_is_written(written, value):
    [amount] = find_amounts(f"Discount  {written}\n")
    assert amount.value == Decimal(str(value))


def test_a_figure_after_dot_leaders_is_an_amount():
    text = "Subtotal.......100,00\nVAT 20%........20,00\nTOTAL..........120,00\n"
    clean(text, {"subtotal": 100.0, "tax": 20.0, "total": 120.0})


# 22. A document printed twice (an original and its copy): each copy's section subtotals
# are still the parts of its total.
def test_section_subtotals_of_a_document_printed_twice_are_parts_of_its_total():
    copy = (
        "Articles\n01  Article 1   10,00 e\n02  Article 2   45,00 e\n    Sous-total (HT) :  55,00 e\n"
        "Services\n03  Service 1   10,00 e\n04  Service 2   45,00 e\n    Sous-total (HT) :  55,00 e\n"
        "Services tiers\n05  Service 3   10,00 e\n06  Service 4   45,00 e\n    Sous-total (HT) :  55,00 e\n"
        "    Total HT :     165,00 e\n    TVA (0%)* :     0,00 e\n    Total Net TTC :   165,00 e\n"
    )
    record = {"subtotal": 165.0, "tax": 0.0, "total": 165.0}
    clean(copy, record)
    assert reasons(copy + "\f" + copy, record)["subtotal"] == []


# 23. A row of values narrower than its header: read by order, cell under cell.
def test_a_row_narrower_than_its_header_pairs_its_cells_by_order():
    text = (
        "Contoso\n\nInvoice Number  Invoice Date  Invoice Due Date  Charges  VAT ID\n\n"
        "34278587  6/18/2017  6/24/2017  $56,651.49  PT----\n"
    )
    clean(text, {"invoice_number": "34278587", "invoice_date": "2017-06-18"})
    flagged(text, {"invoice_date": "2017-06-24"}, "invoice_date", "only under 'Due Date'")


def test_thousands_grouped_by_primes_are_one_figure():
    text = (
        "Backend      40  CHF 180.00  CHF 7′200.00\nFrontend     24  CHF 165.00  CHF 3′960.00\n"
        "DevOps        8  CHF 200.00  CHF 1′600.00\nGesamtbetrag                CHF 12′760.00\n"
    )
    assert reasons(text, {"total": 12760.0, "currency": "CHF"}) == {"total": [], "currency": []}
    assert reasons(text, {"total": 3960.0})["total"], "a line's amount is no total"


# 24. A discount printed with its rate is what the rate says at any share of the sum; a
# total written in whole units is rounded to the unit.
def test_a_discount_at_its_printed_rate_explains_any_share():
    record = {"subtotal": 1000.0, "tax": 70.0, "total": 770.0}
    rated = "SUBTOTAL  $1000.00\nDISCOUNT 30%  -$300.00\nTAX 10%  +$70.00\nGRAND TOTAL  $770.00\n"
    flagged(rated, record, "total", "is the labelled discount", "at 30%")
    assert "total" not in {f for f, r in reasons(rated, record).items() if any("arithmetic" in x for x in r)}
    bare = rated.replace("DISCOUNT 30%", "DISCOUNT")
    flagged(bare, record, "total", "arithmetic", "more than the labelled charges")


def test_a_total_in_whole_units_is_rounded_to_the_unit():
    whole = "Subtotal  99.60\nTax  19.92\nGrand total  120\n"
    flagged(whole, {"subtotal": 99.6, "tax": 19.92, "total": 120.0}, "total", "within rounding")
    cents = whole.replace("120\n", "120.00\n")
    flagged(cents, {"subtotal": 99.6, "tax": 19.92, "total": 120.0}, "total", "arithmetic", "beyond rounding")


# 25. What a till takes off after the subtotal besides a discount: rewards, loyalty points,
# a gift card, store credit.
@pytest.mark.parametrize("phrase", ["Rewards Applied", "Loyalty", "Gift Card", "Store Credit", "Points redeemed"])
def test_a_reward_or_a_gift_card_is_a_deduction(phrase):
    text = (
        f"SUBTOTAL $863.91\nMember Discount (15%) -$84.00\nSales Tax (8.5%) $66.23\n{phrase} -$25.00\nTOTAL $821.14\n"
    )
    record = {"subtotal": 863.91, "tax": 66.23, "total": 821.14}
    flagged(text, record, "total", "the source labels")
    flagged(text.replace(phrase, "Item 7"), record, "total", "arithmetic")


def test_a_line_of_words_without_a_label_is_no_header_to_pair_by_order():
    # the weekdays' line has as many cells as the dates' line, but names nothing: the
    # labels above it still head the dates' columns
    text = "Invoice Date        Due Date\nMonday              Tuesday\n02.03.2026          10.03.2026\nTotal  100,00\n"
    flagged(text, {"invoice_date": "2026-03-10"}, "invoice_date", "only under 'Due Date'")


# 26. A tax word after a word for its rate heads a column of rates --------------------------
def roles(text: str) -> list[tuple[str, str | None]]:
    src = Source(text, INVOICE.lexicon, INVOICE.value_lexicon)
    return [(am.raw, role) for am, role in zip(src.amounts, src.roles, strict=True)]


@pytest.mark.parametrize(
    "text,figure",
    [
        (
            "Linia  Nume articol           Preț unitar  Cantitate  Cota TVA Valoare netă\n"
            "1      Titlul produsului      3.36         15         19%  50.42\n",
            "50.42",
        ),
        ("Article  Qté  Taux TVA  Montant\nConseil  2    20%  100,00\n", "100,00"),
        ("Article  Qté  Taux de TVA  Montant\nConseil  2    20%     100,00\n", "100,00"),
        ("Towar  Ilość  Stawka VAT  Wartość\nUsługa  1   23%  200,00\n", "200,00"),
        ("Artikel  Menge  MwSt.-Satz  Betrag\nBeratung  1   19 %  100,00\n", "100,00"),
    ],
)
def test_a_tax_word_with_a_word_for_its_rate_heads_no_amount(text, figure):
    assert (figure, None) in roles(text), roles(text)


def test_the_tax_word_alone_still_heads_its_column():
    assert ("20,00", "tax") in roles("Article  Qté  TVA     Montant\nConseil  2    20,00   120,00\n")


# 27. Labels as other software abbreviates or phrases them ----------------------------------
@pytest.mark.parametrize(
    "text,record",
    [
        (
            "Description   VAT     U.P     Qt   Total exc. VAT\nLaptop        19.60%  952.09  2    1904.18\n"
            "Licence       10.00%  79.00   5    395.00\n\n"
            "Note :   Total exc. VAT  2299.18\n         Total VAT        412.71\n         Total inc. VAT   2711.89\n",
            {"subtotal": 2299.18, "tax": 412.71, "total": 2711.89},
        ),
        (
            "FACTURE   Échéance  01/03/2025\n2025-001  Montant dû  2 400 €\n\n"
            "Type        Description              P.U. HT     Qté  Total\n\n"
            "Prestation  Développement            1 500,00 €  1    1 500 €\n"
            "            - point détaillé un\n            - point détaillé deux\n\n"
            "Service     Maintenance              450,00 €    2    900 €\n"
            "            - détail du service\n\n"
            "                     Total HT          2 400 €\n"
            "                     Total net de TVA  2 400 €\n"
            "                     Payé à ce jour    0 €\n"
            "                     Montant dû        2 400 €\n\n"
            "TVA non applicable - article 293 B du CGI\n",
            {"subtotal": 2400.0, "total": 2400.0},
        ),
    ],
)
def test_abbreviated_and_french_labels_name_their_figures(text, record):
    clean(text, record)


@pytest.mark.parametrize(
    "text,figure",
    [
        ("Party Name  ACME\nTax #       FROM 1234567890\n", "1234567890"),
        ("Tax Rates  | CGST% : 1.12 | SGST% : 2.12 | CESS% : 0.0 |\n", "1.12"),
        (
            "Type        Description              P.U. HT     Qté  Total\n\n"
            "Prestation  Développement            1 500,00 €  4    6 000 €\n",
            "1 500,00",
        ),
    ],
)
def test_a_role_word_that_names_no_amount(text, figure):
    assert (figure, None) in roles(text), roles(text)


def test_a_charge_named_by_the_word_charge_explains_the_difference():
    text = "Subtotal 100.00\nTax 10.00\nCOD charge 10.12\nGift wrapping charge 5.12\nTotal 125.24\n"
    record = {"subtotal": 100.0, "tax": 10.0, "total": 125.24}
    assert factors(text, record)["total"] == X.EXTRA_CHARGE_FACTOR
    flagged(text, record, "total", "the source labels (cod charge 10.12 + charge 5.12)")


@pytest.mark.parametrize(
    "text,total,code", [("RAZEM DO ZAPŁATY: 12 340,59 ZŁ\n", 12340.59, "PLN"), ("TOTAL 1 210,00 KČ\n", 1210.0, "CZK")]
)
def test_a_currency_sign_in_capitals_is_read(text, total, code):
    clean(text, {"total": total, "currency": code})


# 28. A table's total row under the table's header of labels --------------------------------
SUM_ROW_TABLE = (
    "Lp  Nazwa towaru   Ilość   Cena netto   Wartość netto   Stawka VAT   Kwota VAT   Wartość brutto\n\n"
    "1   Elektronika       21       473,00        9 933,00          23%    2 284,59        12 217,59\n\n"
    "2   Transport          1       100,00          100,00          23%       23,00           123,00\n\n"
    "                                Razem       10 033,00                 2 307,59        12 340,59\n\n"
    "Razem do zapłaty:  12 340,59 zł\n"
)


def test_a_tables_total_row_is_read_by_its_columns():
    assert [r for r in roles(SUM_ROW_TABLE) if r[1]][:3] == [
        ("10 033,00", "subtotal"),
        ("2 307,59", "tax"),
        ("12 340,59", "total"),
    ]
    clean(SUM_ROW_TABLE, {"subtotal": 10033.0, "tax": 2307.59, "total": 12340.59, "currency": "PLN"})


def test_a_row_under_a_grid_of_one_roles_parts_is_no_tables_total_row():
    text = (
        "        TVA 9%  TVA 19%     TVA TOTAL\nTOTAL    1.49   17.56         19.05  TOTAL\n fără TVA\n"
        "  Bază calcul  Bază calcul  Bază calcul  128\n108.95  16.51   92.44        108.95\n"
    )
    # the grid's total tax is no rival for the document's total: at most a part of it
    assert factors(text, {"total": 128.0})["total"] == F.NO_ROLE_LABEL_FACTOR


# 29. Captions under their figures (bilingual ZATCA prints: Arabic above, English below) ------
CAPTIONED = (
    "    Description     VAT Rate     VAT Amount     Subtotal Exclusive of VAT\n"
    "    Laptop          15%          300 SAR        2,000 SAR\n\n"
    "          خصم على مستوى الفاتورة\n"
    "                                   100 SAR\n"
    "          Discount at Document Level\n"
    "          المبلغ الخاضع للضريبة\n"
    "                                 1,900 SAR\n"
    "          Invoice Taxable Amount\n"
    "          اجمالى مبلغ ضريبة القيمة المضافة\n"
    "                                   285 SAR\n"
    "          VAT Total Amount\n"
    "          إجمالي قيمة الفاتورة\n"
    "                                 2,185 SAR\n"
    "          Invoice Total Payable Amount\n"
)


def test_a_caption_under_its_figure_names_it():
    assert [r for r in roles(CAPTIONED) if r[1]] == [
        ("1,900", "subtotal"),
        ("285", "tax"),
        ("2,185", "total"),
    ]
    clean(CAPTIONED, {"subtotal": 1900.0, "tax": 285.0, "total": 2185.0, "currency": "SAR"})


def test_a_charge_or_discount_captioned_under_its_figure_is_one():
    src = Source(CAPTIONED, INVOICE.lexicon, INVOICE.value_lexicon)
    (discount,) = [i for i, am in enumerate(src.amounts) if am.raw == "100"]
    assert src.context(discount).adjustment == "discount"


def test_a_till_receipts_tokens_at_the_margin_are_no_captions():
    text = "KINDER RIEGEL\n3,49 E\nSUMME\nEUR\n26,42\n"
    assert ("3,49", "total") not in roles(text), roles(text)


# 30. A dotted date no day can come first in is month-first ---------------------------------
def test_a_dotted_date_with_no_day_first_reading_is_month_first():
    (mention,) = find_date_mentions("Invoice Date 03.20.15")
    assert {d.isoformat() for d in mention.dates} == {"2015-03-20"}
    (mention,) = find_date_mentions("Rechnungsdatum 12.05.15")
    assert {d.isoformat() for d in mention.dates} == {"2015-05-12"}  # day first, as dots say
    clean("Invoice #004\n03.20.15  Many thanks for your purchase.\nTotal $18.00\n", {"invoice_date": "2015-03-20"})


# 31. A figure in whole units with its thousands set apart, beside its label, is money -------
def test_a_line_amount_given_as_a_total_in_whole_units_is_caught():
    text = "Prestation  1 500,00 €  1  1 500 €\nService  450,00 €  2  900 €\n\nMontant dû  2 400 €\n"
    flagged(text, {"total": 1500.0}, "total", "not as a labelled total", "2 400")


def test_a_number_in_digit_groups_is_no_rival_for_a_figure_in_cents():
    text = (
        "           Numero TVA FR51777888991\n           SIRET 777 888 991 00018\n\n"
        "Taux de TVA  Base Montant HT EUR  Montant de TVA EUR  Montant TTC EUR\n"
        "20%          27 946,00            5 589,20            33 535,20\n"
    )
    assert factors(text, {"tax": 5589.2})["tax"] == F.NO_ROLE_LABEL_FACTOR  # unlabelled, but no rival


# 32. Cash tendered is given before the change it leaves; a gross holds its tax at its rate --
def test_a_sum_printed_after_its_part_is_no_cash_tendered():
    # 240.00 - 40.00 is the line amount 200.00 given as the total, but 40.00 is a line above
    # the sum it adds to, not change left by cash given
    text = "Basket: 10x 20.00  200.00\nSupport: 10x 4.00  40.00\n\nAnnual amount  240.00\n"
    assert factors(text, {"total": 200.0})["total"] == X.UNLABELLED_TOTAL_FACTOR * F.NO_ROLE_LABEL_FACTOR
    assert factors(text, {"total": 240.0})["total"] == F.NO_ROLE_LABEL_FACTOR


def test_an_unlabelled_gross_holding_its_tax_at_a_printed_rate_is_a_total():
    text = (
        "Haftpflicht  80,00 €\nVollkasko  140,00 €\n"
        "vierteljährlicher Beitrag inklusive 19 % Versicherungsteuer  220,00 €\n"
        "in diesem Beitrag enthaltene Versicherungsteuer  (35,13 €)\n"
        "Ausstehende Forderung  220,00 €\nzu zahlender Beitrag  440,00 €\n"
    )
    assert factors(text, {"tax": 35.13, "total": 220.0})["total"] == F.NO_ROLE_LABEL_FACTOR
    assert factors(text, {"tax": 35.13, "total": 140.0})["total"] < F.NO_ROLE_LABEL_FACTOR
    # to the cent: 220.07 at 19 % holds 35.14, not the record's 35.13
    assert (
        factors(text + "Beitrag Vorjahr  220,07 €\n", {"tax": 35.13, "total": 220.07})["total"] < F.NO_ROLE_LABEL_FACTOR
    )


# 33. A payment's phrase dated on the line over its figure ("Advance : 2022-01-15") ----------
def test_a_dated_payment_over_its_figure_explains_the_total_due():
    text = "Total to pay  1,000.00\n\nAmount paid : 2022-01-15\n   400.00\n\nTotal due  600.00\n"
    clean(text, {"total": 1000.0})
    # a date in a longer line of prose over a figure is still no heading
    text = "Total to pay  1,000.00\n\nThe amount paid by the customer so far on 2022-01-15\n   400.00\n\nTotal due  600.00\n"
    flagged(text, {"total": 1000.0}, "total", "conflicting total")


# 34. A grid of one role's parts and their sum, its row right under its header ---------------
def test_a_row_right_under_a_grid_of_taxes_is_read_by_its_columns():
    grid = "        TVA 9%  TVA 19%     TVA TOTAL\nTOTAL    1.49   17.56         19.05  TOTAL\n"
    assert roles(grid) == [("1.49", "tax"), ("17.56", "tax"), ("19.05", "tax")]
    clean("Articol  100.00\n\n" + grid + "\nTotal de plată  119.05\n", {"tax": 19.05, "total": 119.05})


# 35. A rate's row under a header whose first column is the rate's -------------------------
KSEF_SUMMARY = (
    "Podliczenie VAT\n\nStawka VAT  Wartość netto  Kwota VAT\n\n23%  24 500,00  5 635,00\n\n"
    "Kwota należności ogółem:  30 135,00 PLN\n"
)


def test_a_rates_row_under_a_header_of_labels_is_read_in_order():
    assert roles(KSEF_SUMMARY) == [("24 500,00", "subtotal"), ("5 635,00", "tax"), ("30 135,00", "total")]
    clean(KSEF_SUMMARY, {"subtotal": 24500.0, "tax": 5635.0, "total": 30135.0, "currency": "PLN"})


def test_a_rate_after_its_label_still_leads_to_the_tax_past_the_base():
    assert roles("TVA 20,0%  81,90 €  16,38 €\n") == [("81,90", None), ("16,38", "tax")]


# 36. A line item's row under its table's header: its amount and its tax are the line's ------
ITEM_UNDER_HEADER = (
    "                            Prix unitaire\n"
    "  Code  Désignation  Qté.         Montant HT  Montant TVA  Taux TVA\n"
    "                                 HT\n"
    " ART01                     2.0  40.0   80.0    16.0         20% TVA\n"
    "ART0002 Graine de lin  3.0  150.0  450.0   90.0        20% TVA\n\n"
    " Totaux  530.0         106.0\n"
    " Net à payer ( EUR )  636.0\n"
)


def test_a_line_items_figures_under_the_tables_header_are_the_lines():
    assert [r for r in roles(ITEM_UNDER_HEADER) if r[1]] == [("636.0", "total")]
    got = factors(ITEM_UNDER_HEADER, {"subtotal": 530.0, "tax": 106.0, "total": 636.0})
    # the sums are unlabelled (the "Totaux" row names neither), but the first line is no rival
    assert got == {"subtotal": F.NO_ROLE_LABEL_FACTOR, "tax": F.NO_ROLE_LABEL_FACTOR, "total": 1.0}


def test_a_summary_row_under_its_header_is_no_line_item():
    # 1,00 x 1,19 = 1,19, but no figure of the row stands under no header: no quantity
    assert roles("Netto  MwSt  Brutto  Zu zahlen\n1,00  0,19  1,19  1,19\n") == [
        ("1,00", "subtotal"),
        ("0,19", "tax"),
        ("1,19", "total"),
        ("1,19", "total"),
    ]


# 37. A discount at a rate of its base: the phrase is the figure's after the base -----------
@pytest.mark.parametrize(
    "text",
    [
        "Zwischensumme  300,00\nabzgl. Sondernachlass  10%  von  200,00  -20,00\nzzgl. Versandkosten  4,90\n\n"
        "Rechnungssumme Netto  284,90\n",
        "Subtotal  300.00\nLess discount  10% of  200.00  -20.00\nShipping  4.90\n\nNet total  284.90\n",
    ],
)
def test_a_discount_at_a_rate_of_its_base_explains_the_sums(text):
    src = Source(text, INVOICE.lexicon, INVOICE.value_lexicon)
    assert (Decimal("20.00"), "deduction") in [(value, kind) for value, kind, _ in src.adjustments()]
    base, discount = (i for i, am in enumerate(src.amounts) if abs(am.value) in (200, 20))
    assert src.context(base).adjustment is None and src.context(discount).adjustment is not None
    assert reasons(text, {"subtotal": 284.9})["subtotal"] == []


# 38. A charge's or a deduction's phrase between a label and a figure names the figure -------
@pytest.mark.parametrize(
    "text,figure",
    [
        ("Subtotal  100.00\nTax 19%  Discount:  -5.00\nTotal  95.00\n", "-5.00"),
        ("Rechnungsrabatt 1:  Basisbetrag: 280,00, MwSt.-% 19,0, Rabattbetrag:  -5,60\n", "-5,60"),
    ],
)
def test_an_adjustments_phrase_nearer_the_figure_than_the_label_names_it(text, figure):
    assert (figure, None) in roles(text), roles(text)


def test_an_adjustments_word_right_after_a_label_is_part_of_it():
    assert roles("Service  710.00\nTotal Charges  $710.00\n")[-1] == ("710.00", "total")


# 39. Thousands set apart by a plain space, cents by a dot ("CHF 12 760.00") ----------------
@pytest.mark.parametrize(
    "text,figure",
    [
        ("Total  CHF 12 760.00\n", "12 760.00"),  # a currency before it
        ("Betrag:  1 337.42 EUR\n", "1 337.42"),  # a currency after it
        ("Celkem (total):    111 900.00\n", "111 900.00"),  # a cell of its own
        ("TAX  -€ 59 926.13\n", "59 926.13"),
    ],
)
def test_a_space_grouped_figure_with_cents_after_a_dot_is_read_whole(text, figure):
    assert [am.raw for am in find_amounts(text)] == [figure]


@pytest.mark.parametrize(
    "text,figures",
    [
        # a quantity before a price in a tight row
        ("Pallet jack (ser. #PJ-44102) 4 285.00  0%\n", ["4", "285.00"]),
        # a print that groups its thousands with commas
        ("Rack bay  12 178.50  5%   2,034.90\n", ["12", "178.50", "2,034.90"]),
        # a print that writes a thousand or more with no grouping
        ("Widget   2 150.00   300.00\nTotal   4300.00\n", ["2", "150.00", "300.00", "4300.00"]),
    ],
)
def test_a_quantity_before_a_price_is_not_read_as_one_figure(text, figures):
    assert [am.raw for am in find_amounts(text)] == figures


def test_another_lines_amount_given_as_a_space_grouped_total_is_caught():
    text = (
        "Celkem (total):    111 900.00\n"
        "Uhrazeno (paid):  -111 900.00\n\n"
        "RUDR   12.01.2007  snih.cz   12.01.2008  1  100 500.00  100 500.00\n"
    )
    clean(text, {"total": 111900.0})
    flagged(text, {"total": 100500.0}, "total", "not as a labelled total", "111 900.00")


# 40. "Total with tax" is the document's grand total: a plain "Total" before the tax is none --
def test_a_total_with_tax_outranks_a_plain_total_before_tax_and_discount():
    text = (
        "Name  Unit price  Qty  Total\nTest  € 3 576.89   2  € 7 153.78\nCake  € 889.89   2  € 1 779.78\n\n"
        "TOTAL  € 8 933.56\nDiscount  -€ 100.00\n\nTAX  € 1 766.71\n\nTOTAL WITH TAX  € 10 600.27\n"
    )
    clean(text, {"tax": 1766.71, "total": 10600.27, "currency": "EUR"})
    flagged(text, {"tax": 1766.71, "total": 8933.56, "currency": "EUR"}, "total", "10 600.27")


# 41. Korean, Japanese and Chinese prints glue their currency to the figure ("400,000원") ----
_KOREAN_TAX_INVOICE = (
    "승인번호: 20260701-41000000-12345678 | 작성일자: 2026-07-01\n\n"
    " 품목  수량    공급가액  세액\n소프트웨어 개발  1  400,000원  40,000원\n시스템 유지보수  1  600,000원  60,000원\n\n"
    " 공급가액  1,000,000원\n 세액     100,000원\n 합계금액  1,100,000원\n"
)


def test_a_figure_with_its_currency_glued_after_it_is_an_amount():
    assert [am.raw for am in find_amounts("합계 1,100,000원  小計 1,000円  合计 58元  회원 3명")] == [
        "1,100,000",
        "1,000",
        "58",
    ]


def test_a_korean_tax_invoice_is_read_by_its_labels():
    record = {"invoice_number": "20260701-41000000-12345678", "invoice_date": "2026-07-01"}
    record |= {"subtotal": 1000000.0, "tax": 100000.0, "total": 1100000.0, "currency": "KRW"}
    clean(_KOREAN_TAX_INVOICE, record)
    flagged(_KOREAN_TAX_INVOICE, record | {"total": 600000.0}, "total", "not as a labelled total", "1,100,000")
    flagged(_KOREAN_TAX_INVOICE, record | {"currency": "JPY"}, "currency")


# 42. A sum row under a header naming one column by another role (Zoho's "Sub Total" row) ----
_ZOHO_TABLE = (
    "#  Item Description  Qty   Rate      VAT    Amount\n\n"
    "1  Brochure Design    2  100.00     24.00    200.00\n"
    "2  Agenda            290  20.00    696.00   5800.00\n\n"
    "                       Sub Total   720.00   6000.00\n\n"
    "                            TOTAL       OMR6720.00\n"
)


def test_a_sum_rows_figure_under_a_tax_column_is_the_tax_and_the_other_the_rows():
    clean(_ZOHO_TABLE, {"subtotal": 6000.0, "tax": 720.0, "total": 6720.0, "currency": "OMR"})
    flagged(_ZOHO_TABLE, {"subtotal": 720.0, "tax": 720.0, "total": 6720.0}, "subtotal", "not as a labelled subtotal")


def test_a_sum_row_under_a_line_with_digits_is_read_as_before():
    # a line item naming a role ("VAT filing") is no header: the row's label keeps its figure
    text = "VAT filing  1  100.00  100.00\nSub Total   20.00   100.00\n"
    assert roles(text)[-2:] == [("20.00", "subtotal"), ("100.00", None)], roles(text)


# 43. A table written one cell per line (OCR, some converters): its header stacks over its row
_STACKED = (
    "Contoso\n\nInvoice Number\nInvoice Date\nInvoice Due Date\nCharges\nVAT ID\n\n"
    "34278587\n6/18/2017\n6/24/2017\n$56,651.49\nPT\n"
)


def test_a_row_written_one_cell_per_line_is_read_under_its_stacked_header():
    clean(_STACKED, {"invoice_number": "34278587", "invoice_date": "2017-06-18"})
    flagged(_STACKED, {"invoice_date": "2017-06-24"}, "invoice_date", "Due Date")


def test_a_line_of_several_labels_over_a_line_of_several_values_is_no_stacked_header():
    # single-spaced text: each line one cell, but the labels read across, not down
    text = "Date : Expired Date : Invoice Number :\nTel : qwe@qwe.qwe\n12/05/2022 11/06/2022 # 1/2022\n"
    assert not any("Invoice Number" in r for r in reasons(text, {"invoice_date": "2022-05-12"})["invoice_date"])


def test_a_currency_beside_a_figure_is_that_figures_not_the_next_ones():
    from vetq.core.extraction.amounts import currency_beside

    text = " TOTAL     55.00          $4555.00\nSumme  12,50 EUR\nCHF      12 760.00\n"

    def marked(figure: str) -> bool:
        start = text.index(figure)
        return currency_beside(text, start, start + len(figure))

    assert marked("4555.00") and marked("12,50") and not marked("55.00")
    assert not marked("12 760.00")  # six blanks away: a column's cell, not its currency
    # a sign written in letters is no currency inside a word ("회원": member; "원래": originally)
    for words, figure in (("회원  1 200.00  x", "1 200.00"), ("55.00 원래", "55.00"), ("Bankr 55.00", "55.00")):
        assert not currency_beside(words, words.index(figure), words.index(figure) + len(figure))
    assert currency_beside("1,100,000 원", 0, 9)
    assert roles(" TOTAL     55.00          $4555.00\n") == [("55.00", None), ("4555.00", "total")]


# 44. Document-level charges and allowances before the tax basis (EN 16931 prints)
_TAX_BASIS = (
    "#  Description  Qty  Unit price  VAT %  Total\n1  Product A  1  100,00 €  19%  100,00 €\n\n"
    " Subtotal (lines)  100,00 €\n Charges           +60,00 €\n Allowances         -45,00 €\n"
    " Tax basis         115,00 €\n VAT (19%)           21,85 €\nTOTAL DUE          136,85 €\n"
)


def test_the_tax_basis_is_the_subtotal_and_a_signed_charge_explains_the_lines_sum_beside_it():
    clean(_TAX_BASIS, {"subtotal": 115.0, "tax": 21.85, "total": 136.85, "currency": "EUR"})
    # the base is no tax: given as the tax it is still caught
    flagged(_TAX_BASIS, {"subtotal": 115.0, "tax": 115.0, "total": 136.85}, "tax", "115,00")


def test_a_plus_sign_before_a_figure_with_cents_is_its_sign_and_a_phone_numbers_plus_is_not():
    assert [a.value for a in find_amounts("Charges  +60,00 €\n")] == [Decimal("60.00")]
    assert find_amounts("Tel +49 30 1234567\n") == []
    assert [a.value for a in find_amounts("Version v2+3.25")] == []  # after a letter or digit: no sign


# 45. Dates with a space after each dot ("18. 9. 2025": Czech, Slovak; "2025. 09. 18.": Hungarian)
@pytest.mark.parametrize("written", ["Created: 18. 9. 2025", "Datum: 18.\u00a09.\u00a02025", "Kelt: 2025. 09. 18."])
def test_a_date_with_a_space_after_each_dot_is_found(written):
    text = f"Invoice #: 123\n{written}\n\nWebsite design  $ 300\n\n Total: $300\n"
    clean(text, {"invoice_number": "123", "invoice_date": "2025-09-18", "total": 300.0})
    flagged(text, {"invoice_date": "2025-09-19"}, "invoice_date")


def test_a_list_numbering_before_a_short_year_is_no_spaced_date():
    assert find_date_mentions("1. 2. 25 Stück") == [] and find_date_mentions("Pos. 1. 2. 3") == []


# 46. Month names of the languages the sets' prints are in, and the longest of them
@pytest.mark.parametrize(
    "written",
    [
        "18. září 2025",  # Czech, genitive
        "18. septembra 2025",  # Slovak
        "18 de setembro de 2025",  # Portuguese
        "18 septembrie 2025",  # Romanian
        "18. syyskuuta 2025",  # Finnish, partitive
        "18 Eylül 2025",  # Turkish
        "18 EYLÜL 2025",
        "18 сентября 2025 г.",  # Russian, genitive
        "18 вересня 2025",  # Ukrainian
        "18 Σεπτεμβρίου 2025",  # Greek
        "2025. szeptember 18.",  # Hungarian, year first
        "18 września 2025",  # Polish (before)
    ],
)
def test_a_date_with_a_month_named_in_another_language_is_found(written):
    assert [sorted(m.dates) for m in find_date_mentions(f"Datum: {written}")] == [[date(2025, 9, 18)]]


def test_a_month_name_longer_than_ten_letters_is_read():
    assert [sorted(m.dates) for m in find_date_mentions("18 października 2025")] == [[date(2025, 10, 18)]]
    assert [sorted(m.dates) for m in find_date_mentions("5. marraskuuta 2025")] == [[date(2025, 11, 5)]]


def test_a_year_a_month_word_and_a_number_are_no_date_without_the_years_dot():
    assert find_date_mentions("Year 2025 may 3 items") == []


# 47. Invoices in the languages whose labels, currencies and dates the lexicon lacked: each
# one's correct record (a seller's usual labels for net, tax and total, its date, its
# currency as its country writes it) passes untouched
@pytest.mark.parametrize(
    "language,text,record",
    [
        (
            "vi",
            "CÔNG TY TNHH ABC\nHÓA ĐƠN GIÁ TRỊ GIA TĂNG\nSố: 0000123\nNgày 15 tháng 03 năm 2025\nCộng tiền hàng: 1.000.000\nThuế suất GTGT: 10%   Tiền thuế GTGT: 100.000\nTổng cộng tiền thanh toán: 1.100.000\nĐơn vị tiền tệ: VND\n",
            dict(
                vendor_name="CÔNG TY TNHH ABC",
                invoice_number="0000123",
                invoice_date="2025-03-15",
                subtotal=1000000,
                tax=100000,
                total=1100000,
                currency="VND",
            ),
        ),
        (
            "id",
            "PT Maju Jaya\nFAKTUR\nNo. Faktur: INV/2025/001\nTanggal: 12 Maret 2025\nSubtotal Rp 1.000.000\nPPN 11% Rp 110.000\nTotal Rp 1.110.000\n",
            dict(
                vendor_name="PT Maju Jaya",
                invoice_number="INV/2025/001",
                invoice_date="2025-03-12",
                subtotal=1000000,
                tax=110000,
                total=1110000,
                currency="IDR",
            ),
        ),
        (
            "ru",
            "ООО «Ромашка»\nСчёт № 45 от 12 марта 2025 г.\nИтого: 10 000,00\nВ том числе НДС (20%): 1 666,67\nВсего к оплате: 10 000,00 руб.\n",
            dict(
                vendor_name="ООО «Ромашка»",
                invoice_number="45",
                invoice_date="2025-03-12",
                tax=1666.67,
                total=10000.0,
                currency="RUB",
            ),
        ),
        (
            "tr",
            "ABC Ticaret A.Ş.\nFATURA\nFatura No: ABC2025000000012\nFatura Tarihi: 12.03.2025\nMal Hizmet Toplam Tutarı 1.000,00 TL\nHesaplanan KDV (%20) 200,00 TL\nÖdenecek Tutar 1.200,00 TL\n",
            dict(
                vendor_name="ABC Ticaret A.Ş.",
                invoice_number="ABC2025000000012",
                invoice_date="2025-03-12",
                subtotal=1000.0,
                tax=200.0,
                total=1200.0,
                currency="TRY",
            ),
        ),
        (
            "fi",
            "Esimerkki Oy\nLASKU\nLaskun numero: 3021\nLaskun päivämäärä: 12.3.2025\nVeroton yhteensä 100,00 €\nALV 25,5 % 25,50 €\nYhteensä 125,50 €\n",
            dict(
                vendor_name="Esimerkki Oy",
                invoice_number="3021",
                invoice_date="2025-03-12",
                subtotal=100.0,
                tax=25.5,
                total=125.5,
                currency="EUR",
            ),
        ),
        (
            "pt",
            "Exemplo, Lda.\nFatura FT 2025/31\nData: 2025-03-12\nTotal ilíquido 100,00 €\nIVA 23% 23,00 €\nTotal a pagar 123,00 €\n",
            dict(
                vendor_name="Exemplo, Lda.",
                invoice_number="FT 2025/31",
                invoice_date="2025-03-12",
                subtotal=100.0,
                tax=23.0,
                total=123.0,
                currency="EUR",
            ),
        ),
        (
            "cs",
            "Příklad s.r.o.\nFaktura - daňový doklad č. 2025012\nDatum vystavení: 12. 3. 2025\nZáklad daně 100,00 Kč\nDPH 21 % 21,00 Kč\nCelkem k úhradě 121,00 Kč\n",
            dict(
                vendor_name="Příklad s.r.o.",
                invoice_number="2025012",
                invoice_date="2025-03-12",
                subtotal=100.0,
                tax=21.0,
                total=121.0,
                currency="CZK",
            ),
        ),
        (
            "ja",
            "株式会社サンプル\n請求書\n請求書番号: INV-0012\n請求日: 2025年3月12日\n小計 ¥10,000\n消費税(10%) ¥1,000\n合計金額 ¥11,000\n",
            dict(
                vendor_name="株式会社サンプル",
                invoice_number="INV-0012",
                invoice_date="2025-03-12",
                subtotal=10000.0,
                tax=1000.0,
                total=11000.0,
                currency="JPY",
            ),
        ),
        (
            "el",
            "Παράδειγμα Α.Ε.\nΤιμολόγιο Παροχής Υπηρεσιών\nΑρ. 154\nΗμερομηνία: 12/03/2025\nΚαθαρή αξία 100,00 €\nΦ.Π.Α. 24% 24,00 €\nΣύνολο 124,00 €\n",
            dict(
                vendor_name="Παράδειγμα Α.Ε.",
                invoice_number="154",
                invoice_date="2025-03-12",
                subtotal=100.0,
                tax=24.0,
                total=124.0,
                currency="EUR",
            ),
        ),
        (
            "hu",
            "Példa Kft.\nSzámla\nSzámlaszám: PK-2025-12\nKelt: 2025. március 12.\nNettó összesen 10 000 Ft\nÁFA 27% 2 700 Ft\nBruttó végösszeg 12 700 Ft\n",
            dict(
                vendor_name="Példa Kft.",
                invoice_number="PK-2025-12",
                invoice_date="2025-03-12",
                subtotal=10000.0,
                tax=2700.0,
                total=12700.0,
                currency="HUF",
            ),
        ),
        (
            "ro",
            "Exemplu SRL\nFactură seria EX nr. 0045\nData: 12.03.2025\nTotal fără TVA 100,00 lei\nTVA 19% 19,00 lei\nTotal de plată 119,00 lei\n",
            dict(
                vendor_name="Exemplu SRL",
                invoice_number="0045",
                invoice_date="2025-03-12",
                subtotal=100.0,
                tax=19.0,
                total=119.0,
                currency="RON",
            ),
        ),
        (
            "no",
            "Eksempel AS\nFaktura\nFakturanr: 10023\nFakturadato: 12.03.2025\nSum eks. mva 1 000,00\nMva 25 % 250,00\nÅ betale NOK 1 250,00\n",
            dict(
                vendor_name="Eksempel AS",
                invoice_number="10023",
                invoice_date="2025-03-12",
                subtotal=1000.0,
                tax=250.0,
                total=1250.0,
                currency="NOK",
            ),
        ),
        (
            "he",
            'דוגמה בע"מ\nחשבונית מס מספר 10045\nתאריך: 12/03/2025\nסה"כ לפני מע"מ 100.00 ₪\nמע"מ 17% 17.00 ₪\nסה"כ לתשלום 117.00 ₪\n',
            dict(
                vendor_name='דוגמה בע"מ',
                invoice_number="10045",
                invoice_date="2025-03-12",
                subtotal=100.0,
                tax=17.0,
                total=117.0,
                currency="ILS",
            ),
        ),
        (
            "ar",
            "شركة المثال\nفاتورة ضريبية\nرقم الفاتورة: INV-778\nتاريخ الفاتورة: 2025-03-12\nالمجموع قبل الضريبة 100.00 ر.س\nضريبة القيمة المضافة 15% 15.00 ر.س\nالإجمالي 115.00 ر.س\n",
            dict(
                vendor_name="شركة المثال",
                invoice_number="INV-778",
                invoice_date="2025-03-12",
                subtotal=100.0,
                tax=15.0,
                total=115.0,
                currency="SAR",
            ),
        ),
        (
            "th",
            "บริษัท ตัวอย่าง จำกัด\nใบกำกับภาษี\nเลขที่ INV2025-09\nวันที่ 12/03/2025\nรวมเงิน 1,000.00\nภาษีมูลค่าเพิ่ม 7% 70.00\nจำนวนเงินรวมทั้งสิ้น 1,070.00 บาท\n",
            dict(
                vendor_name="บริษัท ตัวอย่าง จำกัด",
                invoice_number="INV2025-09",
                invoice_date="2025-03-12",
                subtotal=1000.0,
                tax=70.0,
                total=1070.0,
                currency="THB",
            ),
        ),
        (
            "uk",
            "ТОВ «Приклад»\nРахунок-фактура № 77 від 12 березня 2025 р.\nРазом без ПДВ: 1 000,00 грн\nПДВ 20%: 200,00 грн\nВсього з ПДВ: 1 200,00 грн\n",
            dict(
                vendor_name="ТОВ «Приклад»",
                invoice_number="77",
                invoice_date="2025-03-12",
                subtotal=1000.0,
                tax=200.0,
                total=1200.0,
                currency="UAH",
            ),
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) <= 3 else None,
)
def test_an_invoice_in_another_language_passes_with_its_own_labels(language, text, record):
    clean(text, record)


# 48. A shared currency sign whose one currency the document's own writing names
@pytest.mark.parametrize(
    "text,code",
    [
        ("請求書\n合計金額 ¥11,000\n", "JPY"),  # kana beside the yen sign
        ("增值税发票\n价税合计 ¥1,130.00\n", "CNY"),  # Chinese tax words
        ("Faktura\nMva 25 % 250,00\nÅ betale kr 1 250,00\n", "NOK"),
        ("Faktura\nMoms 25% 250,00\nTotal kr 1.250,00\nBeløb at betale\n", "DKK"),
        ("Faktura\nMoms 25 % 250,00\nAtt betala 1 250,00 kr\n", "SEK"),
    ],
)
def test_a_shared_currency_sign_is_read_by_the_documents_language(text, code):
    clean(text, {"currency": code})
    other = {"JPY": "CNY", "CNY": "JPY", "NOK": "SEK", "DKK": "SEK", "SEK": "DKK"}[code]
    flagged(text, {"currency": other}, "currency", f"names {code}, not {other}")


def test_a_shared_currency_sign_stays_ambiguous_when_nothing_names_its_currency():
    flagged("Invoice\nTotal kr 1 250,00\n", {"currency": "SEK"}, "currency", "ambiguous symbol 'kr'")
    flagged("Invoice\nTotal ¥11,000\n", {"currency": "JPY"}, "currency", "ambiguous symbol '¥'")


@pytest.mark.parametrize(
    "text,code",
    [
        ("Ödenecek Tutar 1.200,00 TL\n", "TRY"),
        ("Total de plată 119,00 lei\n", "RON"),
        ("Всього до сплати: 1 200,00 грн\n", "UAH"),
        ("Всего к оплате: 10 000,00 руб.\n", "RUB"),
        ("Общо за плащане: 120,00 лв.\n", "BGN"),
        ("รวมทั้งสิ้น 1,070.00 บาท\n", "THB"),
        ("الإجمالي 115.00 ر.س\n", "SAR"),
        ("TOTAL PEMBAYARAN  RP 21.140.000\n", "IDR"),
        ("Terbilang: dua puluh satu juta rupiah\n", "IDR"),
        ("Jumlah: dua ratus ringgit sahaja\n", "MYR"),
        ("azaz ezerkétszázhetven forint\n", "HUF"),
    ],
)
def test_a_currency_written_as_its_country_does_is_found(text, code):
    clean(text, {"currency": code})


# 49. Dates of Indonesian, Malay and Vietnamese invoices; a Malay month that is an English word
@pytest.mark.parametrize(
    "written,day",
    [
        ("Tanggal: 12 Maret 2025", date(2025, 3, 12)),
        ("Tarikh: 12 Ogos 2025", date(2025, 8, 12)),
        ("Tarikh: 12 Mac 2025", date(2025, 3, 12)),
        ("Ngày 15 tháng 03 năm 2025", date(2025, 3, 15)),
        ("NGÀY 5 THÁNG 3 NĂM 2025", date(2025, 3, 5)),
    ],
)
def test_an_indonesian_malay_or_vietnamese_date_is_found(written, day):
    assert [sorted(m.dates) for m in find_date_mentions(written)] == [[day]]


def test_mac_is_a_month_only_between_a_day_and_a_year():
    assert find_date_mentions("Mac 12 2025 edition") == []


# 50. A payment term's days in other languages are no amount ("8 pv netto": eight days net)
@pytest.mark.parametrize("term", ["8 pv netto", "14 dní netto", "30 gün net", "8 dage netto", "15 nap nettó"])
def test_a_payment_term_in_days_is_no_subtotal(term):
    clean(
        f"Maksuehdot: {term}\nNetto 100,00\nALV 24 % 24,00\nYhteensä 124,00 EUR\n",
        {"subtotal": 100.0, "tax": 24.0, "total": 124.0},
    )


# 51. A gross total's caption that names the tax it includes ("(شامل ضريبة القيمة المضافة)",
# inclusive of VAT) is a total label, not the tax's
def test_a_caption_inclusive_of_vat_in_arabic_is_the_totals():
    text = (
        "المبلغ الخاضع للضريبة (غير شامل ضريبة القيمة المضافة)\n 3,000.00 SAR\n"
        "اجمالى مبلغ ضريبة القيمة المضافة\n 300.00 SAR\n"
        "إجمالي قيمة الفاتورة (شامل ضريبة القيمة المضافة)\n 3,300.00 SAR\n"
    )
    clean(text, {"subtotal": 3000.0, "tax": 300.0, "total": 3300.0, "currency": "SAR"})


# 52. Round 16's classes. Adjustments written in the plural ("Discounts (5%)") are labelled
# charges and deductions as their singulars are
@pytest.mark.parametrize("label", ["Discounts (5%)", "Rebates", "Coupons", "Promotions"])
def test_a_deduction_named_in_the_plural_explains_the_total(label):
    text = f"Subtotal  $1,797.00\n{label}  -$89.85\nTax (7.5%)  $128.04\nTotal  $1,835.19\n"
    record = {"subtotal": 1797.0, "tax": 128.04, "total": 1835.19}
    assert not [r for r in reasons(text, record)["total"] if "beyond rounding" in r]


# 53. A bank account's number after its label is no amount, and a header of words over a row
# of as many cells is read by rank, however far the proportional font moved the columns
def test_an_account_number_is_no_amount():
    assert [a.raw for a in find_amounts("Account No: 123 456 789  10 Jan 2018  $8000")] == ["8000"]
    assert [a.raw for a in find_amounts("Kontonummer 1234 5678  Sort code 12-34-56  Total 45.00")] == ["45.00"]
    assert [a.raw for a in find_amounts("Account balance 1 250,00")] == ["1 250,00"]


def test_a_header_of_words_over_a_row_of_as_many_cells_names_its_figure_by_rank():
    text = "Bank Info  Due By  Total Due\n\nAccount No: 123 456 789  10 Jan 2018  $8000\n"
    clean(text, {"total": 8000.0})
    source = Source(text, INVOICE.lexicon, INVOICE.value_lexicon)
    assert [(a.raw, role) for a, role in zip(source.amounts, source.roles, strict=True)] == [("8000", "total")]


# 54. A page break ends a line: a table's header at the foot of a page and its row at the
# head of the next are a header and its row, not one line
def test_a_header_at_a_pages_foot_names_the_row_at_the_next_pages_head():
    text = (
        "ACME Corp\n\nInvoice Number  Invoice Date  Due Date  Status\f"
        "INV-2024-001  Jan 15, 2024  Feb 15, 2024  Paid\n\nTotal  $6,000.00\n"
    )
    clean(text, {"invoice_number": "INV-2024-001", "invoice_date": "2024-01-15", "total": 6000.0})


# 55. In a text of one cell per line (OCR, a converter without layout) everything stands in
# column 0: a label names the value on the next line with text, not every value below it
def test_in_one_cell_per_line_text_a_label_names_only_the_next_line():
    text = (
        "Date :\nExpired Date :\nInvoice Number :\n\nTel : office@example.com\n"
        "12/05/2022\n11/06/2022\n# 1/2022\n\nTOTAL\n$ 40.00\n"
    )
    record = {"invoice_date": "2022-05-12", "total": 40.0}
    assert not [r for r in reasons(text, record)["invoice_date"] if "only under" in r]
    # the label over its value on the next line still names it
    below = "Delivery date:\n05.03.2026\nInvoice date:\n28.02.2026\n"
    flagged(below, {"invoice_date": "2026-03-05"}, "invoice_date", "only under 'Delivery date'")


# 56. A text without columns (a converter without layout, blanks run together): where neither
# a line nor the line above shows columns, a position says nothing, so a label names only the
# lone figure of the next line with text, and there only as its line's last label
def test_in_a_text_without_columns_no_label_names_a_figure_by_position():
    text = (
        "GTIN Art-Nr-Lieferant Menge VKE/Geb Nettopreis MwSt-% Nettowert\nArt-Nr-Kunde Artikelbezeichnung\n\n"
        " Wichtige Information: Bei Bestellungen bis zum 19.12. ist die Auslieferung bis spätestens 23.12. garantiert.\n"
        "\n1 WA997 10 52,00 19,0 520,00\n2 WA998 10 53,61 19,0 536,05\n"
        "Nettobetrag 1056,05\nMwSt 19% 200,65\nGesamtbetrag 1256,70\n"
    )
    source = Source(text, INVOICE.lexicon, INVOICE.value_lexicon)
    roles = {a.raw: role for a, role in zip(source.amounts, source.roles, strict=True)}
    assert roles["19.12"] is None and roles["200,65"] == "tax"
    stacked = "Rechnungssumme Netto\n193,83\nSumme Umsatzsteuer\n21,31\nRechnungssumme Brutto\n215,14\n"
    clean(stacked, {"subtotal": 193.83, "tax": 21.31, "total": 215.14})
    source = Source(stacked, INVOICE.lexicon, INVOICE.value_lexicon)
    assert [role for role in source.roles] == ["subtotal", "tax", "total"]


# 57. "incl. of" and "excl. of" qualify the label before them as "incl." and "excl." do
def test_a_total_said_to_be_exclusive_of_tax_is_no_tax():
    text = "Total amount excl. of VAT  €70.62\nVAT out of scope  €0\nTotal amount incl. of VAT  €70.62\n"
    clean(text, {"tax": 0, "total": 70.62})


# 58. One cell per line: a charge's phrase over its figure counts with its rate written after it
@pytest.mark.parametrize("label", ["Discounts (5%)", "Discount 5%", "Discount %", "DISCOUNT:"])
def test_a_deduction_over_its_figure_with_its_rate_explains_the_total(label):
    text = f"Subtotal\n$1,797.00\n{label}\n-$89.85\nTax\n$128.04\nTotal\n$1,835.19\n"
    record = {"subtotal": 1797.0, "tax": 128.04, "total": 1835.19}
    assert not [r for r in reasons(text, record)["total"] if "beyond rounding" in r]


@pytest.mark.parametrize("label", ["Tax (7.5%)", "Tax 7.5%", "Tax:"])
def test_a_label_alone_with_its_rate_over_its_figure_names_it(label):
    text = f"Subtotal\n$1,797.00\n{label}\n$134.78\nTotal\n$1,931.78\n"
    clean(text, {"subtotal": 1797.0, "tax": 134.78, "total": 1931.78})


def saying(text: str, record: dict, part: str) -> list[str]:
    """The reasons, of any field, that say `part`."""
    return [r for found in reasons(text, record).values() for r in found if part in r]


# 59. Round 18's classes. A tax word marked as a rate ("%IVA" heading a column, "IVA (%):
# 22.00") names rates, not the tax
def test_a_tax_word_marked_as_a_rate_names_no_tax():
    text = (
        "Descrizione  Quantità  Prezzo unitario  %IVA  Prezzo totale\n"
        " Consulenza  1,00  15.000,00  22,00  15.000,00\n\n"
        " IVA (%): 22.00\n"
        "Totale imponibile  15.000,00\nTotale imposta  3.300,00\nTotale documento  18.300,00\n"
    )
    clean(text, {"subtotal": 15000.0, "tax": 3300.0, "total": 18300.0})
    source = Source(text, INVOICE.lexicon, INVOICE.value_lexicon)
    assert [a.raw for a, role in zip(source.amounts, source.roles, strict=True) if role == "tax"] == ["3.300,00"]


# 60. A total of a named tax ("TOTAL ICE", Ecuador's excise) is that tax's sum, not the total
def test_a_total_of_a_named_excise_is_no_total():
    text = "SUBTOTAL  $500.00\nTOTAL IVA 5%  $5.00\nTOTAL ICE  2.00\nVALOR TOTAL  $507.00\n"
    clean(text, {"subtotal": 500.0, "total": 507.0})


# 61. Sums and deductions in more languages: Finnish net and gross sums, Portuguese and
# Finnish discounts and advance payments, withholdings
def test_more_languages_sums_and_deductions():
    clean(
        "Yhteensä veroton: 2830,30 euroa\nALV yhteensä: 622,68 euroa\nLASKU YHTEENSÄ: 3452,98 euroa\n",
        {"subtotal": 2830.3, "tax": 622.68, "total": 3452.98},
    )
    text = "Subtotal  4600.00 CVE\nDesconto  42.50 CVE\nIVA  683.63 CVE\nRetenção  0.00 CVE\nTotal  5241.13 CVE\n"
    assert not saying(text, {"subtotal": 4600.0, "tax": 683.63, "total": 5241.13}, "beyond rounding")


# 62. A charge's column in a header over one row of sums explains the total
def test_a_charge_heading_a_column_of_sums_explains_the_total():
    text = (
        "PRODUCT  QTY  PRICE  TOTAL\nWidget  6  $580.00  $3,480.00\nGadget  2  $3,000.00  $6,000.00\n\n"
        " Total     VAT 21%  Shipping costs  Total due\n$9,480.00  $1,990.80  $5,400.00     $16,870.80\n"
    )
    assert not saying(text, {"subtotal": 9480.0, "tax": 1990.8, "total": 16870.8}, "beyond rounding")


# 63. Prices said to include the tax: a gross subtotal equal to the total is no wrong total
def test_a_gross_subtotal_where_the_tax_is_said_to_be_included():
    text = (
        "Produto com IVA incluido  1  120.00 EUR  120.00 EUR\nSubtotal  120.00 EUR\nIVA  20.00 EUR\nTotal  120.00 EUR\n"
    )
    record = {"subtotal": 120.0, "tax": 20.0, "total": 120.0}
    assert not saying(text, record, "beyond rounding")
    # without the words, the same figures do not add up
    assert saying(text.replace("com IVA incluido", "simples"), record, "beyond rounding")


# 64. Round 19's classes. A rate, then its base with the currency (in brackets), then the tax:
# the base leads to the tax as a bare base does
def test_a_rates_base_written_with_its_currency_leads_to_the_tax():
    text = "Totaal excl. btw  4.655,00 EUR\nBtw 0 % (4.655,00 EUR)      0,00 EUR\nTe betalen  4.655,00 EUR\n"
    clean(text, {"subtotal": 4655.0, "tax": 0.0, "total": 4655.0})
    # the base in brackets after the tax is the base, not the tax
    after = "LASKU YHTEENSÄ: 122,00 euroa\nYhteensä veroton: 100,00 euroa\nAlv 22 % :     22,00 euroa (100,00 euroa)\n"
    clean(after, {"subtotal": 100.0, "tax": 22.0, "total": 122.0, "currency": "EUR"})


# 65. A line or a price said to carry the tax ("ítem con IVA general", "price with VAT") names
# no tax
def test_a_line_said_to_carry_the_tax_names_no_tax():
    text = (
        "Cantidad Descripción  Precio U. (Bs.) Precio T. (Bs.)\n"
        " 1  ítem con IVA general  1.000,00  1.000,00\n 4  otro ítem con IVA general  100,00  400,00\n"
        "     BI G                        Bs.1.400,00\n     IVA G (16 %)                 Bs.224,00\n"
        "                       TOTAL    Bs.1.624,00\n"
    )
    clean(text, {"tax": 224.0, "total": 1624.0})


# 66. Turkish sums: the VAT base and the amount before taxes are net figures, the VAT's full
# name is the tax, the total discount a deduction
def test_turkish_sums_and_discount():
    text = (
        "  Mal Hizmet Toplam Tutarı:    26.003,40 TL\n      Toplam İskonto:                   786,90 TL\n"
        "   KDV Matrahı (%18):          25.216,50 TL\n    Vergi Hariç Tutar:         25.216,50 TL\n"
        "Hesaplanan Katma Değer Vergisi (%18):  4.538,97 TL\n Vergiler Dahil Toplam Tutar:  29.755,47 TL\n"
    )
    clean(text, {"subtotal": 25216.5, "tax": 4538.97, "total": 29755.47})


# 67. A label the words after it make no label ("KDV Matrahı (%):", its rate left out) is not
# read as a shorter label it starts with ("KDV")
def test_a_label_made_no_label_is_not_read_as_a_shorter_one():
    text = (
        "  KDV Matrahı (%):            15,15 TL\n   Hesaplanan KDV (%18):        2,73 TL\nÖdenecek Tutar:  17,88 TL\n"
    )
    source = Source(text, INVOICE.lexicon, INVOICE.value_lexicon)
    roles = {a.raw: role for a, role in zip(source.amounts, source.roles, strict=True)}
    assert (roles["15,15"], roles["2,73"], roles["17,88"]) == (None, "tax", "total")
    clean(text, {"tax": 2.73, "total": 17.88})


# 68. The shekel as Hebrew invoices abbreviate it, and the Finnish word for euros after a sum
@pytest.mark.parametrize(
    "text,total,code",
    [
        ('חשבונית מס 1001\nסה"כ לתשלום  22,892.00 ש"ח\n', 22892.0, "ILS"),
        ("חשבונית מס 1001\nסה״כ לתשלום  22,892.00 ש״ח\n", 22892.0, "ILS"),
        ("LASKU YHTEENSÄ: 3352,98 euroa\n", 3352.98, "EUR"),
    ],
)
def test_a_currency_abbreviated_or_named_in_its_language_is_read(text, total, code):
    clean(text, {"total": total, "currency": code})


# 69. Round 20's class. A tax breakdown's rows of base, rate and tax ("VAT  15.24 €  19 %
# 2.90 €"): the tax label names the tax, not the base
def test_a_tax_rows_base_before_its_rate_is_no_tax():
    text = (
        "Net Total                              24,876.25 €\n"
        "Tax Breakdown   Sum     Rate      Tax Amount\n"
        " VAT           15.24 €  19 %               2.90 €\n"
        " VAT      561.00 €       7 %              39.27 €\n"
        " VAT  24,300.01 €        0 %               0.00 €\n"
        "Tax Total                                 42.17 €\n"
        "Grand Total                            24,918.42 €\n"
    )
    clean(text, {"subtotal": 24876.25, "tax": 42.17, "total": 24918.42})


# 70. A currency after a figure followed by a rate is that figure's, not the rate's: "Net
# 100.00 €  19 %  19.00 €" keeps the net's label on the net
def test_a_currency_before_a_rate_is_the_figures_before_it():
    source = Source("Net  100.00 €  19 %  19.00 €\n", INVOICE.lexicon, INVOICE.value_lexicon)
    assert source.roles[0] == "subtotal"
    # a currency before the next figure is still that figure's ("55.00   $4555.00")
    hours = "TOTAL  55.00 EUR 4555.00\n"
    assert [currency_beside(hours, a.start, a.end) for a in find_amounts(hours)] == [False, True]
    clean("Net  100.00 €  19 %  19.00 €\nTotal  119.00 €\n", {"subtotal": 100.0, "total": 119.0})


# 71. A legal reference is no label: "art. 106na ust. 1" (Polish "ustęp", a paragraph, not
# the German "USt."), "art. 43 ust. 1 pkt 37 ustawy VAT" (the VAT Act, not the VAT)
def test_a_legal_reference_names_no_amount():
    text = (
        "Data wystawienia, z zastrzeżeniem art. 106na ust. 1 ustawy: 2026-02-15\n"
        "     1. Tak              art. 43 ust. 1 pkt 37 ustawy VAT\n"
        "Kwota należności ogółem: 2760 PLN\n"
    )
    source = Source(text, INVOICE.lexicon, INVOICE.value_lexicon)
    assert [a.raw for a, role in zip(source.amounts, source.roles, strict=True) if role] == ["2760"]
    # the German tax label still reads
    assert Source("USt. 19 %  19,00 EUR\n", INVOICE.lexicon, INVOICE.value_lexicon).roles == ["tax"]


# 72. Round 21's class. KoSIT's prints head the sums before and after tax alike
# ("Gesamtsumme"): the one the tax turns into the next is the sum before tax
def test_a_total_that_the_tax_turns_into_the_next_total_is_the_subtotal():
    text = (
        "Summe aller Positionen  1.300,00\n"
        "Summe Zuschläge            25,00\n"
        "Gesamtsumme             1.325,00\n"
        "Summe Umsatzsteuer        331,25\n"
        "Gesamtsumme             1.656,25\n"
        "Fälliger Betrag         1.656,25\n"
    )
    source = Source(text, INVOICE.lexicon, INVOICE.value_lexicon)
    assert [a.raw for a, role in zip(source.amounts, source.roles, strict=True) if role == "subtotal"] == [
        "1.300,00",
        "1.325,00",
    ]
    clean(text, {"subtotal": 1325.0, "tax": 331.25, "total": 1656.25})
    # a grand total label before a plain one names the grand total, whatever follows
    grand = "Grand total  100.00\nVAT  20.00\nTotal  120.00\n"
    assert Source(grand, INVOICE.lexicon, INVOICE.value_lexicon).roles == ["total", "tax", "total"]
    # and a total the tax does not complete stays a total
    assert Source("Total  100.00\nVAT  20.00\nTotal  125.00\n", INVOICE.lexicon, INVOICE.value_lexicon).roles == [
        "total",
        "tax",
        "total",
    ]


# 73. Round 21's class. Each line's or each tax category's figure under a total word
# ("Razem za energię 18.00", a category's "Gesamtsumme 198,00") is no rival for the
# document's total when, with the tax, they add up to it
def test_totals_of_parts_that_the_tax_completes_are_no_rival():
    text = (
        "  1   Razem za energię           18.00   23%\n"
        "  2   Razem za dystrybucję       25.60   23%\n"
        "Podatek VAT                      10.03\n"
        "Kwota należności ogółem: 53.63 PLN\n"
    )
    clean(text, {"tax": 10.03, "total": 53.63})
    # parts that do not add up with the tax stay rivals
    flagged(
        text.replace("25.60", "26.60"),
        {"tax": 10.03, "total": 53.63},
        "total",
        "conflicting total",
    )


# 74. A label with a colon names what follows it, never a figure before it ("Menge 7,00
# Umsatzsteuer: S": a quantity); a unit price qualified in brackets ("Preis pro Einheit
# (netto) 400") is no net
def test_a_label_with_a_colon_and_a_unit_price_in_brackets_name_no_amount():
    text = "Menge                 7,00       Umsatzsteuer:           S\nPreis pro Einheit (netto)  400\n"
    assert Source(text, INVOICE.lexicon, INVOICE.value_lexicon).roles == [None, None]
    # a label without a colon after a figure still names it
    assert Source("540.00 before tax\n", INVOICE.lexicon, INVOICE.value_lexicon).roles == ["subtotal"]


# 75. An instalment's figure ("część odsetkowa raty  netto 200, vat 46") is a part, no
# rival for the document's tax; and a whole-unit figure written with its currency beside
# its own label ("ogółem: 2051 PLN") is money, a rival for a figure in cents
def test_an_instalments_figure_is_no_rival_and_a_whole_figure_with_its_currency_is():
    text = (
        "22% lub 23%       2000  460\n"
        "Kwota należności ogółem: 2460 PLN\n"
        "część odsetkowa raty        netto 200, vat 46\n"
    )
    reasons_of = reasons(text, {"tax": 460.0, "total": 2460.0})
    assert not any("labelled tax" in r for r in reasons_of["tax"]), reasons_of
    flagged(
        "22% lub 23%     1666.66    383.33\nKwota należności ogółem: 2051 PLN\n",
        {"total": 1666.66},
        "total",
        "not as a labelled total",
        "2051",
    )


# 76. "Faktura VAT" is the document's name (a VAT invoice), not the VAT: found when the
# neutral ids-footer variant put a bank code under "ZAŁĄCZNIK DO FAKTURY VAT"
def test_a_vat_invoices_name_names_no_tax():
    for heading in ("FAKTURA VAT  123,00\n", "ZAŁĄCZNIK DO FAKTURY VAT\n  370 400\n"):
        assert Source(heading, INVOICE.lexicon, INVOICE.value_lexicon).roles == [None], heading
    assert Source("VAT  23,00\n", INVOICE.lexicon, INVOICE.value_lexicon).roles == ["tax"]


# 77. Labels, dates and currencies of languages and taxes no round has brought yet, added
# before any document in them was seen (as round 15's were): Lithuanian, Latvian,
# Estonian, Slovenian, Croatian, Serbian, Bulgarian, Macedonian and Icelandic invoices,
# Peru's IGV, the Dominican ITBIS and Malaysia's SST; their tax ids and rates name nothing
@pytest.mark.parametrize(
    "text,subtotal,tax,total",
    [
        (
            "PVM sąskaita faktūra Nr. 12345\nPVM kodas: LT100001234567\nSuma be PVM  100,00\nPVM 21 %  21,00\n"
            "Iš viso su PVM  121,00\nPVM tarifas 21 %\n",
            100,
            21,
            121,
        ),
        (
            "Rēķins Nr. 123\nPVN reģ. nr. 40003012345\nSumma bez PVN  100,00\nPVN 21%  21,00\nKopā apmaksai  121,00 EUR\n",
            100,
            21,
            121,
        ),
        (
            "Arve nr 123\nSumma ilma käibemaksuta  100,00\nKäibemaks 22%  22,00\nKokku tasuda  122,00 EUR\n",
            100,
            22,
            122,
        ),
        (
            "Račun št. 123\nDDV številka 12345678\nSkupaj brez DDV  100,00\nDDV 22 %  22,00\nSkupaj za plačilo  122,00 EUR\n",
            100,
            22,
            122,
        ),
        ("Račun br. 123\nUkupno bez PDV-a  100,00\nPDV 25%  25,00\nUkupno za plaćanje  125,00 EUR\n", 100, 25, 125),
        (
            "Račun broj 123\nPDV broj 100123456\nPoreska osnovica  100,00\nPDV 20%  20,00\nUkupno za uplatu  120,00 din.\n",
            100,
            20,
            120,
        ),
        (
            "Фактура № 0000000123\nДДС номер 123456789\nДанъчна основа  100,00\nДДС 20%  20,00\nСума за плащане  120,00 лв.\n",
            100,
            20,
            120,
        ),
        ("Фактура бр. 123\nВкупно без ДДВ  100,00\nДДВ 18%  18,00\nВкупно за плаќање  118,00 ден.\n", 100, 18, 118),
        (
            "Reikningur nr. 123\nVSK-númer 12345\nSamtals án VSK  100,00\nVSK 24%  24,00\nSamtals til greiðslu  124,00\n",
            100,
            24,
            124,
        ),
        ("FACTURA ELECTRÓNICA F001-123\nOp. Gravada  100.00\nIGV 18%  18.00\nImporte Total  118.00\n", 100, 18, 118),
        ("Factura NCF B0100000001\nSubtotal  RD$ 100.00\nITBIS 18%  RD$ 18.00\nTotal  RD$ 118.00\n", 100, 18, 118),
        ("INVOICE INV-001\nSubtotal  RM 100.00\nSST 6%  RM 6.00\nTotal  RM 106.00\n", 100, 6, 106),
    ],
)
def test_labels_of_languages_no_round_brought(text, subtotal, tax, total):
    source = Source(text, INVOICE.lexicon, INVOICE.value_lexicon)
    named = {role: a.raw for a, role in zip(source.amounts, source.roles, strict=True) if role}
    assert [float(named[r].split()[-1].replace(",", ".")) for r in ("subtotal", "tax", "total")] == [
        subtotal,
        tax,
        total,
    ], named
    clean(text, {"subtotal": subtotal, "tax": tax, "total": total})


@pytest.mark.parametrize(
    "text,day",
    [
        ("15. siječnja 2025.", date(2025, 1, 15)),
        ("3. märts 2025", date(2025, 3, 3)),
        ("15 юни 2025 г.", date(2025, 6, 15)),
        ("15. júlí 2025", date(2025, 7, 15)),
        ("1. studenoga 2024", date(2024, 11, 1)),
        ("12 декември 2024", date(2024, 12, 12)),
    ],
)
def test_month_names_of_languages_no_round_brought(text, day):
    assert [m.dates for m in find_date_mentions(text)] == [frozenset({day})]


@pytest.mark.parametrize("text,code", [("120,00 din.", "RSD"), ("RD$ 118.00", "DOP"), ("118,00 ден.", "MKD")])
def test_currencies_of_languages_no_round_brought(text, code):
    clean(f"Total  {text}\n", {"total": float(text.replace("RD$", "").split()[0].replace(",", ".")), "currency": code})


# 78. Leader dots between a label and its right-aligned figure count as one gap, as a run
# of blanks does: the label reaches across the page
def test_leader_dots_as_long_as_the_page_leave_the_label_its_figure():
    for fill in (" " * 70, "." * 70, " ." * 35 + " "):
        source = Source(f"Gesamtsumme{fill}675,00\n", INVOICE.lexicon, INVOICE.value_lexicon)
        assert source.roles == ["total"], fill


# 79. Round 22's class. A VAT category's base under a total word, an exempt category's
# negative ("Gesamtsumme 1.460,50", "1,00", "-25,00"): with the tax they make the total,
# so none is a rival; "Summe Nachlässe" (German plurals of deductions) is a deduction
def test_signed_parts_that_the_tax_completes_and_plural_deductions_are_no_rival():
    text = (
        "Summe aller Positionen  1.436,50\n"
        "Summe Nachlässe           100,00\n"
        "Summe Zuschläge           100,00\n"
        "Gesamtsumme             1.436,50\n"
        "Summe Umsatzsteuer        365,28\n"
        "Gesamtsumme             1.801,78\n"
        "Umsatzsteuerkategorie: S\n"
        "Gesamtsumme             1.460,50\n"
        "Umsatzsteuerkategorie: AA\n"
        "Gesamtsumme                 1,00\n"
        "Umsatzsteuerkategorie: E\n"
        "Gesamtsumme               -25,00\n"
    )
    # (a record without its subtotal: the parts' own sum, not the record's, explains them)
    clean(text, {"tax": 365.28, "total": 1801.78})
    clean(text + "\n" + text, {"tax": 365.28, "total": 1801.78})  # printed twice
    source = Source(text, INVOICE.lexicon, INVOICE.value_lexicon)
    assert source.context(1).adjustment == "nachlässe"
    # parts that do not make the total with the tax stay rivals
    flagged(text.replace("-25,00", "-35,00"), {"tax": 365.28, "total": 1801.78}, "total", "conflicting")


# 80. Round 22's class. A figure restated in another currency ("Summe Umsatzsteuer in
# Abrechnungswährung"), the qualifier far across the page from its figure, is no rival
def test_a_figure_restated_in_the_accounting_currency_is_no_rival():
    text = (
        "Summe aller Positionen" + " " * 49 + "10.000,00\n"
        "Gesamtsumme" + " " * 60 + "10.000,00\n"
        "Summe Umsatzsteuer" + " " * 60 + "2.500,00\n"
        "Summe Umsatzsteuer in Abrechnungswährung" + " " * 45 + "249,00\n"
        "Gesamtsumme" + " " * 60 + "12.500,00\n"
    )
    clean(text, {"subtotal": 10000.0, "tax": 2500.0, "total": 12500.0})


# 81. A tax category's block written down the page: a figure, a line with its rate, a line
# whose figure is that rate of it ("Total TVA 972,00" / "Taux de TVA 20%" / "Montant TVA
# par taux 194,40"): the first is the rate's base, whatever its label says, no rival
def test_a_figure_over_its_rate_and_its_tax_is_the_rates_base():
    text = (
        "Montant total HT                               972,00\n"
        "Montant total TVA                              194,40\n"
        "Montant TTC         1 166,40\n"
        "Code de TVA        TVA standard (S)\n"
        "Total TVA                                      972,00\n"
        "Taux de TVA                                     20%\n"
        "Montant TVA par taux                           194,40\n"
    )
    clean(text, {"subtotal": 972.0, "tax": 194.4, "total": 1166.4})
    source = Source(text, INVOICE.lexicon, INVOICE.value_lexicon)
    assert [a.raw for i, a in enumerate(source.amounts) if source.context(i).rate_base] == ["972,00"]
    # a figure the rate does not turn into the next line's stays what its label says
    other = Source(text.replace("194,40\n", "190,00\n"), INVOICE.lexicon, INVOICE.value_lexicon)
    assert not any(other.context(i).rate_base for i in range(len(other.amounts)))
    # a category whose tax was rounded line by line is no base by the rate, yet with the
    # other categories' bases and the tax it still makes the total
    blocks = (
        "Summe aller Positionen  1.696,12\n"
        "Gesamtsumme             1.696,12\n"
        "Summe Umsatzsteuer        224,79\n"
        "Gesamtsumme             1.920,91\n"
        "Umsatzsteuerkategorie: S\n"
        "Gesamtsumme               696,12\n"
        "Umsatzsteuersatz            5,00%\n"
        "Umsatzsteuerbetrag         34,79\n"
        "Umsatzsteuerkategorie: S\n"
        "Gesamtsumme             1.000,00\n"
        "Umsatzsteuersatz           19,00%\n"
        "Umsatzsteuerbetrag        190,00\n"
    )
    clean(blocks, {"subtotal": 1696.12, "tax": 224.79, "total": 1920.91})


# 82. Where the record's subtotal, tax and total each stand under their own labels and add
# up, a lesser figure under one of those labels is a part (a line's "Subtotal" before its
# discount), no rival; a greater one is still a rival (a total with a charge left out)
def test_a_lesser_figure_under_a_label_of_sums_that_agree_is_a_part():
    text = (
        " # Cantidad  Descripción   Subtotal (VES)  Dcto.  Precio T.\n"
        " 1  2  ítem         Subtotal 2.000,00   8 %   1.840,00\n"
        " 2  1  ítem         Subtotal 1.000,00  12 %     880,00\n"
        "Base imponible   VES 2.720,00\n"
        "IVA (16 %)       VES   435,20\n"
        "TOTAL            VES 3.155,20\n"
    )
    clean(text, {"subtotal": 2720.0, "tax": 435.2, "total": 3155.2})
    # the same lesser figure is a rival where the record's sums do not add up
    flagged(text, {"subtotal": 2720.0, "tax": 435.2, "total": 3255.2}, "subtotal", "conflicting subtotal")
    # and a greater total is a rival even where they do
    more = text + "Total a pagar    VES 3.255,20\n"
    flagged(more, {"subtotal": 2720.0, "tax": 435.2, "total": 3155.2}, "total", "conflicting total")


# 83. Round 24's classes. A table's total row whose first figure sums a column of hours
# ("Total  7.00  320.00" under "Date  Description  Hours  Rate  Total"): the figure under
# the header's total column is the total, the other no amount's of the row label
def test_a_total_row_under_a_header_naming_its_total_column():
    text = (
        "Date        Description                         Hours  Rate   Total\n"
        "\n"
        "2022-02-10  Designed extremely cool new widget  2.00   60.00  120.00\n"
        "2022-02-23  Made a kind of boring widget        5.00   40.00  200.00\n"
        "\n"
        "            Total                               7.00          320.00\n"
    )
    assert [(raw, role) for raw, role in amount_roles(text) if role] == [("320.00", "total")]
    clean(text, {"total": 320.0})


# 84. Round 24's classes. Icelandic sums ("Samtals fyrir skatt", "Samtals skattur",
# "Afrúnnun", "Upphæð reiknings") and the issue date under "Issue date" (a UBL print's
# label, which no value set named), beside a due date over another column
def test_icelandic_sums_and_an_issue_date_label():
    text = (
        "                        Samtals fyrir skatt:  46.777,50\n"
        "  VSK flokkur  Skattskyld upphæð  Skattur  Samtals skattur:      3.373,76\n"
        "                                              Afrúnnun:           -0,26\n"
        "  Z0    [0%]     32.000,00          0,00  Upphæð reiknings:  ISK 50.151,00\n"
    )
    said = reasons(text, {"subtotal": 46777.5, "tax": 3373.76, "total": 50151.0})
    assert said["subtotal"] == said["tax"] == [], said
    # the rounding is a labelled adjustment that makes up the difference, not a flag
    assert [r for r in said["total"] if "the source labels (afrúnnun -0,26)" not in r] == [], said
    dated = (
        "Buyer:  Payment due date  Payable amount\n"
        " Naam Overheidsorganisatie  227.00\n"
        "\n"
        "Issue date  Invoice currency: EUR\n"
        "2017-11-06\n"
    )
    clean(dated, {"invoice_date": "2017-11-06"})


# 85. A total qualified as leaving the tax out ("Totale senza IVA", "Total before GST",
# "Celkem bez DPH") names the goods' sum, and one qualified as including it ("Celkem s
# DPH", "Total cu TVA") the total, in the languages whose "with" and "without" the
# qualifying words lacked (they read the first as the total, the second as the tax).
# 86. Sums of the Nordic languages written as one word ("Nettobelopp", "Momsbelopp",
# "Totalbelopp"), the Danish tax "in all" ("Moms i alt"), and a Turkish rate written with
# its sign first ("KDV %20": the 20 is a rate, no amount); "Summe ohne MwSt." (its dot
# no sentence's end); Slovak "Spolu na úhradu", Estonian "Summa km-ta", Hindi sums and
# the Chinese total tax "合计税额"
@pytest.mark.parametrize(
    "net, tax, gross",
    [
        ("Totale senza IVA", "VAT 20 %", "Totale con IVA"),
        ("Total before GST", "VAT 20 %", "Total incl. GST"),
        ("Celkem bez DPH", "VAT 20 %", "Celkem s DPH"),
        ("Total fără TVA", "VAT 20 %", "Total cu TVA"),
        ("Total sem IVA", "VAT 20 %", "Total com IVA"),
        ("Razem bez VAT", "VAT 20 %", "Razem z VAT"),
        ("Total uden moms", "VAT 20 %", "Total med moms"),
        ("Totaal zonder btw", "VAT 20 %", "Totaal met btw"),
        ("Jumlah sebelum cukai", "VAT 20 %", "Jumlah termasuk cukai"),
        ("Nettobelopp", "Momsbelopp", "Totalbelopp"),
        ("Nettobeløb", "Moms i alt", "Totalbeløb"),
        ("Summa utan moms", "Moms 25 %", "Summa inkl. moms"),
        ("Ara Toplam", "Hesaplanan KDV %20", "Ödenecek Tutar"),
        ("Summe ohne MwSt.", "MwSt. 20 %", "Gesamtbetrag"),
        ("Základ dane", "DPH 20 %", "Spolu na úhradu"),
        ("Summa km-ta", "Käibemaks 22%", "Tasuda"),
        ("कर योग्य राशि", "जीएसटी 18%", "कुल राशि"),
        ("Subtotal", "合计税额", "价税合计"),
    ],
)
def test_sums_labelled_in_more_languages(net, tax, gross):
    text = (
        "Item A                  2       1.000,00\n"
        "Item B                  1         500,00\n"
        f"{net:<24}        1.500,00\n"
        f"{tax:<24}          300,00\n"
        f"{gross:<24}        1.800,00\n"
    )
    assert [(raw, role) for raw, role in amount_roles(text) if role] == [
        ("1.500,00", "subtotal"),
        ("300,00", "tax"),
        ("1.800,00", "total"),
    ]
    clean(text, {"subtotal": 1500.0, "tax": 300.0, "total": 1800.0})
    flagged(text, {"subtotal": 1500.0, "tax": 300.0, "total": 1500.0}, "total")


# 87. Issue-date and due-date labels of more languages: a record that gives the due date
# as the invoice's date is caught by the label the due date stands under
@pytest.mark.parametrize(
    "issued, due",
    [
        ("Datum računa", "Datum dospijeća"),
        ("Data facturii", "Data scadenței"),
        ("Számla kelte", "Fizetési határidő"),
        ("Data da fatura", "Data de vencimento"),
        ("Laskun päiväys", "Eräpäivä"),
        ("請求日", "お支払期限"),
    ],
)
def test_issue_and_due_date_labels_of_more_languages(issued, due):
    text = f"{issued}:  05.03.2024\n{due}:  04.04.2024\n"
    clean(text, {"invoice_date": "2024-03-05"})
    flagged(text, {"invoice_date": "2024-04-04"}, "invoice_date", due)


# 88. Round 25's classes. Japanese sums written before and with the tax ("税抜き金額",
# "税込み金額", "未払金額"), and a tax category's code as e-invoice prints write it ("VAT:S
# (10%)  17,700 JPY": a charge in the standard category, not a tax)
def test_japanese_sums_and_a_tax_category_code():
    text = (
        "税抜き金額  122,000 JPY\n"
        "税込み金額  134,200 JPY\n"
        "未払金額   134,200 JPY\n"
        "\n"
        " 追加請求  VAT:S (10%)  17,700 JPY\n"
        " 返還請求  VAT:S (10%)  -700 JPY\n"
    )
    assert [(raw, role) for raw, role in amount_roles(text) if role] == [
        ("122,000", "subtotal"),
        ("134,200", "total"),
        ("134,200", "total"),
    ]
    clean(text, {"subtotal": 122000.0, "total": 134200.0})
    flagged(text, {"subtotal": 122000.0, "total": 122000.0}, "total")


# 89. Till slips in more languages: the total and the tax under the words tills print
# ("TOPLAM", "ΣΥΝΟΛΟ" in capitals without its accent, "ИТОГ", Polish "SUMA PTU",
# Japanese "内消費税"), beside the cash handed over and the change: the correct
# record passes, and a record that takes the cash or the change for the total is caught
@pytest.mark.parametrize(
    "total, cash, change, tax",
    [
        ("SUMA PLN", "GOTÓWKA", "RESZTA", "SUMA PTU"),
        ("TOPLAM", "NAKİT", "PARA ÜSTÜ", "KDV"),
        ("合計", "お預り", "お釣り", "内消費税"),
        ("ΣΥΝΟΛΟ", "ΜΕΤΡΗΤΑ", "ΡΕΣΤΑ", "ΦΠΑ 24%"),
        ("ИТОГ", "НАЛИЧНЫМИ", "СДАЧА", "НДС 20%"),
        ("ДО СПЛАТИ", "ГОТІВКА", "РЕШТА", "ПДВ 20%"),
        ("TOPLAM", "NAKİT", "PARA ÜSTÜ", "TOPKDV"),
        ('סה"כ', "מזומן", "עודף", 'מע"מ'),
    ],
)
def test_till_slip_totals_and_taxes_of_more_languages(total, cash, change, tax):
    text = (
        "BREAD            2,50\n"
        "MILK             1,20\n"
        "COFFEE           4,80\n"
        f"{total}        8,50\n"
        f"{cash}        20,00\n"
        f"{change}        11,50\n"
        f"{tax}        1,36\n"
    )
    clean(text, {"total": 8.5, "tax": 1.36}, RECEIPT)
    for taken in (20.0, 11.5):
        assert reasons(text, {"total": taken, "tax": 1.36}, RECEIPT)["total"], taken


# 90. Dates as more languages write them: the Danish March ("5. marts 2024"), Greek in
# capitals without accents ("5 ΜΑΡΤΙΟΥ 2024"), a Japanese era year ("令和6年3月5日",
# Reiwa 6 being 2024) and a Thai date in the Buddhist era ("5 มีนาคม 2567", 543 years
# ahead), Lithuanian and Latvian year-first dates ("2024 m. kovo 5 d.", "2024. gada 5.
# martā"), a Maltese one ("5 ta' Marzu 2024") and a year first with its month and day
# unpadded ("2024/3/5", as Asian tills print it); each names the date, and a shifted date
# is still caught
@pytest.mark.parametrize(
    "written",
    [
        "5. marts 2024",
        "5 ΜΑΡΤΙΟΥ 2024",
        "令和6年3月5日",
        "5 มีนาคม 2567",
        "5 มี.ค. พ.ศ. 2567",
        "2024 m. kovo 5 d.",
        "2024 m. kovo mėn. 5 d.",
        "2024. gada 5. martā",
        "5 ta' Marzu 2024",
        "2024/3/5",
        "2024-3-5",
    ],
)
def test_dates_of_more_writings(written):
    assert [m.dates for m in find_date_mentions(f"Dato: {written}\n")] == [frozenset({date(2024, 3, 5)})]
    text = f"Faktura 2024-17\nDato: {written}\n"
    clean(text, {"invoice_date": "2024-03-05"})
    flagged(text, {"invoice_date": "2024-03-06"}, "invoice_date")


def test_the_first_year_of_an_era_is_written_gan():
    assert [m.dates for m in find_date_mentions("令和元年5月1日")] == [frozenset({date(2019, 5, 1)})]


# 91. Digits of other scripts: an Arabic invoice written in Arabic-Indic digits, with the
# Arabic decimal and thousands separators ("١٬١٥٠٫٠٠"), grounds its amounts, date and
# number (the spans keep the text as written), and a wrong total is still caught
def test_arabic_indic_digits_are_read_as_digits():
    text = (
        "فاتورة رقم ١٢٣\n"
        "التاريخ ٢٠٢٤/٠٣/٠٥\n"
        "المجموع الفرعي   ١٬٠٠٠٫٠٠\n"
        "ضريبة القيمة المضافة   ١٥٠٫٠٠\n"
        "الإجمالي   ١٬١٥٠٫٠٠\n"
    )
    record = {"invoice_number": "123", "invoice_date": "2024-03-05", "subtotal": 1000.0, "tax": 150.0, "total": 1150.0}
    clean(text, record)
    checks = run_heuristics(text, INVOICE.validate_data(record), INVOICE)
    assert [s.text for s in checks["total"].spans] == ["١٬١٥٠٫٠٠"]
    clean(text, {**record, "invoice_number": "١٢٣"})  # the value in the document's own digits
    flagged(text, {**record, "total": 1000.0}, "total")
    flagged(text, {**record, "invoice_number": "124"}, "invoice_number", "not found")


# 92. Round 26's classes. A tax table's row of the tax's name, its base and the tax with no
# rate written beside them (Tryton's "[1] Tax  €400.00  €40.00", the rate "0.10" on the
# next line): the base leads to the tax, as it does with a rate between; "Taxes:" names
# the tax, and "Total (excl. taxes):" the goods' sum
def test_a_tax_row_of_base_and_tax_with_no_rate_beside_them():
    text = (
        " Description  Quantity  Unit Price  Taxes  Amount\n"
        "product        5 u       €80.0000    [1]    €400.00\n"
        "Test           1.0       €20.0000            €20.00\n"
        "\n"
        " Tax     Base  Amount  Total (excl. taxes):  €420.00\n"
        "[1] Tax  €400.00  €40.00    Taxes:            €40.00\n"
        "0.10\n"
        "                            Total:           €460.00\n"
    )
    record = {"subtotal": 420.0, "tax": 40.0, "total": 460.0}
    clean(text, record)
    flagged(text, {**record, "tax": 400.0}, "tax")
    # a tax more than any rate's worth of the figure before it is no tax of that base
    assert amount_roles("VAT   1,000.00   400.00\n") == [
        ("1,000.00", "tax"),
        ("400.00", None),
    ]


# 93. A sale's tax and a return's, each labelled with its sign ("$7.00", "-$2.00"): the
# document's tax is their signed sum, no conflict
def test_a_tax_that_is_its_parts_signed_sum():
    text = (
        " Tax     Base  Amount  Total (excl. taxes):  $50.00\n"
        "[1] Tax   $70.00   $7.00    Taxes:            $5.00\n"
        "0.10\n"
        "                            Total:           $55.00\n"
        "[2] Tax  -$20.00  -$2.00\n"
        "0.10\n"
    )
    record = {"subtotal": 50.0, "tax": 5.0, "total": 55.0}
    clean(text, record)
    flagged(text, {**record, "tax": 9.0}, "tax")


# 94. A unit price's line ("Single price: €84.03 net / €100.00 gross", under an item table's
# "Net  Gross" header) names no sum: neither its own words nor the columns over it
def test_a_unit_price_line_names_no_sum():
    text = (
        "Description  Qty   Tax rate  Net     Gross\n"
        "Sample product 1  5  19 %  €420.15  €500.00\n"
        "Single price: €84.03 net / €100.00 gross\n"
        "\n"
        "Invoice total                       €500.00\n"
        "\n"
        "Included taxes\n"
        "Tax rate  Net value  Gross value  Tax\n"
        "19 %       €420.15    €500.00  €79.85\n"
    )
    assert [role for raw, role in amount_roles(text) if raw in ("84.03", "100.00")] == [None, None]
    clean(text, {"subtotal": 420.15, "tax": 79.85, "total": 500.0})
    # nor do its words name a figure beyond it ("gross" ending its line, a figure below)
    assert amount_roles("Item  5  €420.15\nSingle price: €84.03 net / €100.00 gross\n€420.15\n")[-1] == (
        "420.15",
        None,
    )


# 95. Currency signs of more countries: the dong as "VNĐ", the Kenyan shilling, the
# Peruvian sol (glued to its figure too), the balboa, the new Taiwan dollar, the colón and
# the Arab currencies' abbreviations each name their currency; "$" may also be a Latin
# American peso's and "元" a yuan or a Taiwan or Hong Kong dollar (weakly, as "$" is); a
# slash that is a serial number's or a reference's is no sign ("S/N 12345", "S/2024/17")
@pytest.mark.parametrize(
    "written, code",
    [
        ("1.234.567 VNĐ", "VND"),
        ("KSh 1,234.00", "KES"),
        ("S/ 1,234.56", "PEN"),
        ("S/1,234.56", "PEN"),
        ("B/. 1,234.56", "PAB"),
        ("NT$1,234", "TWD"),
        ("₡1,234.56", "CRC"),
        ("E£ 1,234.56", "EGP"),
        ("1,234.56 ج.م", "EGP"),
        ("1,234.56 ر.ق", "QAR"),
        ("1,234.560 د.ك", "KWD"),
    ],
)
def test_currency_signs_of_more_countries(written, code):
    text = f"Invoice 17\nTotal   {written}\n"
    total = float(find_amounts(text)[-1].value)
    clean(text, {"total": total, "currency": code})
    assert reasons(text, {"total": total, "currency": "USD" if code != "USD" else "EUR"})["currency"]


@pytest.mark.parametrize("code, written", [("ARS", "$ 1.234,56"), ("CNY", "1,234元")])
def test_a_shared_sign_supports_each_of_its_currencies_weakly(code, written):
    said = reasons(f"Total   {written}\n", {"currency": code})["currency"]
    assert said and all("ambiguous" in r for r in said), said


@pytest.mark.parametrize("text", ["S/N 12345  Total 1,234.56\n", "Invoice S/2024/17  Total 1,234.56\n"])
def test_a_slash_of_a_reference_is_no_currency_sign(text):
    assert reasons(text, {"total": 1234.56, "currency": "PEN"})["currency"]


# 96. A tax said to be included before the total it qualifies ("GST inclusive total",
# "VAT incl. total", Turkish "KDV Dahil Toplam"): the total names the figure, not the tax
@pytest.mark.parametrize("label", ["GST inclusive total", "VAT incl. total", "KDV Dahil Toplam"])
def test_a_tax_included_before_its_total_leaves_the_figure_to_the_total(label):
    text = f"Subtotal            100.00\nGST 10%              10.00\n{label:<20}110.00\n"
    assert [(raw, role) for raw, role in amount_roles(text) if role] == [
        ("100.00", "subtotal"),
        ("10.00", "tax"),
        ("110.00", "total"),
    ]
    clean(text, {"subtotal": 100.0, "tax": 10.0, "total": 110.0})


# 97. Round 29's class. A shop's order receipt whose prices include the tax, which it does
# not say ("Subtotal 201 / Shipping 12 / Tax 19.36 / Total 213"): the total is the gross
# subtotal and the labelled charges to the cent, no arithmetic flag; a total that is the
# subtotal alone, which the source does not say includes the tax, is still caught
def test_a_gross_subtotal_and_its_charges_make_the_total():
    text = "ORDER #1042\n\nSubtotal  201 USD\n\nShipping   12 USD\n\nTax  19.36 USD\n\nTotal  213 USD\n"
    record = {"invoice_number": "1042", "subtotal": 201.0, "tax": 19.36, "total": 213.0, "currency": "USD"}
    said = reasons(text, record)
    assert [r for found in said.values() for r in found if "which the figures include" not in r] == [], said
    assert any("the labelled shipping 12" in r for r in said["total"]), said
    flagged(text, {**record, "total": 201.0}, "total")


# 98. The record's agreed sums are contested only by a greater figure under one of their
# labels that is worth none of the three: a tax label's figure worth the subtotal (a text
# without its layout; "VAT base" now names no tax at all, class 147) leaves a lesser one a part
def test_a_greater_figure_worth_one_of_the_sums_does_not_contest_them():
    text = (
        "Subtotal                 1,000.00\n"
        "VAT                        200.00\n"
        "Total                    1,200.00\n"
        "\n"
        "VAT base                 1,000.00\n"
        "VAT reduced rate            50.00\n"
    )
    clean(text, {"subtotal": 1000.0, "tax": 200.0, "total": 1200.0})
    # worth none of them, the greater figure contests the sums, and the lesser is a rival
    contested = text.replace("VAT base                 1,000.00", "VAT                      1,100.00")
    flagged(contested, {"subtotal": 1000.0, "tax": 200.0, "total": 1200.0}, "tax", "conflicting tax")


# 99. A total of the tax said to include it ("Total IVA incluido", "Totale IVA inclusa",
# "Total TVA incluse", "Toplam KDV Dahil") is the document's total, not the tax's sum,
# while "Total VAT" alone still names the tax
@pytest.mark.parametrize(
    "label",
    ["Total VAT included", "Total IVA incluido", "Totale IVA inclusa", "Total TVA incluse", "Toplam KDV Dahil"],
)
def test_a_total_of_the_tax_said_to_include_it_is_the_total(label):
    text = f"Subtotal            1,000.00\nVAT 20%               200.00\n{label:<20}1,200.00\n"
    assert [(raw, role) for raw, role in amount_roles(text) if role] == [
        ("1,000.00", "subtotal"),
        ("200.00", "tax"),
        ("1,200.00", "total"),
    ]
    clean(text, {"subtotal": 1000.0, "tax": 200.0, "total": 1200.0})
    flagged(text, {"subtotal": 1000.0, "tax": 200.0, "total": 1000.0}, "total")
    plain = "Subtotal            1,000.00\nTotal VAT             200.00\nTotal               1,200.00\n"
    assert [role for _, role in amount_roles(plain)] == ["subtotal", "tax", "total"]


# 100. Round 30's class. A tax word said to be what a figure is subject to ("Amount subject
# to VAT", "non soggette ad IVA", "sujeto a IVA", "soumis à TVA") names a base, or no tax at
# all, not the tax: the figure under it is no rival to the tax printed elsewhere; and a
# number written with a leading zero ("00000 Berlin", a code) is no amount, so a tax of
# zero grounds in its printed "0.00"
@pytest.mark.parametrize(
    "phrase", ["Amount subject to VAT", "Importo non soggetto ad IVA", "Importe sujeto a IVA", "Montant soumis à TVA"]
)
def test_a_figure_subject_to_the_tax_is_not_the_tax(phrase):
    text = f"ACME Ltd\n{phrase:<30}1,000.00\nVAT 20%                        200.00\nTotal                        1,200.00\n"
    assert [(raw, role) for raw, role in amount_roles(text) if role] == [("200.00", "tax"), ("1,200.00", "total")]
    clean(text, {"tax": 200.0, "total": 1200.0})


def test_a_number_with_a_leading_zero_is_no_amount():
    text = "Acme GmbH\n00000 Berlin\nSubtotal   2300.00\nVAT 0%        0.00\nTotal      2300.00\n"
    assert [raw for raw, _ in amount_roles(text)] == ["2300.00", "0.00", "2300.00"]
    assert reasons(text, {"subtotal": 2300.0, "tax": 0.0, "total": 2300.0})["tax"] == []


# 101. A tax printed only as its parts, each under its own label: India's CGST and SGST,
# Canada's GST and PST or Quebec's TPS and TVQ, Japan's 10 % and 8 % consumption taxes.
# The record's tax, their sum, is not printed, but it is grounded by the parts (shown as its
# spans); a tax the same label and rate restate twice makes no sum, and a sum the parts do
# not make is still not found
@pytest.mark.parametrize(
    "lines, tax",
    [
        (("CGST 9%         900.00", "SGST 9%         900.00"), 1800.0),
        (("GST 5%           25.00", "PST 7%           35.00"), 60.0),
        (("TPS 5 %          25,00", "TVQ 9,975 %      49,88"), 74.88),
        (("消費税(10%)       800円", "消費税(8%)        160円"), 960.0),
    ],
)
def test_a_tax_printed_only_as_its_parts_is_their_sum(lines, tax):
    text = "Invoice 17\nSubtotal     10,000.00\n" + "\n".join(lines) + "\n"
    said = reasons(text, {"tax": tax})["tax"]
    assert said and all("the sum of the figures labelled" in r for r in said), said
    assert factors(text, {"tax": tax})["tax"] == F.NO_ROLE_LABEL_FACTOR
    flagged(text, {"tax": tax + 1}, "tax", "not found in the source")


def test_a_tax_restated_under_the_same_label_and_rate_is_no_sum():
    text = "Invoice 17\nSubtotal   1,000.00\nVAT 20%      200.00\n\nSummary\nVAT 20%      200.00\nTotal      1,200.00\n"
    flagged(text, {"tax": 400.0}, "tax", "not found in the source")


@pytest.mark.parametrize(
    "parts", [("CGST @ 9%", "SGST @ 9%", "1,530.00", "1,530.00"), ("GST 5%", "PST 7%", "1,275.00", "1,785.00")]
)
def test_equal_tax_parts_make_the_sum_a_table_prints_under_no_label(parts):
    # the tax's sum stands only in a summary's row, under a header of labels run together:
    # two equal parts under their own labels make it as unequal ones do
    first, second, one, two = parts
    text = (
        f"Taxable Value   17,000.00\n{first}        {one}\n{second}        {two}\nTotal          20,060.00\n\n"
        f"HSN/SAC   Taxable Value   Central Tax   State Tax   Total Tax Amount\n"
        f"9403      17,000.00       {one}      {two}    3,060.00\n"
        f"Total     17,000.00       {one}      {two}    3,060.00\n"
    )
    record = {"subtotal": 17000.0, "tax": 3060.0, "total": 20060.0}
    assert factors(text, record) == {"subtotal": 1.0, "tax": F.NO_ROLE_LABEL_FACTOR, "total": 1.0}
    flagged(text, record, "tax", "add up to less: parts of it")
    flagged(text, {**record, "tax": 1530.0 + 1785.0}, "tax", "not found")


# 102. A rounding line as more languages write it ("Round off", India's invoices; "Redondeo",
# "Arrotondamento", "Afronding", "Zaokrąglenie", "Kerekítés", "端数調整") is a labelled
# adjustment that makes up the total's difference; an unlabelled difference is still flagged
@pytest.mark.parametrize(
    "word",
    ["Round off", "Rounding off", "Redondeo", "Arrotondamento", "Afronding", "Zaokrąglenie", "Kerekítés", "端数調整"],
)
def test_a_rounding_line_of_more_languages_makes_up_the_total(word):
    text = f"Invoice 17\nSubtotal     1,000.00\nVAT 20%        200.00\n{word}     0.40\nTotal        1,200.40\n"
    record = {"subtotal": 1000.0, "tax": 200.0, "total": 1200.4}
    passes(text, record)
    assert any(word.casefold() in r for r in reasons(text, record)["total"])
    unlabelled = text.replace(f"{word}     0.40\n", "")
    flagged(unlabelled, record, "total", "beyond rounding")


# 103. Round 31's class (a missed corruption). A total restated in another currency ("TOTAL
# EUR: 557,67 €" over "TOTAL DUE: 600,00 USD") is no total of a USD record: taken as the
# total, it is flagged as written in another currency than the record's; the total in the
# record's currency passes, and so does the EUR figure in a EUR record
def test_a_total_restated_in_another_currency_is_not_the_records():
    text = (
        "INVOICE VVP001\n"
        "1  Software development  hour  6  100,00 USD  600,00 USD\n"
        "                          TOTAL EUR:     557,67 €\n"
        "                          (1 EUR = 1.07590 USD)\n"
        "                          TOTAL DUE:     600,00 USD\n"
    )
    clean(text, {"invoice_number": "VVP001", "total": 600.0, "currency": "USD"})
    flagged(text, {"invoice_number": "VVP001", "total": 557.67, "currency": "USD"}, "total", "not in the record's USD")
    clean(text, {"invoice_number": "VVP001", "total": 557.67, "currency": "EUR"})


# 104. A tax printed only in a table's column: each line's tax under "MwSt", or each rate's
# under a receipt's VAT table header "TAX", with no total tax printed. The record's tax,
# the column's sum, is grounded by the column's figures (its spans); a tax the column does
# not add up to is still not found
@pytest.mark.parametrize(
    "text, tax, schema",
    [
        (
            "Rechnung 17\n"
            "Pos  Artikel   Menge  Netto    MwSt   Brutto\n"
            "1    Stuhl     2      200,00   38,00  238,00\n"
            "2    Buch      1      50,00    3,50   53,50\n"
            "Summe                 250,00          291,50\n",
            41.5,
            INVOICE,
        ),
        (
            "SHOP\nBREAD    2.50 A\nMILK    10.00 B\nTOTAL   12.50\nCARD    12.50\n"
            "VAT  RATE  NET   TAX   GROSS\n"
            "A    20%   2.08  0.42  2.50\n"
            "B    5%    9.52  0.48  10.00\n",
            0.9,
            RECEIPT,
        ),
    ],
)
def test_a_tax_printed_only_in_a_column_is_its_sum(text, tax, schema):
    said = reasons(text, {"tax": tax}, schema)["tax"]
    assert said and all("the sum of the figures in the column under" in r for r in said), said
    assert factors(text, {"tax": tax}, schema)["tax"] == F.NO_ROLE_LABEL_FACTOR
    assert reasons(text, {"tax": tax + 0.01}, schema)["tax"] == [f"{tax + 0.01} not found in the source"]


def test_a_total_is_never_grounded_as_a_columns_sum():
    # the lines' amounts add up to the net, which a record missing its tax gives as the total
    text = (
        "Invoice 17\n"
        "Item      Qty   Price    Total\n"
        "Chair     2     50.00    100.00\n"
        "Book      1     50.00    50.00\n"
        "VAT 20%                  30.00\n"
        "Amount due               180.00\n"
    )
    flagged(text, {"total": 150.0}, "total", "150.0 not found in the source")


# 105. A tax rate written without its percent sign before the base it applies to, as US
# tills print it ("T = CA TAX 7.250 on $4.97  $0.36"): the rate is no amount and the base
# no rival, so the tax after them is the tax; a German "7.250" (seven thousand) stays an amount
def test_a_rate_without_its_sign_before_its_base_is_no_tax():
    text = "SUBTOTAL           $10.95\nT = CA TAX 7.250 on $4.97  $0.36\nTOTAL              $11.31\n"
    assert [(raw, role) for raw, role in amount_roles(text) if role] == [
        ("10.95", "subtotal"),
        ("0.36", "tax"),
        ("11.31", "total"),
    ]
    clean(text, {"subtotal": 10.95, "tax": 0.36, "total": 11.31}, RECEIPT)
    flagged(text, {"subtotal": 10.95, "tax": 4.97, "total": 11.31}, "tax")
    assert [a.raw for a in find_amounts("Summe 7.250 EUR\n")] == ["7.250"]


# 106. Round 33's class. A sum the label says comes after an adjustment ("Subtotal after
# discount", "Subtotal setelah diskon", "Zwischensumme nach Rabatt") is the label's, not
# the adjustment's figure; with Indonesian and Malay charges and deductions ("Diskon",
# "Biaya Admin") and German fees ("Bearbeitungsgebühr"), the two subtotals differ by the
# labelled discount and the total by the labelled fee; a total that leaves the fee out is
# still caught
@pytest.mark.parametrize(
    "after, discount, fee",
    [
        ("Subtotal after discount", "Discount (5%)", "Admin fee"),
        ("Subtotal setelah diskon", "Diskon (5%)", "Biaya Admin"),
        ("Zwischensumme nach Rabatt", "Rabatt (5%)", "Bearbeitungsgebühr"),
    ],
)
def test_a_sum_after_an_adjustment_is_the_labels(after, discount, fee):
    text = (
        "Subtotal                     20.000.000\n"
        f"{discount:<29}-1.000.000\n"
        f"{after:<29}19.000.000\n"
        "PPN 11%                       2.090.000\n"
        f"{fee:<29}    50.000\n"
        "TOTAL PEMBAYARAN             21.140.000\n"
    )
    record = {"subtotal": 19000000.0, "tax": 2090000.0, "total": 21140000.0}
    assert ("19.000.000", "subtotal") in amount_roles(text)
    said = reasons(text, record)
    assert said["subtotal"] == said["tax"] == [], said
    assert [r for r in said["total"] if fee.casefold() not in r] == [], said
    flagged(text, {**record, "total": 21090000.0}, "total")


# 107. A total of the tax said to include it, its tax word abbreviated with a dot
# ("Gesamt MwSt. inkl.", "Total VAT. incl."): the dot is the label's, so the figure is
# the document's total, not a second tax
@pytest.mark.parametrize("label", ["Gesamt MwSt. inkl.", "Total VAT. incl."])
def test_a_total_including_an_abbreviated_tax_is_the_total(label):
    text = f"Netto                 100,00 EUR\n19% MwSt.              19,00 EUR\n{label:<22}119,00 EUR\n"
    assert [(raw, role) for raw, role in amount_roles(text) if role] == [
        ("100,00", "subtotal"),
        ("19,00", "tax"),
        ("119,00", "total"),
    ]
    clean(text, {"subtotal": 100.0, "tax": 19.0, "total": 119.0, "currency": "EUR"})
    flagged(text, {"subtotal": 100.0, "tax": 119.0, "total": 119.0, "currency": "EUR"}, "tax")


# 108. A date written in ISO 8601's basic form ("Datum: 20240305", as tills and some
# e-invoice prints write it) grounds the record's date; a date a day off is not found, and
# the run of eight digits makes no date of its own (an identifier's digits stay digits)
def test_a_compact_date_grounds_the_date():
    text = "Rechnung Nr. R-1001\nDatum: 20240305\nGesamt   119,00 EUR\n"
    assert reasons(text, {"invoice_date": "2024-03-05"})["invoice_date"] == []
    flagged(
        text,
        {"invoice_date": "2024-03-06"},
        "invoice_date",
        "date 2024-03-06 not found in the source in any written form",
    )
    flagged("Rechnung Nr. 120240305\n", {"invoice_date": "2024-03-05"}, "invoice_date")
    assert find_date_mentions(text) == []


# 109. "Reverse charge" names who owes the VAT, not a charge: a tax label with it in
# brackets still reaches its zero figure ("VAT 0% (reverse charge)  £0.00") beside a note
# of the VAT the customer accounts for; the note's figure taken as the tax still fails the
# arithmetic, and a delivery charge is still a charge
def test_reverse_charge_is_no_charge():
    text = (
        "Net                       £1,000.00\n"
        "VAT 0% (reverse charge)       £0.00\n"
        "Total                     £1,000.00\n"
        "Customer to account for VAT to HMRC: £200.00\n"
    )
    assert ("0.00", "tax") in amount_roles(text)
    clean(text, {"subtotal": 1000.0, "tax": 0.0, "total": 1000.0, "currency": "GBP"})
    # the tax to account for given as the tax: the sum fails, and the labelled 0.00 adds up
    wrong = {"subtotal": 1000.0, "tax": 200.0, "total": 1000.0, "currency": "GBP"}
    flagged(text, wrong, "tax", "arithmetic", "the source labels 0.00 as the tax")
    assert [kind for _, kind, _ in Source("Delivery charge   5.00\n", INVOICE.lexicon).adjustments()] == ["charge"]


# 110. Round 36's class. A header whose first column the lexicon does not name ("Price
# Tax  VAT") stands over a row whose first cell is a figure with its currency sign before
# it ("$ 1,000.00  20%  $ 200.00"): the sign is no cell of its own, so the header's labels
# are not paired with the row's figures by order ("Tax" names the rate's column, not the
# price); the tax column's figure is the tax
def test_a_currency_sign_is_no_first_cell_under_a_header():
    text = "Price       Tax   VAT\n$ 1,000.00  20%   $ 200.00\n\nTotal       $ 1,200.00\n"
    assert [(raw, role) for raw, role in amount_roles(text) if role] == [("200.00", "tax"), ("1,200.00", "total")]
    clean(text, {"tax": 200.0, "total": 1200.0})
    flagged(text, {"tax": 1000.0, "total": 1200.0}, "tax")


# 111. Round 36's class, by columns. Under a header of fewer cells than the row below it
# ("Price     Tax   VAT" over "$ 1,000.00 20%  $ 200.00", the rate set against its price),
# a header cell the lexicon does not name ("Price") that stands over a figure more than the
# nearest label does keeps that label ("Tax", the rate's column) from naming the figure;
# the VAT column's figure is the tax. A header of as many cells as its row is read by rank
# as before
def test_an_unnamed_header_cell_over_a_figure_keeps_a_label_off_it():
    text = "Price     Tax   VAT\n$ 1,000.00 20%  $ 200.00\n\nTotal     $ 1,200.00\n"
    assert [(raw, role) for raw, role in amount_roles(text) if role] == [("200.00", "tax"), ("1,200.00", "total")]
    clean(text, {"tax": 200.0, "total": 1200.0})
    flagged(text, {"tax": 1000.0, "total": 1200.0}, "tax")


# 112. The side of the books written after a figure ("1,234.56CR", "246.91 CR", as
# ledgers, statements and credit notes print a credit; "DR" a debit): the figure is an
# amount, a credit one taken away, so a credit note's record grounds with its sign or
# without; a figure without cents keeps its letters' meaning, and a total the print does
# not have is still not found
def test_a_credit_or_debit_mark_after_a_figure():
    text = (
        "ACME Supplies Ltd\nCredit note CN-1002\nDate: 2024-03-05\n"
        "Subtotal   1,234.56CR\nVAT 20%      246.91 CR\nTotal      1,481.47CR\nBalance brought forward  310.00DR\n"
    )
    assert [(a.raw, a.value) for a in find_amounts(text) if a.raw != "20"] == [
        ("1,234.56", Decimal("-1234.56")),
        ("246.91", Decimal("-246.91")),
        ("1,481.47", Decimal("-1481.47")),
        ("310.00", Decimal("310.00")),
    ]
    for sign in (-1, 1):
        clean(text, {"subtotal": sign * 1234.56, "tax": sign * 246.91, "total": sign * 1481.47})
    flagged(text, {"subtotal": -1234.56, "tax": -246.91, "total": -1418.47}, "total", "not found")
    assert find_amounts("Room 12CR\n") == []


# 113. Persian invoices: their labels ("جمع قبل از مالیات" before tax, "مالیات بر ارزش افزوده"
# VAT, "جمع کل" and "مبلغ قابل پرداخت" the total, "تخفیف" a discount) and the rial as Persian
# spells it, with Persian digits and separators; a total that leaves out the tax is still
# caught
def test_persian_labels_and_the_rial():
    text = (
        "فروشگاه نمونه\nشماره فاکتور: 1402-15\nتاریخ: 2024-03-05\n"
        "جمع قبل از مالیات: 1,000,000 ریال\nمالیات بر ارزش افزوده 9%: 90,000 ریال\nجمع کل: 1,090,000 ریال\n"
    )
    assert [(raw, role) for raw, role in amount_roles(text) if role] == [
        ("1,000,000", "subtotal"),
        ("90,000", "tax"),
        ("1,090,000", "total"),
    ]
    record = {"subtotal": 1000000.0, "tax": 90000.0, "total": 1090000.0, "currency": "IRR"}
    clean(text, record)
    flagged(text, {**record, "total": 1000000.0}, "total", "not as a labelled total")
    with_discount = "جمع: ۱٬۰۰۰٬۰۰۰ ریال\nتخفیف: ۱۰۰٬۰۰۰ ریال\nمالیات: ۸۱٬۰۰۰ ریال\nمبلغ قابل پرداخت: ۹۸۱٬۰۰۰ ریال\n"
    assert reasons(with_discount, {"tax": 81000.0, "total": 981000.0, "currency": "IRR"}) == {
        "tax": [],
        "total": [],
        "currency": [],
    }
    assert [kind for _, kind, _ in Source(with_discount, INVOICE.lexicon).adjustments()] == ["deduction"]


# 114. "Only" written after a whole amount, as Indian ("Rs. 1,180/-") and East African
# ("KSh 2,500/=") invoices print it: the figure is an amount, so the labelled subtotal,
# tax and total ground; a reference with a slash ("GLX/2026/778") or a figure before a
# slash and a number ("1,180/-5") is still none
def test_a_whole_amount_marked_only():
    text = (
        "Bharat Traders\nInvoice No. BT-77\nDate: 05.03.2024\n"
        "Taxable value   Rs. 1,000/-\nGST 18%         Rs. 180/-\nTotal           Rs. 1,180/-\n"
    )
    assert [(raw, role) for raw, role in amount_roles(text) if role] == [
        ("1,000", "subtotal"),
        ("180", "tax"),
        ("1,180", "total"),
    ]
    clean(text, {"subtotal": 1000.0, "tax": 180.0, "total": 1180.0})
    flagged(text, {"subtotal": 1000.0, "tax": 118.0, "total": 1180.0}, "tax")
    assert [a.value for a in find_amounts("Amount payable: KSh 2,500/=\n")] == [Decimal(2500)]
    assert find_amounts("Ref GLX/2026/778\nRange 1,180/-5\n") == []


# 115. The dong as Vietnamese invoices write it after the figure ("1.100.000 đ",
# "1.100.000đ"): the record's VND is the document's currency, as with "₫" or "VNĐ"; the
# letter inside a word ("hóa đơn") is no sign, so a document without one does not ground
# VND, and one that writes the dong does not ground another currency
def test_the_dong_written_after_the_figure():
    text = (
        "Công ty TNHH ABC\nSố hóa đơn: 0001234\nNgày 05 tháng 03 năm 2024\n"
        "Cộng tiền hàng:  1.000.000 đ\nTiền thuế GTGT: 100.000 đ\nTổng cộng tiền thanh toán: 1.100.000đ\n"
    )
    assert [a.value for a in find_amounts(text)][-3:] == [Decimal(1000000), Decimal(100000), Decimal(1100000)]
    assert reasons(text, {"total": 1100000.0, "currency": "VND"})["currency"] == []
    flagged(text, {"total": 1100000.0, "currency": "USD"}, "currency")
    flagged("Số hóa đơn: 0001234\nTổng cộng: 1.100.000\n", {"total": 1100000.0, "currency": "VND"}, "currency")


# 116. Swiss German and Spanish words for the figures: "Zwischentotal" is the subtotal and
# "Rechnungstotal" the invoice's total (as "Zwischensumme" and "Rechnungsbetrag" are);
# "IRPF" alone names the income-tax withholding a Spanish professional's invoice deducts,
# so a total 15 % below subtotal + VAT is explained, and a total that is not is still not
def test_swiss_totals_and_the_spanish_withholding():
    swiss = "Zwischentotal    CHF 100.00\nMWST 8.1%        CHF 8.10\nRechnungstotal   CHF 108.10\n"
    assert [role for _, role in amount_roles(swiss)] == ["subtotal", "tax", "total"]
    clean(swiss, {"subtotal": 100.0, "tax": 8.1, "total": 108.1, "currency": "CHF"})
    spanish = "Base imponible     100,00 €\nIVA (21%)           21,00 €\nIRPF (-15%)        -15,00 €\nTotal factura      106,00 €\n"
    assert [kind for _, kind, _ in Source(spanish, INVOICE.lexicon).adjustments()] == ["deduction"]
    record = {"subtotal": 100.0, "tax": 21.0, "total": 106.0, "currency": "EUR"}
    assert factors(spanish, record)["total"] >= 0.9
    flagged(spanish, {**record, "total": 101.0}, "total")


# 117. Labels of three more till and invoice traditions: the Philippine receipt's
# "VATable Sales" (the amount before VAT), the Chinese fapiao's "金额合计" (the amounts'
# sum before tax) and the Hungarian "Bruttó érték" (the gross value, as "Nettó érték" is
# the net one): each names its figure, so a record that swaps subtotal and total is caught
@pytest.mark.parametrize(
    "text",
    [
        "VATable Sales        1,000.00\nVAT-Exempt Sales         0.00\nVAT Amount             120.00\n"
        "Total Amount Due     1,120.00\n",
        "金额合计   ¥1,000.00\n税额合计   ¥120.00\n价税合计   ¥1,120.00\n",
        "Nettó érték   1 000 Ft\nÁFA 12%         120 Ft\nBruttó érték  1 120 Ft\n",
    ],
)
def test_vatable_sales_fapiao_sums_and_hungarian_gross(text):
    assert [role for _, role in amount_roles(text) if role] == ["subtotal", "tax", "total"]
    clean(text, {"subtotal": 1000.0, "tax": 120.0, "total": 1120.0})
    flagged(text, {"subtotal": 1120.0, "tax": 120.0, "total": 1000.0}, "total")


# 118. Fullwidth forms, as Japanese and Chinese prints write figures, signs and brackets
# ("￥１０，０００", "消費税（10%）", "￥１１，０００－", an ideographic space between label and
# figure): they read as their ASCII forms, one character for one, so the amounts, their
# labels and the yen ground where they stand, and a wrong total is still caught
def test_fullwidth_figures_and_signs():
    text = (
        "株式会社サンプル\n請求書番号 Ａ－１\n発行日 2024年3月5日\n"
        "小計　　　　￥１０，０００\n消費税（10%）　￥１，０００\n合計　　　　￥１１，０００－\n"
    )
    assert [(raw, role) for raw, role in amount_roles(text) if role] == [
        ("10,000", "subtotal"),
        ("1,000", "tax"),
        ("11,000", "total"),
    ]
    source = Source(text, INVOICE.lexicon)
    assert [text[a.start : a.end] for a in source.amounts] == ["１０，０００", "１，０００", "１１，０００"]
    record = {"invoice_number": "A-1", "subtotal": 10000.0, "tax": 1000.0, "total": 11000.0, "currency": "JPY"}
    clean(text, record)
    flagged(text, {**record, "total": 10000.0}, "total")


# 119. Round 38's class. Two tables side by side put a header's first word and another
# table's figure on one line ("Tax   Base   Rate  Amount  Sum     €90,00": a tax table's
# header beside a totals box): a label does not reach a figure across two cells of other
# words or more, so the base is not read as the tax; a label with one qualifier cell
# before its figure still names it ("Total   (incl. VAT)   €111,60")
def test_a_label_does_not_reach_across_other_cells():
    text = (
        "Tax   Base   Rate  Amount  Sum     €90,00\n"
        "VAT  €90,00  24%    €21,60  Tax     €21,60\n"
        "                     Total to pay  €111,60\n"
    )
    assert [role for _, role in amount_roles(text)] == [None, None, "tax", "tax", "total"]
    clean(text, {"tax": 21.6, "total": 111.6})
    flagged(text, {"tax": 90.0, "total": 111.6}, "tax")
    assert amount_roles("Total   (incl. VAT)   €111,60\n") == [("111,60", "total")]


# 120. Round 38's class, by columns. A rate between a header and a figure further down
# ("24%" of an item row under the items' "VAT" column, over a totals box's "Sum  €90,00")
# breaks the column: a column of rates holds no amount, so the header is another table's
# and does not name the figure as the tax; a header over a row of figures still names them
def test_a_rate_breaks_a_column():
    text = (
        "#  Description  Qty.        Price  VAT   Total\n"
        "1  Υπηρεσίες Ανάπτυξης  1  €90,00  24%  €90,00\n"
        "\n"
        "Tax   Base   Rate  Amount  Sum     €90,00\n"
        "VAT  €90,00  24%    €21,60  Tax     €21,60\n"
        "                     Total to pay  €111,60\n"
    )
    assert [role for raw, role in amount_roles(text) if raw != "1"] == [None, None, None, None, "tax", "tax", "total"]
    clean(text, {"tax": 21.6, "total": 111.6})
    assert amount_roles("Subtotal   VAT    Total\n\n100.00     19.00  119.00\n") == [
        ("100.00", "subtotal"),
        ("19.00", "tax"),
        ("119.00", "total"),
    ]


# 121. Round 39's class. A currency sign written in letters after a figure ("1 800,00 zł",
# as "Kč", "Ft", "lei", "руб." are written) stands between a tax row's base and rate as
# "€" does: the row's base leads to its tax, so "VAT" names the tax, not the base
@pytest.mark.parametrize("sign", ["zł", "Kč", "Ft", "lei", "руб."])
def test_a_currency_sign_in_letters_in_a_tax_row(sign):
    text = f"VAT  1 800,00 {sign}  23,0%  414,00 {sign}\nTotal  2 214,00 {sign}\n"
    assert [role for _, role in amount_roles(text)] == [None, "tax", "total"]
    clean(text, {"tax": 414.0, "total": 2214.0})
    flagged(text, {"tax": 1800.0, "total": 2214.0}, "tax")


# 122. Round 39's class. The figures a label reaches across (a tax breakdown row's base and
# tax before its rate: "321,40  61,07  19,0  382,47") take no role, but they are their
# columns' figures: a header over them and a sum row's figure below ("Nettobetrag" over
# "321,40", "127,59" and, drifting under the next header, the sum row's "70,00") names
# none of them, as a header over a column of several figures does; so the sum row's tax is
# not read as a subtotal, nor its total as a tax
def test_a_figure_a_label_reaches_across_is_one_of_its_columns():
    text = (
        "     Warenwert  Zu-/Abschlag  Fracht-Verp-Vers  Skonto sofort  Nettobetrag      MwSt-Betrag  MwSt-%  Endbetrag\n"
        "      326,50        -8,10          3,00                         321,40           61,07       19,0     382,47\n"
        "      130,70        -3,11                                       127,59            8,93        7,0     136,52\n"
        "\n"
        " 457,20  -11,21        3,00               448,99                   70,00  EUR  518,99\n"
    )
    assert [role for _, role in amount_roles(text)][-3:] == [None, None, None]
    assert reasons(text, {"subtotal": 448.99, "tax": 70.0, "total": 518.99})["tax"] == [
        "70,00 appears in the source, but the source labels no amount as tax"
    ]


# 123. Round 39's class. A tax breakdown that names its tax once and lists a second rate on
# the next line ("VAT  1 800,00 zł  23,0%  414,00 zł" over "10,00 zł  8,0%  0,80 zł"): the
# second row is the same tax at another rate, so the total tax 414,80 is their sum, not a
# rival of the first row's 414,00; a record giving only the first row's tax is still caught
def test_a_tax_row_continued_on_the_next_line():
    text = (
        "Tax    Base        Rate   Amount     Sum          1 810,00 zł\n"
        "VAT  1 800,00 zł  23,0%  414,00 zł    Tax          414,80 zł\n"
        "      10,00 zł     8,0%    0,80 zł  Total to pay  2 224,80 zł\n"
    )
    assert [raw for raw, role in amount_roles(text) if role == "tax"] == ["414,00", "414,80", "0,80"]
    clean(text, {"tax": 414.8, "total": 2224.8})
    flagged(text, {"tax": 414.0, "total": 2224.8}, "tax", "conflicting tax")
    # a converter keeping the page's heights leaves a blank line between the rows
    spaced = text.replace("zł\n      10,00", "zł\n\n      10,00")
    assert [raw for raw, role in amount_roles(spaced) if role == "tax"] == ["414,00", "414,80", "0,80"]
    clean(spaced, {"tax": 414.8, "total": 2224.8})


# 124. Round 39's class. A tax withheld for the state ("Tax withheld", "Retained VAT",
# "IVA retenido", "IRPF") is no tax label, and the total after it is the invoice's: beside
# "Total with tax 358.85", "Total to pay 296.79" is the total when the withholding makes up
# the difference; what is left after a payment is still not the total
def test_a_total_after_a_withholding():
    text = (
        "Tax             Base     Rate  Amount\n"
        "VAT           $300.30   16.0%    $48.05\n"
        "Retained VAT  $300.30  10.6667%  $32.03\n"
        "ISR           $300.30    10%     $30.03\n"
        "Sum            $310.80\nTax            $48.05\nTotal with tax     $358.85\n"
        "Tax withheld      $-62.06\nTotal to pay     $296.79\n"
    )
    assert [raw for raw, role in amount_roles(text) if role == "tax"] == ["48.05", "48.05"]
    clean(text, {"tax": 48.05, "total": 296.79})
    paid = text.replace("Tax withheld", "Paid")
    flagged(paid, {"tax": 48.05, "total": 296.79}, "total", "is not the document's total")


# The sum of withholdings or of other deductions ("Total das Retenções", "Total Deduções/
# Reduções", "Total of withholdings", "Total discounts") is a deduction, not a total: on a
# Brazilian NFS-e, whose service value is its total, it named that figure the total
@pytest.mark.parametrize(
    "label",
    [
        "Total das Retenções",
        "Total das retencoes (ISSQN / Federais)",
        "Total Deduções/Reduções",
        "Total of withholdings",
        "Total discounts",
    ],
)
def test_a_sum_of_deductions_is_no_total(label):
    text = (
        "Número da NFS-e 888\n"
        "Valor do Serviço                          R$ 5.000,00\n"
        f"{label:<42}R$ 700,00\n"
        "Valor Líquido da NFS-e                    R$ 4.300,00\n"
    )
    assert [role for _, role in amount_roles(text)] == [None, None, None, None]
    # no label names the total now (as on the NFS-e print); the withholdings did, a rival
    assert factors(text, {"total": 5000.0})["total"] == pytest.approx(F.NO_ROLE_LABEL_FACTOR)
    # a total label qualified otherwise still names its figure
    assert [role for _, role in amount_roles(text.replace(label, "Total da nota"))][2] == "total"


# A figure's own header of words, with no label in it, stands between it and a label
# further up: that label heads another row (pdfplumber squeezes an NFS-e's header cells
# into one line of words under "VALOR TOTAL DA NFS-E", whose figure drifted a line down)
def test_a_header_of_words_over_a_figure_stops_a_label_further_up():
    text = (
        "VALOR TOTAL DA NFS-E\n"
        "                     R$ 5.000,00         -                   -\n"
        "Retido na Fonte (ISSQN / Federais) Valor Líquido da NFS-e Outros Valores\n"
        "R$ 700,00           R$ 4.300,00         -\n"
    )
    assert [role for _, role in amount_roles(text)] == [None, None, None]
    # a currency's line between them is no header: the label over the figure names it
    beside = "Invoice total          Tax\nEUR                    EUR\n1,190.00               190.00\n"
    assert [role for _, role in amount_roles(beside)] == ["total", "tax"]


# A qualifier stands in its label's cell: "Total" and "Taxes" two columns apart are two
# headers, not the taxes' sum; one blank apart, the taxes' sum (and so before the label)
def test_a_qualifier_is_read_in_its_labels_cell_only():
    columns = "Net         Total          Taxes\n1,000.00    1,150.00       150.00\n"
    assert [role for _, role in amount_roles(columns)] == ["subtotal", "total", "tax"]
    assert [role for _, role in amount_roles("Total taxes    150.00\nTotal    1,150.00\n")] == ["tax", "total"]
    # so does a qualifier before it: "Merchandise" a gap before "Total" heads its own column
    headers = "Merchandise        Total\n1,000.00           1,190.00\n"
    assert [role for _, role in amount_roles(headers)] == [None, "total"]
    assert [role for _, role in amount_roles("Merchandise total  1,000.00\nTotal  1,190.00\n")] == ["subtotal", "total"]


# 125. A special offer taken off a shop's order ("Special Offer  - €10.00") is a deduction:
# with the shipping charge it explains the total
def test_a_special_offer_is_a_deduction():
    text = "Sub-total     €36.94\nSpecial Offer  - €10.00\nShipping      €5.00\nVAT 21%       €6.71\nTotal (€)     €38.65\n"
    assert [kind for _, kind, _ in Source(text, INVOICE.lexicon).adjustments()] == ["deduction", "charge"]
    record = {"subtotal": 36.94, "tax": 6.71, "total": 38.65}
    assert factors(text, record)["total"] >= 0.9


# 126. Round 40's class. A stacked cell printed with its label between its two lines, the
# amount over the label and its worth in the reporting currency under it ("19 120" /
# "Nettó összesen" / "5 927 200 HUF" on an invoice in EUR): the label names the figure over
# it, and the record's figures are the invoice's; one taken from the restatement is caught
def test_a_label_between_a_figure_and_its_worth_in_another_currency():
    text = (
        "Pénznem: EUR\n\n"
        "  19 120\nNettó összesen\n 5 927 200 HUF\n\n"
        "  4502,40\nÁFA összesen\n 1 395 744,00 HUF\n\n"
        "  23 622,40\nBruttó összesen\n 7 322 944,00 HUF\n"
    )
    assert [role for _, role in amount_roles(text)] == ["subtotal", None, "tax", None, "total", None]
    clean(text, {"subtotal": 19120, "tax": 4502.40, "total": 23622.40, "currency": "EUR"})
    flagged(text, {"total": 7322944}, "total", "not as a labelled total")
    # one token per line with no restatement: the label still names the figure under it
    receipt = "SUBTOTAL\n10,00\nTOTAL\n12,00 EUR\n"
    assert amount_roles(receipt) == [("10,00", "subtotal"), ("12,00", "total")]
    # a row split into lines ends over the label: the figure under it is still the label's
    row = "4,200\n336\n4,536\n合計（税込）\n￥41,936\n"
    assert amount_roles(row)[-2:] == [("4,536", None), ("41,936", "total")]


# 127. Round 41's class. Danish invoice totals: "Fakturatotal" (the invoice total, incl.
# moms) is the grand total, not a VAT label, and "Afgift total" (all duties and taxes) is
# the tax; on a reverse-charge invoice it is zero
def test_danish_invoice_total_and_duties():
    text = (
        "Linjesum i alt excl moms  2000.00 DKK\nMomsgrundlag              2000.00 DKK\n"
        "Total momsbeløb (25.00%)   500.00 DKK\nFakturatotal incl moms    2500.00 DKK\n\n"
        "Supplerende oplysninger om totaler\nAfgift total: 500.00 DKK\n"
    )
    assert [role for _, role in amount_roles(text)][-3:] == ["tax", "total", "tax"]
    clean(text, {"subtotal": 2000, "tax": 500, "total": 2500, "currency": "DKK"})
    flagged(text, {"subtotal": 2000, "tax": 500, "total": 500}, "total", "not as a labelled total")
    reverse = (
        "Linjesum i alt excl moms        5000.00 DKK\nMomsfri andel (REVERSECHARGE)  5000.00 DKK\n"
        "Fakturatotal incl moms          5000.00 DKK\n\nAfgift total: 0.00 DKK\n"
    )
    clean(reverse, {"subtotal": 5000, "tax": 0, "total": 5000, "currency": "DKK"})


# 128. A label alone on its line with the tax it includes or leaves out after it
# ("Gesamtbetrag inkl. USt", "Total (IVA incluido)", "Fakturatotal incl moms") names the
# figure alone on the next line, as the label alone does
@pytest.mark.parametrize(
    "label,subtotal,tax,total",
    [
        ("Gesamtbetrag inkl. USt", "Summe netto\n100,00\nUSt 19%\n19,00", "19,00", "119,00"),
        ("Total (IVA incluido)", "Subtotal\n100,00\nIVA 21%\n21,00", "21,00", "121,00"),
        ("Fakturatotal incl moms", "Linjesum i alt excl moms\n100.00 DKK\nMoms 25%\n25.00 DKK", "25.00", "125.00 DKK"),
    ],
)
def test_a_qualified_label_over_its_figure(label, subtotal, tax, total):
    text = f"{subtotal}\n{label}\n{total}\n"
    assert [role for _, role in amount_roles(text)] == ["subtotal", "tax", "total"]
    value = float(total.split()[0].replace(",", "."))
    clean(text, {"subtotal": 100, "tax": value - 100, "total": value})


# 129. Found by the one-cell-per-line variant on round 43's Lago invoice. Deductions'
# phrases written together alone over their figure ("Prepaid credits" / "-$3.00"): the
# phrase nearest the figure names it, as on the figure's own line; a phrase and other
# words ("Discount on shipping") still name none
def test_phrases_written_together_over_their_figure():
    text = "Subtotal\n$100.00\nFree credits\n-$2.00\nPrepaid credits\n-$3.00\nTotal\n$95.00\n"
    assert [kind for _, kind, _ in Source(text, INVOICE.lexicon).adjustments()] == ["deduction", "deduction"]
    clean(text, {"subtotal": 100, "total": 95})
    assert not Source(text.replace("Prepaid credits", "Discount on shipping"), INVOICE.lexicon).adjustments()[1:]


# 130. Round 18's Finvoice print, left until now. A payment's phrase alone over its figure
# with a word saying whether the tax is in it ("Ennakkomaksu  verollinen" / "-100,00", an
# advance payment incl. VAT): the phrase names the figure, so the advance explains the total
def test_a_phrase_with_its_tax_word_over_its_figure():
    text = (
        "Kuvaus         Yhteensä\nEnnakkomaksu  verollinen\n                -100,00\n\n"
        "LASKU YHTEENSÄ: 3352,98 euroa\nYhteensä veroton: 2830,30 euroa\nALV yhteensä:  622,68 euroa\n"
    )
    assert [kind for _, kind, _ in Source(text, INVOICE.lexicon).adjustments()] == ["deduction"]
    record = {"subtotal": 2830.30, "tax": 622.68, "total": 3352.98}
    assert factors(text, record)["total"] >= 0.9
    flagged(text.replace("Ennakkomaksu", "Kuvaus"), record, "total", "beyond rounding")
    # pdftotext -layout sets the two cells of the phrase ninety blanks apart
    wide = text.replace("Ennakkomaksu  verollinen", "Ennakkomaksu" + " " * 90 + "verollinen")
    assert factors(wide, record)["total"] >= 0.9


# 131. A bare whole figure under its own label is a rival for a figure written with its
# currency: a line's amount given as the tax ("VAT 30" beside "Widget 200 PLN") is caught,
# not passed as merely unlabelled. (A wider rule tried for round 25's JP PINT print,
# where a tax header names the payment means code "30" beside it, let this through, and
# was taken back.)
def test_a_bare_figure_under_its_label_rivals_one_with_its_currency():
    text = "Invoice 12\nVAT 30\nWidget 200 PLN\n"
    flagged(text, {"tax": 200, "currency": "PLN"}, "tax", "not as a labelled tax")


# 132. An amount that stands only as a labelled charge is not the tax, whatever number
# stands beside the tax's label: a delivery charge given as the tax ("VAT 30" beside
# "Delivery 200.00": in cents, so "30" is read as a rate and rivals nothing) is caught, not
# passed as merely unlabelled. A charge's phrase read in prose, and a deduction's, are no
# such label, and a net or a total may be a fee's alone ("Consulting fee" billed by itself).
@pytest.mark.parametrize("charge", ["Delivery 200.00", "Shipping: $200.00", "Handling fee  EUR 200,00"])
def test_an_amount_standing_only_as_a_charge_is_not_the_tax(charge):
    flagged(f"Invoice 12\nVAT 30\n{charge}\n", {"tax": 200.00}, "tax", "only as a charge")


def test_a_sum_paid_a_charge_in_prose_or_a_fee_billed_alone_is_no_charge_label():
    for text in ("Invoice 12\nVAT 3\nAmount paid 200.00\n", "Invoice 12\nShipping is free of charge.  200.00\n"):
        assert not any("only as a charge" in r for r in reasons(text, {"tax": 200.00})["tax"])
    text = "Invoice 12\nConsulting fee 1,000.00\nVAT 20%  200.00\nTotal  1,200.00\n"
    assert min(factors(text, {"subtotal": 1000.00, "tax": 200.00, "total": 1200.00}).values()) > 0.82


# 133. One cell per line, as OCR and converters without layout give it: a label that starts
# its line with the amount's own nouns after it names the lone figure on the next line as
# it would the figure after it on its line ("Gross Total Amount" / "€1,188.00"). A label
# word ending a phrase ("Produs cu TVA redus", a line's description) names nothing so, nor
# one with other words after it: a contract's values over this period's invoice ("Net
# Contract Value" / "10,000.00") name no net, a load's volume no total.
def test_a_label_with_the_amounts_nouns_names_the_lone_figure_below():
    text = "Invoice 7\nNet Total Amount\n€990.00\nVAT 20%\n€198.00\nGross Total Amount\n€1,188.00\n"
    clean(text, {"subtotal": 990.00, "tax": 198.00, "total": 1188.00})
    clean("Invoice 7\nProdus cu TVA redus\n9.17\nTVA total\n19.05\nTotal\n219.05\n", {"tax": 19.05, "total": 219.05})
    clean("Invoice 7\nTotal Pallets\n4\nTotal Volume\n12.50\nTotal\n595.00\n", {"total": 595.00})
    text = (
        "Invoice 7\nNet Contract Value\n10,000.00\nVAT 20%\n2,000.00\nGross Contract Value\n12,000.00\n"
        "Amount this period\nSubtotal\n3,000.00\nVAT 20%\n600.00\nBalance Due\n3,600.00\n"
    )
    flagged(text, {"subtotal": 10000.00, "tax": 2000.00, "total": 12000.00}, "total", "not as a labelled total")
    got = factors(text, {"subtotal": 3000.00, "tax": 600.00, "total": 3600.00})
    assert got["subtotal"] >= 0.9 and got["total"] >= 0.9, got


# 134. A charge's or deduction's phrase in a label over a figure qualifies that figure as it
# would beside it on its line ("Total discount" / "0.20 €" is a discount, not a rival total).
def test_a_deduction_named_in_the_label_over_its_figure_qualifies_it():
    text = "Invoice 7\nSubtotal\n2.00 €\nTotal discount\n0.20 €\nTotal amount\n1.80 €\n"
    clean(text, {"subtotal": 2.00, "total": 1.80})


# 135. A charge's kind and its name over its figure, as e-invoice prints write them
# ("Nachlass: Loyalty Program Discount" / "- 14,00 €"), is that charge: it explains the
# difference between the lines' sum and the net.
def test_a_charge_kind_and_name_over_its_figure_is_that_charge():
    text = (
        "Rechnung 7\nSumme der Positionen\n135,00 €\nNachlass: Loyalty Program Discount\n- 14,00 €\n"
        "Zuschlag: Standard Shipping Fee\n0,50 €\nGesamtbetrag Netto\n121,50 €\n"
    )
    clean(text, {"subtotal": 121.50})


# 136.-137. Text without its layout (runs of blanks one space, as converters without layout
# give it), where no line shows columns and a position says nothing.
# 136. A line of several labels run together is a table's header, not one label ending its
# line: "Price Tax VAT" over a lone "$ 1,200.00" names no tax ("Summe Umsatzsteuer" over
# "21,31" still names its tax).
def test_a_header_run_together_names_no_lone_figure_below():
    text = " Description Quantity Unit Price\n Price Tax VAT\n $ 1,200.00\n1 Notebook 1 $ 1,000.00\n $ 1,000.00 20% $ 200.00\n"
    assert amount_roles(text)[0] == ("1,200.00", None)
    assert amount_roles("Netto 100,00\n Summe Umsatzsteuer\n 21,31\n")[-1] == ("21,31", "tax")
    text = "Description Quantity Unit Price\nTax VAT\n20.00\n1 Notebook 1 100.00\n"
    assert ("20.00", "tax") in amount_roles(text)  # one label's words, no header's


# 137. A total's label before a row whose last figure is the others' sum names that one
# ("Total 150.00 19.50 169.50": net, tax, gross), where the line shows no columns; a row
# whose columns show is read by its header, as before.
def test_a_total_label_before_net_tax_and_gross_names_the_gross():
    text = "Invoice 123/2020\nFirst product 1 100.00 8% 8.00 108.00\n Total 150.00 19.50 169.50\n"
    got = factors(text, {"subtotal": 150.00, "tax": 19.50, "total": 169.50})
    assert got["total"] == 1.0 and min(got.values()) > 0.82, got
    flagged(text, {"subtotal": 150.00, "tax": 19.50, "total": 150.00}, "total", "not as a labelled total")
    laid_out = (
        "                        Net    VAT    VAT     Gross\n"
        "                amount        rate  amount  amount\n"
        "First product   1      100.00  8%     8.00    108.00\n"
        "Second product  1      50.00   23%    11.50   61.50\n"
        "                Total  150.00         19.50  169.50\n"
    )
    assert amount_roles(laid_out)[-3:] == [("150.00", "subtotal"), ("19.50", "tax"), ("169.50", "total")]
    # OCR of the page keeps the row's cells and loses where they stand: no header's
    # labels over its figures, so the label still names the sum
    scanned = (
        "                 Net  VAT    VAT     Gross\nName  Quantity  amount\n                      rate  amount  amount\n\n"
        "First product  1  100.00  8%  8.00  108.00\n\nSecond product  1  50.00  23%  11.50  61.50\n\n"
        "Total  150.00  19.50  169.50\n"
    )
    got = factors(scanned, {"subtotal": 150.00, "tax": 19.50, "total": 169.50})
    assert got["total"] == 1.0 and min(got.values()) > 0.82, got
    flagged(scanned, {"subtotal": 150.00, "tax": 19.50, "total": 150.00}, "total", "not as a labelled total")
    # this invoice, a balance brought forward, the sum: the label stays with the first
    text = (
        "Invoice 7\nConsulting 1 80.00 80.00\nThis invoice Previous balance Amount payable\nTotal 80.00 120.00 200.00\n"
    )
    assert factors(text, {"total": 80.00})["total"] == 1.0


# 138.-140. Another printed amount given as the tax or the subtotal (`vetq eval --real`'s
# other_amount_tax and other_amount_subtotal).
# 138. A failed sum names the field the source contradicts: one rate's tax given as the tax,
# where the value that adds up is printed under the tax's label ("TVA TOTAL 19.05"), flags
# the tax, not the subtotal and total it is checked against.
def test_a_failed_sum_blames_the_field_whose_labelled_figure_adds_up():
    text = (
        "Factura PROD 1\nProdus  Cant  TVA  Valoare\nA  15  19%  50,42\nB  1  9%  9,17\n\n"
        "        TVA 9%  TVA 19%     TVA TOTAL\nTOTAL    1.49   17.56         19.05  TOTAL\n fără TVA\n"
        "108.95                           128\n"
    )
    right = factors(text, {"subtotal": 108.95, "tax": 19.05, "total": 128.00})
    record = {"subtotal": 108.95, "tax": 17.56, "total": 128.00}
    flagged(text, record, "tax", "arithmetic", "the source labels 19.05 as the tax, which adds up")
    got = factors(text, record)
    assert got["tax"] < 0.82 and got["subtotal"] == right["subtotal"] and got["total"] == right["total"], got
    # a figure labelled with the other sign is no value that adds up: a credit note's
    # subtotal and total swapped blame no correct tax
    text = "Kreditnota 7\nSumma exkl. moms -800,00\nMoms 25% -200,00\nAtt återbetala -1 000,00\n"
    swapped = factors(text, {"subtotal": -1000.00, "tax": -200.00, "total": -800.00})
    assert swapped["tax"] == 1.0 and swapped["subtotal"] < 0.82 and swapped["total"] < 0.9, swapped
    # a total the source labels otherwise is blamed the same way
    text = "Invoice 7\nSubtotal 100.00\nVAT 20.00\nTotal 120.00\nConsulting 1 105.00\n"
    flagged(text, {"subtotal": 100.00, "tax": 20.00, "total": 105.00}, "total", "the source labels 120.00 as the total")


# 139. A gross subtotal forgives the tax it includes only when that tax is a tax rate's worth
# of the net it leaves: the total given as the tax ("IVA 120.00" beside "Total 120.00") is
# no tax included in 120.00.
def test_a_tax_said_to_be_included_is_at_most_a_tax_rate_of_its_net():
    # "Imposto", a word no tax label of the lexicon: only the arithmetic can tell
    text = (
        "Fatura\nProduto com IVA incluido  1  120.00 EUR\nSubtotal  120.00 EUR\nImposto  20.00 EUR\nTotal  120.00 EUR\n"
    )
    assert factors(text, {"subtotal": 120.00, "tax": 20.00, "total": 120.00})["tax"] >= 0.82
    got = factors(text, {"subtotal": 120.00, "tax": 120.00, "total": 120.00})
    assert got["tax"] < 0.82, got


# 140. A subtotal no label names, in a record without a tax to check it by, passes as the
# total, the largest figure, the total less a tax or less labelled charges; one line's
# amount (2'500.00 of a 5'085.00 bill) is flagged.
def test_an_unlabelled_subtotal_without_a_tax_is_the_total_or_explained_by_it():
    text = (
        "Rechnung RE-1\nPosition  Anzahl  Bezeichnung  Gesamtpreis\n"
        "1  12.5  Consulting  2'500.00 CHF\n2  3.25  Engineering  585.00 CHF\n3  8  Workshop  2'000.00 CHF\n"
        "Rechnungsbetrag  5'085.00 CHF\n"
    )
    assert factors(text, {"subtotal": 5085.00, "total": 5085.00})["subtotal"] >= 0.82
    flagged(text, {"subtotal": 2500.00, "total": 5085.00}, "subtotal", "may be one line's amount")
    net = text.replace("Rechnungsbetrag  5'085.00", "Netto 5'085.00 CHF\nMwSt 8.1 % 411.89 CHF\nTotal 5'496.89")
    assert factors(net.replace("Netto", "Positionen"), {"subtotal": 5085.00, "total": 5496.89})["subtotal"] >= 0.82
    shipped = text.replace("Rechnungsbetrag  5'085.00", "Positionen  5'085.00 CHF\nVersand  15.00 CHF\nTotal  5'100.00")
    assert factors(shipped, {"subtotal": 5085.00, "total": 5100.00})["subtotal"] >= 0.82


# 141. Text from a converter that keeps the page's widths (pdftotext -layout): a figure
# sits 75 blanks right of its phrase, and a box's caption stands alone, indented, a few
# lines over its value with other boxes' fragments between.
def test_a_phrase_far_across_the_page_still_qualifies_its_figure():
    text = (
        "Bruttosumme" + " " * 75 + "220,00\n\n"
        "Offene Zahlungen" + " " * 75 + "220,00\n\n"
        "Zahlbetrag" + " " * 75 + "440,00\n"
    )
    clean(text, {"total": 220.00, "currency": None})
    assert factors(text.replace(" " * 75, "  "), {"total": 220.00}) == factors(text, {"total": 220.00})


@given(
    st.lists(st.sampled_from(["Word", "ab", "12,00", " ", "\t", "  ", " " * 75, " " * 700]), max_size=40),
    st.data(),
)
@settings(max_examples=300, deadline=None)
def test_the_words_before_a_figure_reach_a_window_of_its_laid_out_length(pieces, data):
    # the label window measured as the text reads, a run of blanks as one character,
    # however long the line and its runs (read back over a bounded stretch)
    text = "".join(pieces)
    lo = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(lo, len(text)))
    start = reach_start(text, lo, end)
    assert start == next(p for p in range(lo, end + 1) if laid_out_length(text[p:end]) <= LABEL_BEFORE_WINDOW)


# Found by a second reader (session 42): the wider reach, heading and caption readings must
# not let words of another cell or an item's name speak for a figure.
REVIEWED = json.loads(
    '{"a payment block beside the totals box is no partial word": {"text": "Muster GmbH                                                                            Rechnungsnr.: RE-2024-7\\n                                                                                      Rechnungsdatum: 31.01.24\\n\\nPos  Bezeichnung                                                                                        Betrag\\n1    Beratung                                                                                           500,00\\n\\nBankverbindung:                                                                 Summe netto             500,00\\nZahlung per Lastschrift                                                         MwSt. 19%                95,00\\n                                                                                Gesamtbetrag            595,00\\n", "record": {"invoice_number": "RE-2024-7", "invoice_date": "2024-01-31", "currency": "EUR", "tax": 500.0, "total": 595.0}, "expect": {"tax": ["500,00 appears in the source but not as a labelled tax (labelled tax: 95,00)"]}}, "a payment block over the tax line is no heading of it": {"text": "Muster GmbH                                                                            Rechnungsnr.: RE-2024-7\\n                                                                                      Rechnungsdatum: 31.01.24\\n\\nPos  Bezeichnung                                                                                        Betrag\\n1    Beratung                                                                                           500,00\\n\\n                                                                                Summe netto             500,00\\nZahlung per Lastschrift                                                                                    EUR\\n                                                                                MwSt. 19%                95,00\\n                                                                                Gesamtbetrag            595,00\\n", "record": {"invoice_number": "RE-2024-7", "invoice_date": "2024-01-31", "currency": "EUR", "tax": 500.0}, "expect": {"tax": ["500,00 appears in the source but not as a labelled tax (labelled tax: 95,00)"]}}, "a phrase in the cell left of the tax\'s label is not its charge": {"text": "INVOICE                                                                           Invoice No: INV-1\\n                                                                                    Date: 2024-01-31\\n\\nDescription                                                                                   Amount\\nServices rendered                                                                             100.00\\n\\n                                                                      Subtotal                100.00\\nPrevious balance carried forward                                      Tax                      20.00\\n                                                                      Total                   120.00\\n                                                                      Amount paid              50.00\\n                                                                      Balance due              70.00\\n", "record": {"invoice_number": "INV-1", "invoice_date": "2024-01-31", "subtotal": 100.0, "tax": 50.0, "total": 120.0, "currency": "EUR"}, "expect": {"tax": ["50.00 appears in the source but not as a labelled tax (labelled tax: 20.00)"]}}, "a lone caption names no item\'s amount under the item\'s name": {"text": "  INVOICE INV-1\\n  Date 2024-01-31\\n  Total\\n  Widget A\\n  40.00\\n  Widget B\\n  60.00\\n  Subtotal 100.00\\n  VAT 20.00\\n  Total 120.00\\n", "record": {"invoice_number": "INV-1", "invoice_date": "2024-01-31", "total": 40.0, "currency": "EUR"}, "expect": {"total": ["40.00 appears in the source but not as a labelled total (labelled total: 120.00)"]}}, "a lone caption over a charge\'s name names not its figure": {"text": "        INVOICE INV-1\\n        Date 2024-01-31\\n        Items\\n        Consulting\\n        100.00\\n        Subtotal\\n        Shipping\\n        15.00\\n        Tax\\n        23.00\\n        Total\\n        138.00\\n", "record": {"invoice_number": "INV-1", "invoice_date": "2024-01-31", "subtotal": 100.0, "tax": 23.0, "total": 138.0, "currency": "EUR"}, "expect": {"total": ["subtotal + tax = 100.00 + 23.00 = 123.00, but total is 138.0: the difference 15.00 is an extra charge or discount the source labels (shipping 15.00)"]}}}'
)


@pytest.mark.parametrize("name", sorted(REVIEWED))
def test_another_cells_words_do_not_speak_for_a_figure(name):
    case = REVIEWED[name]
    got = reasons(case["text"], case["record"])
    flagged_first = {path: r[0] for path, r in got.items() if r and path != "currency"}
    assert flagged_first == {path: r[0] for path, r in case["expect"].items()}, name


def test_a_lone_caption_names_the_lone_figure_set_under_it_in_a_layout():
    gap = " " * 100
    text = (
        "CONHECIMENTO DE TRANSPORTE\nFrete                 47,00                 Seguro     1.200,00\n"
        f"{gap}VALOR TOTAL A RECEBER\n                    VA\n\n\n\n{gap}R$ 47,00\n"
    )
    assert [role for raw, role in amount_roles(text) if raw.endswith("47,00")] == [None, "total"]
    clean(text, {"total": 47.00})
    # without a layout (each line's text from its first column), position says nothing
    flat = "\n".join(line.strip() for line in text.split("\n"))
    assert [role for raw, role in amount_roles(flat) if raw.endswith("47,00")] == [None, None]


def test_a_header_cell_of_rates_names_no_amount_under_it():
    # OCR's columns drifted: the net figure stands under "ALV-%", a column of rates,
    # which must not make it the tax (a percent sign after the label heads rates)
    text = (
        "Tuote/palvelu  Veroton€      ALV-%   ALV€ _  Verollinen €\n"
        "Tietotekninen konsultointi  200,00  24,00  48,00  248,00\n"
        "Yhteensa                    200,00  24,00  48,00  248,00\n"
        "Maksettava                                        248,00\n"
    )
    assert [role for raw, role in amount_roles(text)[:4]] == [None, None, None, None]
    assert factors(text, {"subtotal": 200.0, "tax": 48.0, "total": 248.0})["tax"] > F.ROLE_MISMATCH_FACTOR


@pytest.mark.parametrize(
    "text,record",
    [
        # OCR ran "TOTAL TTC" together over the sum's column
        (
            "  TOTAL HT  TOTAL TVA  TOTALTTC\n  100,00    10,00      110,00\n",
            {"subtotal": 100.0, "tax": 10.0, "total": 110.0},
        ),
        ("Sum        $37.90\nTax         $6.06\nTotaltopay  $43.96\n", {"tax": 6.06, "total": 43.96}),
    ],
)
def test_a_label_whose_words_ran_together_is_still_read(text, record):
    clean(text, record)
    glued_total = text.replace("TOTALTTC", "TOTAL TTC").replace("Totaltopay", "Total to pay")
    assert [role for _, role in amount_roles(text)] == [role for _, role in amount_roles(glued_total)]


# 142. Labels the lexicon lacked: "Rechnungssumme" is the invoice's total (its net form the
# goods' sum), "DATE DELIVERED" the delivery date. "Issued" alone is none: "Policy issued:
# 01/01/2024" dates a policy, not the invoice
def test_the_invoices_sum_and_date_delivered_are_labels_and_issued_alone_is_none():
    text = "Nettobetrag     120,00\nzzgl. 19% USt.   22,80\nRechnungssumme  142,80\n"
    assert [role for _, role in amount_roles(text)] == ["subtotal", "tax", "total"]
    flagged(text, {"subtotal": 120.0, "tax": 22.8, "total": 120.0}, "total", "labelled total: 142,80")
    net = "Rechnungssumme Netto    120,00\nUSt. 19%                 22,80\nZahlbetrag              142,80\n"
    assert [role for _, role in amount_roles(net)] == ["subtotal", "tax", "total"]
    dates = "BILL TO       ISSUED          DATE DELIVERED\nAcme Corp     Apr 30, 2026    May 15, 2026\n"
    clean(dates, {"invoice_date": "2026-04-30"})
    flagged(dates, {"invoice_date": "2026-05-15"}, "invoice_date", "DATE DELIVERED")
    policy = "Invoice No: 1043    Invoice date: 05/03/2024\nPolicy No: HP-55102   Policy issued: 01/01/2024\n"
    flagged(policy, {"invoice_date": "2024-01-01"}, "invoice_date", "which names '05/03/2024'")


# 143. Tills' words for a card or a phone payment the receipt's list lacked (Australia's
# EFTPOS, Canada's INTERAC, the Netherlands' PIN payment, Singapore's NETS, Italy's
# electronic payment, India's UPI, Brazil's PIX, Denmark's MobilePay)
@pytest.mark.parametrize(
    "words,paid",
    [
        ("EFTPOS", "card"),
        ("INTERAC", "card"),
        ("CONTACTLESS", "card"),
        ("BETAALD MET PINNEN", "card"),
        ("NETS", "card"),
        ("TARJ. CREDITO", "card"),
        ("Karta płatnicza", "card"),
        ("PAGAMENTO ELETTRONICO", "card"),
        ("Paid via UPI", "mobile"),
        ("PIX", "mobile"),
        ("MobilePay", "mobile"),
    ],
)
def test_more_tills_words_for_a_card_or_a_phone(words, paid):
    text = f"Shop\nItem    3.10\nTOTAL   3.10\n{words}   3.10\n"
    clean(text, {"total": 3.1, "payment_method": paid}, RECEIPT)
    assert factors(text, {"total": 3.1, "payment_method": "cash"}, RECEIPT)["payment_method"] < 1.0


@pytest.mark.parametrize(
    "line,prompt,paid,mentioned",
    [
        ("CASH   10.00", "We accept NETS & PayNow", "cash", "card"),
        ("CASH   20.00", "EFTPOS available - min $10", "cash", "card"),
        ("Cash   500.00", "Scan QR to pay by UPI next time", "cash", "mobile"),
        ("Dinheiro   5.50", "Pague com PIX - chave: 123", "cash", "mobile"),
    ],
)
def test_a_tender_line_outranks_a_payment_prompt(line, prompt, paid, mentioned):
    # a way to pay named on a line with an amount is how the receipt was paid; one named
    # in a line of words is an offer
    text = f"Shop\nTOTAL   5.50\n{line}\n{prompt}\n"
    clean(text, {"total": 5.5, "payment_method": paid}, RECEIPT)
    assert (
        factors(text, {"total": 5.5, "payment_method": mentioned}, RECEIPT)["payment_method"] == F.CONTRADICTED_FACTOR
    )


# 144. A tax said to be included in the total ("GST INCLUDED IN TOTAL $1.59", "IVA incluido
# en el total", "Dont TVA incluse dans le total"): the word "total" there names the sum the
# tax is part of, not the figure, which is the tax's; and a weight or a count under a net,
# gross or sum word ("Gewicht brutto 125,50 kg", "Summe Stück: 1.000,00") is no amount
@pytest.mark.parametrize(
    "label",
    ["GST INCLUDED IN TOTAL", "Tax included in total", "IVA incluido en el total", "Dont TVA incluse dans le total"],
)
def test_a_tax_included_in_the_total_is_the_tax_not_a_total(label):
    text = f"PAINT ROLLER 230MM      $12.98\nMASKING TAPE 24MM        $4.50\nTOTAL                   $17.48\n{label}   $1.59\n"
    assert [role for _, role in amount_roles(text)][2:] == ["total", "tax"]
    clean(text, {"total": 17.48, "tax": 1.59})
    flagged(text, {"total": 1.59}, "total", "labelled total: 17.48")
    # the tax's own label after the word stays one ("Included VAT 11,36")
    assert amount_roles("Sum  126,00\nIncluded VAT  11,36\n")[1] == ("11,36", "tax")


@pytest.mark.parametrize(
    "line", ["Gewicht netto: 118,20 kg", "Gewicht brutto 125,50 kg", "Summe Gewicht 125,50 kg", "Summe Stück: 1.000,00"]
)
def test_a_weight_or_a_count_under_a_sums_word_is_no_amount(line):
    text = f"Warenwert netto     72,25\nMwSt 19%            13,73\nRechnungsbetrag     85,98 EUR\n{line}\n"
    assert [role for _, role in amount_roles(text)] == ["subtotal", "tax", "total", None]
    clean(text, {"subtotal": 72.25, "tax": 13.73, "total": 85.98})


# 145. Lines priced with the tax over a net subtotal (a till's lines over its VAT table, a
# shop's "Summe (inkl. MwSt.)"): the lines add up to the total, not to the net, and the
# difference is the record's tax; where nothing shows the lines carry it (no total in the
# record, none printed under a total's label: 181), still flagged
@pytest.mark.parametrize(
    "closing",
    [
        "MwSt    Netto     MwSt     Brutto\nB 7%     3,50     0,25      3,75\n",
        "enthaltene MwSt. 7%   0,25\nNettobetrag   3,50\n",
    ],
)
def test_lines_priced_with_the_tax_add_up_to_the_total(closing):
    text = "Brezel      0,95 B\nKaffee      2,80 B\nSUMME   EUR   3,75\n" + closing
    items = [{"description": "Brezel", "amount": 0.95}, {"description": "Kaffee", "amount": 2.8}]
    record = {"subtotal": 3.5, "tax": 0.25, "total": 3.75, "items": items}
    assert 0.95 * factors(text, record, RECEIPT)["subtotal"] >= 0.70, reasons(text, record, RECEIPT)
    if "Brutto" in closing:
        # nothing says the lines carry the tax, and without the total nothing shows it
        untotalled = {key: value for key, value in record.items() if key != "total"}
        unprinted = "Brezel      0,95 B\nKaffee      2,80 B\nMwSt    Netto     MwSt\nB 7%     3,50     0,25\n"
        assert 0.95 * factors(unprinted, untotalled, RECEIPT)["subtotal"] < 0.70
        # the lines' sum printed under a total's label shows it
        assert 0.95 * factors(text, untotalled, RECEIPT)["subtotal"] >= 0.70


# 146. A line's discount printed as a rate on the line ("Rabatt 15,00%", "Sconto 10%"): its
# quantity times its price less that rate is its amount; a difference no rate on the
# line makes is still flagged
@pytest.mark.parametrize(
    "row,quantity,price,amount",
    [
        ("Schrauben M8x40      500    0,12      15,00%    51,00", 500, 0.12, 51.0),
        ("Toner HP 26A         4      62,50     10%       225,00", 4, 62.5, 225.0),
    ],
)
def test_a_lines_printed_discount_rate_makes_its_amount(row, quantity, price, amount):
    text = f"Bezeichnung   Menge   Preis   Rabatt   Gesamt\n{row}\nSumme netto   {amount:.2f}\n".replace(".", ",")
    line = {"description": row.split("  ")[0], "quantity": quantity, "unit_price": price, "amount": amount}
    assert 0.95 * factors(text, {"line_items": [line]})["line_items[0].amount"] >= 0.70
    said = reasons(text, {"line_items": [line]})["line_items[0].amount"]
    assert any("the line's printed" in r for r in said), said
    unrated = text.replace("15,00%", "      ").replace("10%", "   ")
    assert 0.95 * factors(unrated, {"line_items": [line]})["line_items[0].amount"] < 0.70


# 147. A tax base's label that names its tax ("VAT base 20%", "Grondslag BTW 21%", "Podstawa
# opodatkowania VAT", "Taxable amount (VAT 20%)", "MwSt-Basis 19%", "Base de TVA 20%",
# "Totale imponibile IVA", a net's label with its tax and rate: "Net (VAT 20%)"): the base,
# not a second tax
@pytest.mark.parametrize(
    "label",
    [
        "VAT base 20%",
        "Grondslag BTW 21%",
        "Podstawa opodatkowania VAT",
        "Taxable amount (VAT 20%)",
        "MwSt-Basis 19%",
        "Base de TVA 20%",
        "Imponibile IVA 22%",
        "Totale imponibile IVA",
        "Base imponible IVA 21%",
        "Podstawa VAT",
        "Basis für USt.",
        "Net (VAT 20%)",
        "Netto 19% MwSt",
    ],
)
def test_a_tax_bases_label_names_no_tax(label):
    text = f"Consulting       2.000,00\n{label}     2.000,00\nVAT 20%            400,00\nTotal   EUR  2.400,00\n"
    assert [role for _, role in amount_roles(text)][1] != "tax"
    right = factors(text, {"subtotal": 2000.0, "tax": 400.0, "total": 2400.0})
    assert right["tax"] == right["total"] == 1.0 and 0.95 * right["subtotal"] >= 0.70
    flagged(text, {"subtotal": 2000.0, "tax": 2000.0, "total": 2400.0}, "tax")


# 148. A line's description wrapped onto the lines under it, the row's figures after its
# first part (pdftotext -layout of a long description): found in its parts; a description
# one word off, or whose rest is not the next line's first cell, is not
def test_a_description_wrapped_around_its_rows_figures_is_found():
    text = (
        "Description                                  Qty     Rate        Amount\n"
        "Consulting services for the data               10   150.00      1,500.00\n"
        "migration project (phase 2) incl.\n"
        "travel and accommodation\n"
        "Other item                                      1    10.00         10.00\n"
    )
    described = "Consulting services for the data migration project (phase 2) incl. travel and accommodation"
    line = {"description": described, "quantity": 10, "unit_price": 150.0, "amount": 1500.0}
    checks = run_heuristics(text, INVOICE.validate_data({"line_items": [line]}), INVOICE)
    found = checks["line_items[0].description"]
    assert found.factor == 1.0 and [span.text for span in found.spans] == [
        "Consulting services for the data",
        "migration project (phase 2) incl.",
        "travel and accommodation",
    ]
    for wrong in (described.replace("phase 2", "phase 3"), described + " Other item"):
        flagged(text, {"line_items": [{**line, "description": wrong}]}, "line_items[0].description", "not found")


# 149. A second reader's cases for this wave's readings: an item's line whose words name
# a way to pay ("KITKAT CHUNKY BAR 1.20") pays nothing, only lines after the total do; a
# discount named with a payment's word ("Discount card -1.50") is a discount; a line's
# VAT rate makes no discount of its gross amount; a base column's heading beside the tax
# column's leaves the tax's a label
def test_the_second_readers_cases_of_tenders_discounts_rates_and_bases():
    receipt = "KITKAT CHUNKY BAR       1.20\nTOTAL                   1.20\nCARD PAYMENT\nVISA DEBIT ****4821\n"
    clean(receipt, {"total": 1.2, "payment_method": "card"}, RECEIPT)
    carded = "Item A   5.99\nItem B   13.48\nSubtotal   19.47\nDiscount card   -1.50\nBALANCE   17.97\n"
    flagged(carded, {"total": 19.47}, "total", "most likely what they leave")
    row = "Usługa   10   95,00   950,00   23%   218,50   1 168,50\n"
    gross = {"description": "Usługa", "quantity": 10, "unit_price": 95.0, "amount": 1168.5}
    flagged(row, {"line_items": [gross]}, "line_items[0].amount", "beyond the rule's tolerance")
    table = "BTW %   Grondslag   BTW\n21%     300,00      63,00\nTotaal  363,00\n"
    flagged(table, {"subtotal": 63.0, "tax": 300.0, "total": 363.0}, "tax", "labelled tax: 63,00")


# 150. A till's "Gross Amount" / "Discount" / "Net Amount" (South Asian bills, "Gross Total"
# / "Discount" / "Total"): the gross is the sum before its discounts and the figure they
# leave is the total, whatever its own label says; a payment, a tax withheld or a discount
# for paying early ("Skonto") leaves the total the sum before it
_GROSS_THEN_DISCOUNT = (
    "Cotton Shirt   1   1,299.00   1,299.00\nJeans   1   1,999.00   1,999.00\n"
    "{gross}   3,298.00\n{discount}   -329.80\n{net}   2,968.20\nCard   2,968.20\n"
)


@pytest.mark.parametrize(
    "gross,discount,net",
    [
        ("Gross Amount", "Discount", "Net Amount"),
        ("Gross Total", "Discount", "Total"),
        ("Gross Amount", "Discount 10%", "Net Amount"),
    ],
)
def test_the_gross_before_a_discount_is_no_total(gross, discount, net):
    text = _GROSS_THEN_DISCOUNT.format(gross=gross, discount=discount, net=net)
    clean(text, {"total": 2968.2, "payment_method": "card"}, RECEIPT)
    assert reasons(text, {"total": 3298.0}, RECEIPT)["total"] != []


def test_a_discount_after_the_total_leaves_the_subtotal_before_it():
    text = "Subtotal   100.00\nVAT 20%   20.00\nTotal   120.00\nDiscount   -10.00\n{net}   110.00\n"
    for net in ("Amount payable", "Net"):
        assert min(factors(text.format(net=net), {"subtotal": 100.0, "tax": 20.0, "total": 110.0}).values()) >= 0.85


@pytest.mark.parametrize(
    "total,deduction,left",
    [
        ("Total", "Advance paid", "Balance due"),
        ("Gesamtbetrag", "Skonto 2%", "Zahlbetrag"),
    ],
)
def test_a_total_before_a_payment_or_an_early_payment_discount_stays_the_total(total, deduction, left):
    clean(_GROSS_THEN_DISCOUNT.format(gross=total, discount=deduction, net=left), {"total": 3298.0}, RECEIPT)


def test_a_total_is_what_the_tax_withheld_leaves():
    # the schemas' total is after any tax withheld (the state's): the sum before it is flagged
    text = _GROSS_THEN_DISCOUNT.format(gross="Total", discount="IRPF", net="Total a pagar")
    clean(text, {"total": 2968.2, "payment_method": "card"}, RECEIPT)
    flagged(text, {"total": 3298.0}, "total", "before the tax withheld", "2,968.20")


# 151. A tax and a charge named together on one line ("Taxes and fees", "Tax/Fees", as
# travel sites print them): the tax's label names the figure, which is the tax; a charge
# named alone is still no tax
@pytest.mark.parametrize("label", ["Taxes and fees", "Taxes & Fees", "Taxes & gov fees", "Tax/Fees"])
def test_a_tax_and_fees_line_is_the_tax(label):
    text = f"Expedia, Inc.\nSubtotal   USD 318.00\n{label}   USD 52.47\nTotal   USD 370.47\n"
    clean(text, {"subtotal": 318.0, "tax": 52.47, "total": 370.47, "currency": "USD"})
    flagged(text.replace(label, "Service fees"), {"tax": 52.47}, "tax", "only as a charge")


# 152. A number printed as a series and a number, each after its own word ("Serie: A
# Folio: 1542", "Seria EPL nr. 0004521", "Σειρά: Α  Αριθμός: 1532"): the record's number
# is their letters and digits in that order; any other order or character is not found
@pytest.mark.parametrize(
    "line,number",
    [
        ("Serie: A          Folio: 1542          Fecha: 2024-06-10", "A1542"),
        ("Seria EPL nr. 0004521              Data emiterii: 11.06.2024", "EPL-0004521"),
        ("Σειρά: Α   Αριθμός: 1532        Ημερομηνία: 22/05/2024", "Α 1532"),
        ("Punto de Venta: 00003   Comp. Nro: 00000842", "00003-00000842"),
        ("Serie A Nro. 0012345   Fecha: 15/03/2024", "A0012345"),
    ],
)
def test_a_series_and_its_number_make_the_documents_number(line, number):
    text = f"FACTURA\n{line}\nTotal   737,80\n"
    clean(text, {"invoice_number": number})
    for wrong in (number[::-1], number + "1", number[:-1] + ("9" if number[-1] != "9" else "8")):
        flagged(text, {"invoice_number": wrong}, "invoice_number", "not found in the source")


# 153. India's cess beside its GST ("GST 5% 850.00", "Cess 1% 170.00"): a tax of its own,
# so the record's tax is their sum; a sum with a charge's figure is still flagged
def test_a_cess_is_a_part_of_the_tax():
    text = (
        "Invoice No.: ST/24-25/0142   Dated: 07-May-2024\nTaxable Value   17,000.00\nGST 5%   850.00\n"
        "Cess 1%   170.00\nTotal   INR 18,020.00\n"
    )
    assert [role for _, role in amount_roles(text)][1:3] == ["tax", "tax"]
    right = factors(text, {"subtotal": 17000.0, "tax": 1020.0, "total": 18020.0})
    assert right["subtotal"] == right["total"] == 1.0 and right["tax"] >= 0.7
    packed = text.replace("Cess 1%", "Packing")
    assert factors(packed, {"subtotal": 17000.0, "tax": 1020.0, "total": 18020.0})["tax"] < 0.7


# 154. A total said to include its tax at a rate ("Gesamtbetrag inkl. 19% MwSt.", "Total
# incl. 20% VAT"): one total label, not a second tax; the tax's own line stays the tax
@pytest.mark.parametrize("label", ["Gesamtbetrag inkl. 19% MwSt.", "Total incl. 20% VAT", "Total (incl. 20 % VAT)"])
def test_a_total_including_its_tax_at_a_rate_is_no_second_tax(label):
    text = f"Nettobetrag   950,00 €\nMwSt. 19%   180,50 €\n{label}   1.130,50 €\n"
    assert [role for _, role in amount_roles(text)] == ["subtotal", "tax", "total"]
    clean(text, {"subtotal": 950.0, "tax": 180.5, "total": 1130.5, "currency": "EUR"})
    flagged(text, {"subtotal": 950.0, "tax": 1130.5, "total": 1130.5}, "tax", "labelled tax: 180,50")


# 155. A loyalty card's saving ("Club Card -0.50", "Member card -1.50", "Kundenkarte"): a
# discount, not a payment, so where no total is labelled the subtotal before it is no total
@pytest.mark.parametrize("saving", ["Club Card", "Clubcard", "Member card", "Loyalty card", "Kundenkarte"])
def test_a_loyalty_cards_saving_is_a_discount(saving):
    text = f"Item A   5.99\nItem B   13.48\nSubtotal   19.47\n{saving}   -1.50\nBALANCE   17.97\n"
    flagged(text, {"total": 19.47}, "total", "most likely what they leave")


# 156. A receipt that says its prices include the tax forgives a subtotal given as the gross
# ("SUMME 225,00", "inkl. MwSt 19% 35,92"), but not where the source prints the net the
# gross leaves without its tax under no subtotal label (a till's "Warenanteil 189,08", an
# OCR'd "etto-Warenwert (b)"): the subtotal is that net, and the gross is the total's figure
def test_a_gross_subtotal_is_forgiven_only_where_no_net_is_printed():
    text = "Smartphone   225,00\nSUMME EUR   225,00\nGIROCARD   225,00\ninkl. MwSt 19%   35,92\n"
    gross = {"subtotal": 225.0, "tax": 35.92, "total": 225.0}
    assert min(factors(text, gross, RECEIPT).values()) >= 0.85
    printed = text + "Warenanteil   189,08\n"
    assert factors(printed, gross, RECEIPT)["subtotal"] < 0.7
    assert min(factors(printed, {**gross, "subtotal": 189.08}, RECEIPT).values()) >= 0.85


# 157. A tax per rate whose rate stands before its label on the line (Japanese tills'
# "(8%対象 ¥278 内消費税 ¥20)", "8% taxable 27.80  Tax 2.06"): each rate's tax is a part, so
# the record's tax is their sum; the same label and rate twice is the tax restated
@pytest.mark.parametrize(
    "rows,tax,twice",
    [
        (("(8%対象  ¥278  内消費税  ¥20)", "(10%対象 ¥220  内消費税  ¥21)"), 41, 40),
        (("8% taxable  27.80   Tax    2.06", "10% taxable 22.00   Tax    2.00"), 4.06, 4.12),
    ],
)
def test_a_rate_before_its_tax_label_makes_each_rates_tax_a_part(rows, tax, twice):
    text = "Corner Deli\n04/07/2024\nTotal   49.80\n" + "\n".join(rows) + "\n"
    assert factors(text, {"tax": tax}, RECEIPT)["tax"] >= 0.85
    restated = text.replace(rows[1], rows[0])
    assert factors(restated, {"tax": twice}, RECEIPT)["tax"] < 0.7


# 158. A line-item table whose header ends in role words ("Qty  Unit price  VAT  Net amount")
# over a first row with as many figures ("60 h  450.00  21 %  27,000.00"): more columns
# stand before the labels than cells before the row's figures, so the labels pair with no
# figure in order, and the first row's amount is no subtotal
def test_a_tables_header_ending_in_role_words_labels_no_first_row():
    text = (
        "INVOICE No. 2024000153\nDate: 30.09.2024\n"
        "Item                     Qty      Unit price    VAT     Net amount\n"
        "Bricklaying              60 h       450.00     21 %      27,000.00\n"
        "Building material         1 pc   12,500.00     21 %      12,500.00\n\n"
        "VAT summary:          Base         VAT         Gross\n"
        "21 %                  39,500.00    8,295.00    47,795.00\n\n"
        "Amount due:                                   47,795.00 EUR\n"
    )
    roles = dict(amount_roles(text))
    assert roles["450.00"] is None and roles["27,000.00"] is None
    right = factors(text, {"subtotal": 39500.0, "tax": 8295.0, "total": 47795.0})
    assert min(right.values()) >= 0.85


# 159. A till's taxes numbered ("TAX 1   6.500 %  1.49", "TAX 2   2.000 %  0.10", as Walmart
# prints them): the digit is the label's index, the figure after it the tax, and the
# record's tax is their sum; one rate's tax alone is still caught; a breakdown row's base
# after a digit is no tax
def test_numbered_tax_lines_are_the_taxes_parts():
    text = "WALMART\n03/15/24 18:42\nSUBTOTAL        28.02\nTAX 1   6.500 %  1.49\nTAX 2   2.000 %  0.10\nTOTAL           29.61\n"
    assert [role for _, role in amount_roles(text)] == ["subtotal", None, "tax", None, "tax", "total"]
    right = {"subtotal": 28.02, "tax": 1.59, "total": 29.61}
    assert min(factors(text, right, RECEIPT).values()) >= 0.85
    assert factors(text, {**right, "tax": 1.49}, RECEIPT)["tax"] < 0.7
    # a breakdown row after a digit (OCR's "VAT 2" for "VAT Z"): its base is no tax
    row = "VAT 2        3,315.00 €      0%        0.00 €\n"
    assert dict(amount_roles(row)).get("3,315.00") != "tax"


# 160. A hotel's tourist tax ("Tourist tax 69.38", "Kurtaxe", "Taxe de séjour"): a charge on
# the stay, not the VAT; given as the record's tax it is caught. (A plain "City tax" stays a
# tax: US tills print their city's sales tax so, beside the state's.)
@pytest.mark.parametrize("levy", ["Tourist tax", "Tourism tax"])
def test_a_tourist_tax_is_a_charge_not_the_tax(levy):
    text = f"Accommodation   555.00\n{levy}   69.38\nTotal   624.38\nVAT 9%   45.83\n"
    assert min(factors(text, {"tax": 45.83, "total": 624.38}).values()) >= 0.85
    flagged(text, {"tax": 69.38, "total": 624.38}, "tax", "only as a charge")
    us = "Subtotal   10.00\nState Tax   0.80\nCity Tax   0.98\nTotal   11.78\n"
    assert factors(us, {"subtotal": 10.0, "tax": 0.80, "total": 11.78}, RECEIPT)["tax"] < 0.7


# 161. Fortnox's and Visma's rounding word ("Öresutjämning 0,12"): a rounding, either way
def test_oresutjamning_is_a_rounding():
    text = "Netto   6 513,50\nMoms 25%   1 628,38\nÖresutjämning   0,12\nAtt betala   8 142,00\n"
    assert min(factors(text, {"subtotal": 6513.5, "tax": 1628.38, "total": 8142.0}).values()) >= 0.85


# 162. Pakistan's FBR tills' "Net Payable" is a total's label ("Gross Amount 4020.00", "POS
# Service Fee 1.00", "Net Payable 4021.00"); a charge after a total's figure leaves both
# figures labelled (a late payment's surcharge is owed only after the due date), and a
# payment's line, a change's or nothing left is no total ("CREDIT CARD 20.00", "CHANGE 0.00")
def test_net_payable_is_a_total_and_a_payment_leaves_the_total():
    text = "Gross Amount:   4020.00\nPOS Service Fee:   1.00\nNet Payable:   4021.00\n"
    assert [role for _, role in amount_roles(text)] == ["total", None, "total"]
    assert min(factors(text, {"total": 4021.0}, RECEIPT).values()) >= 0.85
    till = "TOTAL   20.00\nCREDIT CARD   20.00\nCHANGE DUE   0.00\n"
    clean(till, {"total": 20.0}, RECEIPT)
    flagged(till, {"total": 0.0}, "total")
    xero = "TOTAL GBP   600.00\nLess Amount Paid   200.00\nAMOUNT DUE GBP   400.00\n"
    assert factors(xero, {"total": 600.0}, RECEIPT)["total"] >= 0.85
    voucher = "SUMME   20,00\nGutschein   10,00\nBar   10,00\n"
    flagged(voucher, {"total": 10.0}, "total")


# 163. Chile's "I.V.A." written with its dots is the tax's label (a zero "IMPUESTO ADICIONAL
# $ 0" under it no rival)
def test_iva_written_with_dots_labels_the_tax():
    text = "MONTO NETO   $   494.160\nI.V.A. 19%   $   93.890\nIMPUESTO ADICIONAL   $   0\nTOTAL   $   588.050\n"
    assert min(factors(text, {"subtotal": 494160, "tax": 93890, "total": 588050}).values()) >= 0.85


# 164. Ways to pay as tills beyond Western Europe print them: "Cartão de Débito" (Brazil's
# NFC-e), "БЕЗНАЛИЧНЫМИ", "Картка", "現金", "M-PESA" (Kenya); another way is still caught
@pytest.mark.parametrize(
    "line,method,other",
    [
        ("Cartão de Débito   65,26", "card", "cash"),
        ("БЕЗНАЛИЧНЫМИ   =65.26", "card", "cash"),
        ("Картка   65,26", "card", "cash"),
        ("現金   65", "cash", "card"),
        ("M-PESA   65.26", "mobile", "cash"),
        # 174. a fourth reader's prints: card schemes and words (Belgium, Denmark, Norway,
        # Greece, Turkey, Israel, Korea, Saudi Arabia's "mada", Chile's "Redcompra"), cash
        # and wallets of more countries
        ("BANCONTACT   65,26", "card", "cash"),
        ("DANKORT   65,26", "card", "cash"),
        ("BankAxept   65,26", "card", "cash"),
        ("ΚΑΡΤΑ   65,26", "card", "cash"),
        ("Kredi Kartı   65,26", "card", "cash"),
        ("אשראי   65.26", "card", "cash"),
        ("신용카드   65,260", "card", "cash"),
        ("mada   65.26", "card", "cash"),
        ("Redcompra Débito   65.260", "card", "cash"),
        ("NAKIT   65,26", "cash", "card"),
        ("KÉSZPÉNZ   65", "cash", "card"),
        ("ΜΕΤΡΗΤΑ   65,26", "cash", "card"),
        ("מזומן   65.26", "cash", "card"),
        ("현금   65,260", "cash", "card"),
        ("NUMERAR   65,26", "cash", "card"),
        ("GCash   65.26", "mobile", "cash"),
        ("Yape   65.26", "mobile", "cash"),
        ("Nequi   65.260", "mobile", "cash"),
        ("微信支付   65.26", "mobile", "cash"),
    ],
)
def test_ways_to_pay_in_more_languages(line, method, other):
    text = f"15/03/2024\nTOTAL   65.26\n{line}\n"
    assert factors(text, {"payment_method": method}, RECEIPT)["payment_method"] >= 0.85
    assert factors(text, {"payment_method": other}, RECEIPT)["payment_method"] < 0.7


# 165. A Thai date written with digits in the Buddhist era ("18/03/2567" is 18 March 2024);
# a date of the common era is read as before
def test_a_buddhist_era_year_in_digits():
    assert date(2024, 3, 18) in {d for m in find_date_mentions("Date  18/03/2567") for d in m.dates}
    assert date(2024, 3, 18) in {d for m in find_date_mentions("Date  18/03/2024") for d in m.dates}


# 166. A date with its time joined by a hyphen ("15.03.24-19:42", Indonesian tills); a date
# joined to a longer number is still no date
def test_a_date_joined_to_its_time_by_a_hyphen():
    assert date(2024, 3, 15) in {d for m in find_date_mentions("15.03.24-19:42  2.0.31") for d in m.dates}
    assert not find_date_mentions("15.03.24-1942")


# 167. The rand as South Africa writes it, glued to its sum ("R79.97", "R6 450.00"): the
# record's ZAR is written; a lone "R", or one set apart ("Latte R 4.25", a size), is none
# (the sum glued to its "R" is still read as a bare number, under no label: a lesser
# reason the gate lets pass)
def test_the_rand_written_before_its_sum():
    clean("CHECKERS\nBALANCE DUE   R79.97\n", {"currency": "ZAR"}, RECEIPT)
    clean("TOTAL   R6 450.00\n", {"currency": "ZAR"}, RECEIPT)
    flagged("Size R\nTOTAL   79.97\n", {"currency": "ZAR"}, "currency", "not found")
    flagged("Latte R 4.25\nTOTAL   4.25\n", {"currency": "ZAR"}, "currency", "not found")


# 168. A bilingual UAE invoice's "Total (Excl. VAT)  المجموع غير شامل الضريبة": the goods'
# sum, not a second tax
def test_an_arabic_total_excluding_the_tax_is_the_subtotal():
    text = (
        "Total (Excl. VAT)  المجموع غير شامل الضريبة    AED 4,000.00\nVAT 5%   AED   200.00\n"
        "Total (Incl. VAT)   AED 4,200.00\n"
    )
    clean(text, {"subtotal": 4000.0, "tax": 200.0, "total": 4200.0, "currency": "AED"})


# 169. Another document's number and date read as the invoice's: a contract's ("Основание:
# Договор № 12-П от 10.01.2024"), an Indonesian order's and due date ("No. Pemesanan",
# "Tgl. Jatuh Tempo"), a Gulf LPO ("LPO No"), a hotel stay's arrival: each caught, and the
# invoice's own number and date pass
def test_a_contracts_an_orders_or_a_stays_number_or_date_is_not_the_invoices():
    russian = (
        'Счет на оплату № 128 от 15.03.2024\nПоставщик:   ООО "Северный Ветер"\n'
        "Основание:   Договор № 12-П от 10.01.2024\nВсего к оплате:      110 000,00\n"
    )
    clean(russian, {"invoice_number": "128", "invoice_date": "2024-03-15"})
    flagged(russian, {"invoice_number": "12-П"}, "invoice_number", "Договор №")
    flagged(russian, {"invoice_date": "2024-01-10"}, "invoice_date", "Договор №")
    indonesian = (
        "No. Faktur         : INV/2024/03/00211\nTanggal Faktur     : 20/03/2024\n"
        "Tgl. Jatuh Tempo   : 19/04/2024\nNo. Pemesanan      : PO-KNJ-0418\nLPO No: GHE/LPO/2024/077\n"
    )
    clean(indonesian, {"invoice_number": "INV/2024/03/00211", "invoice_date": "2024-03-20"})
    flagged(indonesian, {"invoice_number": "PO-KNJ-0418"}, "invoice_number", "No. Pemesanan")
    flagged(indonesian, {"invoice_number": "GHE/LPO/2024/077"}, "invoice_number", "LPO No")
    flagged(indonesian, {"invoice_date": "2024-04-19"}, "invoice_date", "Tgl. Jatuh Tempo")
    hotel = "Invoice no.   2024-11872\nDate          18-03-2024\nArrival       15-03-2024\nDeparture     18-03-2024\n"
    flagged(hotel, {"invoice_date": "2024-03-15"}, "invoice_date", "Arrival")
    # a folio dated at check-out prints no other date: the departure passes
    clean("Folio 4471\nArrival       15-03-2024\nDeparture     18-03-2024\n", {"invoice_date": "2024-03-18"})


# 170. A line's discount rate written without its sign under a header that carries it ("10"
# under "Line Discount %", as ERP prints give it): its quantity times its price less that
# rate is its amount; under a header without the sign, or off by more, still flagged
def test_a_discount_rate_under_a_percent_column_makes_the_lines_amount():
    text = (
        "Description             Quantity   Unit Price   Line Discount %      Amount\n"
        "Table runner 180cm          15       149.00            10          2,011.50\n"
        "Napkins                     20         4.00             5             76.00\n"
    )
    runner = {"description": "Table runner 180cm", "quantity": 15, "unit_price": 149.0, "amount": 2011.5}
    napkins = {"description": "Napkins", "quantity": 20, "unit_price": 4.0, "amount": 76.0}
    assert min(factors(text, {"line_items": [runner, napkins]}).values()) >= 0.85
    flagged(text.replace("Line Discount %", "Line Discount  "), {"line_items": [runner]}, "line_items[0].amount")
    flagged(text, {"line_items": [runner, {**napkins, "amount": 72.0}]}, "line_items[1].amount")


# 171. A payment reference printed beside the invoice's number (Norway's "KID", Finland's
# "Viitenumero") and an order number beside a "Document No." (Sage): neither is the
# invoice's number, which passes
def test_a_payment_reference_or_an_order_number_is_not_the_invoices_number():
    norwegian = "Fakturanr.         10234\nFakturadato        12.03.2024\nKID                0102340108857\nÅ betale NOK   22 968,75\n"
    clean(norwegian, {"invoice_number": "10234", "invoice_date": "2024-03-12"})
    flagged(norwegian, {"invoice_number": "0102340108857"}, "invoice_number", "KID")
    finnish = "Laskun numero        1054\nPäiväys              14.03.2024\nViitenumero          10543\n"
    flagged(finnish, {"invoice_number": "10543"}, "invoice_number", "Viitenumero")
    sage = "Document No.   INV10231\nDate   15/03/2024\nOrder No.      PO 8812\nGrand Total    7 417.50\n"
    clean(sage, {"invoice_number": "INV10231"})
    flagged(sage, {"invoice_number": "PO 8812"}, "invoice_number", "Order No")


# 172. A second reader's cases for this pass: a header's next column is no net's qualifier
# ("Net   20% VAT   Total" over a row: the tax's column stays the tax's); the same tax
# written once with its rate and once without is restated, not two parts; Portugal's
# "NUMERÁRIO" is cash, a loyalty card's name no card payment; "Series" and "Serial" are
# whole words, a series' word read only as a word
def test_the_second_readers_cases_of_this_pass():
    header = "Net        20% VAT        Total\n8.92       1.78           10.70\n"
    flagged(header, {"subtotal": 8.92, "tax": 8.92, "total": 10.70}, "tax", "labelled tax: 1.78")
    restated = "Summe   5,95\n19% MwSt   0,95\nKartenzahlung\nMwSt   0,95\n"
    assert factors(restated, {"tax": 1.90}, RECEIPT)["tax"] < 0.7
    continente = "TOTAL   2,09\nCartão Continente: 1234****5678\nNUMERARIO   5,00\nTROCO   2,91\n"
    assert factors(continente, {"payment_method": "cash"}, RECEIPT)["payment_method"] >= 0.85
    assert factors(continente, {"payment_method": "card"}, RECEIPT)["payment_method"] < 0.7
    series = "Series: A   No: 1542\nSerial No: 5CD1234XYZ\n"
    clean(series, {"invoice_number": "A1542"})
    flagged(series, {"invoice_number": "S1542"}, "invoice_number", "not found")
    flagged(series, {"invoice_number": "L5CD1234XYZ"}, "invoice_number", "not found")


# 173. A third reader's cases: a joining word is a whole word ("TOTAL ITEM DISCOUNT -9.00":
# "ITEM" joins nothing, the discount is no total); a money-off voucher is a discount, so the
# subtotal before it is no total where none is labelled; a tax per rate and its printed sum
# ("VAT 0%", "VAT 20%", "TOTAL VAT") make no tax of all three; and a discount's figure
# with the taxes after it ("Taxable Amount 900.00", "CGST", "SGST", "Bill Amount") is no
# total
def test_the_third_readers_cases_of_this_pass():
    till = "SUBTOTAL   60.00\nTOTAL ITEM DISCOUNT   -9.00\nSALES TAX 6%   3.06\nTOTAL   54.06\nVISA   54.06\n"
    flagged(till, {"total": 9.0}, "total")
    boots = "SHAMPOO   7.99\nTOOTHPASTE   2.49\nMEAL DEAL   8.99\nSUBTOTAL   19.47\n£5 OFF VOUCHER   -5.00\nBALANCE   14.47\n"
    flagged(boots, {"total": 19.47}, "total", "most likely what they leave")
    vat = "MILK   1.20\nWINE   6.00\nTOTAL   7.20\nVAT 0%   0.00\nVAT 20%   1.00\nTOTAL VAT   1.00\n"
    assert factors(vat, {"tax": 1.0, "total": 7.2}, RECEIPT)["tax"] >= 0.85
    assert factors(vat, {"tax": 2.0, "total": 7.2}, RECEIPT)["tax"] < 0.7
    gst = (
        "Gross Amount   1,000.00\nDiscount   -100.00\nTaxable Amount   900.00\nCGST 9%   81.00\nSGST 9%   81.00\n"
        "Bill Amount   1,062.00\n"
    )
    flagged(gst, {"total": 900.0}, "total")


# 175. A restaurant's tip guide suggests totals, a row a rate ("Suggested Tip: / 20%
# ($8.10)   Total $52.43"): no rivals of the bill's total; a suggestion given as the total
# is still caught, and a rate's row with no tip's word near it is read as before
def test_a_tip_guides_suggested_totals_are_no_rivals():
    bill = "Subtotal $40.95\nTax $3.38\nTotal $44.33\n\n"
    guide = "Suggested Tip:\n18% ($7.37)   Total $51.70\n20% ($8.10)   Total $52.43\n22% ($8.91)   Total $53.24\n"
    record = {"subtotal": 40.95, "tax": 3.38, "total": 44.33}
    clean(bill + guide, record, RECEIPT)
    assert factors(bill + guide, {**record, "total": 52.43}, RECEIPT)["total"] < 0.7
    bare = bill + "20% ($8.10)   Total $52.43\n"
    assert factors(bare, record, RECEIPT)["total"] < 0.7
    # a row that starts with its words, the tip's rate before the total ("Add 18% tip
    # ($7.37): total with tip $51.70", "Tip 20%: $8.10 Total: $52.43")
    worded = (
        bill
        + "Tip suggestions\nAdd 18% tip ($7.37): total with tip $51.70\nAdd 20% tip ($8.10): total with tip $52.43\n"
    )
    clean(worded, record, RECEIPT)
    assert factors(worded, {**record, "total": 52.43}, RECEIPT)["total"] < 0.7
    assert factors(bill + "Tip 20%: $8.10 Total: $52.43\n", {**record, "total": 52.43}, RECEIPT)["total"] < 0.7


# 176. The total after the tip, labelled as such ("Total with tip", "TOTAL CON PROPINA"),
# is the grand total: the total paid passes, the total before the tip given for it is caught
@pytest.mark.parametrize(
    "text,paid,before_tip",
    [
        ("Total $56.00\nTip $5.60\nTotal with tip $61.60\n", 61.6, 56.0),
        ("TOTAL $ 56.000\nPROPINA 10% $ 5.600\nTOTAL CON PROPINA $ 61.600\n", 61600, 56000),
    ],
)
def test_the_total_with_its_tip_is_the_grand_total(text, paid, before_tip):
    clean(text, {"total": paid, "tip": round(paid - before_tip, 2)}, RECEIPT)
    assert factors(text, {"total": before_tip}, RECEIPT)["total"] < 0.7


# 177. Where no figure has cents (forints, won, yen), a whole number under a tax's label
# is money: the taxes per rate add up to the record's tax
def test_tax_parts_of_a_document_without_cents():
    text = "ÖSSZESEN: 1 755 Ft\nB 18% ÁFA 145\nC 27% ÁFA 172\n"
    assert min(factors(text, {"total": 1755, "tax": 317, "currency": "HUF"}, RECEIPT).values()) >= 0.85
    assert factors(text, {"total": 1755, "tax": 371, "currency": "HUF"}, RECEIPT)["tax"] < 0.7
    # a count under a tax's words, with no rate, is no part ("ÁFA tételek száma 2")
    counted = text + "ÁFA tételek száma 2\n"
    assert factors(counted, {"total": 1755, "tax": 319, "currency": "HUF"}, RECEIPT)["tax"] < 0.7


# 178. A currency's capital glued to a sum with cents, as a print without the sign writes
# the naira ("N1,162.50") and the peso of the Philippines ("P1,250.00"): amounts and their
# currency; another currency is caught, and a longer word's capital is no sign
def test_a_currencys_capital_glued_to_its_sum():
    naira = "Sub-Total   N15,500.00\nVAT (7.5%)  N1,162.50\nConsumption Tax (5%)  N775.00\nTotal   N17,437.50\n"
    record = {"subtotal": 15500, "tax": 1937.5, "total": 17437.5, "currency": "NGN"}
    assert min(factors(naira, record, RECEIPT).values()) >= 0.85
    assert factors(naira, {**record, "currency": "USD"}, RECEIPT)["currency"] < 0.7
    peso = "TOTAL   P1,250.00\nVAT 12%   P133.93\n"
    assert min(factors(peso, {"total": 1250, "tax": 133.93, "currency": "PHP"}, RECEIPT).values()) >= 0.85
    assert [a.value for a in find_amounts("VAT N1,162.50")] == [Decimal("1162.50")]
    assert find_amounts("REF FN1,162.50") == [] and find_amounts("N1162") == []  # a code's letters, no cents


# 179. A Canadian till's date, its month's name and a two-digit year after a slash ("Mar
# 09/26"); a year without its slash or apostrophe stays no date
def test_a_month_name_with_a_slashed_two_digit_year():
    assert date(2026, 3, 9) in {d for m in find_date_mentions("Mar 09/26  5:31 PM") for d in m.dates}
    assert not find_date_mentions("Feb 28, 26")
    assert not find_date_mentions("May 15/16 2026")  # a range of days, not 2016


# 180. A way to pay written in Latin letters glued to Chinese or Japanese words, as their
# tills print it ("PayPay支払"); a Latin word inside a longer Latin one is still none, and
# a Chinese or Korean word inside a longer one of its script ("非现金支付", non-cash;
# "현금영수증 미발행", no cash receipt) says nothing of cash
def test_ways_to_pay_written_together_with_their_words():
    assert factors("合計 ¥591\nPayPay支払 ¥591\n", {"payment_method": "mobile"}, RECEIPT)["payment_method"] >= 0.85
    assert factors("TOTAL 10.00\nCASHBACKOFFER 10.00\n", {"payment_method": "cash"}, RECEIPT)["payment_method"] < 0.85
    assert factors("合计 ¥55.00\n非现金支付 ¥55.00\n", {"payment_method": "cash"}, RECEIPT)["payment_method"] < 0.85
    korean = "합계 5,000\n신용카드 5,000\n현금영수증 미발행\n"
    assert factors(korean, {"payment_method": "cash"}, RECEIPT)["payment_method"] < 0.7


# 181. A restaurant's lines priced with the tax add up to its labelled total before the
# tip the record's total adds ("SUBTOTAL 51.852 / IMPOCONSUMO 8% 4.148 / TOTAL 56.000 /
# PROPINA 5.600 / TOTAL CON PROPINA 61.600"): the net subtotal is no wrong lines' sum
def test_lines_priced_with_the_tax_add_up_to_a_labelled_total_before_the_tip():
    text = (
        "1  BANDEJA PAISA           $ 38.000\n2  LIMONADA DE COCO  @ $9.000   $ 18.000\n\n"
        "SUBTOTAL                    $ 51.852\nIMPOCONSUMO 8%              $  4.148\n"
        "TOTAL                       $ 56.000\nPROPINA SUGERIDA 10%        $  5.600\n"
        "TOTAL CON PROPINA           $ 61.600\n"
    )
    items = [{"description": "BANDEJA PAISA", "amount": 38000}, {"description": "LIMONADA DE COCO", "amount": 18000}]
    record = {"items": items, "subtotal": 51852, "tax": 4148, "tip": 5600, "total": 61600}
    assert min(factors(text, record, RECEIPT).values()) >= 0.85
    assert factors(text, {**record, "items": items[:1]}, RECEIPT)["subtotal"] <= 0.7  # below the gate's 0.70


# 182. A shared symbol is the currency its own line names ("Amount Due (CAD): $1,497.25"):
# USD given for it is caught; the code named on another line ("CAD drawings") or the
# record's own code named anywhere leaves "$" a lesser support, as before
def test_a_shared_symbol_is_the_currency_its_line_names():
    text = "Invoice Number: 447\nInvoice Date: March 9, 2026\nAmount Due (CAD): $1,497.25\n"
    flagged(text, {"total": 1497.25, "currency": "USD"}, "currency", "names CAD")
    assert factors(text, {"total": 1497.25, "currency": "CAD"})["currency"] == 1.0
    drawings = "CAD drawings for the west wing\nTotal $1,497.25\n"
    assert factors(drawings, {"total": 1497.25, "currency": "USD"})["currency"] == F.AMBIGUOUS_CURRENCY_FACTOR
    # a code with a figure of its own on the line, or a remark's, is another amount's
    for line in ("Total due $1,000.00 (approx. CAD 1,350.00)", "USD cash accepted at par: $1,000.00"):
        record = {"total": 1000.0, "currency": "CAD" if line.startswith("USD") else "USD"}
        assert factors(f"{line}\n", record)["currency"] == F.AMBIGUOUS_CURRENCY_FACTOR, line


# 183. A hotel folio's "Folio No." labels its invoice number, and a combined "P.O./S.O.
# Number" labels an order's: a room, confirmation or order number given for the invoice
# number is caught, the folio's and the invoice's own pass
def test_a_folio_number_and_a_po_so_number_are_read_by_their_labels():
    folio = (
        "HARBORVIEW GRAND HOTEL\nGuest: Ms. Elena Ruiz     Room: 1412\nArrival: 03/06/26     Departure: 03/09/26\n"
        "Folio No.: 884213     Confirmation: HGH77120\nDate: 03/09/26\nTotal  $219.00\n"
    )
    assert factors(folio, {"invoice_number": "884213", "total": 219.0})["invoice_number"] == 1.0
    flagged(folio, {"invoice_number": "HGH77120", "total": 219.0}, "invoice_number", "names '884213'")
    flagged(folio, {"invoice_number": "1412", "total": 219.0}, "invoice_number")
    order = "Invoice Number: 447\nP.O./S.O. Number: 88120\nInvoice Date: March 9, 2026\nTotal: $1,497.25 CAD\n"
    assert factors(order, {"invoice_number": "447", "total": 1497.25})["invoice_number"] == 1.0
    flagged(order, {"invoice_number": "88120", "total": 1497.25}, "invoice_number", "P.O./S.O. Number")


# 184. A fifth reader's invoices (utilities, SaaS, law firms, clinics, marketplaces): an
# invoice number's and a date's labels of more trades and languages ("Bill No.", "Nº
# factura", "RAČUN br.", "No. Invois", "Notanummer", "Número da Nota", "Credit Note No";
# "Bill date", "Statement Date", "Notadatum"; a delivery's "Dátum dodania", "Datum
# isporuke"): a meter's, a contract's or a customer's number, a reading's or a delivery's
# date given for the invoice's is caught, the invoice's own passes
@pytest.mark.parametrize(
    "field,text,own,other",
    [
        ("invoice_number",
         "Bill No. 2504-118327\nMeter    Prev Read   Pres Read\n71188402   52,118   53,406\nTotal Amount Due $204.51\n",
         "2504-118327", "71188402"),
        ("invoice_number", "Nº factura: FE25-0318447\nNº de contrato: 10447220\nTOTAL IMPORTE FACTURA 66,78 €\n",
         "FE25-0318447", "10447220"),
        ("invoice_number", "RAČUN br. 27-1-1\nOIB: 44712209183\nUkupno za platiti 2.987,50 EUR\n", "27-1-1",
         "44712209183"),
        ("invoice_number", "SST No: W10-1904-32000447\nNo. Invois: KSP-INV-0318\nJumlah Besar RM 2,280.96\n",
         "KSP-INV-0318", "W10-1904-32000447"),
        ("invoice_number", "NOTA   Notanummer: 2025-0418\nPolisnummer: 441902773\nTotaal € 189,00\n", "2025-0418",
         "441902773"),
        ("invoice_number",
         "Credit Note No: CN-00218   Date: 11/03/2025\nAgainst Invoice: INV-10447 dated 27/02/2025\nTotal credit 171.00\n",
         "CN-00218", "INV-10447"),
        ("invoice_date", "Bill date: 14 March 2025\nCurrent reading   11 Mar 2025   38,917 (E)\nTotal £146.73\n",
         "2025-03-14", "2025-03-11"),
        ("invoice_date", "Notadatum: 28-03-2025\nPatiënt: M. de Graaf, geb. 12-05-1979\nTotaal € 189,00\n",
         "2025-03-28", "1979-05-12"),
        ("invoice_date", "Dátum vyhotovenia: 18.03.2025     Dátum dodania: 15.03.2025\nSpolu na úhradu 2 635,28 €\n",
         "2025-03-18", "2025-03-15"),
    ],
)  # fmt: skip
def test_numbers_and_dates_of_more_trades_and_languages(field, text, own, other):
    assert factors(text, {field: own})[field] == 1.0
    assert factors(text, {field: other})[field] < 0.7


# 185. Labels of a total and of a goods' sum in more trades: "Total invoice amount" is the
# grand total ("total" before "invoice" had read as a tax id's or a count's word);
# "Item total" and Malay "Jumlah Kecil" are the goods' sum before charges and taxes (not a
# rival total); "Jumlah Besar" and a clinic's "Patient balance" are totals
@pytest.mark.parametrize(
    "text,total",
    [
        ("Import duty 3.5% on 8,420.00   294.70\nFreight 395.90\nTotal invoice amount 690.60\n", 690.6),
        ("Item total 110.00\nShipping 14.00\nGST 5.50\nOrder total 129.50\n", 129.5),
        ("Item total 110.00\nGST 5.50\nQST 10.97\nOrder total 126.47\n", 126.47),
        ("Jumlah Kecil 1,920.00\nCaj Perkhidmatan 10% 192.00\nSST 8% 168.96\nJumlah Besar 2,280.96\n", 2280.96),
    ],
)
def test_totals_and_goods_sums_of_more_trades(text, total):
    assert min(factors(text, {"total": total}).values()) >= 0.85
    first = float(text.split("\n")[0].split()[-1].replace(",", ""))
    assert factors(text, {"total": first})["total"] < 0.7


def test_a_patient_balance_is_the_amount_due():
    # what insurance payments and adjustments leave is what a clinic's statement bills
    # the patient; the charges before them are its grand total: either passes
    text = "Total charges 5,347.00\nInsurance payments -2,870.30\nAdjustments -2,164.24\nPatient balance 312.46\n"
    assert min(factors(text, {"total": 312.46}).values()) >= 0.85
    assert factors(text, {"total": 2870.3})["total"] < 0.7


# 186. Payments and withholdings of more trades leave the total or say what is due: a
# Stripe invoice's "Applied balance", a law firm's "Less: sums received on account" and
# "Retainer applied", Greece's "Παρακράτηση φόρου" (withholding). The total is the sum
# before a payment (the invoice schema's convention since session 56), after a withholding.
@pytest.mark.parametrize(
    "text,total",
    [
        ("Subtotal €1,144.36\nTotal €1,144.36\nApplied balance -€44.36\nAmount due €1,100.00\n", 1144.36),
        ("Fees £1,890.00\nTotal £1,890.00\nLess: sums received on account £1,000.00\nBalance due £890.00\n", 1890.0),
        (
            "Fees $2,810.00\nTotal Current Invoice $2,921.15\nRetainer applied ($1,000.00)\nBalance Due $1,921.15\n",
            2921.15,
        ),
        (
            "Καθαρή αξία 970,00 €\nΦΠΑ 24% 232,80 €\nΣύνολο 1.202,80 €\nΠαρακράτηση φόρου 20% -194,00 €\n"
            "Πληρωτέο ποσό 1.008,80 €\n",
            1008.8,
        ),
    ],
)
def test_payments_and_withholdings_of_more_trades(text, total):
    assert min(factors(text, {"total": total}).values()) >= 0.85


# 187. A Malaysian company's "Sdn. Bhd." is no Bahraini dinar; the dong and the Egyptian
# pound by their names ("đồng", "جنيه مصري")
def test_currency_names_and_a_company_suffix():
    assert factors("ACME SDN. BHD.\nTotal RM 120.50\n", {"total": 120.5, "currency": "MYR"})["currency"] == 1.0
    assert factors("Gulf Trading W.L.L.\nTotal BHD 120.500\n", {"total": 120.5, "currency": "BHD"})["currency"] == 1.0
    assert factors("Tổng cộng 25.812.000 đồng\n", {"currency": "VND"})["currency"] == 1.0
    assert factors("الإجمالي 1,250.00 جنيه مصري\n", {"currency": "EGP"})["currency"] == 1.0


# 188. A receipt's number by its labels: the numbers a till or a card terminal prints that
# name no document (a table, a pump, a store, a cashier, a register, an approval code, a
# fiscal report's or a random code) and a tax id's, given as the receipt's number, are
# caught; so is a postal code after a US state without its comma and a group of a
# telephone number's digits in its own shape. The receipt's, the transaction's, the
# check's or the bill's own number passes, under its label or under none.
@pytest.mark.parametrize(
    "text,own,other",
    [
        ("Salt & Cedar\nCheck #208      Table 31\n03/09/2026\nTotal $96.42\n", "208", "31"),
        ("Nile Grill\nCheck: 4471    Table: 12    Cover: 3\nService 12%  81.00\nTotal EGP 861.84\n", "4471", "12"),
        ("Fuel Mart\n03/09/26   17:31   INV# 0048123\nPUMP# 06\nTOTAL $45.40\n", "0048123", "06"),
        ("Fuel Mart\n03/09/26   INV# 0048123\nTOTAL $45.40\nAPPROVAL # 512208\n", "0048123", "512208"),
        ("Drug\nStore 118   (813) 555-0110\n3/9/2026  Reg 2   Trans 4471\nTOTAL $30.84\n", "4471", "118"),
        ("Al Waha Cafe\nTRN 100234567800003\nInvoice No.: INV-26-004471\nTotal 48.00 SAR\n", "INV-26-004471",
         "100234567800003"),
        ("FairPrice\nReceipt No: 0315-7781   Cashier: 1042\nTOTAL 12.40\n", "0315-7781", "1042"),
        ("TAMBO SAC\nRUC 20601234567\nBOLETA DE VENTA ELECTRÓNICA\nB001-00012345\nIMPORTE TOTAL S/ 14.00\n",
         "B001-00012345", "20601234567"),
        ("Al Waha Cafe\nVAT No. 300123456700003\nInvoice No.: INV-26-004471\nTotal 48.00 SAR\n", "INV-26-004471",
         "300123456700003"),
        ("ÇINAR BÜFE\nFİŞ NO: 0087\nZ NO: 0412\nTOPLAM *96,00\n", "0087", "0412"),
        ("K-MARKET KALLIO\nKuitti 0091 / Kassa 2\nYHTEENSÄ 14,30\nKORTTI 14,30\n", "0091", "2"),
        ("Tony's Pizza\n2217 W Roscoe St, Chicago IL 60618\nOrder 7QK2M9XZ1D4TA\nTotal $38.21\n", "7QK2M9XZ1D4TA",
         "60618"),
        ("Coffee\n(503) 555-0142\nMar 9 2026\nReceipt #2-3814\nTotal $17.04\n", "2-3814", "555-0142"),
        ("[GS25] 역삼센터점\n사업자번호: 123-45-67890\n[판매] 2026-03-09 17:31:08   POS:01-4471\n합계 5,200\n", "01-4471",
         "123-45-67890"),
    ],
)  # fmt: skip
def test_a_receipts_number_is_read_by_its_labels(text, own, other):
    assert factors(text, {"receipt_number": own, "total": 1.0}, RECEIPT)["receipt_number"] == 1.0
    assert factors(text, {"receipt_number": other, "total": 1.0}, RECEIPT)["receipt_number"] < 0.7


# 189. A receipt's date by its labels: a date to return or exchange by, or a coupon's expiry,
# given as the date of the purchase, is caught; the purchase's date passes
@pytest.mark.parametrize(
    "text,other",
    [
        ("Bayside Drug\n3/9/2026 5:31p\nTOTAL $30.84\nReturns accepted until 04/08/2026 with receipt\n", "2026-04-08"),
        ("Bayside Drug\n3/9/2026 5:31p\nTOTAL $30.84\nCoupon expires 03/31/26\n", "2026-03-31"),
        ("MÜLLER\n09.03.2026 17:31\nSUMME EUR 12,40\nUmtausch bis 08.04.2026 nur mit Bon\n", "2026-04-08"),
    ],
)
def test_a_receipts_date_is_not_a_return_or_expiry_date(text, other):
    assert factors(text, {"date": "2026-03-09", "total": 1.0}, RECEIPT)["date"] == 1.0
    assert factors(text, {"date": other, "total": 1.0}, RECEIPT)["date"] < 0.7


def test_a_card_slips_number_says_nothing_of_the_tills():
    # a till receipt with its card slip prints two fair readings of its number: the card
    # terminal's "Beleg-Nr." and the till's, here under an OCR'd table header no set knows
    text = (
        "toom Baumarkt\nKartenzahlung\nBeleg-Nr.\n7617\nTrace-Nr\n004877\nBetrag EUR 40,98\n"
        "Zeit BonNr BedNr KasNr FilNr\n04.04.2020 13:45 1411\n4848 3\n"
    )
    for number in ("7617", "1411"):
        assert factors(text, {"receipt_number": number, "total": 40.98}, RECEIPT)["receipt_number"] == 1.0


# 190. A Turkish street's "CAD." (Caddesi) before its number is no Canadian dollar: the
# Canadian dollar given for a receipt in lira is caught
def test_a_turkish_streets_cad_is_no_canadian_dollar():
    text = "ŞOK MARKET\nMODA CAD. NO:45 KADIKÖY\n09.03.2026\nTOPLAM *279,30 TL\n"
    assert factors(text, {"total": 279.3, "currency": "TRY"}, RECEIPT)["currency"] == 1.0
    assert factors(text, {"total": 279.3, "currency": "CAD"}, RECEIPT)["currency"] < 0.7
    assert factors("Total CAD 12.00\n", {"total": 12.0, "currency": "CAD"}, RECEIPT)["currency"] == 1.0


def test_a_tills_word_over_a_number_names_nothing_of_it():
    # "Store" ends an address's line over the receipt's number: a till's words name the
    # number after them on their line only
    text = "CORNER CAFE\n12 Mill Store\n        4471  08:15\nTotal 11.76\n"
    assert factors(text, {"receipt_number": "4471", "total": 11.76}, RECEIPT)["receipt_number"] == 1.0


# 191. A sixth reader's purchase orders and shipping notices: an address block beside
# another (pdftotext keeps the columns, "Vendor" left and "Ship To" right, or a letterhead
# beside a date) is read down its own column, whatever the other column holds; a table's
# next row with its prices is not
@pytest.mark.parametrize(
    "text,field,value",
    [
        ("PURCHASE ORDER  PO-1001\nVendor:                             Ship To:\n"
         "Acme Supply Co                      Contoso Warehouse\n12 Elm St                           200 Dock Rd\n"
         "Springfield, IL 62701               Springfield, IL 62702\n",
         "ship_to", "Contoso Warehouse, 200 Dock Rd, Springfield, IL 62702"),
        ("PURCHASE ORDER  PO-1001\nShip To:                            Bill To:\n"
         "Contoso Warehouse                   Contoso Ltd\n200 Dock Rd                         PO Box 9\n"
         "Springfield, IL 62702               Springfield, IL 62701\n",
         "ship_to", "Contoso Warehouse, 200 Dock Rd, Springfield, IL 62702"),
        ("STATE OF OREGON                                   PURCHASE ORDER\n"
         "DEPARTMENT OF TRANSPORTATION                      PO NUMBER: 73000-0005512\n",
         "buyer_name", "STATE OF OREGON DEPARTMENT OF TRANSPORTATION"),
    ],
)  # fmt: skip
def test_an_address_beside_another_column_is_read_down_its_own(text, field, value):
    assert factors(text, {field: value}, ORDER)[field] == 1.0


def test_a_table_rows_description_is_not_continued_by_the_next_rows():
    text = "Item                      Qty   Price    Amount\nWidget blue               2     5.00     10.00\nGadget red                1     7.50      7.50\n"
    assert (
        factors(text, {"line_items": [{"description": "Widget blue Gadget red"}]}, ORDER)["line_items[0].description"]
        < 0.7
    )


# 192. A form's answer says a boolean: "Dangerous goods: No", "Gefahrgut: Nein", "Hazardous
# material: No", "No hazardous materials", "Not dangerous goods", "kein Gefahrgut" say
# false (the true words in them had said true, and a flipped record passed)
@pytest.mark.parametrize(
    "line",
    ["Dangerous goods: No", "Gefahrgut: Nein", "Hazardous Material: No", "Hazmat: N", "No hazardous materials",
     "Not Dangerous Goods", "Die Ware ist kein Gefahrgut.", "Marchandises non dangereuses", "Non-DG cargo"],
)  # fmt: skip
def test_a_true_word_answered_no_says_false(line):
    text = f"DELIVERY NOTE DN-1\n{line}\n"
    assert factors(text, {"hazardous": False}, NOTICE)["hazardous"] == 1.0
    assert factors(text, {"hazardous": True}, NOTICE)["hazardous"] < 0.7
    assert (
        factors("DELIVERY NOTE DN-1\nDangerous goods: UN1263 Paint, 3, PG III\n", {"hazardous": True}, NOTICE)[
            "hazardous"
        ]
        == 1.0
    )


# 193. An order's and a notice's numbers by their labels: a quote's, a requisition's, a
# contract's or a supplier's number given as the PO number, a PRO, a bill of lading's, a
# container's number or the order's given as the notice's or the tracking number, and a
# fax number given as the supplier's phone, are caught; each one's own passes, and a PRO
# or a lorry receipt's number is the tracking number where none is labelled
@pytest.mark.parametrize(
    "schema,text,field,own,other",
    [
        ("po", "Purchase Order\nPO #: 8023417                 Order Date: 03/02/26\n"
               "Requisition #: 1204471        Quote No.: Q-88120\n", "po_number", "8023417", "1204471"),
        ("po", "Purchase Order\nPO #: 8023417                 Order Date: 03/02/26\nQuote No.: Q-88120\n",
         "po_number", "8023417", "Q-88120"),
        ("po", "Purchase Order\nPO #: 8023417\nSupplier #: 118204\n", "po_number", "8023417", "118204"),
        ("po", "Hydraulik Weber KG\nTel. 0421 556677-0   Fax 0421 556677-99\n", "supplier_phone", "0421 556677-0",
         "0421 556677-99"),
        ("sn", "ADVANCE SHIP NOTICE\nASN Number: 0008841205\nPO Number: 5500194412\n"
               "Carrier: R+L Carriers   PRO #: I448812093   BOL #: LPM-BOL-260316-02\n"
               "Tracking number: 1Z999AA10123456784\n", "notice_number", "0008841205", "I448812093"),
        ("sn", "ADVANCE SHIP NOTICE\nASN Number: 0008841205\nPO Number: 5500194412\n", "notice_number",
         "0008841205", "5500194412"),
        ("sn", "ADVANCE SHIP NOTICE\nASN Number: 0008841205\nBOL #: LPM-BOL-260316-02\n"
               "Container No.: MSCU 7712045\nTracking number: 1Z999AA10123456784\n", "tracking_number",
         "1Z999AA10123456784", "MSCU 7712045"),
        ("sn", "DELIVERY CHALLAN\nChallan No.: DC-2026-118\nTransporter: VRL Logistics   LR No.: 0412257781   "
               "Vehicle No.: TN 39 BX 4471\n", "tracking_number", "0412257781", "TN 39 BX 4471"),
    ],
)  # fmt: skip
def test_an_orders_and_a_notices_numbers_are_read_by_their_labels(schema, text, field, own, other):
    schema = ORDER if schema == "po" else NOTICE
    assert factors(text, {field: own}, schema)[field] == 1.0
    assert factors(text, {field: other}, schema)[field] < 0.7


# 194. An order's date under its document's issue label ("Datum vystavení", "発行日"), or
# under a number's header ("Bestellnummer / Datum" over "4500123456 / 03.02.2026": a
# number's label names no date), is the order's date
@pytest.mark.parametrize(
    "text",
    [
        "OBJEDNÁVKA č. OBJ-2026-0318\nDatum vystavení: 12.03.2026\nTermín dodání: 26.03.2026\n",
        "注文書\n発行日 2026年3月12日\n注文番号 HS-25-7781\n",
        "BESTELLUNG\nBestellnummer / Datum\n4500123456 / 12.03.2026\n",
    ],
)
def test_an_orders_date_under_its_issue_label_or_a_numbers_header(text):
    assert factors(text, {"order_date": "2026-03-12"}, ORDER)["order_date"] == 1.0


# 195. A domestic VAT id printed without its country's prefix ("NIP: 551-23-44-987", "CIF:
# B98765432") grounds the prefixed one the schema asks for; the rand set apart from a sum
# in thousands ("R 19,538.50") is read
def test_a_vat_id_without_its_prefix_and_a_rand_set_apart():
    text = "Dostawca: Hurtownia Sp. z o.o.\nNIP: 551-23-44-987\n"
    assert factors(text, {"supplier_vat_id": "PL5512344987"}, ORDER)["supplier_vat_id"] == 1.0
    assert factors("Proveedor\nCIF: B98765432\n", {"supplier_vat_id": "ESB98765432"}, ORDER)["supplier_vat_id"] == 1.0
    assert factors("TOTAL   R 19,538.50\n", {"total": 19538.5, "currency": "ZAR"}, ORDER)["currency"] == 1.0
    assert factors("Latte R 4.25\nTOTAL 4.25\n", {"total": 4.25, "currency": "ZAR"}, ORDER)["currency"] < 0.7


# 196. A label ending in a sign has its value glued after it ("Order #100009733", "PO#4471"):
# the order's number given as a shipment's is caught, the shipment's own passes
def test_a_value_glued_after_its_labels_sign():
    text = "Your Outdoor Gear Depot order has shipped\nYour Shipment #100004512 for Order #100009733\n"
    assert factors(text, {"notice_number": "100004512"}, NOTICE)["notice_number"] == 1.0
    assert factors(text, {"notice_number": "100009733"}, NOTICE)["notice_number"] < 0.7


# 197. An order's dates by their labels: a quote's date (after its number and a dating
# word, or under a label no set knows that ends in "date") given as the order's date, and
# the document's own date under a bare "Date:" given as the delivery date while the
# delivery date's label names another, are caught; each own date passes
@pytest.mark.parametrize(
    "line",
    [
        "Ihr Angebot AN-2026-0117 vom 27.01.2026",
        "Vs. offerta OFF-26-0318 del 27/01/2026",
        "Your quotation Q-88120 dated 01/27/2026",
        "Quote date: 27.01.2026",
        "Revision Date: 27-JAN-2026",
    ],
)
def test_an_orders_date_is_not_its_quotes(line):
    text = f"PURCHASE ORDER No. 4500123456\nPO Date: 03.02.2026\n{line}\n"
    assert factors(text, {"order_date": "2026-02-03"}, ORDER)["order_date"] == 1.0
    assert factors(text, {"order_date": "2026-01-27"}, ORDER)["order_date"] < 0.7


@pytest.mark.parametrize("date_word", ["Date:", "Fecha:", "Datum:", "DATE"])
def test_a_bare_date_word_names_the_documents_date_not_its_delivery(date_word):
    text = f"PURCHASE ORDER   PO-00128\n{date_word} 06/03/2026\nExpected Delivery Date: 16/03/2026\n"
    assert factors(text, {"order_date": "2026-03-06", "delivery_date": "2026-03-16"}, ORDER)["delivery_date"] == 1.0
    assert factors(text, {"order_date": "2026-03-06"}, ORDER)["order_date"] == 1.0
    assert factors(text, {"delivery_date": "2026-03-06"}, ORDER)["delivery_date"] < 0.7
    notice = "DESPATCH ADVICE          Despatch No: DA-118204\nDate: 20/03/2026\nEstimated Delivery: 24/03/2026\n"
    assert factors(notice, {"ship_date": "2026-03-20"}, NOTICE)["ship_date"] == 1.0
    assert factors(notice, {"expected_delivery_date": "2026-03-20"}, NOTICE)["expected_delivery_date"] < 0.7


# 198. The parties by their labels: a purchase order's buyer and supplier swapped, a
# notice's shipper given as its consignee or its carrier, are caught; each under its own
# label passes
def test_the_parties_are_read_by_their_labels():
    order = "PURCHASE ORDER  PO10457\nVendor: Andes Green Coffee Importers\nBill to: Harbor Coffee Roasters\n"
    right = {"buyer_name": "Harbor Coffee Roasters", "supplier_name": "Andes Green Coffee Importers"}
    assert min(factors(order, right, ORDER).values()) == 1.0
    swapped = {"buyer_name": "Andes Green Coffee Importers", "supplier_name": "Harbor Coffee Roasters"}
    assert max(factors(order, swapped, ORDER)[f] for f in swapped) < 0.7
    notice = (
        "BON DE LIVRAISON  N° BL : BL26-03-0875\nExpéditeur : Les Vergers de Provence SARL\n"
        "Destinataire : Épicerie Fine Le Panier Lyonnais\nTransporteur : Geodis Calberson\n"
    )
    own = {"shipper_name": "Les Vergers de Provence SARL", "consignee_name": "Épicerie Fine Le Panier Lyonnais"}
    assert min(factors(notice, {**own, "carrier": "Geodis Calberson"}, NOTICE).values()) == 1.0
    assert factors(notice, {"consignee_name": "Les Vergers de Provence SARL"}, NOTICE)["consignee_name"] < 0.7
    assert factors(notice, {"carrier": "Les Vergers de Provence SARL"}, NOTICE)["carrier"] < 0.7


def test_a_quotes_date_is_its_date_where_no_invoice_date_is_labelled():
    # a quote read with the invoice schema: its date stands in for the invoice's, as its
    # number does for the invoice number; beside an invoice date's label it does not
    quote = "QUOTE\nQuote No: Q-2026-17\nQuote Date: 01/02/2026\nTotal 100.00\n"
    assert (
        factors(quote, {"invoice_number": "Q-2026-17", "invoice_date": "2026-01-02", "total": 100.0})["invoice_date"]
        == 1.0
    )
    invoice = "INVOICE\nInvoice Date: 03/02/2026\nQuote Date: 01/02/2026\nTotal 100.00\n"
    assert factors(invoice, {"invoice_date": "2026-01-02", "total": 100.0})["invoice_date"] < 0.7


# 199. A hostile review of 188-198: what they must not do
@pytest.mark.parametrize(
    "text,field,value",
    [
        # a table's next row, with counts or whole amounts beside, continues no description
        ("1  AT-HB-08   Hex bolts M8            500\n2  AT-WS-08   Washers M8              500\n",
         "items[0].description", "Hex bolts M8 Washers M8"),
        # the next block's label ends an address block
        ("Bill To:                  Ship To:\nAcme Corp                 Harbor Plant\n"
         "12 Elm St                 Dayton, OH 45404\nSpringfield               Vendor: Precision Fastener Supply\n",
         "consignee_name", "Harbor Plant, Dayton, OH 45404, Vendor: Precision Fastener Supply"),
    ],
)  # fmt: skip
def test_a_column_continues_no_row_and_no_next_block(text, field, value):
    record = {"items": [{"description": value}]} if field.startswith("items") else {field: value}
    assert factors(text, record, NOTICE)[field] < 0.7


@pytest.mark.parametrize(
    "text,schema,record",
    [
        # "Ref No." is no till's number; "Bill ID 48213" no postal address
        ("INVOICE\nRef No. 2026/0413\nTotal 100.00\n", "invoice", {"invoice_number": "2026/0413"}),
        ("INVOICE\nBill ID 48213\nTotal 100.00\n", "invoice", {"invoice_number": "48213"}),
        # a title "RECEIPT" names no receipt number: the order's stands in
        ("RECEIPT\nThe Burger Joint\nOrder #57\nTotal $12.40\n", "receipt", {"receipt_number": "57"}),
        ("The Burger Joint\nOrder Date: 03/09/2026\nTotal $12.40\n", "receipt", {"date": "2026-03-09"}),
        # an ERP's "Document No." is a delivery note's number; a carrier's shipment id a tracking number
        ("LIEFERSCHEIN\nDocument No.: 80045521\nShipment ID: 1Z999AA10123456784\n", "shipping_notice",
         {"notice_number": "80045521", "tracking_number": "1Z999AA10123456784"}),
        # a dangerous goods' UN number after "N°" says true; "CAD." ending a sentence is the dollar
        ("BON DE LIVRAISON\nMarchandises dangereuses : N° ONU 1263\n", "shipping_notice", {"hazardous": True}),
        ("Dangerous Goods Declaration: No. DGD-0042\n", "shipping_notice", {"hazardous": True}),
        ("All amounts in CAD. No GST charged\nTotal 500.00\n", "invoice", {"total": 500.0, "currency": "CAD"}),
    ],
)  # fmt: skip
def test_what_the_new_labels_and_words_leave_alone(text, schema, record):
    found = factors(text, record, builtin(schema))
    assert min(found[field] for field in found if field.split("[")[0] in record) == 1.0


@pytest.mark.parametrize(
    "text,schema,record,field",
    [
        # a number no tax label names is no VAT id without its prefix
        ("Lieferant: Weber KG\nIhr Zeichen: 811907980\n", "purchase_order", {"supplier_vat_id": "DE811907980"},
         "supplier_vat_id"),
        # "Dangerous Goods   No" in a layout's columns, and "NIL", say false
        ("DELIVERY NOTE\nDangerous Goods            No\n", "shipping_notice", {"hazardous": True}, "hazardous"),
        ("DELIVERY NOTE\nHazardous: NIL\n", "shipping_notice", {"hazardous": True}, "hazardous"),
        # a camera's "R" is no rand
        ("Canon EOS R 1,799.00\nTotal $1,799.00\n", "invoice", {"total": 1799.0, "currency": "ZAR"}, "currency"),
        # a UAE tax registration number is no receipt's number
        ("Cafe\nTRN 100234567800003\nTotal 48.00 AED\n", "receipt", {"receipt_number": "100234567800003"},
         "receipt_number"),
    ],
)  # fmt: skip
def test_what_the_new_labels_and_words_catch(text, schema, record, field):
    assert factors(text, record, builtin(schema))[field] < 0.7


# 200. A count or weight written only with another measure's unit: a shipment's weight
# given as its package count, its cartons as its weight, are caught; each with its own
# unit passes, and an item's quantity in its row's unit ("10  CTN") is left alone
def test_a_count_is_not_a_weight():
    text = "DESPATCH ADVICE DA-1\nPackages: 24 cartons\nGross weight: 412 kg\n"
    assert factors(text, {"package_count": 24, "total_weight": 412}, NOTICE)["package_count"] == 1.0
    assert factors(text, {"package_count": 24, "total_weight": 412}, NOTICE)["total_weight"] == 1.0
    assert factors(text, {"package_count": 412}, NOTICE)["package_count"] < 0.7
    assert factors(text, {"total_weight": 24}, NOTICE)["total_weight"] < 0.7
    row = "DESPATCH ADVICE DA-1\nSKU-1   Widgets   10    CTN\n"
    assert factors(row, {"items": [{"sku": "SKU-1", "quantity": 10}]}, NOTICE)["items[0].quantity"] > 0.7


# 201. A second review, on fresh prints (110 correct, 302 wrong records: correct flagged
# 13 before the session, 4 after; wrong caught 87, 181), of what 188-200 must not do
@pytest.mark.parametrize(
    "text,schema,record",
    [
        # a credit note's own date label; a receipt's transaction date beside a reprint's
        ("Credit Note No: CN-0042             Credit Note Date: 14/03/2025\n"
         "Original Invoice No: INV-7781       Invoice Date: 02/03/2025\nTotal 100.00\n", "invoice",
         {"invoice_number": "CN-0042", "invoice_date": "2025-03-14"}),
        ("HOTEL SEEBLICK\nBeleg 0871\nTrans. Datum: 12.03.2025  08:45\nSumme EUR 34,60\nDruckdatum: 14.03.2025 10:22\n",
         "receipt", {"date": "2025-03-12"}),
        # "Bill ID" beside a table's number is no postal address
        ("SPICE ROUTE\nTable 5   Bill ID 48213\nGrand Total 540.00\n", "receipt", {"receipt_number": "48213"}),
        # a wrapped description's second line may start with its own label
        ("1    Wartungsvertrag Heizungsanlage        1,00   450,00   450,00\n"
         "     Zeitraum: 01.04.2025 - 31.03.2026\n", "invoice",
         {"line_items": [{"description": "Wartungsvertrag Heizungsanlage Zeitraum: 01.04.2025 - 31.03.2026"}]}),
        # a phone and fax line names the phone
        ("Ferramenta Rossi\nTel./Fax 011 669 4471\n", "purchase_order", {"supplier_phone": "011 669 4471"}),
    ],
)  # fmt: skip
def test_a_second_review_leaves_alone(text, schema, record):
    found = factors(text, record, builtin(schema))
    assert min(found[field] for field in found if field.split("[")[0] in record) == 1.0


def test_a_counts_unit_before_it_and_a_weights_after():
    # "PCS 3   KGS 86": the count is not the weight's (at most a unit it does not list)
    assert factors("DESPATCH ADVICE DA-7\nPCS 3   KGS 86\n", {"package_count": 3}, NOTICE)["package_count"] > 0.7


@pytest.mark.parametrize(
    "text,value",
    [
        # the document's own number label as a one-word column header, over its row
        ("Rechnungsnummer    Rechnungsdatum    Auftragsnummer\nRE-25-00412        14.03.2025        AB-88120\n",
         "AB-88120"),
        ("Factuurnummer    Ordernummer\nF-2025-118       ORD-5531\n", "ORD-5531"),
        # the number only in the title, a quote's beside it
        ("INVOICE 10461\nYour quote: Q-1190\nTotal 100.00\n", "Q-1190"),
        ("RECHNUNG 25-0217\nIhr Angebot: AN-25-0061\nGesamt 100,00\n", "AN-25-0061"),
    ],
)  # fmt: skip
def test_a_second_review_catches_the_order_or_quote_as_the_invoices_number(text, value):
    assert factors(text, {"invoice_number": value})["invoice_number"] < 0.7


# 202. An Austrian till's "Bankomat" is a card, and its "Bon:" (the receipt's number) no
# voucher; a French "bon d'achat" still is
def test_a_bankomat_is_a_card_and_a_bon_no_voucher():
    text = "BILLA AG\nKassa: 2   Bon: 4471   Bed: 17\nSUMME                   EUR   5,13\nBankomat                EUR   5,13\n"
    assert factors(text, {"total": 5.13, "payment_method": "card"}, RECEIPT)["payment_method"] == 1.0
    assert factors(text, {"total": 5.13, "payment_method": "other"}, RECEIPT)["payment_method"] < 0.7
    voucher = "CARREFOUR\nTOTAL 25,00 EUR\nBON D'ACHAT 25,00\n"
    assert factors(voucher, {"total": 25.0, "payment_method": "other"}, RECEIPT)["payment_method"] == 1.0


# 203. A field's own label names only values of its field's kind: a document number's
# title over a column ("SALES RECEIPT", "PURCHASE ORDER") names no date under it
@pytest.mark.parametrize(
    "text,schema,field,value",
    [
        ("KESTREL TRADE SUPPLIES LTD                         SALES RECEIPT\n"
         "Unit 4, Brindley Park, Leicester LE4 9JT\n"
         "                                                   Receipt No:   KTS-R-559120\n"
         "                                                   Date:         18/03/2026\n", "receipt", "date", "2026-03-18"),
        ("RIVERBEND DENTAL GROUP                                       PURCHASE ORDER\n"
         "415 Elm Street, Suite 200                                    DATE       3/23/2026\n", "purchase_order",
         "order_date", "2026-03-23"),
    ],
)  # fmt: skip
def test_a_numbers_label_names_no_date(text, schema, field, value):
    assert factors(text, {field: value}, builtin(schema))[field] == 1.0


# 204. A credit note or corrective invoice names the invoice it corrects: that invoice's
# number and date (after "Original Invoice No", "zur Rechnung Nr. ... vom", "Factura
# rectificada") are another document's, not the credit note's own
_CREDIT_NOTE = (
    "Pennine Office Supplies Ltd\nCREDIT NOTE\nCredit Note No: CN-0042             Credit Note Date: 14/03/2025\n"
    "{reference}\nCredit total £199.80\n"
)


@pytest.mark.parametrize(
    "reference,field,value",
    [
        ("Original Invoice No: INV-7781", "invoice_number", "INV-7781"),
        ("Against Invoice No. INV-7781 dated 02/03/2025", "invoice_number", "INV-7781"),
        ("Original Invoice Date: 02/03/2025", "invoice_date", "2025-03-02"),
        ("Reference invoice date: 02/03/2025", "invoice_date", "2025-03-02"),
    ],
)  # fmt: skip
def test_the_corrected_invoices_number_and_date_are_not_the_credit_notes(reference, field, value):
    text = _CREDIT_NOTE.format(reference=reference)
    assert factors(text, {field: value})[field] < 0.7
    assert min(factors(text, {"invoice_number": "CN-0042", "invoice_date": "2025-03-14"}).values()) == 1.0


@pytest.mark.parametrize(
    "text,wrong,right",
    [
        ("Muster GmbH\nGutschrift Nr. GS-2025-011\nDatum: 14.03.2025\nzur Rechnung Nr. RE-7781 vom 02.03.2025\n",
         {"invoice_number": "RE-7781", "invoice_date": "2025-03-02"},
         {"invoice_number": "GS-2025-011", "invoice_date": "2025-03-14"}),
        ("Talleres Ruiz S.L.\nFACTURA RECTIFICATIVA R-2025-004\nFecha: 14/03/2025\n"
         "Factura rectificada: F-2025-118   Fecha factura rectificada: 02/03/2025\n",
         {"invoice_number": "F-2025-118", "invoice_date": "2025-03-02"},
         {"invoice_number": "R-2025-004", "invoice_date": "2025-03-14"}),
    ],
)  # fmt: skip
def test_a_corrective_invoice_names_the_invoice_it_corrects(text, wrong, right):
    assert max(factors(text, wrong).values()) < 0.7
    assert min(factors(text, right).values()) == 1.0


# 205. A browser centres a table row's cells on its height: a description wrapped over two
# lines comes out of the converter with the row's figures on a line between its parts, or
# beside its second part, and is still the row's description
@pytest.mark.parametrize(
    "rows,description",
    [
        (" Logo-Entwicklung inkl. 3 Entwurfsvarianten\n"
         "                                            1  850,00 €    850,00 €\n"
         " und 2 Korrekturschleifen\n", "Logo-Entwicklung inkl. 3 Entwurfsvarianten und 2 Korrekturschleifen"),
        # the row's quantity printed left of the description's column
        ("  6-slice commercial toaster, returned\n"
         " 2.00               189.00       0.00   378.00      20.00\n"
         "  faulty (element)\n", "6-slice commercial toaster, returned faulty (element)"),
        # the figures beside the second part (a contractor's schedule of values)
        ("     General\n"
         " 01  Conditions         148,000.00              88,800.00   14,800.00\n", "General Conditions"),
    ],
)  # fmt: skip
def test_a_description_wrapped_around_its_rows_centred_figures_is_found(rows, description):
    text = "INVOICE 77\nDescription                    Qty   Price   Amount\n" + rows + "Total 1.00\n"
    assert factors(text, {"line_items": [{"description": description}]})["line_items[0].description"] == 1.0


@pytest.mark.parametrize(
    "rows,description",
    [
        # a row's own figures beside its description: the next row's description is no continuation
        ("Widget large                  2   10.00    20.00\nGadget small                  1    5.00     5.00\n",
         "Widget large Gadget small"),
        # one-line descriptions over their own figures: two rows, not one row's two parts
        ("Consulting services\n                                     10  100.00  1,000.00\nTravel expenses\n"
         "                                      1  250.00    250.00\n", "Consulting services Travel expenses"),
    ],
)  # fmt: skip
def test_a_rows_figures_join_no_description_to_the_next_rows(rows, description):
    text = "INVOICE 77\nDescription                 Qty   Price   Amount\n" + rows + "Total 25.00\n"
    assert factors(text, {"line_items": [{"description": description}]})["line_items[0].description"] < 0.7


# 206. A receipt that prints the goods' sum with the tax in it ("Subtotal", "SUBTOTAL")
# beside the net ("Base imponible", "DPP"): the net the record gives is no rival of that
# gross, where with the labelled charges and discounts the gross makes the total; and a
# till's lines priced with the tax, less a labelled discount, add up to the net and the tax
@pytest.mark.parametrize(
    "text,record",
    [
        ("Brisa Natural S.L.\nFecha: 12/05/2026\nSubtotal                  51,20 €\nGastos de envío            4,95 €\n"
         "Descuento (BIENVENIDA10)  -3,94 €\nTotal                     52,21 €\nBase imponible            43,15 €\n"
         "IVA (21%) incluido         9,06 €\n", {"subtotal": 43.15, "tax": 9.06, "total": 52.21}),
        ("TOKO SINAR JAYA MART\n23-12-2026 16:48\nSUBTOTAL            185.000\nDISKON MEMBER        -5.000\n"
         "TOTAL               180.000\nDPP                 162.162\nPPN 11%              17.838\n",
         {"subtotal": 162162, "tax": 17838, "total": 180000}),
    ],
)  # fmt: skip
def test_a_gross_subtotal_beside_the_net_is_no_rival(text, record):
    assert min(factors(text, record, RECEIPT).values()) == 1.0
    # the gross given as the subtotal (the amount before tax) is still caught
    gross = next(iter(v for k, v in {"51,20": 51.20, "185.000": 185000}.items() if k in text))
    assert factors(text, {**record, "subtotal": gross}, RECEIPT)["subtotal"] < 0.7


def test_a_tills_lines_priced_with_the_tax_less_a_discount_make_the_net_and_the_tax():
    text = (
        "FRISCHMARKT KESSLER\n14.03.2026 17:42\nMINERALWASSER                2,94 A\nSPUELMITTEL                  3,35 A\n"
        "KAFFEE CREMA 1KG            21,32 B\n  KESSLER VORTEIL           -2,00 B\nSUMME                 EUR   25,61\n"
        "Steuer %      Netto  Steuer  Brutto\nA= 19,0%       5,29   1,00     6,29\nB=  7,0%      18,06   1,26    19,32\n"
        "Gesamtbetrag  23,35   2,26    25,61\n"
    )
    items = [{"description": "MINERALWASSER", "amount": 2.94}, {"description": "SPUELMITTEL", "amount": 3.35},
             {"description": "KAFFEE CREMA 1KG", "amount": 21.32}]  # fmt: skip
    record = {"items": items, "subtotal": 23.35, "tax": 2.26, "total": 25.61}
    assert min(factors(text, record, RECEIPT).values()) > 0.7
    assert factors(text, {**record, "subtotal": 22.35}, RECEIPT)["subtotal"] < 0.7


# 207. Words of the fourth round of printed documents: charges (Spanish "Gastos de portes", Italian
# stamp duty and professional funds' contributions, Argentine "Otros Tributos", "Svc Chg"),
# discounts ("Vorteil", 会员优惠) and totals (实收金额, 应收金额, "Gift amount", "Current
# payment due", 今回御請求額); cash ("contante", "hotově"), Bizum; 找零 (change)
_FOURTH_ROUND_WORDS = [
    ("FACTURA F260089\nAceite de oliva virgen extra 5 L   12  31,50 €  5%  10%  359,10 €\n"
     "Queso manchego curado 3 kg          4  54,80 €  0%  10%  219,20 €\n Subtotal        578,30 €\n"
     " Gastos de portes  14,90 €\n Base imponible  593,20 €\n IVA 10% s/ 578,30 €  57,83 €\n"
     " IVA 21% s/ 14,90 €    3,13 €\n Total           654,16 €\n", "invoice",
     {"subtotal": 593.20, "tax": 60.96, "total": 654.16}),
    ("FATTURA\nTotale compensi   € 1.805,00\nRivalsa imposta di bollo  € 2,00\nTotale da pagare  € 1.807,00\n",
     "invoice", {"subtotal": 1805.00, "total": 1807.00}),
    ("FATTURA N. 7/2026\nProgettazione esecutiva impianto     1,00  1.850,00 1.850,00\n"
     "Sopralluogo tecnico                  1,00    690,00   690,00\n Totale onorari   € 2.540,00\n"
     " Contributo integrativo Inarcassa 4%    € 101,60\n Imponibile IVA   € 2.641,60\n IVA 22%   € 581,15\n"
     " Totale fattura   € 3.222,75\n", "invoice",
     {"subtotal": 2641.60, "tax": 581.15, "total": 3222.75,
      "line_items": [{"quantity": 1, "unit_price": 1850.00, "amount": 1850.00},
                     {"quantity": 1, "unit_price": 690.00, "amount": 690.00}]}),
    ("FACTURA\nImporte Neto Gravado: $  777200,00\nIVA 21%: $  163212,00\nImporte Otros Tributos: $  23316,00\n"
     "Importe Total: $  963728,00\n", "invoice", {"subtotal": 777200, "tax": 163212, "total": 963728}),
    ("Kopi & Toast Co.\nSubtotal             22.80\nSvc Chg 10%           2.28\nGST 9%                2.26\n"
     "TOTAL             S$27.34\n", "receipt", {"subtotal": 22.80, "tax": 2.26, "total": 27.34}),
    ("川味小馆\n水煮鱼   1  88.00  88.00\n回锅肉   1  42.00  42.00\n消费合计：  130.00\n会员优惠(95折)：  -6.50\n"
     "抹零：  -0.50\n实收金额：  ¥123.00\n", "receipt", {"subtotal": 130.00, "total": 123.00}),
    ("川味小馆\n应收金额：  130.00\n现金：  200.00\n找零：  70.00\n", "receipt", {"total": 130.00, "payment_method": "cash"}),
    ("Riverbend Community Food Bank\nGift amount:   $250.00\nYour giving in 2026 to date: $400.00\n", "receipt",
     {"total": 250.00}),
    ("BAR AURORA\nTOTALE COMPLESSIVO  13,10\nPagamento contante   20,00\nPagamento elettronico   0,00\n"
     "Resto    6,90\n", "receipt",
     {"total": 13.10, "payment_method": "cash"}),
    ("Hostinec U kohouta\nCELKEM Kč   1 300,00\nHotově přijato   1 500,00\nVráceno   200,00\n", "receipt",
     {"total": 1300.00, "payment_method": "cash"}),
    ("brisa natural\nMétodo de pago: Bizum\nTotal  51,03 €\n", "receipt", {"total": 51.03, "payment_method": "mobile"}),
]  # fmt: skip


# 208. A per-line tax code cell ("TVA 5,5%", "IVA 21%, Ret. IRPF 15%") between a row's unit
# price and its amount names neither: the unit price is one of the two figures whose
# product is the line's amount
@pytest.mark.parametrize(
    "text,record",
    [
        ("Description  Quantité  Prix unitaire  Taxes  Montant\n\n"
         "Applique murale opaline                       6,00 Unité(s)  118,50  TVA 20%   711,00 €\n\n"
         "Livre « Lumières d'atelier »                 10,00 Unité(s)   24,00  TVA 5,5%  240,00 €\n\n"
         "Montant hors taxes  951,00 €\n\nTVA 20%             142,20 €\n\nTVA 5,5%             13,20 €\n\n"
         "Total             1 106,40 €\n", {"subtotal": 951.00, "tax": 155.40, "total": 1106.40}),
        ("Descripción  Cantidad  Precio unitario  Impuestos  Importe\n\n"
         "Dirección de obra (mensualidad febrero)  1,00   950,00   IVA 21%, Ret. IRPF 15%   950,00 €\n\n"
         "Visitas técnicas adicionales             3,00   120,00   IVA 21%, Ret. IRPF 15%   360,00 €\n\n"
         "Base imponible  1.310,00 €\n\nIVA 21%           275,10 €\n\nRetención IRPF 15%  -196,50 €\n\n"
         "Total           1.388,60 €\n", {"subtotal": 1310.00, "tax": 275.10, "total": 1388.60}),
    ],
)  # fmt: skip
def test_a_tax_code_cell_in_an_item_row_names_no_tax(text, record):
    passes(text, record)
    assert factors(text, {**record, "tax": 142.20})["tax"] < 0.7


# 209. A row's discount rate under a "Disc %" column whose header is drawn apart from the
# rows, or with a wrapped description's words between: the line's amount is its quantity
# times its price less that rate
_DISCOUNTED_ROWS = (
    "Quantity  Details  Unit Price  Disc %  Net Amount  VAT %\n\n"
    " 4.00   Foamex safety signs A3 (set of 12)               62.50   0.00  250.00  20.00\n\n"
    " 1.00   Pull-up banner 850mm incl. carry case           129.00  10.00  116.10  20.00\n\n"
    "Total Net Amount  £366.10\n"
)
_DISCOUNTED_LINES = [
    {"quantity": 4, "unit_price": 62.50, "amount": 250.00},
    {"quantity": 1, "unit_price": 129.00, "amount": 116.10},
]


def test_a_discount_rate_column_apart_from_its_header_explains_the_line():
    assert factors(_DISCOUNTED_ROWS, {"line_items": _DISCOUNTED_LINES})["line_items[1].amount"] > 0.7
    wrapped = (
        "Quantity  Details  Unit Price  Disc %  Net Amount  VAT %\n  Gastronorm pan 1/1 65mm st/st - wrong size\n"
        " 3.00                22.40      10.00    60.48      20.00\n  supplied\n"
    )
    lines = [{"quantity": 3, "unit_price": 22.40, "amount": 60.48}]
    assert factors(wrapped, {"line_items": lines})["line_items[0].amount"] > 0.7
    # no discount's column: the same figures do not add up
    plain = _DISCOUNTED_ROWS.replace("Disc %", "Code  ")
    flagged(plain, {"line_items": _DISCOUNTED_LINES}, "line_items[1].amount", "arithmetic")


# 210. A total given as the sum before a labelled charge another total label adds
# ("Totale compensi 1.805,00 / Rivalsa imposta di bollo 2,00 / Totale da pagare 1.807,00")
def test_a_total_before_a_labelled_charge_is_caught():
    text = "FATTURA\nTotale compensi   € 1.805,00\nRivalsa imposta di bollo  € 2,00\nTotale da pagare  € 1.807,00\n"
    assert factors(text, {"total": 1807.00})["total"] == 1.0
    assert factors(text, {"total": 1805.00})["total"] < 0.7


# 211. A payment line of zero pays nothing: "Pagamento contante 0,00" beside "Pagamento
# elettronico 13,10" is a card payment, and the reverse a cash one
@pytest.mark.parametrize("cash,card,paid", [("0,00", "13,10", "card"), ("20,00", "0,00", "cash")])
def test_a_payment_line_of_zero_pays_nothing(cash, card, paid):
    text = f"BAR AURORA\nTOTALE COMPLESSIVO  13,10\nPagamento contante   {cash}\nPagamento elettronico   {card}\n"
    other = "cash" if paid == "card" else "card"
    assert factors(text, {"total": 13.10, "payment_method": paid}, RECEIPT)["payment_method"] == 1.0
    assert factors(text, {"total": 13.10, "payment_method": other}, RECEIPT)["payment_method"] < 0.7


# 212. The word of a receipt's number label in a sentence that ends with it ("This email
# serves as your VAT receipt. Prices include VAT at 20%.") or a title beside the shop's name
# with nothing under it ("Bramble    Receipt") names no number: the order number stands in
@pytest.mark.parametrize(
    "text,number",
    [
        ("Order number: FH-204518      Order date: 5 April 2026\nTotal            £95.45\n"
         "This email serves as your VAT receipt. Prices include VAT at 20%.\n", "FH-204518"),
        ("❖ Bramble    Receipt\n\n ACCOUNT                  DATE         ORDER ID\n"
         "j.nguyen@example.com.au  18 Feb 2026  MQ7K2L9XPD\n\nTOTAL  A$84.98\n", "MQ7K2L9XPD"),
    ],
)  # fmt: skip
def test_a_receipts_word_in_a_sentence_or_a_title_names_no_number(text, number):
    assert factors(text, {"receipt_number": number}, RECEIPT)["receipt_number"] == 1.0


# 213. Tally's GST invoice: a totals row that counts the goods before their money ("Total
# 120 Pcs  58,590.00": the label is the money's), and the HSN summary's "Total" row whose
# first figure is the taxable value (the goods' sum; with the tax and a labelled round-off
# it makes the total), no rival total
_TALLY = (
    "Sl No.  Description of Goods  HSN/SAC  Quantity  Rate  per  Amount\n\n"
    " 1  Ball Bearing 6204 ZZ            8482  500 Nos   38.51  Nos  19,255.00\n\n"
    "                        19,255.00\n\nIGST OUTPUT @ 18%  18  %  3,465.90\n\n Round Off                 0.10\n\n"
    " Total  500 Nos  ₹ 22,721.00\n\nHSN/SAC  Taxable Value  IGST Rate  IGST Amount  Total Tax Amount\n\n"
    "8482    19,255.00  18%  3,465.90  3,465.90\n\n Total  19,255.00       3,465.90  3,465.90\n"
)


def test_a_tally_invoices_total_rows():
    record = {"subtotal": 19255.00, "tax": 3465.90, "total": 22721.00}
    assert factors(_TALLY, record)["total"] > 0.7  # (the round-off lowers it a little)
    assert factors(_TALLY, {**record, "total": 19255.00})["total"] < 0.7


# 214. A Japanese till spaces its two-character labels out ("小  計", "合   計") and says
# the tax is within the figures ("(内消費税等 ¥75)"): the labels are read, and the gross
# subtotal equals the total
_KONBINI = (
    "ミドリマート\n2026年10月 3日(土) 22:14\nおにぎり 鮭             ¥160※\nボールペン 黒             ¥165\n"
    "小  計                ¥325\n(10%対象    ¥165  内消費税等  ¥15)\n(8%対象     ¥160  内消費税等  ¥11)\n"
    "合   計             ¥325\n(内消費税等              ¥26)\n"
)


def test_a_japanese_tills_spaced_labels_and_included_tax():
    record = {"subtotal": 325, "tax": 26, "total": 325}
    assert min(factors(_KONBINI, record, RECEIPT).values()) > 0.7
    assert amount_roles(_KONBINI)[-2:] == [("325", "total"), ("26", "tax")]


# 215. A hostile review of tests 204-214's changes: what they must leave alone, and what
# they must still catch
def test_a_total_owed_only_after_a_date_is_no_total_with_a_late_fee():
    text = (
        "RIVERSIDE POWER & LIGHT\nAccount 4471-0092\nAmount Due by 03/25/2026      $84.20\n"
        "Late Payment Fee              $8.42\nAmount Due After 03/25/2026   $92.62\n"
    )
    assert factors(text, {"total": 84.20})["total"] > 0.7


@pytest.mark.parametrize(
    "till,items",
    [
        # a bakery's bun ("BOLLO"), a DIY store's doors ("PORTES"), a brake cleaner ("DISC"):
        # items, no charge or discount
        ("PANADERIA LUNA\nBOLLO MAXI CHOCO      1,85\nBARRA PAN             1,20\nCAFE CON LECHE        2,85\n"
         "TOTAL                 5,90\n", [1.20, 2.85]),
        ("BRICO DEPOT\nPORTES PLACARD CHENE     178,00\nVIS 4X40 X100             9,90\nCHEVILLES X50             8,40\n"
         "TOTAL                    196,30\n", [9.90, 8.40]),
        ("AUTOPARTS 24\nDISC BRAKE CLEANER 500ML   6.50\nWIPER BLADES 22IN         33.50\n"
         "SUBTOTAL                  40.00\nTOTAL                     40.00\n", [33.50, 6.50, 6.50]),
    ],
)  # fmt: skip
def test_an_items_words_are_no_charge_or_discount(till, items):
    subtotal = round(
        sum([1.85, 1.20, 2.85] if "BOLLO" in till else [178.0, 9.9, 8.4] if "PORTES" in till else [6.5, 33.5]), 2
    )
    record = {"items": [{"description": "X", "amount": a} for a in items], "subtotal": subtotal, "total": subtotal}
    assert any("arithmetic" in r for r in reasons(till, record, RECEIPT)["subtotal"])


_REVIEWS_SILENT_HOLES = [
    # "Invoice Nr. INV-7781": a number's label, not a sentence's end
    ("Acme Widgets Inc.                         Invoice Nr. INV-7781\n"
     "45 Harbour Road                           Date: 03/14/2025\n"
     "Portsmouth PO1 3AX                        CU-10442\nTotal   1,080.00\n", "invoice",
     {"invoice_number": "CU-10442"}, "invoice_number"),
    # a number in mixed case after the abbreviation's full stop
    ("Acme Widgets Inc.                         Invoice No. Inv-7781\n"
     "45 Harbour Road                           Date: 03/14/2025\n"
     "Portsmouth PO1 3AX                        CU-10442\nTotal   1,080.00\n", "invoice",
     {"invoice_number": "CU-10442"}, "invoice_number"),
    # a row of one-word header cells, a blank line before its values
    ("Bramble Homewares Pty Ltd\n\n RECEIPT              DATE            ORDER ID\n\n"
     " 20931                18 Feb 2026     MQ7K2L9XPD\n\nTOTAL  A$84.98\n", "receipt",
     {"receipt_number": "MQ7K2L9XPD"}, "receipt_number"),
]  # fmt: skip


# 216. Words of the second printed round: a repair shop's charges ("SHOP SUPPLIES", "HAZ.
# WASTE DISPOSAL"), a Japanese freelancer's withheld income tax (源泉徴収税額), Greek net
# value's total ("Σύνολο καθαρής αξίας") and other taxes and fees, Vietnamese and Chinese
# discounts and coupons ("Giảm giá", 优惠券, 代金券抵扣), a Chinese app's goods and paid sums
# (商品金额, 实付金额)
_SECOND_ROUND_WORDS = [
    ("REPAIR ORDER / INVOICE RO 58213\nLABOR                     243.00\nPARTS                      89.34\n"
     "SHOP SUPPLIES (5% labor)   12.15\nHAZ. WASTE DISPOSAL         3.50\nSUBTOTAL                  347.99\n"
     "SALES TAX 7.75%             7.86\nTOTAL                     355.85\n", "invoice",
     {"subtotal": 347.99, "tax": 7.86, "total": 355.85,
      "line_items": [{"amount": 243.00}, {"amount": 89.34}]}),
    ("御請求書\n小計  ¥150,000\n消費税（10%）  ¥15,000\n源泉徴収税額（10.21%）  -¥15,315\n合計  ¥149,685\n",
     "invoice", {"subtotal": 150000, "tax": 15000, "total": 149685}),
    ("Τιμολόγιο Παροχής Υπηρεσιών\nΣύνολο καθαρής αξίας  240,00 €\nΣύνολο ΦΠΑ             31,20 €\n"
     "Λοιποί φόροι / τέλη    14,00 €\nΠληρωτέο ποσό         285,20 €\n", "invoice",
     {"subtotal": 240.00, "tax": 31.20, "total": 285.20}),
    ("XanhMart\nBánh mì sandwich trứng   1  25.000  25.000\nKhăn giấy ướt 80 tờ      1  83.000  83.000\n"
     "Tổng tiền hàng         108.000\nGiảm giá KM            -10.000\nTổng thanh toán (VNĐ)   98.000\n"
     "Tiền mặt               100.000\n", "receipt", {"subtotal": 108000, "total": 98000}),
    ("山隅咖啡\n生椰拿铁 大杯 冰 少糖  x2  ¥58.00\n美式咖啡 中杯 热     x1  ¥38.00\n商品金额              ¥96.00\n"
     "优惠券（满50减5）        -¥5.00\n实付金额           ¥91.00\n", "receipt", {"subtotal": 96.00, "total": 91.00}),
    ("月度账单\n计费项  用量  单价  应付金额\n云服务器 ECS  2 台  ¥689.00  ¥1,378.00\n"
     "公网流量  3,486.27 GB  ¥0.80  ¥2,789.02\n费用合计  ¥4,167.02\n代金券抵扣  -¥300.00\n"
     "其中：不含税金额  ¥3,648.13\n其中：增值税（6%）  ¥218.89\n应付金额（含税）  ¥3,867.02\n", "invoice",
     {"subtotal": 3648.13, "tax": 218.89, "total": 3867.02,
      "line_items": [{"quantity": 2, "unit_price": 689.00, "amount": 1378.00},
                     {"quantity": 3486.27, "unit_price": 0.80, "amount": 2789.02}]}),
]  # fmt: skip


@pytest.mark.parametrize("text,schema,record", _FOURTH_ROUND_WORDS + _SECOND_ROUND_WORDS)
def test_the_printed_rounds_words(text, schema, record):
    # not flagged: a charge or discount that explains a sum lowers it a little, no more
    assert min(factors(text, record, builtin(schema)).values()) > 0.7


# 217. A second review: a discount's short word before a figure taken off is a discount
# ("SENIOR DISC  -4.30"); a due date on the total's line is no condition; an item's "(※ 内税)"
# says nothing of the other figures; a title beside a shop's name heads nothing past a
# blank line
@pytest.mark.parametrize(
    "text,record",
    [
        ("GREENWAY PHARMACY\nVITAMIN D3 1000IU            8.99\nALLERGY RELIEF 24CT         12.49\n"
         "SUBTOTAL                    21.48\nSENIOR DISC                 -4.30\nTOTAL                       17.18\n",
         {"subtotal": 21.48, "total": 17.18}),
        ("SUPERMERCADO DIA\nLECHE ENTERA 1L              0,95\nACEITE OLIVA 1L             13,35\n"
         "SUBTOTAL                    14,30\nDESC. CLUB DIA              -1,43\nTOTAL                       12,87\n",
         {"subtotal": 14.30, "total": 12.87}),
    ],
)  # fmt: skip
def test_a_short_discount_word_before_a_figure_taken_off(text, record):
    assert min(factors(text, record, RECEIPT).values()) > 0.7


@pytest.mark.parametrize("due", ["Due Date: 04/01/2026          Amount Due:", "Balance due 04/01/2026   "])
def test_a_due_date_on_the_totals_line_is_no_condition(due):
    text = (
        "ACME SUPPLY CO\nINVOICE 77812   DATE 03/02/2026\nInvoice total             1,250.00\n"
        f"Freight                      85.00\n{due} 1,335.00\n"
    )
    assert factors(text, {"total": 1250.00})["total"] < 0.7


def test_an_items_included_tax_note_says_nothing_of_the_other_figures():
    text = (
        "焼肉 たむら\n2026/05/14 20:41\nコース x2          ¥10,000\nビール ※          ¥1,100\n"
        "消費税(外税10%)     ¥1,000\n合計              ¥12,100\n(※ 内税)\n"
    )
    assert factors(text, {"subtotal": 12100, "tax": 1000, "total": 12100}, RECEIPT)["subtotal"] < 0.7


def test_a_title_beside_a_shops_name_heads_nothing_past_a_blank_line():
    text = (
        "BLUE FIN DINER                    RECEIPT\n\n12 Harbour St, Portland ME        03/14/2026\n"
        "Order #48812\nTOTAL  42.80\n"
    )
    assert factors(text, {"receipt_number": "48812"}, RECEIPT)["receipt_number"] == 1.0


# 218. The buyer given as the seller: a name the record gives as the invoice's vendor (or the
# receipt's merchant) that the document writes only under the buyer's labels, as a converter
# that keeps the layout places them, is the buyer's; a name the layout does not place so is
# left alone
_BUYER_AS_SELLER = [
    # the label alone over its block
    ("Référence Digitale                               FACTURE\n14 rue Paul Bert  Date de facture : 09/03/2026\n\n"
     "Client\nMaison Vérel SAS\n3 quai Jules Courmont\n\nTotal TTC   4 941,00 €\n", "invoice",
     {"vendor_name": "Maison Vérel SAS"}, "vendor_name"),
    # the right column's block, under a bilingual label
    ("Sprzedawca / Seller                                       Nabywca / Buyer\n"
     "Codewise Software Sp. z o.o.                              Fahrradkurier Nord GmbH\n"
     "ul. Piotrkowska 148/150                                   Schanzenstraße 33\n\nRazem  4 920,00 EUR\n", "invoice",
     {"vendor_name": "Fahrradkurier Nord GmbH"}, "vendor_name"),
    # the label starting the name's cell
    ("                                                             Invoice No.: ANM/INV/2026/0219\n"
     " Customer: Gulf Horizon Shipping Services FZE                Supply Date: 11/03/2026\n"
     " TRN: 100234567800003                                        LPO No.: GHS-LPO-7731\nTotal AED 10,500.00\n",
     "invoice", {"vendor_name": "Gulf Horizon Shipping Services FZE"}, "vendor_name"),
    # a heading's letters spaced out
    ("Marlow Studio\nB I L L E D T O                   I N V O I C E N O .\n"
     "Saltbush Coffee Roasters Pty Ltd  0042\n\nTOTAL  $1,540.00\n", "invoice",
     {"vendor_name": "Saltbush Coffee Roasters Pty Ltd"}, "vendor_name"),
    # a buyer's label in a row of headings (a delivery's, a date's, a number's)
    ("Atelier Boréal Design Inc.  5420 boul. Saint-Laurent\n\n"
     "Billed To                   Date of Issue  Invoice Number  Amount Due (CAD)\n"
     "Northfield Outfitters Ltd.  2025-01-28     0000212\n1180 Wellington St W                  $5,864.29\n",
     "invoice", {"vendor_name": "Northfield Outfitters Ltd."}, "vendor_name"),
    (" Invoice Address              Delivery Address\n Dockside Hospitality Ltd     The Quayside Bistro\n"
     "\nTotal  EUR 1,230.00\n", "invoice", {"vendor_name": "Dockside Hospitality Ltd"}, "vendor_name"),
    # a hotel's guest as the receipt's merchant
    ("Hotel Zum Alten Fährhaus\nGast: Markus Lehmann\nAnreise: 12.03.2026   Zimmer 12\nGesamt   236,00 EUR\n", "receipt",
     {"merchant_name": "Markus Lehmann"}, "merchant_name"),
]  # fmt: skip


@pytest.mark.parametrize("text,schema,record,field", _REVIEWS_SILENT_HOLES + _BUYER_AS_SELLER)
def test_a_silent_wrong_value_is_caught(text, schema, record, field):
    assert factors(text, record, builtin(schema))[field] < 0.7


@pytest.mark.parametrize(
    "text,record",
    [
        # the seller's name to the right of a label with no colon: a row of two blocks' heads
        ("Invoice\n\nBill To    Your Company Name\nSomeTarget Inc.\n\nOrder Total:   $37,701.43\n",
         {"vendor_name": "Your Company Name"}),
        # a row of labels written one a line, the names after them in their order
        ("Invoice: BAR0001\n\nSeller:\nBuyer\nFoo Inc.\nBar Inc.\nFoo Str. 1/9\n\nTotal  120.00\n",
         {"vendor_name": "Foo Inc."}),
        # the buyer's label heading the left column, the seller's letterhead the right one's,
        # across a gap or with the gap closed
        ("INVOICE\nBill To:  Harbor Lane Design Studio\nQuillfeather Books Ltd  14 Marsh Road\nTotal   450.00\n",
         {"vendor_name": "Harbor Lane Design Studio"}),
        ("INVOICE\nBill To: Harbor Lane Design Studio\nQuillfeather Books Ltd 14 Marsh Road\nTotal 450.00\n",
         {"vendor_name": "Harbor Lane Design Studio"}),
        # a label with its value beside it names nothing under it
        ("Invoice HL-19\nTotal   300.00\nCustomer:  Quillfeather Books Ltd\nHarbor Lane Design Studio · 14 Marsh Road\n",
         {"vendor_name": "Harbor Lane Design Studio"}),
        # a cash sale's empty customer field
        ("Invoice No. 0042        Date 2024-03-02\nCustomer:\n\nHarbor Lane Design Studio, 14 Marsh Road\nTotal 450.00\n",
         {"vendor_name": "Harbor Lane Design Studio"}),
        # headings written one a line, whatever the first one says
        ("INVOICE\nPay To:\nBill To:\nHarbor Lane Design Studio\nQuillfeather Books Ltd\nTotal 450.00\n",
         {"vendor_name": "Harbor Lane Design Studio"}),
        # an empty customer row over the seller's footer line, and a label with a value
        # holding a colon beside it
        ("Invoice HL-20\nPicture framing  45.00\n        Total    45.00\nCustomer:\n"
         "Harbor Lane Framing · 14 Marsh Road · Bristol BS1 2CD\n", {"vendor_name": "Harbor Lane Framing"}),
        ("Invoice 42\nCustomer:   Walk-in, Tel: 555 0199\nHarbor Lane Hardware, 500 Commerce Blvd\nTotal 450.00\n",
         {"vendor_name": "Harbor Lane Hardware"}),
        # a buyer's label beside a one-word label ("Phone"): as often a label with its value
        ("INVOICE 2291\nCustomer           Phone\nHarbourline Paper Co.\n4 Dock St\nTotal  75.00\n",
         {"vendor_name": "Harbourline Paper Co."}),
        # goods collected at the seller's own store
        ("ORDER RECEIPT\nOrder #88812                     Date 2024-03-02\nShip To:\nBrightmart Supercenter #1234\n"
         "500 Commerce Blvd, Springfield\nDesk lamp              1   24.99\n                     Total 24.99\n",
         {"vendor_name": "Brightmart Supercenter"}),
        # a payee in the bank details: Turkish "Alıcı" is no buyer there
        ("   FATURA\nSAYIN\nQuillfeather Kitap A.Ş.\n Genel Toplam  1.200,00 TL\nBanka Bilgileri\n"
         "Alıcı: Liman Tasarım Ltd. Şti.\nIBAN: TR12 0006 2000 1234 0006 2990 12\n", {"vendor_name": "Liman Tasarım Ltd. Şti."}),
        # under the buyer's label on a payment slip, and heading the invoice too
        ("Kōwhai Digital Studio Limited\nTAX INVOICE\nTOTAL NZD  5,837.40\n\n"
         "PAYMENT ADVICE   Customer:   Pōhutukawa Tours Limited\nTo:\nKōwhai Digital Studio Limited\n",
         {"vendor_name": "Kōwhai Digital Studio Limited"}),
    ],
)  # fmt: skip
def test_a_seller_the_layout_does_not_place_under_the_buyer_passes(text, record):
    assert factors(text, record)["vendor_name"] == 1.0


def test_a_buyer_written_only_under_the_sellers_label_is_caught_for_any_schema():
    order = compile_schema(
        {
            "name": "order_note",
            "fields": {
                "customer": {"kind": "text", "party": "buyer"},
                "total": {"kind": "amount", "labels": ["@total"]},
            },
        }
    )
    text = "Supplier:\nAcme Tools GmbH\nLindenweg 4\n\nDeliver to:\nBrook & Sons\n\nTotal  99.00\n"
    assert factors(text, {"customer": "Acme Tools GmbH", "total": 99.0}, order)["customer"] < 0.7
    assert factors(text, {"customer": "Brook & Sons", "total": 99.0}, order)["customer"] == 1.0


def test_a_receipts_spaced_copy_heading_names_no_buyer():
    text = "  C U S T O M E R  C O P Y\n   BRIGHTMART #1234\n 500 Commerce Blvd\nTOTAL               24.99\n"
    assert factors(text, {"merchant_name": "BRIGHTMART", "total": 24.99}, RECEIPT)["merchant_name"] == 1.0


# 219. A number under a header its own label does not head, in a row of headers whose first
# cell is the invoice number's ("Invoice No.  Invoice/Tax Date  Order No.  Account Ref"): the
# invoice number the header names is the document's, the other cell's number another value
SAGE_HEADER_ROW = (
    "Fellside Outdoor Centre\nInvoice\n\n"
    "Invoice No.  Invoice/Tax Date  Order No.  Account Ref  Page\n"
    "10452        03/03/2026        FOC/118    FELL001      1\n\nTotal  1,250.00\n"
)


def test_a_number_under_another_header_than_the_invoice_numbers_is_caught():
    assert factors(SAGE_HEADER_ROW, {"invoice_number": "FELL001"})["invoice_number"] < 0.7
    assert factors(SAGE_HEADER_ROW, {"invoice_number": "10452"})["invoice_number"] == 1.0


# 220. A third printed round: a description wrapped in its cell with the row's figures,
# currency signs and all, on a line between its parts at the description's own column; Danish
# "Fragt" is a charge; Portugal's "Total s/ IVA" is the net beside "Total Ilíquido" less
# "Total Descontos"
WRAPPED_AROUND_PRICED_FIGURES = (
    "CONCEPTO  PRECIO  UNIDADES  SUBTOTAL  IVA  TOTAL\n\n"
    "Diseño de etiquetas para aceite de oliva\n"
    " 1.800,00 €         1  1.800,00 €  21%  2.178,00 €\n"
    "virgen extra (gama Sierra)\n\n"
    "                   Base imponible       1.800,00 €\n"
    "                   IVA 21%                378,00 €\n"
    "                   TOTAL                2.178,00 €\n"
)


def test_two_items_printed_name_over_price_are_no_wrapped_description():
    text = (
        "Bright Bean Café\n12 Mill Lane, Galway\n\nEthiopia Yirgacheffe 250g\n€12.50\nOat milk 1L\n€3.20\n"
        "Almond croissant\n€3.80\n\nTotal  €19.50\n"
    )
    items = [
        {"description": "Ethiopia Yirgacheffe 250g", "amount": 12.5},
        {"description": "Oat milk 1L Almond croissant", "amount": 3.2},
    ]
    assert factors(text, {"total": 19.5, "items": items}, RECEIPT)["items[1].description"] < 0.7


def test_a_description_wrapped_around_its_rows_priced_figures_is_read_whole():
    line = {"description": "Diseño de etiquetas para aceite de oliva virgen extra (gama Sierra)", "amount": 1800.0}
    record = {"subtotal": 1800.0, "tax": 378.0, "total": 2178.0, "line_items": [line]}
    assert factors(WRAPPED_AROUND_PRICED_FIGURES, record)["line_items[0].description"] == 1.0


@pytest.mark.parametrize(
    "text,record",
    [
        ("Kreditnota\nKreditnotanr. 1058\nSubtotal   2.280,00\nFragt        120,00\nMoms (25%)   600,00\n"
         "Total DKK  3.000,00\n", {"subtotal": 2280.0, "tax": 600.0, "total": 3000.0, "currency": "DKK"}),
        ("Fatura FT 2025A/318\nTotal Ilíquido  827,00\nTotal Descontos  64,80\nTotal s/ IVA    762,20\n"
         "Total IVA        90,81\nTotal (EUR)     853,01\n",
         {"subtotal": 762.20, "tax": 90.81, "total": 853.01, "currency": "EUR"}),
    ],
)  # fmt: skip
def test_the_third_printed_rounds_words(text, record):
    # not flagged: a charge that explains a sum lowers it a little, no more
    passes(text, record)


# 221. An Indian GST part named with its rate glued, as Zoho names a tax group ("CGST9 (9%)")
def test_a_gst_parts_name_with_its_rate_glued_is_a_tax_label():
    text = (
        "Invoice Date  : 05/03/2025\nSub Total  98,750.00\nCGST9 (9%)  8,887.50\nSGST9 (9%)  8,887.50\n"
        "Total  ₹1,16,525.00\n"
    )
    assert [role for _, role in amount_roles(text)] == ["subtotal", "tax", "tax", "total"]
    # not flagged: the tax is the sum of its two printed parts
    assert min(factors(text, {"subtotal": 98750.0, "tax": 17775.0, "total": 116525.0}).values()) > 0.7


# 222. A tax said to be left out, with no label before it ("Amount before VAT", "Importe sin
# IVA", "Value without GST"), names the goods' sum, not the tax; a word that adds the tax
# ("zzgl. 19% MwSt", "plus VAT") leaves the label the tax's. Turkey's withheld VAT ("KDV
# Tevkifat Tutarı", "Tevkif Edilen KDV") is a withholding, not a second tax
@pytest.mark.parametrize("label", ["Amount before VAT", "Value without GST", "Importe sin IVA", "Betrag ohne MwSt"])
def test_a_tax_left_out_names_the_goods_sum(label):
    text = f"{label}      5,000.00\nVAT 7%                350.00\nGrand Total         5,350.00\n"
    assert [role for _, role in amount_roles(text)] == ["subtotal", "tax", "total"]
    clean(text, {"subtotal": 5000.0, "tax": 350.0, "total": 5350.0})
    flagged(text, {"subtotal": 5000.0, "tax": 5000.0, "total": 5350.0}, "tax", "not as a labelled tax")


@pytest.mark.parametrize("label", ["zzgl. 19% MwSt", "plus VAT 19%"])
def test_a_tax_added_stays_the_tax(label):
    text = f"Summe            300,00\n{label}     57,00\nGesamt           357,00\n"
    assert [role for _, role in amount_roles(text)] == ["subtotal", "tax", "total"]


@pytest.mark.parametrize("label", ["KDV Tevkifat Tutarı (5/10)", "Tevkif Edilen KDV (5/10)", "Withheld VAT (50%)"])
def test_a_withheld_vat_is_a_withholding_not_a_second_tax(label):
    text = (
        "Fatura No: ANY2026000000123\nMal Hizmet Toplam Tutarı     10.000,00 TL\n"
        "Hesaplanan KDV(%20)           2.000,00 TL\n"
        f"{label}    1.000,00 TL\nVergiler Dahil Toplam Tutar  12.000,00 TL\nÖdenecek Tutar               11.000,00 TL\n"
    )
    record = {"subtotal": 10000.0, "tax": 2000.0, "total": 11000.0}
    # what the buyer pays, the total after the withholding: not flagged (the withholding that
    # explains it lowers it a little, no more); the sum before it is (the schemas' convention)
    assert min(factors(text, record).values()) > 0.7
    flagged(text, {**record, "total": 12000.0}, "total", "before the tax withheld")
    flagged(text, {**record, "tax": 1000.0}, "tax", "not as a labelled tax")


# 223. A fourth printed round. A receipt's number given as another number its card slip or
# booking prints: under a number sign glued to its label ("AUTH# 084213"), an authorisation
# code, a booking's, a kitchen ticket's or a returned sale's original receipt
@pytest.mark.parametrize(
    "line,wrong",
    [
        ("AUTH# 084213           REF# 631218", "084213"),
        ("Auth.-Code               620144", "620144"),
        ("Nº AUTORIZACION          772914", "772914"),
        ("Booking ID  A-8830264150", "A-8830264150"),
        ("KOT No: 231, 232               Dine In", "231"),
        ("Orig Rcpt: 0231/04/118872", "0231/04/118872"),
        ("NPWP: 01.234.567.8-012.000", "01.234.567.8-012.000"),
        ("Kassen-ID: AF-2147-K03", "AF-2147-K03"),
        ("TSE-Transaktion: 88231", "88231"),
        ("Mã tra cứu: K25TMV-7HQ2P9", "K25TMV-7HQ2P9"),
    ],
)
def test_a_receipt_number_given_as_another_printed_number(line, wrong):
    text = f"FRESHWAY MARKET\n1820 N High St\n{line}\nReceipt No: 04829\nTOTAL   46.11\n10/14/26  06:42 PM\n"
    record = {"merchant_name": "FRESHWAY MARKET", "date": "2026-10-14", "total": 46.11}
    assert factors(text, {**record, "receipt_number": "04829"}, RECEIPT)["receipt_number"] > 0.7
    assert factors(text, {**record, "receipt_number": wrong}, RECEIPT)["receipt_number"] < 0.7


# A returned item's or a credit note's count is printed with its minus ("-1 @ $29.00")
def test_a_negative_quantity_is_found_with_its_sign():
    text = "TRADESMART\nHAMMER CLAW 20OZ\n -1 @ $29.00             -$29.00\nTOTAL  -$29.00\n"
    line = {"description": "HAMMER CLAW 20OZ", "quantity": -1, "unit_price": 29.0, "amount": -29.0}
    record = {"merchant_name": "TRADESMART", "date": "2026-10-14", "total": -29.0, "items": [line]}
    assert factors(text, record, RECEIPT)["items[0].quantity"] > 0.7  # (never written with a unit: 0.9)
    assert factors(text, {**record, "items": [{**line, "quantity": -2}]}, RECEIPT)["items[0].quantity"] < 0.7


# What names no tax or no subtotal: a category free of the tax ("GST-free supplies"), the
# part of the sum the tax is charged on (QuickBooks' "TAXABLE SUBTOTAL"), a line billed with
# no tax ("Court fee (no VAT)"), another document's figure ("Oorspronkelijk factuurbedrag")
@pytest.mark.parametrize(
    "text,roles",
    [
        ("Subtotal  281.75\nGST  36.15\nGST-free supplies  245.60\nTotal  $636.50\n", ["subtotal", "tax", None, "total"]),
        ("SUBTOTAL  2,085.80\nTAXABLE SUBTOTAL  1,747.79\nTAX (8%)  139.82\nTOTAL  2,125.62\n",
         ["subtotal", None, "tax", "total"]),
        ("Court fee – issue of claim (no VAT)      455.00    0.00\nVAT @ 20%   £800.00\n", [None, None, "tax"]),
        ("Oorspronkelijk factuurbedrag: € 4.862,35\nTotaal  € -1.015,19\n", [None, "total"]),
    ],
)  # fmt: skip
def test_words_before_or_after_a_label_that_make_it_name_nothing(text, roles):
    assert [role for _, role in amount_roles(text)] == roles


# A totals row of headers over one row of figures: the net's label and the next column's
# tax label are two columns, not one net "of VAT 25 %"; and a footer's own row of headings
# under them ("Adress  Telefon  Bankgiro") heads the figures under it, which are no second
# figure in the tax total's column
SWEDISH_TOTALS_ROW = (
    "Exkl. moms  Moms 25 %  Moms 6 %  Moms totalt  Öresavrundning  Att betala SEK\n"
    "30 154,40    7 464,10   17,88     7 481,98     -0,38  37 636,00\n\n"
    "Adress                Telefon                        Bankgiro         Momsreg.nr\n"
    "Norrskog Snickeri AB  090-13 48 20                   5521-3094        SE559123440801\n"
)


def test_a_totals_row_of_headers_names_each_figure_under_it():
    roles = dict(amount_roles(SWEDISH_TOTALS_ROW))
    assert [roles[f] for f in ("30 154,40", "7 464,10", "17,88", "7 481,98", "37 636,00")] == [
        "subtotal", "tax", "tax", "tax", "total"
    ]  # fmt: skip
    # not flagged: the rounding ("Öresavrundning -0,38") that explains the total lowers it a little
    assert min(factors(SWEDISH_TOTALS_ROW, {"subtotal": 30154.40, "tax": 7481.98, "total": 37636.00}).values()) > 0.7


# "Of which" VAT ("DI CUI IVA", "davon MwSt", "dont TVA", "waarvan BTW"): the tax is within
# the figures, so a receipt's subtotal may equal its total
@pytest.mark.parametrize("label", ["DI CUI IVA", "davon MwSt", "dont TVA", "of which VAT", "waarvan BTW", "w tym VAT"])
def test_a_tax_of_which_the_figures_are_made_is_included(label):
    text = (
        f"BOUTIQUE X\n14-10-2026 17:48\nCAMICIA   59,00\nMAGLIONE  89,00\nSUBTOTALE   148,00\nTOTALE EUR  148,00\n"
        f"{label}   26,69\n"
    )
    record = {"merchant_name": "BOUTIQUE X", "date": "2026-10-14", "subtotal": 148.0, "tax": 26.69, "total": 148.0}
    assert min(factors(text, record, RECEIPT).values()) > 0.7


# A Japanese till prints each rate's tax under the line of the base it is of ("（10%対象
# ¥663）" over "（内消費税等 ¥60）"): two taxes of two rates, whose sum is the record's tax
def test_a_tax_per_rate_under_its_base_line_is_a_part_of_the_tax():
    text = (
        "デイリーマート\n2026年10月14日(水)      07:42\n合 計       ¥1,792\n（10%対象            ¥663）\n（内消費税等             ¥60）\n"
        "（8%対象     ¥1,129）\n（内消費税等             ¥83）\n"
    )
    record = {"merchant_name": "デイリーマート", "date": "2026-10-14", "tax": 143, "total": 1792}
    assert factors(text, record, RECEIPT)["tax"] > 0.7


# 224. The buyer given as the seller, as the fourth printed round wrote it: the same name
# under the buyer's label and a delivery's ("BILL TO  SHIP TO" over it twice); a label in a
# row of headings in capitals ("FACTURAR A   PROYECTO"); "Adressé à"; a block whose heading
# names the party and whose own key names the name ("RECEPTOR" over "Nombre: ...",
# "Cessionario/committente (cliente)" over "Codice fiscale: ..." over "Denominazione: ...")
@pytest.mark.parametrize(
    "text,name",
    [
        ("Cascade Ridge Outfitters LLC\nINVOICE\nBILL TO                 SHIP TO  INVOICE NO.             1047\n"
         "Hollis Mountain Guides  Hollis Mountain Guides   DATE    03/14/2026\nTOTAL   $1,686.35\n",
         "Hollis Mountain Guides"),
        ("Laura Méndez Ortega\nFACTURAR A                                           PROYECTO\n"
         "Distribuciones Ebro S.L.                             Optimización del almacén central\nTOTAL  2.420,00 €\n",
         "Distribuciones Ebro S.L."),
        ("ÉMETTEUR                     ADRESSÉ À\nAtelier Lumière Vive SARL    Boulangerie Maison Guérin\n"
         "Total TTC   1 200,00 €\n", "Boulangerie Maison Guérin"),
        (" EMISOR\n Nombre: TALLER GRÁFICO DEL BAJÍO SA DE CV\n\n RECEPTOR\n"
         " Nombre: CONSTRUCCIONES ALTAMIRA S.A. DE C.V.       Régimen fiscal receptor: 601\nTotal $11,600.00\n",
         "CONSTRUCCIONES ALTAMIRA S.A. DE C.V."),
        (" Cedente/prestatore (fornitore)                        Cessionario/committente (cliente)\n"
         " Codice fiscale: FRRGLI78E52A944K                      Codice fiscale: 02877430377\n"
         " Denominazione: Studio Tecnico Arch. Giulia Ferraresi  Denominazione: Immobiliare Reno S.r.l.\n"
         "Totale documento  7.029,15\n", "Immobiliare Reno S.r.l."),
    ],
)  # fmt: skip
def test_the_buyers_name_the_fourth_round_gave_as_the_seller_is_caught(text, name):
    assert factors(text, {"vendor_name": name})["vendor_name"] < 0.7


@pytest.mark.parametrize(
    "text,name",
    [
        # the seller's own name under its block's heading and key
        (" Cedente/prestatore (fornitore)                        Cessionario/committente (cliente)\n"
         " Codice fiscale: FRRGLI78E52A944K                      Codice fiscale: 02877430377\n"
         " Denominazione: Studio Tecnico Arch. Giulia Ferraresi  Denominazione: Immobiliare Reno S.r.l.\n",
         "Studio Tecnico Arch. Giulia Ferraresi"),
        # a name key under no party's heading, or under one a free line away
        ("Supplier details\nName: Northwind Traders Ltd\nTotal  120.00\n", "Northwind Traders Ltd"),
        ("BILL TO\n\nName: Northwind Traders Ltd\nTotal  120.00\n", "Northwind Traders Ltd"),
        # goods collected at the seller's own store: its name under a delivery's label only
        ("Ship To\nGreenleaf Garden Centre\nTotal  120.00\n", "Greenleaf Garden Centre"),
        # two blocks' headings one a line, their keys interleaved (a text of one cell a line)
        ("Sprzedawca\nNabywca\nNIP: 9999999999\nNIP: 1111111111\nNazwa: ABC Developex S.A.\n"
         "Nazwa: F.H.U. Jan Kowalski\nRazem  1 230,00 PLN\n", "ABC Developex S.A."),
    ],
)  # fmt: skip
def test_a_seller_no_buyers_heading_names_passes(text, name):
    assert factors(text, {"vendor_name": name})["vendor_name"] == 1.0


# An invoice's number given as another number its print labels: a document code a tax
# authority gives it (Portugal's ATCUD), the customer's order ("Pedido cliente", "P.O.#"),
# a payment reference (Sweden's OCR-nr), a registration number (Japan's 登録番号)
@pytest.mark.parametrize(
    "line,wrong",
    [
        ("4450-158 Matosinhos               ATCUD: JJ3K8P9M-318", "JJ3K8P9M-318"),
        ("CIF: B50123456                     Pedido cliente: PED-26-0219", "PED-26-0219"),
        ("Singapore 079007                   P.O.# :  TB-PO-2026-118", "TB-PO-2026-118"),
        ("Bankgiro 5521-3094                 OCR-nr: 102881147", "102881147"),
        ("総務部 ご担当 佐藤様                      登録番号：T4020001098765", "T4020001098765"),
        ("Bon de commande / PO :      BC-4471", "BC-4471"),
        ("ΜΑΡΚ: 400001948271634", "400001948271634"),
        ("Sipariş No: 100-7732145", "100-7732145"),
    ],
)
def test_an_invoice_number_given_as_another_labelled_number(line, wrong):
    text = f"Atelier Norte Lda\nFatura / Invoice No: FT-2026A/318\nDate: 2026-03-23\n{line}\nTotal  EUR 1,230.00\n"
    assert factors(text, {"invoice_number": "FT-2026A/318"})["invoice_number"] == 1.0
    assert factors(text, {"invoice_number": wrong})["invoice_number"] < 0.7


# A CAE's expiry date on an Argentine invoice ("Fecha Vto. CAE:20/03/2011") is no invoice
# date: read whole, not as the code's label "CAE" over a date
def test_a_cae_expiry_date_is_no_invoice_date():
    text = (
        "Factura A\nNº:  4000-12345678\nFecha:   27/03/2011\n"
        " C.A.E. Nº 61123022925855 Fecha Vto. CAE:20/03/2011          IVA 21%           21,00\nTotal:  122,00\n"
    )
    assert factors(text, {"invoice_date": "2011-03-27"})["invoice_date"] == 1.0
    flagged(text, {"invoice_date": "2011-03-20"}, "invoice_date", "only under 'Fecha Vto. CAE'")


# 225. Two hostile reviews of tests 222-224's changes: what they must leave alone
@pytest.mark.parametrize(
    "text,record",
    [
        # "frei Haus" is a delivery term: the total is still labelled (its label names the 450,00)
        ("Rabatt 10%                    -50,00 €\nGesamtbetrag frei Haus        450,00 €\n", {"total": 450.0}),
        # a word that leaves the tax out in the cell to the left (wrapped payment terms)
        ("Bitte überweisen Sie den Betrag          Nettobetrag                300,00 €\n"
         "innerhalb von 14 Tagen ohne              MwSt 19 %                   57,00 €\n"
         "Abzug auf unser Konto.                   Gesamtbetrag               357,00 €\n",
         {"subtotal": 300.0, "tax": 57.0, "total": 357.0}),
        # a net and its rate's tax label in one cell, the figure beside them: the net of that rate
        ("Netto  BTW 9%      10,00\nBTW 9%              0,90\nTotaal             10,90\n",
         {"subtotal": 10.0, "tax": 0.9, "total": 10.9}),
    ],
)  # fmt: skip
def test_what_the_reviews_found_the_fourth_rounds_words_must_leave_alone(text, record):
    passes(text, record)


@pytest.mark.parametrize(
    "text,record,field",
    [
        # "Total gross   of which VAT" over two figures: two columns, the tax's its own
        ("Total TTC        dont TVA\n120,00 €         20,00 €\nArticle A   60,00 €\nArticle B   60,00 €\n",
         {"total": 120.0, "tax": 60.0}, "tax"),
        # the pre-discount sum given as the total where "frei Haus" follows the total's label
        ("1    Buche ofenfertig 33cm   5 rm   100,00   500,00 €\nRabatt 10%                    -50,00 €\n"
         "Gesamtbetrag frei Haus        450,00 €\n", {"total": 500.0}, "total"),
        # a service charge at its own rate over the tax: no base of it, so the tax printed twice
        # is one tax, and a sum of it and something else is no sum of its parts
        ("14/10/2026 13:05   Receipt No: A0412\nLaksa    S$8.50\nTeh tarik   S$2.20\nSvc Chrg 10%   S$1.07\n"
         "GST   S$1.06\nTOTAL   S$12.83\n---- GST Summary ----\nAmount chargeable 9%   S$11.77\nGST   S$1.06\n",
         {"tax": 11.77, "total": 12.83}, "tax"),
    ],
)  # fmt: skip
def test_what_the_reviews_found_must_still_be_caught(text, record, field):
    assert factors(text, record)[field] < 0.7


# A part number's hyphen is no minus ("7781-2"): a count of -2 is not read in it
def test_a_part_numbers_hyphen_is_no_minus():
    text = "Part no 7781-2  Brake pads   -1   -45.00\nTotal  -45.00\n"
    line = {"description": "Brake pads", "quantity": -2, "amount": -45.0}
    assert factors(text, {"total": -45.0, "line_items": [line]})["line_items[0].quantity"] < 0.7


# A name's key under another party's heading, or a capitals label with its value beside it:
# the seller's own name is not read as the buyer's
@pytest.mark.parametrize(
    "text,schema,record",
    [
        ("Bill To:\nName: Contoso Events Ltd\nEmail: accounts@contoso.example\nFrom:\nName: Harbour Light Catering\n"
         "Total  £120.00\n", "invoice", {"vendor_name": "Harbour Light Catering"}),
        ("Cliente:\nRazón social: Hotel Sol S.L.\nDatos del emisor:\nRazón social: Imprenta Norte S.L.\n"
         "Total  120,00 €\n", "invoice", {"vendor_name": "Imprenta Norte S.L."}),
        ("CUSTOMER   WALK IN\nKWIK FUEL & MART\n12 Main Rd\nTOTAL  R 120.00\n14/10/2026 09:12\n", "receipt",
         {"merchant_name": "KWIK FUEL & MART", "date": "2026-10-14", "total": 120.0}),
    ],
)  # fmt: skip
def test_a_sellers_name_under_its_own_heading_or_beside_a_value_passes(text, schema, record):
    name = "vendor_name" if schema == "invoice" else "merchant_name"
    assert factors(text, record, builtin(schema))[name] == 1.0


# A document whose only number is a booking's or a kitchen ticket's: that number stands in
# for its own, where its own label is nowhere
# ("Check-in" and "Check-out" are dates, no receipt's "Check" label)
@pytest.mark.parametrize(
    "text,schema,field,value",
    [
        ("MAKEMYSTAY GUEST HOUSE\nReservation No: 55102\nCheck-in 12/10/2026   Check-out 14/10/2026\n"
         "Total   NPR 6,800.00\nPaid cash   14/10/2026\n", "receipt", "receipt_number", "55102"),
        ("KESARI DINING\nKOT No: 1145        Dine In\n14/10/2026 20:15\nNet Amount  ₹1,240.00\n", "receipt",
         "receipt_number", "1145"),
        ("Skyways Travel Ltd\nBooking Ref: SKY-88412\nDate: 14/10/2026\nTotal  £980.00\n", "invoice", "invoice_number",
         "SKY-88412"),
    ],
)  # fmt: skip
def test_a_documents_only_number_under_a_stand_in_label_passes(text, schema, field, value):
    record = {field: value} if schema == "invoice" else {field: value, "merchant_name": text.split("\n")[0]}
    assert factors(text, record, builtin(schema))[field] == 1.0


# Two labels joined by a slash ("OCR-nr/Fakturanr: 10234") name one value: no web address
def test_two_labels_joined_by_a_slash_are_no_web_address():
    text = "Nordlicht Bygg AB\nFAKTURA\nOCR-nr/Fakturanr: 10234\nFakturadatum: 2025-03-05\nAtt betala SEK  5 500,00\n"
    assert factors(text, {"invoice_number": "10234"})["invoice_number"] == 1.0


# A ride's labelled fees together make the total's difference from fare and tip, to the cent,
# though they are more than a quarter of it: every labelled charge at once is evidence, as one is
RIDE_RECEIPT = (
    "Rydo\n November 8, 2025\nTotal  $34.55\n\nTrip fare  $22.40\nSubtotal   $22.40\nBooking Fee        $3.15\n"
    "Airport Surcharge  $4.00\nTip                $5.00\n\nVisa ••••4821  $34.55\n11/8/25 6:14 PM\n"
)


def test_every_labelled_charge_together_makes_the_difference():
    record = {"merchant_name": "Rydo", "date": "2025-11-08", "subtotal": 22.4, "tip": 5.0, "total": 34.55}
    assert min(factors(RIDE_RECEIPT, record, RECEIPT).values()) > 0.7
    # some of them are not: a total the fees do not make up is still flagged
    assert factors(RIDE_RECEIPT, {**record, "total": 31.55}, RECEIPT)["total"] < 0.7


# 226. A fifth printed round's receipts: a Malaysian till's "NET TOTAL" right under its
# rounding line is the rounded total, no net; a Philippine till's permit block ("PTU No." /
# "Date Issued:") dates the permit, not the sale; its "Sub Total" with the VAT in it and
# "VATable Sales" without are both the goods' sum, differing by the VAT
MALAYSIAN_ROUNDED_TOTAL = (
    "RESTORAN SERI MUTIARA\nDate : 15/11/2025           Time : 13:18\n2  Nasi Lemak Ayam Rendang  16.90 33.80\n"
    "Subtotal                        33.80\nService Charge 10%               3.38\nService Tax 6%                   2.23\n"
    "Total                           39.41\nRounding Adj                    -0.01\nNET TOTAL (RM)                  39.40\n"
)


def test_a_net_total_under_a_rounding_line_is_the_rounded_total():
    roles = dict(amount_roles(MALAYSIAN_ROUNDED_TOTAL))
    assert roles["39.40"] == "total"
    record = {
        "merchant_name": "RESTORAN SERI MUTIARA",
        "date": "2025-11-15",
        "subtotal": 33.8,
        "tax": 2.23,
        "total": 39.4,
    }
    assert min(factors(MALAYSIAN_ROUNDED_TOTAL, record, RECEIPT).values()) > 0.7
    # a net total under no rounding line is still a net figure
    assert dict(amount_roles("Net total   100.00\nVAT 20%   20.00\nTotal   120.00\n"))["100.00"] == "subtotal"


PHILIPPINE_RECEIPT = (
    "KUSINA NG ALON\nSI No.: 00048213  11/21/2025 19:42\n1 Sinigang na Hipon       485.00\n"
    "1 Pancit Canton Guisado   320.00\nSub Total              805.00\nTOTAL DUE              805.00\n"
    "VATable Sales          718.75\nVAT Amount (12%)        86.25\n"
    "   PTU No. FP072025-049-0412345-00000\n       Date Issued: 07/15/2025\n       Valid until: 07/31/2030\n"
)


def test_a_philippine_tills_permit_date_and_gross_and_net_sums_raise_nothing():
    record = {"merchant_name": "KUSINA NG ALON", "date": "2025-11-21", "subtotal": 718.75, "tax": 86.25, "total": 805.0}
    assert min(factors(PHILIPPINE_RECEIPT, record, RECEIPT).values()) > 0.7
    # the permit's dates given as the sale's are still caught
    assert factors(PHILIPPINE_RECEIPT, {**record, "date": "2030-07-31"}, RECEIPT)["date"] < 0.7
    # the gross given as the amount before tax is no rival of the net, but it does not add
    # up (the arithmetic names the net the source labels); and a subtotal the VAT does not
    # part from the other is a rival
    gross = factors(PHILIPPINE_RECEIPT, {**record, "subtotal": 805.0}, RECEIPT)
    assert not any(
        "conflicting" in r for r in reasons(PHILIPPINE_RECEIPT, {**record, "subtotal": 805.0}, RECEIPT)["subtotal"]
    )
    assert gross["subtotal"] < 0.75
    assert any(
        "conflicting" in r
        for r in reasons(PHILIPPINE_RECEIPT, {**record, "subtotal": 805.0, "tax": 80.0}, RECEIPT)["subtotal"]
    )


# A sixth printed round: a Japanese till's tax added per rate ("外税8%  ¥115"), its rate glued
# to the label and the rate's base on the line before ("外税8%対象額  ¥1,448"): two parts of the tax
def test_a_tax_added_per_rate_with_its_rate_glued():
    text = (
        "スーパーみなと\n2026年03月14日 18:22\n小計               ¥1,701\n外税8%対象額          ¥1,448\n"
        "外税8%              ¥115\n外税10%対象額          ¥253\n外税10%              ¥25\n合計               ¥1,841\n"
    )
    assert [role for _, role in amount_roles(text)] == ["subtotal", None, "tax", None, "tax", "total"]
    record = {"merchant_name": "スーパーみなと", "date": "2026-03-14", "subtotal": 1701, "tax": 140, "total": 1841}
    assert min(factors(text, record, RECEIPT).values()) > 0.7
    assert factors(text, {**record, "tax": 1448}, RECEIPT)["tax"] < 0.7


# 227. A review of test 226's changes: what they must leave alone, and what must still be caught
@pytest.mark.parametrize(
    "text,record",
    [
        # a net total under a rounding line with its VAT after it is still the net
        ("Sub-total   4,019.70\nDiscount 5%  -200.99\nRounding  -0.71\nNet total   3,818.00\nVAT 20%  763.60\n"
         "Total due (GBP)  4,581.60\n", {"subtotal": 3818.0, "tax": 763.6, "total": 4581.6}),
        # one charge worth as much as the subtotal explains the difference as it did
        ("Subtotal 12.00\nShipping 12.00\nSales tax 1.23\nOrder total 25.23\n",
         {"subtotal": 12.0, "tax": 1.23, "total": 25.23}),
    ],
)  # fmt: skip
def test_what_the_review_of_the_fifth_rounds_fixes_must_leave_alone(text, record):
    passes(text, record)


@pytest.mark.parametrize(
    "text,record,field",
    [
        # a permit's column beside the invoice's: the permit's date given as the invoice's
        ("Permit No: BP-2025-01173                   Invoice #: 1042\n"
         "Permit issued: 03/02/2025                  Invoice Date: 07/21/2025\nTotal  $1,200.00\n",
         {"invoice_date": "2025-03-02"}, "invoice_date"),
        # the invoice's own date label under a permit's number still names the invoice's date
        ("Import Permit No: 24071512345678            Job Ref: SCB-J-88120\n"
         "Invoice Date: 22/07/2025                    Invoice No: SCB-25-07044\n"
         "Payment due: 21/08/2025. Permit approval date: 15/07/2025\n", {"invoice_date": "2025-07-15"}, "invoice_date"),
        # charges a later subtotal already holds explain no goods' sum given as the subtotal
        ("Items total 30.00\nBooking fee 6.00\nCard handling fee 4.50\nSubtotal 40.50\nVAT 20% 8.10\n"
         "Total paid GBP 48.60\n", {"subtotal": 30.0, "tax": 8.1, "total": 48.6}, "subtotal"),
    ],
)  # fmt: skip
def test_what_the_review_of_the_fifth_rounds_fixes_must_still_catch(text, record, field):
    assert factors(text, record)[field] <= X.ARITHMETIC_FACTOR


# A customer's own order ("Pedido cliente", "Bon de commande") is never the invoice's number,
# even where the invoice prints no number of its own (a seller's "Pedido" may be)
@pytest.mark.parametrize("label", ["Pedido cliente", "Su pedido", "Bon de commande", "N° bon de commande"])
def test_a_customers_order_in_other_languages_stands_in_for_no_invoice_number(label):
    text = f"Talleres Norte S.L.\nFecha: 14/10/2026\n{label}: PED-26-0219\nTotal  1.210,00 €\n"
    assert factors(text, {"invoice_number": "PED-26-0219"})["invoice_number"] < 0.7
    assert factors(text.replace(label, "Pedido"), {"invoice_number": "PED-26-0219"})["invoice_number"] == 1.0


# 228. A seventh printed round (software invoices, twelve new countries, receipts by genre):
# the classes its correct records were flagged for at first contact
def test_a_description_wrapped_after_its_feet_mark_is_grounded():
    text = (
        " DATE        DESCRIPTION                               QTY   RATE    AMOUNT\n"
        ' 03/12/2026  Red oak base moulding 3-1/4" x            120   14.75  1,770.00\n'
        "             8'\n\n"
        " 03/12/2026  Poplar door casing 2-1/4\" x 7'             85    9.40    799.00\n"
    )
    item = {"description": "Red oak base moulding 3-1/4\" x 8'", "quantity": 120, "unit_price": 14.75, "amount": 1770.0}
    assert factors(text, {"line_items": [item]})["line_items[0].description"] == 1.0
    # a row's figure alone under the description is still another row, no wrapped part
    other = text.replace("             8'", "             8       2.00     16.00")
    assert factors(other, {"line_items": [item]})["line_items[0].description"] < 0.7


NZ_ORDER = (
    "Order summary\n Rimu Serving Board (Large)      × 1  $79.00  $79.00\n"
    "   Subtotal                             $211.70\n   Discount (AUTUMN15)                  −$31.76\n"
    "   Shipping (NZ Post\n   Courier – North Island)                     $9.50\n"
    "   Total                               $189.44 NZD\n   Including $24.71 in GST\n"
)


def test_a_charges_label_wrapped_in_a_narrow_column_labels_the_figure_beside_its_end():
    record = {"subtotal": 211.7, "tax": 24.71, "total": 189.44}
    assert any("shipping 9.50" in r for r in reasons(NZ_ORDER, record, RECEIPT)["total"])
    # and the subtotal given as the total is still caught
    assert factors(NZ_ORDER, {**record, "total": 211.7}, RECEIPT)["total"] < 0.7


SHOPIFY = (
    "Subtotal             £152.00\nDiscount (SPRING15)  -£22.80\nShipping (Royal Mail Tracked 48)  £3.95\n"
    "Total  £133.15 GBP\nIncluding VAT 20%                 £22.19\n"
)


def test_an_inclusion_and_a_tax_label_before_a_rate_name_the_tax_within_the_figures():
    assert [role for _, role in amount_roles(SHOPIFY)] == ["subtotal", None, None, "total", "tax"]
    record = {"subtotal": 152.0, "tax": 22.19, "total": 133.15}
    assert min(factors(SHOPIFY, record).values()) > 0.7
    assert factors(SHOPIFY, {**record, "total": 22.19})["total"] < 0.7
    # with no rate after it, "Including VAT" still labels the total including it
    assert amount_roles("Net  100.00\nVAT  20.00\nIncluding VAT  120.00\n")[-1] == ("120.00", "total")


@pytest.mark.parametrize(
    "line,figure",
    [
        ("Total de plată (col. 5 + col. 6)  13.744,50", "13.744,50"),
        ("Shipping (Royal Mail Tracked 48)  £3.95", "3.95"),
        ("Imposta di soggiorno (esclusa art. 15 DPR 633/72)    48,00", "48,00"),
    ],
)
def test_whole_numbers_in_a_labels_brackets_are_its_words_not_its_figure(line, figure):
    assert [raw for raw, _ in amount_roles(line + "\n")] == [figure]
    # a count in brackets after the line's figure is read as before
    assert [raw for raw, _ in amount_roles("Total 13.744,50 (5 items)\n")] == ["13.744,50", "5"]


SQUARE = (
    "Subtotal                   $5,092.00\nSales tax (8.25%)           $420.09\nTotal                      $5,512.09\n"
    "Deposit paid Mar 3, 2026  -$1,500.00\nBalance due  $4,012.09\n"
)


def test_a_deposit_paid_is_a_payment_not_a_discount_off_the_total():
    assert [role for _, role in amount_roles(SQUARE)] == ["subtotal", "tax", "total", None, "total"]
    record = {"subtotal": 5092.0, "tax": 420.09, "total": 5512.09}
    assert min(factors(SQUARE, record).values()) > 0.7
    # a deposit off the price, unpaid, is still taken off the total it follows
    off = SQUARE.replace("Deposit paid Mar 3, 2026", "Deposit")
    assert [role for _, role in amount_roles(off)][2] == "total"


@pytest.mark.parametrize(
    "text,code,schema",
    [
        ("Total TTC (DH)  29 232,00\nArrêtée la présente facture à la somme de vingt-neuf mille dirhams TTC.\n", "MAD", INVOICE),
        ("ΣΥΝΟΛΟ ΕΥΡΩ  29,26\nΜΕΤΡΗΤΑ  30,00\n", "EUR", RECEIPT),
    ],
)  # fmt: skip
def test_a_currency_as_its_country_writes_it(text, code, schema):
    total = 29232.0 if code == "MAD" else 29.26
    assert factors(text, {"total": total, "currency": code}, schema)["currency"] == 1.0
    assert factors(text, {"total": total, "currency": "GBP"}, schema)["currency"] < 0.7
    if code == "MAD":  # the dirham of the Emirates where the Emirates' tax words stand beside it
        emirati = text.replace("Total TTC", "Total incl. VAT").replace("TTC.", "(TRN 100234567800003).")
        assert factors(emirati, {"total": total, "currency": "AED"})["currency"] == 1.0


def test_a_japanese_of_which_tax_is_the_tax_within_the_total():
    text = "小計  ¥8,450\n（うち税抜金額 ¥7,682）\n（うち消費税 10% ¥768）\n合計（税込） ¥8,450\n"
    record = {"subtotal": 8450, "tax": 768, "total": 8450}
    assert min(factors(text, record, RECEIPT).values()) > 0.7
    assert factors(text, {**record, "tax": 7682}, RECEIPT)["tax"] < 0.7


@pytest.mark.parametrize(
    "text,record",
    [
        # a Belgian pharmacy: the insurer's share off the public price
        ("Totaal publieksprijs  45,82\nTussenkomst verzekering  -22,74\nTE BETALEN EUR  23,08\n",
         {"total": 23.08}),
        # a Turkish restaurant's service charge
        ("ARA TOPLAM  *2.340,00\nSERVİS ÜCRETİ %10  *234,00\nTOPKDV  *293,09\nTOPLAM  *2.574,00\n"
         "KDV DAHİL FİYATLARDIR\n", {"subtotal": 2340.0, "tax": 293.09,
                                     "total": 2574.0}),
        # an Estonian ride: a promo code, the net after it, the tip
        ("Vahesumma  11,53 €\nSooduskood SYGIS15  −1,50 €\nSõidu hind kokku  10,03 €\nJootraha juhile  1,00 €\n"
         "Kokku makstud  11,03 €\nSumma km-ta  8,09 €\nKäibemaks 24%  1,94 €\n",
         {"subtotal": 8.09, "tax": 1.94, "tip": 1.0, "total": 11.03}),
    ],
)  # fmt: skip
def test_third_party_shares_service_charges_promo_codes_and_tips_in_more_languages(text, record):
    assert min(factors(text, record, RECEIPT).values()) > 0.7
    total = record["total"]
    assert factors(text, {**record, "total": round(total * 1.5, 2)}, RECEIPT)["total"] < 0.7


def test_a_tills_lines_less_a_promo_code_make_the_total_before_the_tip():
    text = (
        "Alustustasu           1,50 €\nVahemaa               5,81 €\nAeg                   3,23 €\n"
        "Broneerimistasu       0,99 €\nVahesumma           11,53 €\nSooduskood SYGIS15  −1,50 €\n"
        "Sõidu hind kokku    10,03 €\nJootraha juhile       1,00 €\nKokku makstud        11,03 €\n"
        "Summa km-ta        8,09 €\nKäibemaks 24%      1,94 €\n"
    )
    items = [{"description": d, "amount": a} for d, a in
             (("Alustustasu", 1.5), ("Vahemaa", 5.81), ("Aeg", 3.23), ("Broneerimistasu", 0.99))]  # fmt: skip
    record = {"items": items, "subtotal": 8.09, "tax": 1.94, "tip": 1.0, "total": 11.03}
    assert min(factors(text, record, RECEIPT).values()) > 0.7
    # the goods' sum with the tax in it is no amount before tax (as test 206 has it)
    assert factors(text, {**record, "subtotal": 11.53}, RECEIPT)["subtotal"] < 0.7


def test_a_lithuanian_series_and_number_and_totals_with_the_tax_in_them():
    text = (
        "PVM SĄSKAITA FAKTŪRA\nSerija LTV Nr. 004512\n2025 m. kovo 18 d.\nSuma be PVM:  3216,00\n"
        "PVM 21 %:  675,36\nBendra suma su PVM:  3891,36\n"
    )
    record = {"invoice_number": "LTV 004512", "subtotal": 3216.0, "tax": 675.36,
              "total": 3891.36}  # fmt: skip
    passes(text, record)
    assert factors(text, {**record, "invoice_number": "LTV 004521"})["invoice_number"] < 0.7
    assert factors(text, {**record, "tax": 3891.36})["tax"] < 0.7
    ukrainian = "Разом:  18 750,00\nСума ПДВ:  3 750,00\nВсього із ПДВ:  22 500,00\n"
    record = {"subtotal": 18750.0, "tax": 3750.0, "total": 22500.0}
    assert min(factors(ukrainian, record).values()) > 0.7
    assert factors(ukrainian, {**record, "total": 18750.0})["total"] < 0.7


# 229. The seventh round's silent values: a fiscal series and number are the invoice's own
# number, so an order's number under its label stands in for none; buyers' labels in more
# languages, and a key's column beside its values' ("Покупець:      ПП «...»")
def test_a_fiscal_series_and_number_are_the_documents_own_number():
    text = (
        "FACTURĂ\nSeria CSS nr. 0457    Data (zi/lună/an): 14.03.2025\n"
        "Contract nr. 14/2024 din 08.01.2024  |  Comanda nr. 8812  |  Termen de plată: 13.04.2025\n"
        "Total de plată  13.744,50\n"
    )
    record = {"invoice_number": "CSS 0457", "invoice_date": "2025-03-14", "total": 13744.5}
    assert min(factors(text, record).values()) == 1.0
    assert factors(text, {**record, "invoice_number": "8812"})["invoice_number"] < 0.7
    assert factors(text, {**record, "invoice_date": "2025-04-13"})["invoice_date"] < 0.7
    # with no number of its own printed, a seller's order still stands in for it
    alone = text.replace("Seria CSS nr. 0457    ", "")
    assert factors(alone, {**record, "invoice_number": "8812"})["invoice_number"] == 1.0


@pytest.mark.parametrize(
    "text,seller,buyer",
    [
        (" Постачальник:  ТОВ «Дніпровські інструменти»\n                Код за ЄДРПОУ 43876512\n\n"
         " Покупець:      ПП «Галицька будова»\n                Код за ЄДРПОУ 39123456\n"
         " Договір:       Договір поставки № 17/24\nВсього із ПДВ:  22 500,00\n",
         "ТОВ «Дніпровські інструменти»", "ПП «Галицька будова»"),
        ("INVERSIONES ANDINAS DEL SUR S.A.C.\n                                      R.U.C. N° 20601234567\n"
         " Fecha de Emisión       : 21/08/2025            Fecha de Vencimiento  : 20/09/2025\n"
         " Señor(es)              : COMERCIAL HUANCAYO E.I.R.L.\n RUC                    : 20487654321\n"
         "IMPORTE TOTAL  S/ 5 900,00\n", "INVERSIONES ANDINAS DEL SUR S.A.C.", "COMERCIAL HUANCAYO E.I.R.L."),
        ("Pardavėjas:                                   Pirkėjas:\nUAB „Baltijos vėjas“                          "
         "MB „Žalias kampas“\nĮmonės kodas 304512877                       Įmonės kodas 305998124\n"
         "Bendra suma su PVM:  3891,36\n", "UAB „Baltijos vėjas“", "MB „Žalias kampas“"),
    ],
)  # fmt: skip
def test_a_buyer_under_its_label_in_more_languages_and_across_a_keys_gap(text, seller, buyer):
    assert factors(text, {"vendor_name": seller})["vendor_name"] == 1.0
    flagged(text, {"vendor_name": buyer}, "vendor_name", "where the buyer is named")


def test_a_label_across_a_gap_over_its_own_block_names_not_the_name_beside_it():
    # the label's column goes on under it: the name beside it is the next column's
    text = "Bill To:                                  Northwind Traders Ltd\nContoso Inc\n12 Harbour Road\nTotal  $540.00\n"
    assert factors(text, {"vendor_name": "Northwind Traders Ltd"})["vendor_name"] == 1.0


@pytest.mark.parametrize(
    "line,field,value,schema",
    [
        ("Kviitungi nr: VR-251114-77342\nTellimuse ID: 1184402291\n", "receipt_number", "1184402291", RECEIPT),
        ("領収書番号 K2511-0093-4471\n注文ID MQ7X2K9PLT\n", "receipt_number", "MQ7X2K9PLT", RECEIPT),
        ("ARVE nr 2025-118\nArve kuupäev  12.02.2025\nMaksetähtaeg  26.02.2025\n", "invoice_date", "2025-02-26", INVOICE),
        ("Račun br. 118-1-1\nDatum i vrijeme izdavanja: 07.06.2025. 14:32\nRok plaćanja: 22.06.2025.\n",
         "invoice_date", "2025-06-22", INVOICE),
        ("FACTURA ELECTRÓNICA F001-00002345\nGuía de Remisión: T001-00008871\n", "invoice_number", "T001-00008871",
         INVOICE),
    ],
)  # fmt: skip
def test_other_numbers_and_dates_under_their_labels_in_more_languages(line, field, value, schema):
    text = "Kõik OÜ\n" + line + "Total  45,00\n"
    assert factors(text, {field: value}, schema)[field] < 0.7


# 230. An eighth printed round, written against this pass's tree: the classes its correct
# records were flagged for at first contact, and its silent values in three more languages
def test_a_net_printed_per_category_is_the_sum_of_its_parts():
    text = (
        "Subtotal no gravado                 $ 0,00\nSubtotal gravado tasa mínima    $ 10.140,00\n"
        "Subtotal gravado tasa básica    $ 27.700,00\nIVA tasa mínima 10%              $ 1.014,00\n"
        "IVA tasa básica 22%              $ 6.094,00\nTOTAL                           $ 44.948,00\n"
    )
    record = {"subtotal": 37840.0, "tax": 7108.0, "total": 44948.0}
    passes(text, record)
    assert factors(text, {**record, "subtotal": 37841.0})["subtotal"] < 0.7
    # one category's net printed twice is no two parts
    twice = text.replace("tasa básica    $ 27.700,00", "tasa mínima    $ 27.700,00")
    assert factors(twice, record)["subtotal"] < 0.7


@pytest.mark.parametrize(
    "text,roles",
    [
        ("VSK 24%   48.627 kr.\nVSK samtals     48.627 kr.\nTil greiðslu   262.597 kr.\n", ["tax", "tax", "total"]),
        ("PDV ukupno  25,00\nUkupno za plaćanje  125,00\n", ["tax", "total"]),
        ("Subtotal  100.00\nIncl. GST Total  110.00\n", ["subtotal", "total"]),
        # two columns of a header, apart: the tax's and the document's
        ("Net        GST       Total\n100.00     10.00     110.00\n", ["subtotal", "tax", "total"]),
    ],
)
def test_a_tax_label_before_a_total_word_in_its_cell_is_the_taxs_total(text, roles):
    assert [role for _, role in amount_roles(text)] == roles


def test_cents_alone_as_a_us_till_prints_a_sum_under_a_dollar():
    text = "SUBTOTAL          45.24\nIL 2.25% TAX        .69\nIL 10.25% TAX     1.51\nTOTAL             47.44\n"
    record = {"subtotal": 45.24, "tax": 2.2, "total": 47.44}
    assert min(factors(text, record, RECEIPT).values()) > 0.7
    assert [raw for raw, _ in amount_roles(text)] == ["45.24", ".69", "1.51", "47.44"]
    assert [raw for raw, _ in amount_roles("Item .50 cal\nv.25 release\n")] == ["25"]


def test_a_total_of_what_bears_vat_is_no_total():
    text = (
        "SUBTOTAL   279.93\nYOU SAVED  -7.98\nTOTAL DUE  R  271.95\nTOTAL VATABLE   136.98\nVAT 15% INCLUDED   17.87\n"
    )
    record = {"subtotal": 279.93, "tax": 17.87, "total": 271.95}
    assert factors(text, record, RECEIPT)["total"] > 0.7
    assert factors(text, {**record, "total": 136.98}, RECEIPT)["total"] < 0.7


@pytest.mark.parametrize(
    "line,field,value",
    [
        ("РАЧУН БРОЈ: 145/2026\nДатум издавања рачуна 12.01.2026.\nДатум промета 10.01.2026.\n", "invoice_date",
         "2026-01-10"),
        ("РАЧУН БРОЈ: 145/2026\nБрој уговора: УГ-33/2025\n", "invoice_number", "УГ-33/2025"),
        ("Številka računa: 2026-00087\nNaročilnica št.: NAR-114/26\n", "invoice_number", "NAR-114/26"),
        ("Številka računa: 2026-00087\nKraj in datum izdaje: Ljubljana, 3. 2. 2026\nRok plačila: 17. 2. 2026\n",
         "invoice_date", "2026-02-17"),
        ("REIKNINGUR NR. 20417\nDAGSETNING 17.03.2026\nEINDAGI 06.04.2026\n", "invoice_date", "2026-04-06"),
        ("SELJANDI                     KAUPANDI\nNorðurljós ehf.              Fiskvinnslan Hafbrún hf.\n",
         "vendor_name", "Fiskvinnslan Hafbrún hf."),
    ],
)  # fmt: skip
def test_serbian_slovenian_and_icelandic_labels_name_their_values(line, field, value):
    assert factors(line + "Total  45,00\n", {field: value})[field] < 0.7


# 231. A review of tests 228-230's changes: what they must leave alone, and what must still
# be caught
HARTLEY = (
    "Hartley Appliance Repairs Ltd                       INVOICE\n"
    "LABOUR\nEngineer call-out and diagnosis                          95.00\n"
    "Repair labour 2 hrs                                     130.00\n"
    "                                 Labour subtotal        225.00\nPARTS\n"
    "Delivery & fitting (washing machine,\nintegrated, 60cm)                                        60.00\n\n"
    "                                 Subtotal               285.00\n"
    "                                 VAT 20%                 57.00\n"
    "                                 Total                  342.00\n"
)


@pytest.mark.parametrize(
    "text,record,schema",
    [
        # "incl. VAT 20%" after a total's label qualifies that total
        ("Subtotal                     1,000.00\nVAT 20%                        200.00\n"
         "Total payable incl. VAT 20%  1,200.00\nAmount paid                    500.00\nBalance due   700.00\n",
         {"subtotal": 1000.0, "tax": 200.0, "total": 1200.0}, INVOICE),
        # a product's series in an item line is no invoice's series and number
        ("GameHub Ltd\nOrder #1047\nXbox Series X Console - No Disc Drive      1   449.00\nTotal  £449.00\n",
         {"invoice_number": "1047"}, INVOICE),
        # the receiver of a payment is its merchant
        ("PAYMENT RECEIPT\nTransaction ID: QK71HX2P9M\nDate: 14/03/2026 10:22\nSender: John Kamau\n"
         "Receiver: Sunrise Dental Clinic\nAmount: KSh 3,500.00\n",
         {"merchant_name": "Sunrise Dental Clinic", "date": "2026-03-14", "total": 3500.0}, RECEIPT),
        # a letterhead beside a buyer's label over its own keyed block
        ("Bill To:                                       Brightside Web Studio Ltd\n"
         "Name:     Greenway Bakery Ltd                  22 Canal St, Manchester M1 3HE\n"
         "Address:  4 Mill Rd, Salford M5 4WT            VAT No: GB 123 4567 89\n\nTotal  540.00\n",
         {"vendor_name": "Brightside Web Studio Ltd"}, INVOICE),
    ],
)  # fmt: skip
def test_what_the_review_of_the_seventh_rounds_fixes_must_leave_alone(text, record, schema):
    passes(text, record, schema)


@pytest.mark.parametrize(
    "text,record,field,schema",
    [
        ("Subtotal                     1,000.00\nVAT 20%                        200.00\n"
         "Total payable incl. VAT 20%  1,200.00\nAmount paid                    500.00\nBalance due   700.00\n",
         {"total": 700.0}, "total", INVOICE),
        ("THE RED LION\n14/03/2026 20:41   Table 5\n\n2 x Fish & Chips            29.00\n"
         "2 x Pint Ale                11.60\nSticky toffee pudding        6.50\nTotal (incl. VAT 20%)       47.10\n"
         "Cash                        50.00\nChange                       2.90\n", {"total": 50.0}, "total", RECEIPT),
        # "Ice cream" is no Moroccan company number: the Emirates' dirham
        ("Al Noor Supermarket LLC\nTax Registration No: 100345678900003\nIce cream tub 1L   18.50\n"
         "VAT 5%   1.42\nTOTAL Dhs   29.75\n", {"total": 29.75, "currency": "MAD"}, "currency", RECEIPT),
        # a rate to the euro in a sentence names no currency of the document
        ("ООО «Техноимпорт»\nВсего к оплате:    25 000,00 руб.\n"
         "Цены указаны в рублях по курсу евро ЦБ РФ (1 евро = 98,50 руб.).\n",
         {"total": 25000.0, "currency": "EUR"}, "currency", INVOICE),
        # an item's description wrapped after a charge's word is no charge
        (HARTLEY, {"subtotal": 225.0, "tax": 57.0, "total": 342.0}, "subtotal", INVOICE),
        # "incl. VAT 20%" in brackets under the total is the tax within it
        ("Corner Café\nFlat white   3.40\nTOTAL          £14.00\n(incl. VAT 20%   £2.33)\nCard  £14.00\n",
         {"total": 2.33}, "total", RECEIPT),
        # "of which" the tax's total is the tax, no total
        ("Gesamtsumme                 38,79 €\ndavon MwSt. gesamt           6,19 €\n", {"tax": 38.79}, "tax", INVOICE),
        # an order's date beside the document's own "Fecha"
        ("FACTURA\nNº Factura: F-2026-0412\nFecha: 14/03/2026\nNº Pedido: P-7781\nFecha de pedido: 05/03/2026\n"
         "TOTAL  1.210,00 €\n", {"invoice_date": "2026-03-05"}, "invoice_date", INVOICE),
        # a series after the title in capitals, or after the title's word, is still the
        # document's own number
        ("FACTURA FISCALA seria CDS nr. 0457\nComanda nr. 8812\nTotal de plată  1.190,00\n",
         {"invoice_number": "8812"}, "invoice_number", INVOICE),
        ("Factura seria CDS nr. 0457 din 14.03.2026\nComanda nr. 8812\nTotal de plată  1.190,00\n",
         {"invoice_number": "8812"}, "invoice_number", INVOICE),
    ],
)  # fmt: skip
def test_what_the_review_of_the_seventh_rounds_fixes_must_still_catch(text, record, field, schema):
    assert factors(text, record, schema)[field] < 0.7


# A second review, of the eighth round's changes and the first review's mends
RUSSIAN_BILL = (
    "СЧЕТ НА ОПЛАТУ № 412 от 14 марта 2026 г.\n\n"
    "Поставщик:      ООО «Альфа-Снаб»\n                ИНН 7701234567, КПП 770101001\n"
    "                115054, г. Москва, ул. Валовая, д. 8, оф. 12\n"
    "                р/с 40702810938000012345 в ПАО Сбербанк\n                БИК 044525225, к/с 30101810400000000225\n\n"
    "Покупатель:     ООО «Бета-Строй»\n                ИНН 7702345678, КПП 770201001\n\n"
    "                                         Всего к оплате:    26 800,00 руб.\n"
)


@pytest.mark.parametrize(
    "text,record,schema",
    [
        # Bulgaria's euro, written after the sum
        ("ЕТ Балкан Трейд\nФактура № 0000004821\nОбщо за плащане: 492,00 евро\n", {"total": 492.0, "currency": "EUR"},
         INVOICE),
        # a label wrapped at 28 characters in a totals box
        ("   Subtotal                        $211.70\n   Shipping (NZ Post Courier,\n"
         "   North Island)                    $12.50\n   Total                           $224.20 NZD\n",
         {"subtotal": 211.7, "total": 224.2}, RECEIPT),
        # a bank account's "račun broj" is no invoice number's label: an order stands in
        ("ELEKTRO CENTAR d.o.o.\nNarudžba br. 7781                             Novi Sad, 14.03.2026\n"
         "Ukupno za uplatu    51.000,00 RSD\nUplatu izvršiti na tekući račun broj 160-0000000123456-78.\n",
         {"invoice_number": "7781"}, INVOICE),
    ],
)  # fmt: skip
def test_what_the_second_review_must_leave_alone(text, record, schema):
    passes(text, record, schema)


@pytest.mark.parametrize(
    "text,record,field,schema",
    [
        # a buyer's key under a seller's block with its bank details, six lines up
        (RUSSIAN_BILL, {"vendor_name": "ООО «Бета-Строй»"}, "vendor_name", INVOICE),
        # a zero balance is no total
        ("Total            $180.11\nPaid in full    -$180.11\nBalance Due          $.00\n", {"total": 0.0}, "total",
         INVOICE),
        # Morocco's company number with its number sign names the dirham
        ("CAFÉ ATLAS\nICE N° 001234567000089\nTotal   45,00 DH\n", {"total": 45.0, "currency": "AED"}, "currency",
         RECEIPT),
    ],
)  # fmt: skip
def test_what_the_second_review_must_still_catch(text, record, field, schema):
    assert factors(text, record, schema)[field] < 0.7


# 232. A ninth printed round of mainstream documents, written against this pass's first
# commit: 3 of 24 correct records flagged at first contact
def test_a_description_centred_over_its_rows_figures_before_the_tables_sums():
    text = (
        " Lp. Nazwa                            J.m.  Ilość    Cena    Netto   VAT   Kwota VAT  Brutto\n"
        " 2  Wsparcie techniczne na miejscu  godz.  7,5      140,00  1 050,00  23%  241,50  1 291,50\n"
        "    Licencja oprogramowania\n"
        " 3                                   szt.   4       189,00   756,00   23%  173,88    929,88\n"
        "    antywirusowego (12 m-cy)\n"
        "                                                   Razem:   1 806,00   X   415,38  2 221,38\n"
    )
    item = {"description": "Licencja oprogramowania antywirusowego (12 m-cy)", "quantity": 4, "amount": 756.0}
    assert factors(text, {"line_items": [item]})["line_items[0].description"] == 1.0


def test_a_tills_minus_after_the_figure_before_its_tax_flag():
    text = "GV MILK 1GAL        3.48 N\nFW REWARDS SAVINGS             2.00-X\nSUBTOTAL           1.48\nTOTAL  1.48\n"
    assert [a.value for a in find_amounts(text)] == [
        Decimal("3.48"),
        Decimal("-2.00"),
        Decimal("1.48"),
        Decimal("1.48"),
    ]
    assert [a.value for a in find_amounts("Part 12.50-AB\n")] == [Decimal("12.50")]


# A third review, of test 232's first changes: two were reverted (a column word's reach
# across two blanks, a header cell over a row with an empty column); what they broke, kept
@pytest.mark.parametrize(
    "text,record,field",
    [
        # a reimbursement annex's VAT is third parties', never the invoice's tax
        ("                    SUBTOTAL   $500.00\n                    IVA 15%     $45.00\n"
         "                    VALOR TOTAL    $547.00\n\n A3  DETALLE DE REEMBOLSOS\n"
         "  TOTAL COMPROBANTES  TOTAL BASE IMPONIBLE  TOTAL IVA REEMBOLSADO  TOTAL REEMBOLSO\n"
         "                1      $50.00                  $7.50                    $57.50\n",
         {"subtotal": 500.0, "tax": 7.5, "total": 547.0}, "tax"),
        # a line's amount drawn under an empty "Discount %" heading is no discount
        ("Northwind Supplies Ltd  INVOICE\n\nItem Code  Item Description  Quantity Unit  Price  Discount %  Total\n"
         "102        Office chair        1 each  222.62        222.62\n"
         "103        Chair mat           1 each        44.52              44.52\n\n"
         "Sub-total      267.14\n\nTOTAL INVOICE  267.14\n", {"subtotal": 267.14, "total": 44.52}, "total"),
    ],
)  # fmt: skip
def test_what_the_third_review_must_still_catch(text, record, field):
    assert factors(text, record)[field] < 0.7


def test_an_italian_stamp_duty_is_a_charge():
    text = "Totale imponibile   1.146,00\nTotale IVA   217,80\nImporto bollo   2,00\nTotale documento   1.365,80\n"
    record = {"subtotal": 1146.0, "tax": 217.8, "total": 1365.8}
    assert any("importo bollo 2,00" in r for r in reasons(text, record)["total"])
    assert factors(text, {**record, "total": 1363.8})["total"] < 0.7


# 233. A tenth printed round (36 documents: invoices from English-speaking countries,
# European and Latin American invoices, receipts of twelve countries), written against
# this pass's start: 8 of 36 correct records flagged at first contact, and every date read
# with its day and month swapped passed
@pytest.mark.parametrize(
    "text,shown",
    [
        ("Invoice date: 03/04/2026\nPayment due by: 17/04/2026\n", date(2026, 4, 3)),  # day first, shown by the 17th
        ("Invoice date: 03/04/2026\nDue date: 04/17/2026\n", date(2026, 3, 4)),  # month first, shown by the 17th
        ("Fecha: 03-04-2026\nVencimiento: 30-04-2026\n", date(2026, 4, 3)),
    ],
)
def test_a_documents_unambiguous_dates_say_the_order_of_its_ambiguous_ones(text, shown):
    swapped = date(shown.year, shown.day, shown.month)
    assert factors(text, {"invoice_date": shown.isoformat()})["invoice_date"] == 1.0
    flagged(text, {"invoice_date": swapped.isoformat()}, "invoice_date", "not found in the source")


@pytest.mark.parametrize(
    "text",
    [
        "Invoice date: 03/04/2026\n",  # nothing shows the order
        "Date: 03/04/2026  Period 17/03/2026 to 03/17/2026\n",  # both orders shown: either reading
        "Invoice date: 03/04/2026\nPart no. 14-03-25\n",  # a dashed run with a short year is a part number
    ],
)
def test_an_ambiguous_date_keeps_both_readings_where_the_document_does_not_settle_the_order(text):
    for reading in ("2026-04-03", "2026-03-04"):
        assert factors(text, {"invoice_date": reading})["invoice_date"] == 1.0


_FATTURA_PA_SUMMARY = (
    "Riepiloghi e totali\n"
    " Totale imponibile  Totale IVA  Importo bollo  Sconto/Maggiorazione      Valuta  Totale documento\n"
    "   1.146,00          217,80         2,00                                 EUR                1.365,80\n"
)


def test_a_fattura_pa_summary_row_with_an_empty_column():
    record = {"subtotal": 1146.0, "tax": 217.8, "total": 1365.8, "currency": "EUR"}
    passes(_FATTURA_PA_SUMMARY, record)
    # "Totale IVA" two blanks after "Totale imponibile" heads its own column, and the
    # stamp duty under a header with an empty column is the charge that explains the total
    assert ("217,80", "tax") in amount_roles(_FATTURA_PA_SUMMARY)
    assert any("importo bollo 2,00" in r for r in reasons(_FATTURA_PA_SUMMARY, record)["total"])
    assert factors(_FATTURA_PA_SUMMARY, {**record, "tax": 2.0})["tax"] < 0.7
    assert factors(_FATTURA_PA_SUMMARY, {**record, "total": 1363.8})["total"] < 0.7


def test_a_row_written_narrower_than_its_header_of_labels_is_paired_in_order():
    text = "Imponibile  Totale IVA  Totale documento\n161,90  35,62  197,52\n"
    assert amount_roles(text) == [("161,90", "subtotal"), ("35,62", "tax"), ("197,52", "total")]


def test_a_sum_rows_figures_set_right_under_headers_set_left():
    text = (
        "                 Stawka VAT  Wartość netto  Kwota VAT          Wartość brutto\n"
        "             w tym        5%             1 764,00      88,20     1 852,20\n"
        "                          23%             320,00       73,60      393,60\n"
        "             Razem                      2 084,00     161,80     2 245,80\n"
    )
    assert amount_roles(text)[-3:] == [("2 084,00", "subtotal"), ("161,80", "tax"), ("2 245,80", "total")]


def test_a_rand_sign_glued_to_a_figure_grouped_by_spaces():
    text = "TOTAL DUE          R1 145.83\nTENDER: CARD       R1 145.83\n"
    assert [a.value for a in find_amounts(text)] == [Decimal("1145.83"), Decimal("1145.83")]
    assert [a.value for a in find_amounts("Model R1 145.83\n")] == [Decimal("145.83")]


def test_a_dutch_supermarkets_savings_line_is_a_discount():
    text = (
        "       SUBTOTAAL                 30,23\n"
        "BONUS  BRONWATER 6 VOOR 3,49     -1,25\n"
        "BONUS  WASMIDDEL 25% KORTING     -3,35\n"
        "       UW VOORDEEL                4,60\n"
        "          TOTAAL                   25,63\n"
        "1412     3      7731  03-06-2026 17:26\n"
    )
    record = {"merchant_name": "BONUS", "date": "2026-06-03", "subtotal": 30.23, "total": 25.63}
    passes(text, record, RECEIPT)
    assert any("uw voordeel 4,60" in r for r in reasons(text, record, RECEIPT)["total"])
    assert factors(text, {**record, "total": 30.23}, RECEIPT)["total"] < 0.7


def test_a_deposit_paid_in_chinese_after_a_long_english_phrase():
    text = (
        "                      Total Contract Sum 工程總額        102,000.00\n"
        " Less: Deposit received 08/05/2025 (30%), Receipt No. R-0518 減：已付訂金  (30,600.00)\n"
        "                            Balance Due 尚欠餘額  HK$71,400.00\n"
    )
    passes(text, {"total": 102000.0})


def test_a_description_wrapped_inside_a_word_of_an_unspaced_script():
    text = (
        "     Electrical rewiring, whole flat 全屋重\n"
        "  2                                    1    lot   26,800.00           26,800.00\n"
        "     新佈線\n"
        "  3  Custom kitchen cabinets 訂造廚櫃     14    ft     2,350.00           32,900.00\n"
    )

    def described(description):
        return factors(text, {"line_items": [{"description": description}]})["line_items[0].description"]

    assert described("Electrical rewiring, whole flat 全屋重新佈線") == 1.0
    assert described("Electrical rewiring, whole flat 訂造廚櫃") < 0.7
    assert described("Electrical rewiring, whole flat 全屋重新佈線訂造廚櫃") < 0.7


@pytest.mark.parametrize(
    "text,record",
    [
        # a pro-forma's gross "incl. GST" in a note is no tax
        ("This Tax Invoice supersedes Pro-forma Invoice No. PF-2502-031 dated 03/02/2025 (S$5,386.78 incl. GST).\n\n"
         "   Subtotal   S$ 5,132.00\n   GST @ 9%  S$ 461.88\n   Total  S$ 5,593.88\n",
         {"subtotal": 5132.0, "tax": 461.88, "total": 5593.88}),
        # the German note on labour costs (§ 35a EStG): each figure with its label after it
        ("                            Nettobetrag                         4.267,40 €\n"
         "                            zzgl. 19 % MwSt.                    810,81 €\n"
         "                            Rechnungsbetrag                     5.078,21 €\n\n"
         " Hinweis gemäß § 35a EStG: Im Rechnungsbetrag sind Arbeitskosten in Höhe von\n"
         " 1.162,00 € netto zzgl. 220,78 € MwSt. = 1.382,78 € brutto enthalten.\n",
         {"subtotal": 4267.4, "tax": 810.81, "total": 5078.21}),
        # an Italian professional's fees before the social security surcharge and the VAT
        ("Totale compensi                               € 2.000,00\n"
         "Rivalsa INPS 4%                               € 80,00\n"
         "Imponibile IVA                                € 2.080,00\n"
         "IVA 22%                                        € 457,60\n"
         "Totale fattura                                € 2.537,60\n"
         "Ritenuta d'acconto 20% su € 2.080,00          – € 416,00\n"
         "Netto a pagare                               € 2.121,60\n",
         {"subtotal": 2080.0, "tax": 457.6, "total": 2121.6}),
        # a Belgian VAT table beside the totals box, its labels in two languages
        ("BTW / TVA  Maatstaf / Base  Bedrag / Montant  Totaal excl. BTW / Total HTVA  4.145,00\n"
         "6%          3.700,00         222,00           BTW / TVA                       315,45\n"
         "21%          445,00           93,45           Te betalen / À payer  EUR 4.460,45\n",
         {"subtotal": 4145.0, "tax": 315.45, "total": 4460.45}),
    ],
)  # fmt: skip
def test_what_the_tenth_round_flagged(text, record):
    passes(text, record)


def test_what_the_tenth_rounds_fixes_still_catch():
    german = (
        "                            Rechnungsbetrag                     5.078,21 €\n"
        " 1.162,00 € netto zzgl. 220,78 € MwSt. = 1.382,78 € brutto enthalten.\n"
    )
    assert factors(german, {"tax": 1382.78, "total": 5078.21})["tax"] < 0.7
    belgian = (
        "Totaal excl. BTW / Total HTVA  4.145,00\n"
        "BTW / TVA                       315,45\n"
        "93,45           Te betalen / À payer  EUR 4.460,45\n"
    )
    assert factors(belgian, {"subtotal": 4145.0, "tax": 315.45, "total": 93.45})["total"] < 0.7


# 234. An eleventh printed round (24 documents: US, Latin American, Asian and Middle
# Eastern invoices and receipts; Nordic, Central European, Greek, Turkish, Romanian,
# Irish, Portuguese and Swiss ones), written against test 233's first version: 6 of 24
# correct records flagged at first contact
@pytest.mark.parametrize(
    "text,record,schema",
    [
        # Taiwan's e-invoice: the grand total in traditional characters, a member's discount
        ("全聯實業\n2026-01-06 18:42\n小計              437\n會員折扣          -11\n總計              426\n現金              500\n"
         "找零               74\n",
         {"merchant_name": "全聯實業", "date": "2026-01-06", "subtotal": 437.0, "total": 426.0}, RECEIPT),
        # Portugal: "s/IVA" is without the tax
        ("Total s/IVA            58,37\nTotal IVA               8,73\nTotal                  67,10\n",
         {"subtotal": 58.37, "tax": 8.73, "total": 67.1}, INVOICE),
        # Finland: a share "(sis. alv)" holds the tax, it is not the tax
        ("Veroton yhteensä          1 692,80\nArvonlisävero 25,5 %        431,66\nYhteensä                  2 124,46\n\n"
         "Kotitalousvähennykseen oikeuttava työn osuus (sis. alv): 512,04 €\n",
         {"subtotal": 1692.8, "tax": 431.66, "total": 2124.46}, INVOICE),
        # Turkey: one VAT line per rate, each with its rate written sign first, and no sum
        ("               Mal Hizmet Toplam Tutarı     14.940,00 TL\n"
         "                    Hesaplanan KDV(%10)      1.370,00 TL\n"
         "                    Hesaplanan KDV(%20)        248,00 TL\n"
         "               Vergiler Dahil Toplam Tutar  16.558,00 TL\n",
         {"subtotal": 14940.0, "tax": 1618.0, "total": 16558.0}, INVOICE),
    ],
)  # fmt: skip
def test_what_the_eleventh_round_flagged(text, record, schema):
    passes(text, record, schema)


def test_what_the_eleventh_rounds_fixes_still_catch():
    finnish = (
        "Arvonlisävero 25,5 %        431,66\nYhteensä                  2 124,46\nTyön osuus (sis. alv): 512,04 €\n"
    )
    assert factors(finnish, {"tax": 512.04, "total": 2124.46})["tax"] < 0.7
    turkish = "Hesaplanan KDV(%10)      1.370,00 TL\nHesaplanan KDV(%20)        248,00 TL\nToplam  16.558,00 TL\n"
    assert factors(turkish, {"tax": 1370.0, "total": 16558.0})["tax"] < 0.7


# A review of test 233's first version (about 11,500 probes): what it broke, mended and kept
@pytest.mark.parametrize(
    "text,record",
    [
        # a label right after a figure is the next figure's where the labels come first
        ("ACME SUPPLY\nInvoice No. 1042   Date 2026-03-14\n\nWidget 2 50.00 100.00\nGadget 1 30.00 30.00\n"
         "Items 3  Subtotal 130.00  Tax 10.40  Total 140.40\n",
         {"subtotal": 130.0, "tax": 10.4, "total": 140.4}),
        ("ACME SUPPLY Rechnung Nr. 1042 Datum 14.03.2026 Widget 2 50,00 100,00 Gadget 1 30,00 30,00 "
         "Nettobetrag 130,00 MwSt 10,40 Gesamtbetrag 140,40\n",
         {"subtotal": 130.0, "tax": 10.4, "total": 140.4}),
        ("ACME SUPPLY Facture N° 1042 Date 14/03/2026 Widget 2 50,00 100,00 Gadget 1 30,00 30,00 "
         "Total HT 130,00 TVA 10,40 Total TTC 140,40\n",
         {"subtotal": 130.0, "tax": 10.4, "total": 140.4}),
        # "TVA  Total" runs across a column's gap: no label of a cell of its own
        ("WIDGETCO\nFacture 771   Date 14/03/2026\n\nDésignation   Qté  P.U.    Base HT  TVA  Total TTC\n"
         "Widget A        2  50,00    100,00  20,00  120,00\nWidget B        1  30,00     30,00   6,00   36,00\n\n"
         "Total                       130,00 26,00    156,00\n",
         {"subtotal": 130.0, "tax": 26.0, "total": 156.0}),
        ("Base imponible  IVA  Total\n161,90  35,62  197,52\n", {"subtotal": 161.9, "tax": 35.62, "total": 197.52}),
        # a Dutch summary row set right under its headers
        ("Totaal excl. BTW  BTW  Totaal incl. BTW\n          161,90  35,62          197,52\n",
         {"subtotal": 161.9, "tax": 35.62, "total": 197.52}),
        # a fee total after the tax line is the grand total
        ("Progettazione impianto                     2.000,00\nIVA 22%                                     440,00\n"
         "Totale compensi                            2.440,00\n", {"subtotal": 2000.0, "tax": 440.0, "total": 2440.0}),
        # a unit price "HTVA" is no subtotal
        ("Prestations : 25 h x 50,00 € HTVA\nTotal HTVA   1.250,00\nTVA 21%   262,50\nTotal TVAC   1.512,50\n",
         {"subtotal": 1250.0, "tax": 262.5, "total": 1512.5}),
    ],
)  # fmt: skip
def test_what_the_fourth_review_flagged(text, record):
    passes(text, record)


@pytest.mark.parametrize(
    "text",
    [
        "Invoice Date: 03/04/2026\nDue Date: 04/03/2026\nPatient DOB: 25/12/1980\n",  # another calendar's date
        "Invoice Date: 03/04/2026\nDue Date: 04/03/2026\nAPPROVED  26/03/04 11:02\n",  # a terminal's year-first stamp
        "Invoice Date: 03/04/2026\nDue Date: 04/03/2026\nPart 31-12-26\n",  # a dashed part number
    ],
)
def test_dates_that_do_not_show_the_documents_order(text):
    for reading in ("2026-04-03", "2026-03-04"):
        assert factors(text, {"invoice_date": reading})["invoice_date"] == 1.0


def test_a_tills_short_year_shows_its_order():
    text = "    11/07/25  14:38:09\nID #: 7QZ9R4XWK1D  valid thru 11/21/25\n"
    assert factors(text, {"invoice_date": "2025-11-07"})["invoice_date"] == 1.0
    flagged(text, {"invoice_date": "2025-07-11"}, "invoice_date", "not found in the source")


# A fifth review, of the mended version: what it broke, mended and kept
@pytest.mark.parametrize(
    "text,record,schema",
    [
        # a Taiwanese till's "總計" before the discount, the sum payable after it
        ("全聯實業\n2026-01-06 18:42\n總計  165\n折扣  -15\n應付  150\n信用卡  150\n",
         {"merchant_name": "全聯實業", "date": "2026-01-06", "total": 150.0}, RECEIPT),
        ("全聯實業\n2026-01-06 18:42\n總計  165\n紅利折抵  -15\n應收金額  150\n",
         {"merchant_name": "全聯實業", "date": "2026-01-06", "total": 150.0}, RECEIPT),
        # each sum written with its currency after it, its label before it, on one line
        ("Conseil  1  100,00 €  100,00 € Total HT 100,00 € TVA 20,00 € Total TTC 120,00 €\n",
         {"subtotal": 100.0, "tax": 20.0, "total": 120.0}, INVOICE),
        # a goods' sum after the tax line, with the total after it
        ("Sales tax (8%)   8.00\nMerchandise total  100.00\nShipping  5.00\nTotal  113.00\n",
         {"subtotal": 100.0, "tax": 8.0, "total": 113.0}, INVOICE),
    ],
)  # fmt: skip
def test_what_the_fifth_review_flagged(text, record, schema):
    passes(text, record, schema)


def test_what_the_fifth_review_must_still_catch():
    flat = "Conseil  1  100,00 €  100,00 € Total HT 100,00 € TVA 20,00 € Total TTC 120,00 €\n"
    assert factors(flat, {"tax": 20.0, "total": 20.0})["total"] < 0.7
    bracket_first = "Summe brutto  119,00 €\n(inkl. 19 % MwSt.)  19,00 €\n"
    assert factors(bracket_first, {"tax": 119.0, "total": 119.0})["tax"] < 0.7
    till = "全聯實業\n總計  165\n折扣  -15\n應付  150\n"
    assert factors(till, {"merchant_name": "全聯實業", "total": 150.0}, RECEIPT)["total"] == 1.0
    assert (
        factors("Invoice Date: 03/04/2026\nTyre 14/03/25 batch\n", {"invoice_date": "2026-03-04"})["invoice_date"]
        == 1.0
    )


# 235. Day and month swapped where no other date of the document settles the order: in
# the printed rounds 27 of 47 such swaps passed. A document that writes its sums with a
# decimal comma, or prices them only in currencies of countries that write the day first
# and a decimal point, writes "03/04/2026" day first (20 of 20 such held-out documents).
@pytest.mark.parametrize(
    "text,why",
    [
        ("Invoice date: 03/04/2026\nSubtotal  £100.00\nVAT 20%  £20.00\nTotal  £120.00\n", "in £"),
        ("Rechnungsdatum: 03/04/2026\nNetto 100,00\nMwSt. 19,00\nGesamt 119,00\n", "decimal comma"),
        ("Invoice date: 03-04-2026\nSubtotal  AUD 100.00\nGST  AUD 10.00\nTotal  AUD 110.00\n", "in AUD"),
        ("Date: 03/04/2026\nNet  ₹100.00\nIGST  ₹18.00\nTotal  ₹118.00\n", "in ₹"),
        ("Date: 03/04/2026\nTOTAL KES          1,862.00\nVAT 16%          159.86\n", "in KES"),
        # a label's abbreviation and a number is no American address
        ("Customer ID 48213\nInvoice Date: 03/04/2026\nSubtotal  £100.00\nTotal Due £120.00\n", "in £"),
        ("Date: 03/04/2026\nNet  100,00 EUR\nVAT  21,00 EUR\nTotal  121,00 EUR\n", "decimal comma"),
        ("Fecha: 03/04/2026\nMonto neto $ 1.780.300\nIVA 19% $ 338.257\nTotal $ 2.118.557\n", "thousands with dots"),
    ],
)
def test_an_ambiguous_date_reads_day_first_where_the_documents_conventions_do(text, why):
    record = {"invoice_date": "2026-04-03"}
    assert factors(text, record)["invoice_date"] == 1.0
    flagged(text, {"invoice_date": "2026-03-04"}, "invoice_date", "reads 2026-04-03 day first", why)


@pytest.mark.parametrize(
    "text",
    [
        # dollars, and the Canadian dollar, say nothing of the order
        "Invoice date: 03/04/2026\nTotal  $120.00\n",
        "Invoice date: 03/04/2026\nTotal  USD 120.00\nEUR 110.40 at the day's rate\n",
        "Invoice date: 03/04/2026\nTotal  CAD 120.00\n",
        # euros written with a decimal point: software set to English, whose dates are as
        # often the United States' (4 of 7 such held-out documents)
        "Date: 03/04/2026\nNet  100.00 EUR\nVAT  21.00 EUR\nTotal  121.00 EUR\n",
        # a shop's template printing "%m/%d/%y" whatever its money looks like: a short
        # year's order is no convention's
        "03/04/26 Invoice for #1047\nSubtotal 89,00 €\nShipping 4,90 €\nTotal price: 119,90 €\n",
        # the month first elsewhere, in any year or form
        "Invoice date: 03/04/2026\nArrival 02-28-26\nTotal  £120.00\nVAT  £20.00\n",
        "Invoice date: 03/04/2026\nClient since 08/23/2019\nTotal  £120.00\nVAT  £20.00\n",
        # an American party's software, billing in pounds
        "Northwind LLC\n500 Market St, San Francisco, CA 94103\nInvoice Date: 03/04/2026\nTotal Due £6,000.00\n",
        "Brightline Analytics LLC\nAustin, Texas 78701\nInvoice Date: 03/04/2026\nTotal Due £6,000.00\n",
        "Invoice Date: 03/04/2026\nEIN: 12-3456789\nTotal Due £6,000.00\nVAT  £0.00\n",
        "Keller LLP\nWashington, D.C. 20001\nInvoice Date: 03/04/2026\nTotal Due £6,000.00\n",
        "Brightline\n1420 Market St Ste 300 San Francisco CA 94103 USA\nInvoice Date: 03/04/2026\nTotal Due £6,000.00\n",
        "Keller LLP\nTel +1 (415) 555-0182\nInvoice Date: 03/04/2026\nTotal Due £6,000.00\nVAT  £0.00\n",
        # a date written with its month's name first, as American English writes it
        "Invoice Date: 03/04/2026\nPayment due: April 17, 2026\nTotal Due £6,000.00\nVAT  £0.00\n",
        # the document names its dates' format, or writes a day of a month only month first
        "Date (MM/DD/YYYY): 03/04/2026\nSubtotal  £6,000.00\nTotal Due £6,000.00\n",
        "Invoice Date: 03/04/2026\nTimesheet, week ending 02/27\nTotal Due £6,000.00\nVAT  £0.00\n",
        # dollars named anywhere
        "Invoice Date: 03/04/2026\nCurrency: USD\nCompanies House filing (GBP 120.00)   152.40\nTotal due  4,352.40\n",
        # a Gulf till prints American software's dates as often as not
        "03/04/2026                           08:15 PM\nSubtotal  175.00\nVAT 5%  8.75\nTotal  AED 183.75\n",
        # dollars beside a sum, pounds beside another: no one currency's convention
        "Invoice Date: 03/04/2026\nFiling fee (GBP 120.00)   $152.40\nTotal  $152.40\n",
        # a room's number is no sum in ringgit
        "Invoice Date: 03/04/2026\nRM 1205\nTotal  125.00\n",
        # a currency's code in a sentence is no sum's ("ALL SALES FINAL")
        "Invoice date: 03/04/2026\nALL SALES FINAL\nTotal  $120.00\n",
        # one figure with a decimal comma among figures with a decimal point
        "Invoice date: 03/04/2026\nNet  1,50\nTotal  120.00\nTax  10.00\nShipping  5.00\n",
    ],
)
def test_an_ambiguous_date_keeps_both_readings_where_no_convention_decides(text):
    for reading in ("2026-04-03", "2026-03-04"):
        assert factors(text, {"invoice_date": reading})["invoice_date"] == 1.0, reading


def test_an_ambiguous_date_beside_a_date_with_mixed_separators():
    """OCR's mixed separators ("12.05,2026", read day first) beside an ambiguous date."""
    ambiguous, mixed = find_date_mentions("Date 03/04/2026 Paid 12.05,2026")
    assert ambiguous.day_first == date(2026, 4, 3)
    assert mixed.dates == {date(2026, 5, 12)} and mixed.day_first is None


@pytest.mark.parametrize(
    "text,meant",
    [
        # the other reading written with its month's name: the document repeats its date
        ("Date of issue 03/05/2025\nPeriod: Mar 5, 2025 – Apr 4, 2025\nTotal $1,518.00\n", date(2025, 3, 5)),
        ("Invoice WC-0902\nDate: 04/07/2026\n(issued 4 July 2026 for Q2 bookkeeping)\n", date(2026, 7, 4)),
        # a bilingual Vietnamese e-invoice's glossed date words
        ("Ngày (Date) 05 tháng (month) 11 năm (year) 2026\nKý ngày: 05/11/2026\n", date(2026, 11, 5)),
        # a card slip's short year beside the bill's date in full, in pounds
        (
            "07/02/2026                   21:36\nTOTAL            £157.67\nSALE   £157.67\n07/02/26   21:41\n",
            date(2026, 2, 7),
        ),
    ],
)
def test_an_ambiguous_date_the_document_writes_one_way_elsewhere(text, meant):
    assert factors(text, {"invoice_date": meant.isoformat()})["invoice_date"] == 1.0
    swapped = date(meant.year, meant.day, meant.month)
    assert factors(text, {"invoice_date": swapped.isoformat()})["invoice_date"] < 0.7


def test_a_day_of_the_week_before_an_ambiguous_date_settles_it():
    text = "Date: Wed 03/04/2026\nSubtotal  £6,000.00\nTotal Due £6,000.00\n"  # 4 March 2026 was a Wednesday
    assert factors(text, {"invoice_date": "2026-03-04"})["invoice_date"] == 1.0
    assert factors(text, {"invoice_date": "2026-04-03"})["invoice_date"] < 0.7


def test_both_readings_written_elsewhere_decide_nothing():
    text = "Invoice date: 03/05/2025\nPeriod: Mar 5, 2025 – May 3, 2025\nTotal $1,518.00\n"
    for reading in ("2025-03-05", "2025-05-03"):
        assert factors(text, {"invoice_date": reading})["invoice_date"] == 1.0


def test_a_due_date_thirty_days_on_is_no_repetition_of_the_date():
    # invoiced on 4 March, due thirty days on: 3 April, the other reading of "03/04/2026"
    text = "Invoice Date: 03/04/2026\nDue Date: April 3, 2026\nTotal $100.00\n"
    for reading in ("2026-03-04", "2026-04-03"):
        assert factors(text, {"invoice_date": reading})["invoice_date"] == 1.0, reading


def test_a_documents_own_dates_outrank_its_currency():
    text = "Invoice date: 03/04/2026\nDue: 04/17/2026\nTotal  £120.00\n"
    assert factors(text, {"invoice_date": "2026-03-04"})["invoice_date"] == 1.0


# 236. A twelfth printed round (36 documents: invoices from twelve invoicing programs,
# receipts of twelve trades, invoices of twelve more countries), written against this
# pass's start: 4 of 36 correct records flagged at first contact
_UK_BILL = (
    "Subtotal          140.15\n"
    "Discretionary Service 12.5%  17.52\n"
    "TOTAL            £157.67\n"
    "VAT @ 20% included              26.28\n"
    "SALE            £157.67\n"
    "GRATUITY         £5.00\n"
    "TOTAL           £162.67\n"
)
_DUTCH_TILL = (
    "17  SUBTOTAAL              41,76\n"
    "UW VOORDEEL                 4,00\n"
    "TOTAAL                     37,76\n"
    "PINNEN                     37,76\n"
    "BTW         OVER     EXCL     BTW\n"
    "9%         21,34    19,58    1,76\n"
    "21%        15,02    12,41    2,61\n"
    "TOTAAL     36,36    31,99    4,37\n"
    "Statiegeld 1,40 valt buiten de BTW.\n"
)
_DUTY_FREE = (
    "TOTAL CHF                                      187.40\n"
    "TOTAL EUR (Kurs 1 EUR = 0.9400 CHF)             199.36\n"
    "Mastercard ************8841           CHF 187.40\n"
)


@pytest.mark.parametrize(
    "text,record",
    [
        # a restaurant's optional service charge, the tip on the card slip
        (_UK_BILL, {"subtotal": 140.15, "tax": 26.28, "tip": 5.0, "total": 162.67, "currency": "GBP"}),
        # a deposit the tax leaves out explains the tax table's sum; it is no tax
        (_DUTCH_TILL, {"subtotal": 41.76, "tax": 4.37, "total": 37.76}),
        # one total in two currencies, the rate in brackets
        (_DUTY_FREE, {"total": 187.4, "currency": "CHF"}),
    ],
)
def test_what_the_twelfth_round_flagged(text, record):
    passes(text, record, RECEIPT)


def test_what_the_twelfth_round_must_still_catch():
    assert factors(_UK_BILL, {"subtotal": 140.15, "tax": 26.28, "tip": 17.52, "total": 162.67}, RECEIPT)["tip"] < 0.7
    assert factors(_DUTCH_TILL, {"subtotal": 41.76, "tax": 4.37, "total": 41.76}, RECEIPT)["total"] < 0.7
    flagged_receipt = reasons(_DUTY_FREE, {"total": 199.36, "currency": "CHF"}, RECEIPT)["total"]
    assert any("199.36 is labelled total in EUR" in r for r in flagged_receipt), flagged_receipt


def test_a_tax_of_one_rate_where_the_arithmetic_needs_every_rates():
    text = "Sub Total      2,24,700.00\nCGST9 (9%)     20,223.00\nSGST9 (9%)     20,223.00\nTotal        ₹2,65,146.00\n"
    record = {"subtotal": 224700.0, "tax": 40446.0, "total": 265146.0, "currency": "INR"}
    passes(text, record)
    flagged(text, {**record, "tax": 20223.0}, "tax", "20,223.00 + 20,223.00 as the tax")


def test_one_figure_that_adds_up_outranks_parts_that_do():
    # each rate's tax printed twice: the subtotal the total needs is printed, and is the blame
    text = "Net  500.00\nVAT 20%  100.00\nTotal  600.00\n\nVAT analysis\nVAT 20%  100.00\n"
    flagged(text, {"subtotal": 400.0, "tax": 100.0, "total": 600.0}, "subtotal", "labels 500.00 as the subtotal")


def test_a_tax_withheld_is_no_part_of_the_tax():
    text = "Subtotal  5.000.000,00\nIVA 19%  950.000,00\nIVA 15% retenido  -142.500,00\nTotal  5.807.500,00\n"
    record = {"subtotal": 5000000.0, "tax": 950000.0, "total": 5807500.0}
    assert not any("-142.500,00 as the tax" in r for r in reasons(text, record)["tax"])


def test_figures_labelled_tax_without_their_rates_are_not_one_tax_in_parts():
    # a tourist tax's base read under "VAT" beside the VAT: the wrong subtotal keeps the blame
    text = (
        "Tax  Base  Rate  Exemption  Amount    Sum          €126,00\n"
        "VAT  €1,00  —     (N4)       €0,00  Included VAT    €11,36\n"
        " €113,64  10,0%              €11,36   Total        €114,64\n"
        "                                     Total to pay  €126,00\n"
    )
    flagged(text, {"subtotal": 113.64, "tax": 11.36, "total": 126.0}, "subtotal", "arithmetic")


def test_a_rand_sign_one_blank_before_a_sum_in_thousands_starts_its_cell():
    text = "Sub Total (excl. VAT)  R 102 550.00\nVAT @ 15%               R 15 382.50\nTotal (incl. VAT)  R 117 932.50\n"
    assert amount_roles(text) == [("102 550.00", "subtotal"), ("15 382.50", "tax"), ("117 932.50", "total")]
    record = {"subtotal": 102550.0, "tax": 15382.5, "total": 117932.5, "currency": "ZAR"}
    clean(text, record)
    assert factors(text, {**record, "tax": 15.0})["tax"] < 0.7


@pytest.mark.parametrize(
    "text,buyer,label",
    [
        # the last of a row of parties' headings, a key and its value beside it
        ("Redwood Ridge Supply Co.\nINVOICE\n\nBILL TO                 SHIP TO              INVOICE 1047\n"
         "Cascade Tiny Homes LLC  Cascade Tiny Homes LLC  DATE 03/07/2026\n", "Cascade Tiny Homes LLC", "BILL TO"),
        # a name's own key in a party's block, its value two blanks off
        ("Фактура\nПолучател:                           Доставчик:\n"
         "Име:    Витоша Консулт ООД           Име:    Родопа Принт ЕООД\n"
         "ЕИК:    131928475                    ЕИК:    204718392\n", "Витоша Консулт ООД", "Получател:"),
        (" Piegādātājs                                    Saņēmējs (maksātājs)\n"
         "Nosaukums:  SIA \"Daugavas Loģistika\"           Nosaukums:      SIA \"Vidzemes Piens\"\n"
         "Reģ. Nr.:   40103987654                        Reģ. Nr.:       44103055512\n",
         "SIA \"Vidzemes Piens\"", "Saņēmējs (maksātājs)"),
        # a block's title centred over its keys
        ("                                       PRESTADOR DE SERVIÇOS\n"
         "Nome/Razão Social: ORVALHO SISTEMAS LTDA\n"
         "                                       TOMADOR DE SERVIÇOS\n"
         "Nome/Razão Social: COOPERATIVA VALE DO MOGI\n"
         "CPF/CNPJ: 07.552.103/0001-71\n", "COOPERATIVA VALE DO MOGI", "TOMADOR DE SERVIÇOS"),
        ("FAKTUR\nKepada Yth.:                             No. Faktur  : INV/NKS/2026/05/0451\n"
         "PT Sumber Rasa Pangan                    Tanggal     : 12/05/2026\n", "PT Sumber Rasa Pangan", "Kepada Yth."),
        ("TAX INVOICE\nBill To                       Site Address\n"
         "Fynbos Wine Estate (Pty) Ltd  Farm 418, Helshoogte Pass\n", "Fynbos Wine Estate (Pty) Ltd", "Bill To"),
    ],
)  # fmt: skip
def test_a_buyer_in_the_parties_blocks_of_the_twelfth_round_is_no_vendor(text, buyer, label):
    flagged(text, {"vendor_name": buyer}, "vendor_name", "only under", label)


def test_a_title_over_the_next_blocks_name_is_not_over_one_a_blank_before_it():
    # the converter joins the seller's long name and the buyer's key with one blank
    text = (
        "INVOICE 1047                                       Date: 12 March 2026\n"
        "                                              Customer\n"
        "Company: Northbridge Precision Engineering Ltd Company: Contoso Ltd\n"
        "Address: 1 High Street, London                Address: 5 Low Road, Leeds\n"
    )
    clean(text, {"vendor_name": "Northbridge Precision Engineering Ltd"})


def test_a_deliverys_key_and_value_belong_to_the_block_over_them():
    text = (
        "Acme Scaffolding Ltd, 1 High Street, London E1 6AN\nINVOICE 1047\nCustomer\nAccount No: C-4471\n"
        "Site Address: Unit 4, Leeds LS1 4AP\nName: Contoso Ltd\n"
    )
    flagged(text, {"vendor_name": "Contoso Ltd"}, "vendor_name", "only under 'Customer'")


def test_a_figure_outside_the_scope_of_vat_is_no_tax():
    text = "Net  100.00\nVAT 20%  20.00\nPostage (outside the scope of VAT)  5.00\nTotal  125.00\n"
    assert ("5.00", None) in amount_roles(text)
    passes(text, {"subtotal": 100.0, "tax": 20.0, "total": 125.0})


def test_labels_each_after_its_figure_and_its_dotted_sign():
    text = "Zopf                    Fr. 9.50\nFr. 25.42 netto  Fr. 2.08 MwSt  Fr. 27.50 brutto\nKarte Fr. 27.50\n"
    passes(text, {"subtotal": 25.42, "tax": 2.08, "total": 27.5, "currency": "CHF"}, RECEIPT)


def test_the_seller_of_a_centred_block_is_still_the_vendor():
    text = (
        "                                       PRESTADOR DE SERVIÇOS\n"
        "Nome/Razão Social: ORVALHO SISTEMAS LTDA\n"
        "                                       TOMADOR DE SERVIÇOS\n"
        "Nome/Razão Social: COOPERATIVA VALE DO MOGI\n"
    )
    clean(text, {"vendor_name": "ORVALHO SISTEMAS LTDA"})


# 237. A thirteenth printed round (12 bills and receipts of twelve trades and countries),
# written against the twelfth's fixes: 4 of 12 correct records flagged at first contact
_PHARMACY_BILL = (
    " GST%   Taxable          CGST     SGST     Total GST  Sub Total                 1,678.53\n"
    "   5%    120.00            3.00        3.00   6.00    Less: Addl. Discount           0.00\n"
    " 12%    1,386.19          83.17    83.17    166.34    Round Off                     +0.47\n"
    " Total  1,506.19          86.17    86.17    172.34    NET PAYABLE            Rs. 1,679.00\n"
)
_SERVICE_CHARGES_STATEMENT = (
    "                        Summe Ihrer Kosten                  3.144,13 €\n"
    "                        abzüglich Ihrer Vorauszahlungen\n"
    "                                                           – 2.340,00 €\n"
    "                        (12 × 195,00 €)\n"
    "                        Nachzahlung                             804,13 €\n"
)


@pytest.mark.parametrize(
    "text,record,schema",
    [
        # a label's figure after a currency's sign with its dot, the figure before it a column's
        (_PHARMACY_BILL, {"subtotal": 1678.53, "tax": 172.34, "total": 1679.0}, RECEIPT),
        # a deduction's phrase wrapped over its figure, the whole line (the total is the sum
        # before the advance payments: what they leave is flagged, see test 242)
        (_SERVICE_CHARGES_STATEMENT, {"total": 3144.13}, INVOICE),
    ],
)
def test_what_the_thirteenth_round_flagged(text, record, schema):
    passes(text, record, schema)


def test_a_labels_figure_after_a_currency_sign_with_its_dot():
    assert ("1,679.00", "total") in amount_roles(_PHARMACY_BILL)
    assert amount_roles(" Total  1,506.19    172.34    NET PAYABLE   Rs. 1,679.00\n")[1:] == [
        ("172.34", None),
        ("1,679.00", "total"),
    ]


def test_what_the_thirteenth_round_must_still_catch():
    assert factors(_PHARMACY_BILL, {"subtotal": 1678.53, "tax": 172.34, "total": 172.34}, RECEIPT)["total"] < 0.7


def test_a_dutch_bill_to_label_names_the_buyer():
    text = (
        "                                     Bouwservice De Vries\n"
        "Factuur\n"
        "Factuur aan:                     Factuurnummer: 2025-046\n"
        "Van Dijk Bouw B.V.\n"
        "t.a.v. crediteurenadministratie  Factuurdatum:   10-02-2025\n"
    )
    flagged(text, {"vendor_name": "Van Dijk Bouw B.V."}, "vendor_name", "only under 'Factuur aan:'")
    clean(text, {"vendor_name": "Bouwservice De Vries"})


# 238. Another document's or the card slip's number given as the document's own, where the
# rounds' numbers' labels were words no set knew ("Matter No.", "Job No.", "Mieter-Nr.",
# "ABN", "AUT:", "Approved") or the document's own number was its title's
_OTHER_NUMBERS_OF_AN_INVOICE = [
    (
        " Solano Provisions, Inc.                Invoice No.:       58213\n"
        " Indianapolis, IN 46201                 Client No.:        2291\n"
        "                                        Matter No.:        2291-004\n",
        "2291-004",
        "58213",
    ),
    (
        " Bill To                Job Site               Invoice No.    INV-3317\n"
        " Kauri Body Corp        14 Wattle Rd                          \n"
        "                                               Job No.         J-2291\n",
        "J-2291",
        "INV-3317",
    ),
    (
        "Hausverwaltung Brenner & Sohn GmbH · Lindenstraße 18 · 90409 Nürnberg  Objekt:  Pirckheimerstr. 61\n"
        "                                                                       Mieter-Nr.:       0147-07\n"
        "Sabine Kranz\n"
        "                                                                       Rechnungs-Nr.:    BK-2025-0147\n",
        "0147-07",
        "BK-2025-0147",
    ),
    (
        "DAUGAVAS LOĢISTIKA  RĒĶINS Nr. DL-2026/118\n"
        "                    Datums:          07.04.2026\n"
        "                    Pasūtījuma Nr.:  P-5521\n",
        "P-5521",
        "DL-2026/118",
    ),
    (
        "Factuur INV/2026/00057\n"
        "Factuurdatum:  Vervaldatum:  Bron:   Klantreferentie:\n"
        "03-02-2026     05-03-2026    S00042  ZI-inkoop feb\n",
        "S00042",
        "INV/2026/00057",
    ),
    (
        "Casa Matriz: Av. Brasil 1450, Valparaíso             FACTURA ELECTRÓNICA\n"
        "Teléfono: +56 32 265 4410 · ventas@andespacifico.cl                     N° 4518\n"
        " Referencias\n"
        "                   Tipo documento  Folio                                     Fecha\n"
        " Orden de Compra     8841                              02/03/2026\n",
        "8841",
        "4518",
    ),
    (
        "Рахунок-фактура № СФ-0000213 від 03.02.2026\n Договір:       № 17/25 від 15.01.2025\n",
        "17/25",
        "СФ-0000213",
    ),
]


@pytest.mark.parametrize(
    "text,other,own",
    _OTHER_NUMBERS_OF_AN_INVOICE,
    ids=["matter", "job", "tenant", "order", "source", "box", "contract"],
)
def test_another_labelled_number_is_not_the_invoices(text, other, own):
    assert factors(text, {"invoice_number": other})["invoice_number"] < 0.7
    clean(text, {"invoice_number": own})


_OTHER_NUMBERS_OF_A_RECEIPT = [
    # the business's number, its auth codes, a hotel's booking
    ("   OFFICEWORKS-STYLE STATIONERS\n      ABN 12 345 678 901\nTax Invoice No: 4567812  Till 03\n", "12 345 678 901"),
    ("FOLIO: 018734              MESA: 12\nVISA ************4821     AUT: 604417\n", "604417"),
    ("Check: 2087\nINTERAC ************6621\nApproved 081467 Seq# 0010420\n", "081467"),
    (" Folio 88\n Empresa      Lindqvist Consulting AB  Nº Reserva  BRB-88215\n", "BRB-88215"),
]


@pytest.mark.parametrize("text,other", _OTHER_NUMBERS_OF_A_RECEIPT, ids=["abn", "aut", "approved", "booking"])
def test_another_labelled_number_is_not_the_receipts(text, other):
    assert factors(text, {"receipt_number": other}, RECEIPT)["receipt_number"] < 0.7


# 239. A fifteenth printed round (36 long invoices, receipts of twelve countries, invoices
# whose totals are not subtotal + tax): 10 of 36 correct records flagged at first contact
def _rows_under(header: str, rows: list[str], gap: int = 0) -> str:
    """A table's header over `rows`, `gap` rows of other lines between them."""
    filler = [f"{100 + k}  ITEM-{k}  Other article {k}" for k in range(gap)]
    return "\n".join([header, *filler, *rows]) + "\n"


@pytest.mark.parametrize(
    "text,line",
    [
        # a rate set right between the header's cells ("Rabatt %" ends before "5" starts),
        # a letterhead's cells over it higher up
        (
            "Kunden-Nr.: 40213                                   Lieferschein: LS-4471\n"
            + _rows_under(
                "Pos. Bezeichnung          Menge ME  Einzelpreis € Rabatt %         Gesamt €",
                ["10  Kalksandstein KS L 2DF  120 Stk        0,89               5   101,46"],
            ),
            {"quantity": 120, "unit_price": 0.89, "amount": 101.46},
        ),
        # a row more than twelve lines under its header
        (
            _rows_under(
                "Código   Descripción                 Cantidad  Ud.  Precio  Dto. %  Importe",
                ["PRO0016  Magnetotérmico 1P+N 16A      4 ud        9,85  25,00     29,55"],
                gap=20,
            ),
            {"quantity": 4, "unit_price": 9.85, "amount": 29.55},
        ),
    ],
)
def test_a_lines_discount_rate_under_its_column_header(text, line):
    passes(text, {"line_items": [{"description": None, **line}]})
    assert factors(text, {"line_items": [{**line, "amount": line["amount"] + 1}]})["line_items[0].amount"] < 0.7


def test_a_rounding_difference_makes_the_amount_due():
    text = "Total exkl. MWST    534.90\nMWST 8.1 %           43.33\nTotal inkl. MWST    578.23\nRundungsdifferenz     0.02\nRechnungsbetrag CHF 578.25\n"
    passes(text, {"subtotal": 534.9, "tax": 43.33, "total": 578.25, "currency": "CHF"})


def test_a_total_of_fees_is_the_goods_sum():
    text = (
        "   Totale onorari                                       € 5.450,00\n"
        "   Contributo integrativo Inarcassa 4%                         € 218,00\n"
        "   Imponibile IVA                                       € 5.668,00\n"
        "   IVA 22%                                              € 1.246,96\n"
        "   Totale fattura                                       € 6.914,96\n"
        "   Ritenuta d'acconto 20% su € 5.450,00                - € 1.090,00\n"
        "   NETTO A PAGARE                                       € 5.824,96\n"
    )
    assert ("5.450,00", "subtotal") in amount_roles(text)
    passes(text, {"subtotal": 5668.0, "tax": 1246.96, "total": 5824.96})


def test_a_year_alone_on_the_last_line_ends_a_wrapped_description():
    text = (
        " Lp.  Nazwa usługi / Description  J.m.    Ilość  Cena    Wartość\n"
        "   Usługi programistyczne -\n"
        "   backend, kwiecień 2026 /\n"
        "1  Software development        godz.     120    48,00  5 760,00\n"
        "   services - backend, April\n"
        "   2026\n"
        "   Code review i testy QA /\n"
        "2  Code review and QA testing  godz.      24    42,00  1 008,00\n"
    )
    described = "Usługi programistyczne - backend, kwiecień 2026 / Software development services - backend, April 2026"
    clean(text, {"line_items": [{"description": described, "quantity": 120, "unit_price": 48.0, "amount": 5760.0}]})


_DUTCH_TILL = (
    "7  SUBTOTAAL               34,60\n"
    "BONUS JONG BELEGEN KAAS    -1,50\n"
    "UW VOORDEEL                 1,50\n"
    "TOTAAL                     33,10\n"
    "PINNEN                     33,10\n"
    "BTW      OVER          BTW\n"
    " 9%     10,06        0,90\n"
    "21%     14,87        3,12\n"
    "TOTAAL  24,93        4,02\n"
    "Statiegeld (geen btw)   4,15\n"
)


def test_a_tax_tables_total_row_sums_its_rates_and_a_deposit_without_tax_is_no_tax():
    roles = dict(amount_roles(_DUTCH_TILL))
    assert roles["4,02"] == "tax" and roles["24,93"] is None and roles["4,15"] is None
    record = {"subtotal": 34.6, "tax": 4.02, "total": 33.1}
    passes(_DUTCH_TILL, record, RECEIPT)
    assert factors(_DUTCH_TILL, {**record, "tax": 3.12}, RECEIPT)["tax"] < 0.7


# 240. The buyer given as the vendor where the document writes the buyer as a letter's
# addressee, under no label: the fifteenth round's largest silent class (14 of 48 misses)
_ADDRESSED = [
    # a German window: the recipient over "Herrn ...", the sender's line over both
    (
        "Elektro Brandt GmbH · Herforder Str. 212 · 33609 Bielefeld  Rechnungs-Nr.   2026-1187\n"
        "Hausverwaltung Kemper & Partner GbR                         Rechnungsdatum  06.08.2026\n"
        "Herrn Dirk Kemper                                           Leistungsdatum  28.07.2026\n"
        "Niederwall 18\n"
        "33602 Bielefeld\n"
        "Mit freundlichen Grüßen\nElektro Brandt GmbH\n",
        "Hausverwaltung Kemper & Partner GbR",
        "Elektro Brandt GmbH",
    ),
    # a salutation over the name, past a line of the header's other column
    (
        "Hausverwaltung Brenner & Sohn GmbH · Lindenstraße 18 · 90409 Nürnberg\n"
        "Frau\n"
        "                                                  Mieter-Nr.:       0147-07\n"
        "Sabine Kranz\n"
        "Pirckheimerstr. 61\n",
        "Sabine Kranz",
        "Hausverwaltung Brenner & Sohn GmbH",
    ),
    # a name wrapped over two lines, its attention line under the second
    (
        "                        Invoice Date    Saltbush Creative Pty Ltd\n"
        "TAX INVOICE             18 Jun 2026     Level 2, 9 Pakenham Street\n"
        "Wattle Grove Community  Invoice Number  AUSTRALIA\n"
        "Health Inc.             INV-0862        accounts@saltbushcreative.com.au\n"
        "Attention: Accounts Payable\n"
        "22 Banksia Street\n",
        "Wattle Grove Community Health Inc.",
        "Saltbush Creative Pty Ltd",
    ),
    # an Italian addressee's heading over the right column
    (
        "    TRASPORTI LOMBARDI LOGISTICA S.r.l.                           Spett.le / Destinatario\n"
        "  Spedizioni nazionali e internazionali · Magazzinaggio · Dogana  Ceramiche Valdera S.p.A.\n",
        "Ceramiche Valdera S.p.A.",
        "TRASPORTI LOMBARDI LOGISTICA S.r.l.",
    ),
    # a name under its attention line, and again in a payment advice's keys written
    # without colons
    (
        "Ngaio Gardens Ltd          Invoice Number  Wellington 6011\n"
        "Attention: Tamsin Wheeler  INV-0583        NEW ZEALAND\n\n"
        " PAYMENT ADVICE                 Customer        Ngaio Gardens Ltd\n"
        "                                Invoice Number  INV-0583\n"
        " To: Kōwhai Landscapes Limited  Amount Due      1,253.39\n"
        "                                Due Date        21 Aug 2026\n",
        "Ngaio Gardens Ltd",
        "Kōwhai Landscapes Limited",
    ),
    # a buyer's name wrapped under its label
    (
        " Sprzedawca                            Nabywca\n"
        " Hurtownia Budowlana MAZUR Sp. z o.o.  Przedsiębiorstwo Budowlane\n"
        " ul. Żelazna 27                        KOWALEWSKI s.c.\n",
        "Przedsiębiorstwo Budowlane KOWALEWSKI s.c.",
        "Hurtownia Budowlana MAZUR Sp. z o.o.",
    ),
]


@pytest.mark.parametrize(
    "text,buyer,seller",
    _ADDRESSED,
    ids=["window", "salutation-over", "wrapped-attention", "spettabile", "advice-keys", "wrapped-label"],
)
def test_an_addressee_is_not_the_vendor(text, buyer, seller):
    assert factors(text, {"vendor_name": buyer})["vendor_name"] < 0.7
    clean(text, {"vendor_name": seller})


@pytest.mark.parametrize(
    "text,merchant",
    [
        # shops named with a salutation
        ("MRS. FIELDS COOKIES\n12 Mall Rd, Dallas TX\nTOTAL 4.50\n", "MRS. FIELDS COOKIES"),
        ("Mr Price Home\nCavendish Square\nTOTAL R 129.99\n", "Mr Price Home"),
        ("MADAME TUSSAUDS LONDON\nReceipt #: 48812\nTOTAL £62.00\n", "MADAME TUSSAUDS LONDON"),
        ("Pan Pacific Hotel\nReceipt #: 48812\nTOTAL £12.00\n", "Pan Pacific Hotel"),
        # Swedish "to pay", no attention line
        ("Pressbyrån Centralen\nAtt betala        45,00 kr\nKvitto nr 4471\n", "Pressbyrån Centralen"),
        # the seller's own contact line under its name
        ("Acme Supplies Ltd\nContact: Jane Doe\n14 Marsh Road\nTOTAL 12.00\n", "Acme Supplies Ltd"),
    ],
)
def test_a_name_a_shop_takes_or_its_contact_line_is_no_addressee(text, merchant):
    clean(text, {"merchant_name": merchant}, RECEIPT)


@pytest.mark.parametrize(
    "text,vendor",
    [
        # a first name's initial, and a registered address in another's care
        ("M. Meier Handwerk GbR\nHauptstr. 5\n12345 Berlin\nRechnung 2024-01\n", "M. Meier Handwerk GbR"),
        ("famoser GmbH\nc/o Florian Moser\nMusterweg 1, 8000 Zürich\nRechnung\n", "famoser GmbH"),
        # two address blocks side by side, the client's first: no column of keys
        (
            "Client Name    Your Company\n789 Maple St  123 Main St\nCity          City\nCountry       Country\n"
            "Factuur  Cliëntnummer   CUST001\n         Factuurnummer  INV001\n",
            "Your Company",
        ),
        ("Invoice\n\nBill To    Your Company Name\nSomeTarget Inc.\n\nOrder #:  S4TIX8GX\n", "Your Company Name"),
        # a guest house's owners under its name, and as its name
        ("Gîte Les Tilleuls\nM. et Mme Lefèvre\n7 allée des Tilleuls\nFacture n° 2026-14\n", "Gîte Les Tilleuls"),
        ("M. et Mme Lefèvre\nChambres d'hôtes\nFacture n° 2026-14\n", "M. et Mme Lefèvre"),
        # a seller's label over its name and its contact's attention line; a remittance block
        (
            "INVOICE\nFrom:\nBrightline Design Studio\nAttn: Sarah Kim\n88 Pine St\n\nBill To:\nHarbor Dental\n",
            "Brightline Design Studio",
        ),
        (
            "Total  $321.00\nRemit To:\nMidwest Milling Supply Co.\nAttn: Accounts Receivable\nPO Box 8812\n",
            "Midwest Milling Supply Co.",
        ),
        # a contact under the name, the Indian PAN, a company's suffix: no attention lines
        ("Holzmann Schreinerei GmbH\nFrau Petra Lang\nRechnungsnr.: RE-2026-0412\n", "Holzmann Schreinerei GmbH"),
        ("SHREE KRISHNA ENTERPRISES\nPAN: AAACS1234K\nInvoice No: SKE/2026/118\n", "SHREE KRISHNA ENTERPRISES"),
        ("INVERSIONES LARA\nC.A. RIF: J-30123456-7\nN° de Factura: 000412\n", "INVERSIONES LARA"),
        # the seller's name in a sender's line over the window's "Herrn ..."
        (
            "Holzmann Schreinerei GmbH · Bahnhofstr. 3 · 79098 Freiburg\nHerrn Max Mustermann\nRechnungsnr.: RE-1\n",
            "Holzmann Schreinerei GmbH",
        ),
        # its cells set apart by blanks around the separators
        (
            "Holzmann Schreinerei GmbH  ·  Bahnhofstr. 3  ·  79098 Freiburg\nHerrn Max Mustermann\nRechnungsnr.: RE-1\n",
            "Holzmann Schreinerei GmbH",
        ),
    ],
    ids=[
        "initial",
        "care-of",
        "blocks",
        "headings",
        "owners",
        "owners-name",
        "from",
        "remit-to",
        "contact",
        "pan",
        "suffix",
        "sender-line",
        "sender-cells",
    ],
)
def test_a_sellers_own_block_is_no_addressee(text, vendor):
    clean(text, {"vendor_name": vendor})


# The reviews of 238-240: numbers other labels name that are the document's own where it
# prints none of its own, titles followed by counts, tables whose total rows are no sums of
# their rate rows
@pytest.mark.parametrize(
    "text,record,schema",
    [
        ("Rapid Plumbing & Heating LLC\nINVOICE\nWork Order #: 10482        Date: 03/12/2026\n", {"invoice_number": "10482"}, INVOICE),
        ("THE BLUE DOOR GRILL\nTotal                      $19.61\nVISA XXXX1234\nSeq: 4471   Auth: 08215B\n", {"receipt_number": "4471"}, RECEIPT),
        ("APARCAMIENTO PLAZA MAYOR\nEntrada 09:12  Salida 11:40\nNº OPERACIÓN: 004512\nTOTAL 6,35 €\n", {"receipt_number": "004512"}, RECEIPT),
        ("TAX INVOICE\nNo. 12, Jalan Ampang, 50450 Kuala Lumpur\nRef: INV-4471            Date: 12/03/2026\n", {"invoice_number": "INV-4471"}, INVOICE),
        ("MAJU JAYA SDN BHD\nINVOICE TO                          Ref  : MJ/INV/2026/0412\nNo. 15, Jalan SS2/24                Date : 03/11/2026\n", {"invoice_number": "MJ/INV/2026/0412"}, INVOICE),
        ("FACTUUR 2e termijn\nFactuurnr.: VIS-2026-118    Datum: 03-11-2026\n", {"invoice_number": "VIS-2026-118"}, INVOICE),
        ("Factuur 40 uur advieswerk\nRef: VIS-2026-118    Datum: 03-11-2026\n", {"invoice_number": "VIS-2026-118"}, INVOICE),
        ("CUSTOMER RECEIPT 1/2\nTOTAL 12.00\nTRM 003  SEQ 4412\nTHANK YOU\n", {"receipt_number": "4412"}, RECEIPT),
        (
            "Harper & Cole LLP\nTotal Professional Services        12,400.00\nTotal Disbursements                   312.50\n"
            "Total This Invoice                $12,712.50\n",
            {"total": 12712.5},
            INVOICE,
        ),
        (
            "TOTAAL                    11,28\nBTW      OVER      BTW\n9%       3,94      0,35\n21%      5,78      1,21\n"
            "TOTAAL   9,72      1,56     11,28\n",
            {"tax": 1.56, "total": 11.28},
            RECEIPT,
        ),
    ],
    ids=["work-order", "seq", "operacion", "address-under-title", "invoice-to", "ordinal", "count", "count-label", "fees", "three-figures"],
)  # fmt: skip
def test_what_the_reviews_of_the_fifteenth_rounds_fixes_found(text, record, schema):
    passes(text, record, schema)


# 241. A sixteenth printed round (12 invoices laid out as letters, 12 receipts with card
# slips), written against 240: 2 of 24 correct records flagged at first contact
@pytest.mark.parametrize(
    "text,buyer,seller",
    [
        # a Japanese address's honorific after the recipient's name
        (
            "株式会社青葉商事 御中  請求番号    No. 2025-0456\n〒150-0002 東京都渋谷区\n\n山田電機工業株式会社\n登録番号 T1234567890123\n",
            "株式会社青葉商事",
            "山田電機工業株式会社",
        ),
        # a client's heading; the buyer's name again as the start of its delivery site
        (
            "DATOS DEL CLIENTE            DIRECCIÓN DE ENVÍO\nRestaurante El Olivar, S.L.  Restaurante El Olivar – Almacén\n"
            "Avda. del Mar 112, bajo      C/ de la Reina 9\n\nDistribuciones Levante, S.L.\n",
            "Restaurante El Olivar, S.L.",
            "Distribuciones Levante, S.L.",
        ),
        (
            "BILL TO                  SHIP TO\nCascade Valley Hardware  Cascade Valley Hardware – Warehouse 2\n\n"
            "Redwood Ridge Supply Co.\n",
            "Cascade Valley Hardware",
            "Redwood Ridge Supply Co.",
        ),
    ],
    ids=["honorific", "client-heading", "delivery-site"],
)
def test_what_the_sixteenth_round_left_silent(text, buyer, seller):
    assert factors(text, {"vendor_name": buyer})["vendor_name"] < 0.7
    clean(text, {"vendor_name": seller})


def test_a_short_number_under_a_tax_registrations_label_is_a_tills():
    text = "Store 2107 Till 04      Op 1183\nTrn 5512   05/03/2026 18:06\nTOTAL R317.44\nVAT No 4123456789\n"
    clean(text, {"receipt_number": "5512"}, RECEIPT)
    assert factors(text, {"receipt_number": "4123456789"}, RECEIPT)["receipt_number"] < 0.7


def test_a_names_writings_are_its_wrapped_parts_in_one_column_only():
    from vetq.core.extraction.parties import _occurrences
    from vetq.core.extraction.roles import Lines

    text = " SOLD TO: LAKANDULA DENTAL CLINIC\n Registered Name: Lakandula Dental Clinic Co.\nWattle Grove\nCommunity Inc.\n"
    lines = Lines(text)
    first, second = text.index("LAKANDULA"), text.index("Lakandula")
    wrapped, rest = text.index("Wattle"), text.index("Community")
    spans = [(first, first + 23), (second, second + 23), (wrapped, wrapped + 12), (rest, rest + 14)]
    assert _occurrences(lines, spans) == [[spans[0]], [spans[1]], [spans[2], spans[3]]]


def test_a_credit_balance_applied_is_a_payment():
    text = (
        "Sous-total HT  502,68 €\nTVA (20 %)  100,54 €\nTotal  603,22 €\nSolde créditeur appliqué  −150,00 €\n"
        "Montant dû  453,22 €\n"
    )
    passes(text, {"subtotal": 502.68, "tax": 100.54, "total": 603.22})
    # what the credit leaves is still owed: the invoice's total is the sum before it
    flagged(text, {"subtotal": 502.68, "tax": 100.54, "total": 453.22}, "total", "left after", "603,22")
    assert factors(text, {"subtotal": 502.68, "tax": 100.54, "total": 150.0})["total"] < 0.7


# The seventeenth round's platforms: a receipt's point-of-sale app or an invoice's payment
# service given as the seller, where the document names it only after "Powered by"
@pytest.mark.parametrize(
    "text,platform,seller,schema",
    [
        ("  THE MAGNOLIA GRILL\n  New Orleans, LA\nCheck #142\nTotal  $48.20\n          Powered by Toast\n", "Toast", "THE MAGNOLIA GRILL", RECEIPT),
        ("      Gemüsehof Brandtner\nBeleg-Nr. 2026-000418\nGESAMT   27,30 €\n     Kassensystem: SumUp Kassensystem\n", "SumUp Kassensystem", "Gemüsehof Brandtner", RECEIPT),
        ("Opaline SAS\nFacture F-2026-0212\nMontant dû  453,22 €\nPaiement traité par Paylane Payments Europe Ltd.\n", "Paylane Payments Europe Ltd.", "Opaline SAS", INVOICE),
    ],
    ids=["toast", "sumup", "processor"],
)  # fmt: skip
def test_the_service_a_document_came_through_is_not_its_seller(text, platform, seller, schema):
    field = "merchant_name" if schema is RECEIPT else "vendor_name"
    assert factors(text, {field: platform}, schema)[field] < 0.7
    clean(text, {field: seller}, schema)
    # named elsewhere too: no reading of where it stands
    clean(text + f"{platform}\n", {field: platform}, schema)


def test_a_tax_tables_figures_one_blank_apart_are_not_read_by_its_columns():
    text = (
        "TOTAAL                      11,28\nPIN                         11,28\n  BTW     Bedrag  BTW\n"
        "  9%            3,94 0,35\n  21%           5,78 1,21\n  TOTAAL        9,72 1,56\n"
    )
    passes(text, {"tax": 1.56, "total": 11.28}, RECEIPT)


# 242. The eighteenth round: invoices under other countries' tax systems, hotel folios, scanned
# receipts. What a payment made before leaves is no total (the invoice schema's convention).
@pytest.mark.parametrize(
    "text,total,balance",
    [
        ("Netto 11 124,00 zł  VAT 2 537,28 zł\nDo zapłaty: 13 661,28 PLN\nZapłacono (zaliczka z dnia 2026-03-02): 3 000,00 PLN\n"
         "Pozostało do zapłaty: 10 661,28 PLN\n", 13661.28, 10661.28),
        ("Subtotal 11,124.00\nVAT 20%  2,224.80\nAmount due  13,348.80 GBP\nDeposit paid (02/03/2026): 3,000.00\n"
         "Balance due: 10,348.80\n", 13348.80, 10348.80),
        ("Celkem s DPH  27 049,55 Kč\nUhrazeno zálohou  -10 000,00 Kč\nCelkem k úhradě  17 049,55 Kč\n", 27049.55, 17049.55),
    ],
    ids=["polish-zaliczka", "deposit-paid", "czech-zaloha"],
)  # fmt: skip
def test_what_a_payment_made_before_leaves_is_no_total(text, total, balance):
    assert factors(text, {"total": total})["total"] >= 0.95
    flagged(text, {"total": balance}, "total", "left after")


def test_what_advance_payments_leave_on_a_service_charges_statement_is_no_total():
    flagged(_SERVICE_CHARGES_STATEMENT, {"total": 804.13}, "total", "left after", "3.144,13")


def test_an_insurers_share_or_cash_out_leaves_a_receipts_total():
    pharmacy = "Totaal  45,82 EUR\nTussenkomst verzekering  -22,74\nTe betalen  23,08 EUR\nBancontact  23,08\n"
    passes(pharmacy, {"total": 23.08}, RECEIPT)
    slip = "TOTAL  $145.59\nEFTPOS  $145.59\n   EFTPOS SLIP\nPURCHASE AUD  $145.59\nCASH OUT AUD  $50.00\nTOTAL AUD  $195.59\n"
    passes(slip, {"total": 145.59}, RECEIPT)


def test_a_labelled_payment_in_other_languages_is_no_rival_total():
    text = (
        "Totale documento (EUR)     1.450,82\nNetto a pagare             1.450,82\n"
        "Riepilogo incassi (solo a titolo informativo): imposta di soggiorno riscossa 117,00 EUR; "
        "totale pagato dagli ospiti 6.957,00 EUR.\n"
    )
    clean(text, {"total": 1450.82})


def test_a_discount_rate_written_with_its_percent_sign_first_explains_a_line():
    header = (
        " Sıra                                           Birim  İskonto  İskonto        KDV      KDV     Mal Hizmet\n"
    )
    row = "  2  USB-C Çoklayıcı 7in1 HUB          1 Adet  1.249,00 TL  %10,00  124,90 TL  %20,00  224,82 TL   1.124,10 TL\n"
    line = {"description": "USB-C Çoklayıcı 7in1 HUB", "quantity": 1, "unit_price": 1249.00, "amount": 1124.10}
    passes(header + row, {"line_items": [line]})
    assert factors(header + row, {"line_items": [{**line, "amount": 1100.00}]})["line_items[0].amount"] < 0.7


def test_greek_totals_of_value_discount_and_vat_are_no_rival_totals():
    text = (
        "  ΑΝΑΛΥΣΗ ΦΠΑ          ΚΑΘ. ΑΞΙΑ  ΦΠΑ              ΣΥΝΟΛΟ ΑΞΙΑΣ                                       757,40\n"
        "24%                      735,90    176,62          ΣΥΝΟΛΟ ΕΚΠΤΩΣΗΣ                                     21,50\n"
        "                  ΥΠΟΛΟΙΠΟ ΠΕΛΑΤΗ                  ΚΑΘΑΡΗ ΑΞΙΑ                                        735,90\n"
        "Προηγούμενο υπόλοιπο              1.540,00         ΣΥΝΟΛΟ ΦΠΑ                                         176,62\n"
        "Νέο υπόλοιπο                      2.452,52         ΠΛΗΡΩΤΕΟ ΠΟΣΟ                                     912,52 €\n"
    )
    clean(text, {"subtotal": 735.90, "tax": 176.62, "total": 912.52, "currency": "EUR"})
    assert factors(text, {"subtotal": 735.90, "tax": 176.62, "total": 2452.52})["total"] < 0.7


@pytest.mark.parametrize(
    "text,buyer,seller",
    [
        # a block of keys without colons under the customer's heading, another block's beside it
        ("ΧΑΡΤΙΚΑ ΒΟΡΕΙΟΥ ΕΛΛΑΔΟΣ Μ.Ι.Κ.Ε.\nΑΦΜ: 801274596  ΔΟΥ: ΦΑΕ ΘΕΣΣΑΛΟΝΙΚΗΣ\n"
         "                        ΣΤΟΙΧΕΙΑ ΠΕΛΑΤΗ                                          ΣΤΟΙΧΕΙΑ ΔΙΑΚΙΝΗΣΗΣ\n"
         "Κωδικός    30-0412                                                       Σκοπός διακίνησης    ΠΩΛΗΣΗ\n"
         "Επωνυμία   ΛΟΓΙΣΤΙΚΟ ΓΡΑΦΕΙΟ ΝΙΚΟΛΑΙΔΗΣ Ο.Ε.                Τόπος φόρτωσης       ΕΔΡΑ ΜΑΣ\n"
         "ΑΦΜ        099847215\n",
         "ΛΟΓΙΣΤΙΚΟ ΓΡΑΦΕΙΟ ΝΙΚΟΛΑΙΔΗΣ Ο.Ε.", "ΧΑΡΤΙΚΑ ΒΟΡΕΙΟΥ ΕΛΛΑΔΟΣ Μ.Ι.Κ.Ε."),
        # the addressee's name read again in an e-mail address
        ("EGE DİJİTAL BİLİŞİM LTD. ŞTİ.\nVergi Dairesi: Karşıyaka\n\nSAYIN                                    No:   TR1.2\n"
         "Deniz KAYA\nBostanlı Mah. No:412 D:9\nE-Posta: deniz.kaya@example.com.tr\n",
         "Deniz KAYA", "EGE DİJİTAL BİLİŞİM LTD. ŞTİ."),
        ("Largo Hotéis e Turismo, Lda.                  N.º FR 2026A/1843\n\nExmo.(s) Sr.(s)             Hóspede:  Eleanor Whitfield\n"
         "Brightwater Consulting Ltd  Quarto:   204\n14 Albion Street            Reserva n.º: CDL-55720\n",
         "Brightwater Consulting Ltd", "Largo Hotéis e Turismo, Lda."),
        # Tally's headings, each over the buyer's name, beside the order's and the freight's
        ("Shreeji Polymers Private Limited          Invoice No.            Dated\n"
         "Plot No. 214, GIDC Estate, Phase II       SPPL/25-26/0847        7-Feb-26\n\n"
         "Consignee (Ship to)                       Buyer's Order No.      Dated\n"
         "Kamdhenu Agro Packaging LLP               KAP/PO/2026/113        28-Jan-26\n"
         "Survey No. 88/2, Sanand-Viramgam Highway\n\n"
         "Buyer (Bill to)                           Bill of Lading/LR-RR   Motor Vehicle No.\n"
         "Kamdhenu Agro Packaging LLP               No.                    GJ01CX4417\n",
         "Kamdhenu Agro Packaging LLP", "Shreeji Polymers Private Limited"),
        # an attention line under the name past a scan's speck on the line between
        ("Maler- und Fassadenbetrieb Gruber KG\nHauptplatz 4, 4020 Linz\n\n"
         "                                      Kunden-Nr.      K-3308\n Hausverwaltung Steinbichler GmbH\n"
         "                                                       .\n"
         " z. H. Frau Mag. Petra Lindner        Auftrag         Stiegenhaus Haus B\n Landstraße 58/3\n 4020 Linz\n",
         "Hausverwaltung Steinbichler GmbH", "Maler- und Fassadenbetrieb Gruber KG"),
    ],
    ids=["greek-keys-without-colons", "name-in-an-email", "portuguese-salutation", "tally-headings", "attention-past-a-speck"],
)  # fmt: skip
def test_what_the_eighteenth_round_left_silent(text, buyer, seller):
    assert factors(text, {"vendor_name": buyer})["vendor_name"] < 0.7
    clean(text, {"vendor_name": seller})


def test_a_hyphenated_titles_number_with_its_series_is_the_documents_own():
    text = (
        "Casa do Largo · Lisboa                        FATURA-RECIBO\n"
        "Largo Hotéis e Turismo, Lda.                  N.º FR 2026A/1843\n"
        "Largo do Intendente 22, 1100-285 Lisboa       Data: 06-05-2026\n\n"
        "Exmo.(s) Sr.(s)             Hóspede:  Eleanor Whitfield\n"
        "Brightwater Consulting Ltd  Reserva n.º: CDL-55720\n"
    )
    clean(text, {"invoice_number": "FR 2026A/1843"})
    flagged(text, {"invoice_number": "CDL-55720"}, "invoice_number", "Reserva n.º")


@pytest.mark.parametrize(
    "text,own,other,schema",
    [
        ("GUEST FOLIO / INVOICE\n東和精機株式会社 御中               請求書番号 Folio No. KT-260308-0417\n"
         "ご宿泊者名 Guest   佐々木 亮 様      予約番号 Conf. No.  7730291\n", "KT-260308-0417", "7730291", INVOICE),
        ("DOCUMENTO COMMERCIALE\ndi vendita o prestazione\nTOTALE COMPLESSIVO     110,00\n"
         "12-03-2026 13:41\nDOCUMENTO N. 0134-0052\nRT 96MEX018823\n", "0134-0052", "96MEX018823", RECEIPT),
        ("Ticket n° 004471   Caisse 01\nTOTAL  18,40 EUR\n   CARTE BANCAIRE\nNo AUTO : 095213   TPE 01\n",
         "004471", "095213", RECEIPT),
        ("FACTURA SIMPLIFICADA\nN.º factura simplificada: FS-AGP-2026-004417\nN.º de contrato:   AGP-C-778120\n",
         "FS-AGP-2026-004417", "AGP-C-778120", RECEIPT),
        ("Furnizor:   FACTURĂ   Cumpărător:\nSeria BVX nr. 0418\n"
         "Aviz de însoțire nr. AV-2026-0392 | Comandă client nr. SM-4471 din 02.02.2026\n", "BVX 0418", "AV-2026-0392", INVOICE),
    ],
    ids=["booking-conf-no", "italian-register-serial", "french-card-auth", "rental-contract", "romanian-delivery-note"],
)  # fmt: skip
def test_numbers_of_other_things_the_eighteenth_round_printed(text, own, other, schema):
    field = "receipt_number" if schema is RECEIPT else "invoice_number"
    clean(text, {field: own}, schema)
    assert factors(text, {field: other}, schema)[field] < 0.7


@pytest.mark.parametrize(
    "text,article",
    [
        ("TVA non applicable - article 293 B du CGI\n", "293"),
        ("Spese anticipate escluse art. 15 DPR 633/72  120,00\n", "15"),
        ("Hinweis gemäß § 35a EStG: Lohnkosten 1.162,00 €\n", "35"),
    ],
)
def test_a_laws_article_is_no_amount(text, article):
    assert article not in [figure for figure, _ in roles(text)], roles(text)


def test_a_labour_cost_note_sums_its_figures_after_an_equals_sign():
    text = (
        "Summe netto                                   1.737,20 €\nzzgl. 19% MwSt.                                330,07 €\n"
        "Gesamtbetrag                                  2.067,27 €\n"
        " Hinweis gemäß § 35a EStG: Im Rechnungsbetrag enthaltene Lohn- und Fahrtkosten: 1.162,00 € netto zzgl.\n"
        " 220,78 € MwSt. = 1.382,78 €.\n"
    )
    clean(text, {"subtotal": 1737.2, "tax": 330.07, "total": 2067.27, "currency": "EUR"})


def test_an_italian_professionals_expenses_outside_the_vat_base_and_the_tax_withheld():
    text = (
        "Tenuta contabilità semplificata                      12    80,00    960,00\n"
        "Dichiarazione dei redditi                             1   350,00    350,00\n"
        "Diritti camerali anticipati per conto del cliente     1   120,00    120,00\n"
        "              Totale compensi                         1.310,00\n"
        "              Contributo integrativo CNPADC 4%              52,40\n"
        "              Imponibile IVA                          1.362,40\n"
        "              IVA 22%                                      299,73\n"
        "              Spese anticipate escluse art. 15 DPR 633/72  120,00\n"
        "              Imposta di bollo                               2,00\n"
        "              Totale documento                        1.784,13\n"
        "              Ritenuta d'acconto 20% su € 1.310,00     -262,00\n"
        "              NETTO A PAGARE €                       1.522,13\n"
    )
    lines = [
        {"description": "Tenuta contabilità semplificata", "quantity": 12, "unit_price": 80.0, "amount": 960.0},
        {"description": "Dichiarazione dei redditi", "quantity": 1, "unit_price": 350.0, "amount": 350.0},
        {"description": "Diritti camerali anticipati per conto del cliente", "quantity": 1, "unit_price": 120.0,
         "amount": 120.0},
    ]  # fmt: skip
    record = {"subtotal": 1362.4, "tax": 299.73, "total": 1522.13, "line_items": lines}
    passes(text, record)
    flagged(text, {**record, "total": 1784.13}, "total", "before the tax withheld")


# 243. A review of test 242's change: a payment worth the document's own sum (an advance
# invoice under its order's total, a deposit's receipt) leaves nothing owed before it; an
# insurer named on the payment's line pays for the buyer; a credit or points may be a price's
# reduction; a combined invoice and delivery note titles one number; a heading centred over
# two blocks, or over the next, heads neither
@pytest.mark.parametrize(
    "text,total,schema",
    [
        ("Gesamtbetrag Auftrag brutto: 4.760,00 EUR\nAnzahlung 50 %: 2.380,00 EUR\nAnzahlung netto  2.000,00 EUR\n"
         "USt 19 %  380,00 EUR\nRechnungsbetrag  2.380,00 EUR\n", 2380.0, INVOICE),
        ("DEPOSIT RECEIPT\nTotal booking value          £640.00\nDeposit paid                 £320.00\n"
         "Balance due on arrival       £320.00\nPaid by Mastercard ****8812  £320.00\n", 320.0, RECEIPT),
        ("Total                 $450.00\nIns. paid             -$320.00\nAmount due            $130.00\nVisa  $130.00\n",
         130.0, RECEIPT),
        ("Gesamt                          18,40 EUR\nVon Krankenkasse bezahlt       -13,40 EUR\nZu zahlen   5,00 EUR\n",
         5.0, RECEIPT),
        ("Total                             $867.91\nTrade-in credit                  -$200.00\n"
         "Amount due                        $667.91\nVISA ****1123  $667.91\n", 667.91, RECEIPT),
        ("Total usage                        $500.00\nCredits                           -$120.00\nTotal   $380.00\n",
         380.0, INVOICE),
        ("Sandwich combo   $11.50\nTotal            $11.50\nPaid with points  -$5.00\nBalance due  $6.50\nVisa  $6.50\n",
         6.5, RECEIPT),
    ],
    ids=["advance-invoice", "deposit-receipt", "ins-paid", "krankenkasse", "trade-in", "cloud-credits", "points"],
)  # fmt: skip
def test_what_the_document_asks_after_its_own_advance_an_insurer_or_a_credit(text, total, schema):
    assert not [r for r in reasons(text, {"total": total}, schema)["total"] if "left after" in r]


def test_a_greek_total_of_value_with_vat_is_the_grand_total():
    text = "ΨΩΜΙ ΧΩΡΙΑΤΙΚΟ           2,40\nΤΥΡΟΠΙΤΑ                  2,20\nΣΥΝΟΛΟ ΑΞΙΑΣ ΜΕ ΦΠΑ       4,60\nΜΕΤΡΗΤΑ   10,00\nΡΕΣΤΑ   5,40\n"
    passes(text, {"total": 4.6, "payment_method": "cash"}, RECEIPT)
    assert factors(text, {"total": 10.0}, RECEIPT)["total"] < 0.7


@pytest.mark.parametrize(
    "title,number",
    [
        ("FACTURĂ ȘI AVIZ DE ÎNSOȚIRE\nSeria CMB nr. 0457", "CMB 0457"),
        ("Faktura / dodací list č. 2026117", "2026117"),
        ("Invoice & Delivery Note   KH-26-01187", "KH-26-01187"),
    ],
)
def test_a_combined_invoice_and_delivery_notes_number_is_the_invoices(title, number):
    clean(f"{title}\nDate: 03/11/2026\nTotal  2,183.00\n", {"invoice_number": number})


@pytest.mark.parametrize(
    "heading",
    [
        "                                                     ΣΤΟΙΧΕΙΑ ΠΕΛΑΤΗ\n",  # over the next block
        "                             ΣΤΟΙΧΕΙΑ ΠΕΛΑΤΗ\n",  # centred over both
    ],
)
def test_a_heading_over_the_next_block_or_both_heads_neither(heading):
    text = (
        heading + "Επωνυμία   ΛΟΓΙΣΤΙΚΟ ΓΡΑΦΕΙΟ ΝΙΚΟΛΑΟΥ Ο.Ε.   Επωνυμία   ΞΕΝΟΔΟΧΕΙΑΚΗ ΚΡΗΤΗΣ Α.Ε.\n"
        "ΑΦΜ        044556677                     ΑΦΜ        099112233\n"
    )
    clean(text, {"vendor_name": "ΛΟΓΙΣΤΙΚΟ ΓΡΑΦΕΙΟ ΝΙΚΟΛΑΟΥ Ο.Ε."})


# 244. The nineteenth round (North American invoices, Asian receipts, scanned European
# invoices): a currency no sum is written with, told by the one country's script or words
# its documents show, and that country's date order
@pytest.mark.parametrize(
    "text,currency",
    [
        ("카페 모래정원\n서울특별시 마포구 와우산로 21\n아메리카노 2  9,000\n카페라떼 1  5,500\n합 계 금 액   14,500\n", "KRW"),
        ("เซเว่น อีเลฟเว่น สาขา สีลม\nใบกำกับภาษีอย่างย่อ\nน้ำดื่ม  1  10.00\nรวม  10.00\n", "THB"),
        ("全家便利商店\n電子發票證明聯\n115年01-02月\n總計 185\n", "TWD"),
        ("INDOMARET PT INDOMARCO\nNPWP 01.337.994.6-092.000\nTOTAL : 108.100\nKEMBALIAN : 1.900\n", "IDR"),
        ("Bakkerij De Korenaar\nKvK 12345678  BTW NL001234567B01\nTotaal  12,40\n", "EUR"),
    ],
    ids=["hangul", "thai", "taiwan", "indonesia", "dutch"],
)  # fmt: skip
def test_a_currency_no_sum_is_written_with_told_by_the_country(text, currency):
    passes(text, {"currency": currency}, RECEIPT)
    assert factors(text, {"currency": "USD"}, RECEIPT)["currency"] < 0.7


def test_a_country_tells_nothing_against_a_currency_written():
    text = "카페 모래정원\n서울특별시 마포구 와우산로 21\n아메리카노 2  USD 9.00\n합 계 금 액   USD 9.00\n"
    assert factors(text, {"currency": "KRW"}, RECEIPT)["currency"] < 0.7
    clean(text, {"currency": "USD"}, RECEIPT)


@pytest.mark.parametrize(
    "text,written",
    [
        ("เซเว่น อีเลฟเว่น สาขา สีลม\nใบกำกับภาษีอย่างย่อ\nวันที่ 06/04/2026 10:12\nรวม  10.00\n", "06/04/2026"),
        ("NHÀ HÀNG PHỐ CỔ\nSố HĐ: HS-0406-0127   Ngày 06/04/2026\nCộng tiền hàng: 430.000\nTỔNG CỘNG THANH TOÁN: 466.400 đ\n"
         "Cảm ơn quý khách, hẹn gặp lại!\n", "06/04/2026"),
    ],
    ids=["thai", "vietnamese"],
)  # fmt: skip
def test_a_country_whose_script_tells_it_writes_the_day_first(text, written):
    clean(text, {"date": "2026-04-06"}, RECEIPT)
    (swapped,) = reasons(text, {"date": "2026-06-04"}, RECEIPT)["date"]
    assert f"'{written}' reads 2026-04-06 day first" in swapped


def test_a_rates_base_in_brackets_after_it_is_no_tax():
    text = (
        "Cộng tiền hàng:                                  430.000\n"
        "Thuế GTGT 8% (trên 330.000):                     26.400\n"
        "Thuế GTGT 10% (trên 100.000) (*):                10.000\n"
        "TỔNG CỘNG THANH TOÁN:                            466.400 đ\n"
    )
    passes(text, {"subtotal": 430000, "tax": 36400, "total": 466400, "currency": "VND"}, RECEIPT)
    assert factors(text, {"subtotal": 430000, "tax": 330000, "total": 466400}, RECEIPT)["tax"] < 0.7


@pytest.mark.parametrize(
    "text,own,other,schema",
    [
        ("NHÀ HÀNG PHỐ CỔ\nMST: 0109876543\nSố HĐ: HS-0406-0127\nTỔNG CỘNG: 466.400 đ\n", "HS-0406-0127", "0109876543", RECEIPT),
        ("KEDAI FARMASI SEJAHTERA\nNo. Pendaftaran SST: B16-1809-32000417\nNo. Bil / Bill No : B26-041573\nJUMLAH  40.90\n",
         "B26-041573", "B16-1809-32000417", RECEIPT),
        ("Invoice No.   FV-25-0307\nTotal  CAD 5,611.60\nGST/HST Registration No. 81234 5678 RT0001\n", "FV-25-0307",
         "81234 5678 RT0001", INVOICE),
    ],
    ids=["vietnamese-tax-code", "malaysian-sst", "canadian-gst-hst"],
)  # fmt: skip
def test_tax_registrations_the_nineteenth_round_printed(text, own, other, schema):
    field = "receipt_number" if schema is RECEIPT else "invoice_number"
    clean(text, {field: own}, schema)
    assert factors(text, {field: other}, schema)[field] < 0.7


# 245. The twentieth round (Latin American receipts, Nordic and Central European invoices,
# scanned English receipts): dates read month first where an American party's software
# wrote them, day first where a country's word or a currency named outright tells it
_AMERICAN_INVOICE = (
    "Front Range Landscape Supply LLC\n4410 Brighton Blvd, Denver, CO 80216\n\nINVOICE 1047\n"
    "DATE       04/09/2025\nTERMS      Net 30\nTOTAL      $1,250.00\n"
)


def test_an_american_partys_software_writes_the_month_first():
    clean(_AMERICAN_INVOICE, {"invoice_date": "2025-04-09"})
    flagged(_AMERICAN_INVOICE, {"invoice_date": "2025-09-04"}, "invoice_date", "month first", "CO 80216")
    # a medicine's expiry month and year reads no order; another currency is another country's
    expiry = "Apollo Pharmacy\nDate: 04/03/2026\nPyrexa 650 Tab   08/27   2   33.60\nTotal  Rs. 60.48\n"
    clean(expiry, {"invoice_date": "2026-03-04"})
    euros = _AMERICAN_INVOICE.replace("$1,250.00", "€1.250,00")
    clean(euros, {"invoice_date": "2025-09-04"})


@pytest.mark.parametrize(
    "text,written",
    [
        ("PRONTITO TIENDAS SA DE CV\nRFC: TPB080514KQ3\nFECHA: 05/03/2026  14:22\nTOTAL  $ 89.50\n", "05/03/2026"),
        ("CAFÉ DEL PUERTO\nBOLETA ELECTRÓNICA N° 004417\nFecha Emisión: 05-03-2026\nTotal  $ 29.013\n", "05-03-2026"),
        ("Fitzroy Social Pty Ltd\nABN 51 824 753 556\nDate 05/03/2026 9:41 am\nTotal  $52.10\n", "05/03/2026"),
        ("FreshChoice Merivale\nEFTPOS  $49.87\nTOTAL   NZD 49.87\n05/03/2026 17:26\n", "05/03/2026"),
        ("BOTICA SAN MARTÍN\nFecha de emisión: 05/03/2026\nOP. GRAVADA   S/   77.97\nTOTAL  S/ 92.00\n", "05/03/2026"),
    ],
    ids=["mexican-rfc", "chilean-boleta", "australian-abn", "nzd-named", "peruvian-soles"],
)
def test_a_country_word_or_a_named_currency_tells_the_day_first(text, written):
    clean(text, {"date": "2026-03-05"}, RECEIPT)
    (swapped,) = reasons(text, {"date": "2026-05-03"}, RECEIPT)["date"]
    assert f"'{written}' reads 2026-03-05 day first" in swapped


def test_a_mexican_receipt_beside_an_american_address_reads_the_day_first():
    text = "PRONTITO TIENDAS SA DE CV\nRFC: TPB080514KQ3\nEnvíos: 1200 Main St, El Paso, TX 79901\nFECHA: 05/03/2026\nTOTAL  $ 89.50\n"
    clean(text, {"date": "2026-03-05"}, RECEIPT)


def test_a_lithuanian_sum_in_words_names_the_euro():
    text = (
        "Prekės pavadinimas   Kiekis  Kaina, Eur  Suma, Eur\nKonsultacija   1   1184,50   1184,50\n"
        "Iš viso su PVM: 1433,25\nSuma žodžiais: vienas tūkstantis keturi šimtai trisdešimt trys eurai 25 ct\n"
    )
    clean(text, {"currency": "EUR"})


def test_a_sales_taxs_base_is_no_second_subtotal():
    text = "SUBTOTAL                      43.63\nTAXABLE AMOUNT                27.46\nSALES TAX 7.000%               1.92\nTOTAL  45.55\n"
    clean(text, {"subtotal": 43.63, "tax": 1.92, "total": 45.55}, RECEIPT)
    assert factors(text, {"subtotal": 27.46, "tax": 1.92, "total": 45.55}, RECEIPT)["subtotal"] < 0.7


@pytest.mark.parametrize(
    "text,field,wrong,right,schema",
    [
        ("FOGÓN DE LA CANDELARIA\nNIT 901.234.567-1\nTOTAL  $ 56.000\n"
         "Proveedor tecnológico: SOLUCIONES DIGITALES ANDINAS S.A.S. NIT 900.876.543-2\n",
         "merchant_name", "SOLUCIONES DIGITALES ANDINAS S.A.S.", "FOGÓN DE LA CANDELARIA", RECEIPT),
        ("PARRILLA DON JULIO\nCUIT: 30-71234567-8   Inicio de Actividades: 01/03/2015\nFecha: 09/06/2026\nTOTAL  $ 48.600,00\n",
         "date", "2015-03-01", "2026-06-09", RECEIPT),
    ],
    ids=["software-provider", "activity-start"],
)  # fmt: skip
def test_what_the_twentieth_round_left_silent(text, field, wrong, right, schema):
    assert factors(text, {field: wrong}, schema)[field] < 0.7
    clean(text, {field: right}, schema)


# 246. A review of tests 243-245's changes
def test_a_heading_a_few_columns_off_its_block_of_keys_still_heads_it():
    text = (
        "SUPPLIER                                   CUSTOMER\n"
        "Name      Brightwave Consulting Ltd          Name      Northwind Traders plc\n"
        "Address   5 Mill St, Leeds LS1 4AB           Address   1 Dock Road, London E16 1AA\n"
    )
    assert factors(text, {"vendor_name": "Northwind Traders plc"})["vendor_name"] < 0.7


def test_an_attention_line_past_a_blank_line_is_the_next_names():
    text = "Brightwave Consulting Ltd\n\nAttn: Accounts Payable\nNorthwind Traders plc\n1 Dock Road, London E16 1AA\n"
    clean(text, {"vendor_name": "Brightwave Consulting Ltd"})


def test_a_label_then_equals_names_the_figure_after_it_unless_the_two_before_add_up_to_it():
    text = "Malerarbeiten Wohnzimmer 1.162,00 € MwSt = 220,78 €\nGesamt 1.382,78 €\n"
    clean(text, {"tax": 220.78, "total": 1382.78})
    assert factors(text, {"tax": 1162.0, "total": 1382.78})["tax"] < 0.7


@pytest.mark.parametrize(
    "retention",
    ["Retención en garantía 5%", "Retención por garantía 5%", "Retenção caução 5%", "Ritenuta a garanzia 5%"],
)
def test_a_guarantee_retention_is_no_tax_withheld(retention):
    text = (
        "Base imponible                                  50.000,00 €\nIVA 10%                                          5.000,00 €\n"
        f"Total factura                                   55.000,00 €\n{retention:<40}-2.750,00 €\n"
        "Total a pagar                                   52.250,00 €\n"
    )
    passes(text, {"subtotal": 50000.0, "tax": 5000.0, "total": 55000.0})


@pytest.mark.parametrize(
    "line",
    [
        "Credit applied (CM-1182)                        -120.00",
        "Less: credit from prior overpayment             -120.00",
        "Payment received - Bright Dental                -120.00",
        "Paid to date (payment plan)                     -120.00",
    ],
)
def test_a_credit_applied_or_a_payment_naming_no_insurer_leaves_a_balance(line):
    text = f"Subtotal                                         505.90\nSales tax 10.25%   51.85\nTotal   557.75\n{line}\nBalance due   437.75\n"
    flagged(text, {"total": 437.75}, "total", "left after")


def test_a_shop_abroad_is_told_by_its_address_not_its_script():
    korean_la = (
        "   서울 순두부  SEOUL TOFU HOUSE\n 3470 W 6th St, Los Angeles, CA 90020\n03/09/2026  12:18 PM\n"
        "순두부찌개 Soft Tofu Stew        2   31.98\n김치전 Kimchi Pancake         1   14.99\n"
        "불고기 Bulgogi                  1   24.99\n합계 TOTAL                     71.96\n"
    )
    assert factors(korean_la, {"currency": "KRW"}, RECEIPT)["currency"] < 0.7
    passes(korean_la, {"currency": "USD", "date": "2026-03-09"}, RECEIPT)
    toronto = (
        "   ΑΡΤΟΠΟΙΕΙΟ ΑΦΡΟΔΙΤΗ  AFRODITE BAKERY\n     598 Danforth Ave, Toronto ON M4K 1R1\n03/09/2026   10:05 AM\n"
        "ΣΠΑΝΑΚΟΠΙΤΑ ΣΠΙΤΙΚΗ Spanakopita     2    9.00\nΜΠΑΚΛΑΒΑΣ ΜΕΛΙΟΥ Baklava           4   10.00\nTotal   19.77\n"
    )
    assert not reasons(toronto, {"date": "2026-03-09"}, RECEIPT)["date"]


def test_a_delivery_notes_own_label_still_names_its_number():
    text = "FAKTURA - DAŇOVÝ DOKLAD č. FV-2026-0153\nDodací list: DL-2026-0311\nCelkem k úhradě  12 100,00 Kč\n"
    assert factors(text, {"invoice_number": "DL-2026-0311"})["invoice_number"] < 0.7
    clean(text, {"invoice_number": "FV-2026-0153"})


@pytest.mark.parametrize("line", ["Wall Art   120", "Sensor ABS   850"])
def test_an_items_word_before_a_whole_number_is_no_laws_article(line):
    assert any(figure == line.split()[-1] for figure, _ in roles(line + "\n"))


def test_a_script_a_few_words_of_a_menu_are_written_in_tells_nothing():
    # a London taverna's bilingual menu: mostly English, the Greek a few dishes' names
    text = (
        "THE OLIVE TREE TAVERNA\n14 Charlotte Street, London\nTable 7   Covers 2\n"
        "ΜΟΥΣΑΚΑΣ Moussaka with salad and bread          1   16.50\n"
        "ΣΟΥΒΛΑΚΙ Chicken souvlaki with pitta and chips  1   14.00\n"
        "Sparkling water large bottle                    1    4.50\nTotal   35.00\nThank you for dining with us\n"
    )
    assert factors(text, {"currency": "EUR"}, RECEIPT)["currency"] < 0.7


def test_a_countrys_word_and_another_countrys_address_tell_neither():
    text = "PRONTITO TIENDAS SA DE CV\nRFC: TPB080514KQ3\n1200 Main St, El Paso, TX 79901\nTOTAL  89.50\n"
    assert factors(text, {"currency": "USD"}, RECEIPT)["currency"] < 0.7
    assert factors(text, {"currency": "MXN"}, RECEIPT)["currency"] < 0.7
    # a buyer's address under its key is no word of the issuer's country
    keyed = text.replace("1200 Main St", "Envíos: 1200 Main St")
    passes(keyed, {"currency": "MXN"}, RECEIPT)


# 247. A third review: a buyer's or a guest's American address is no word of how the issuer
# writes dates, nor of its currency; a country's abbreviation counts only as printed
@pytest.mark.parametrize(
    "text,record,schema",
    [
        ("Harbour Lane Studio Ltd\n12 Clerkenwell Rd, London EC1M 5PQ\nVAT Reg No GB 284 5521 19\n\nINVOICE 2026-031\n"
         "Bill To\nLonghorn Robotics Inc.\n100 Congress Ave, Austin, TX 78701 USA\nInvoice Date: 03/04/2026\n"
         "Total (USD)  4,500.00\n", {"invoice_date": "2026-04-03"}, INVOICE),
        ("              領収書 / RECEIPT\nホテルグランドさくら 東京\n東京都千代田区丸の内1-2-3   TEL 03-5555-0123\n"
         "ご宿泊者様 / Guest: John Miller\nAddress: 742 Evergreen Terrace, Springfield, IL 62704\n日付 Date: 2026/03/04\n"
         "ご宿泊料金 Room charge (2泊)          32,000\nサービス料 Service charge              3,200\n"
         "合計 Total                            38,720\nお預り Paid (VISA)                    38,720\n"
         "またのお越しをお待ちしております。ありがとうございました\n",
         {"currency": "JPY"}, RECEIPT),
        ("Corner Market\nTel (415) 555-0142\nCashier: Dian\nDate: 03/04/2026\nTotal $9.99\n", {"date": "2026-03-04"}, RECEIPT),
    ],
    ids=["uk-seller-us-buyer", "japanese-hotel-us-guest", "a-cashier-named-dian"],
)  # fmt: skip
def test_what_stands_for_another_party_tells_nothing_of_the_issuers_country(text, record, schema):
    passes(text, record, schema)
