"""Role labels of dates, identifiers and text: a labelled field whose value the document
writes only under another value's label ("Delivery date", "Customer number", another
field's label) is lowered with a reason naming that label; so is a date or identifier
written under no label where the field's own label names another value outright; a
value under its own label, or under no label at one place at least where its own label
names nothing else, is not."""

from __future__ import annotations

import pytest

from vetq.core.extraction import field_checks as F
from vetq.core.extraction.heuristics import run_heuristics
from vetq.core.schemas import SchemaInvalidError, compile_schema

BILL = {
    "name": "bill",
    "version": 1,
    "fields": {
        "invoice_date": {"kind": "date", "labels": ["Invoice date"]},
        "order_no": {"kind": "identifier", "labels": ["Order number"]},
        "total": {"kind": "amount", "labels": ["@total"]},
    },
}
TEXT = """ACME Ltd
Invoice date: 28.02.2026
Delivery date: 05.03.2026
Order number: PO-7781
Customer number: C-1042
Total: 120.00 EUR
"""
RIGHT = {"invoice_date": "2026-02-28", "order_no": "PO-7781", "total": 120.0}


def _checks(text, record, schema=BILL):
    return run_heuristics(text, record, compile_schema(schema))


def test_a_date_and_a_number_taken_from_other_labels_are_lowered_naming_the_label():
    checks = _checks(TEXT, {**RIGHT, "invoice_date": "2026-03-05", "order_no": "C-1042"})
    date, number = checks["invoice_date"], checks["order_no"]
    assert date.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR)
    assert "'Delivery date'" in date.reasons[0] and "its own label 'Invoice date'" in date.reasons[0]
    assert number.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR)
    assert "'Customer number'" in number.reasons[0]
    assert not date.verified and not number.verified
    # the values are where the record says: their spans stay, for the reviewer
    assert date.spans and number.spans[0].text == "C-1042"


def test_the_right_values_under_their_own_labels_keep_their_score():
    checks = _checks(TEXT, RIGHT)
    for path in ("invoice_date", "order_no"):
        assert checks[path].factor == 1.0 and checks[path].reasons == [] and checks[path].verified


@pytest.mark.parametrize(
    "text",
    [
        "ACME Ltd\n28.02.2026\nPO-7781\n",  # no label anywhere
        "ACME Ltd, 28.02.2026, ref PO-7781\nDelivery date: 05.03.2026\n",  # the value under no label
        # once under no label, once under another's: nothing says which it is
        "ACME Ltd 28.02.2026 PO-7781\nDelivery date: 28.02.2026\nCustomer number: PO-7781\n",
    ],
)
def test_a_value_under_no_label_at_one_place_is_not_lowered(text):
    checks = _checks(text, RIGHT)
    assert checks["invoice_date"].factor == 1.0 and checks["order_no"].factor == 1.0


def test_a_label_with_a_figure_after_it_heads_no_column():
    # "Delivery date: 05.03.2026" names its own figure, not the date on the line below
    text = "Delivery date: 05.03.2026\n28.02.2026\nOrder number: PO-7781\n"
    assert _checks(text, RIGHT)["invoice_date"].factor == 1.0


def test_a_label_names_no_value_past_an_earlier_figure_on_its_line():
    text = "Delivery date: 05.03.2026  28.02.2026\nOrder number: PO-7781\n"
    assert _checks(text, RIGHT)["invoice_date"].factor == 1.0


def test_column_headers_say_which_value_is_which():
    text = (
        "Invoice date    Delivery date    Customer number\n"
        "28.02.2026      05.03.2026       C-1042\n"
        "Order number: PO-7781\n"
    )
    assert _checks(text, RIGHT)["invoice_date"].factor == 1.0
    wrong = _checks(text, {**RIGHT, "invoice_date": "2026-03-05"})["invoice_date"]
    assert wrong.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and "'Delivery date'" in wrong.reasons[0]
    # "Invoice date:" ending its line labels the value on the next line
    below = "Delivery date:\n05.03.2026\nInvoice date:\n28.02.2026\n"
    assert _checks(below, RIGHT)["invoice_date"].factor == 1.0
    assert _checks(below, {**RIGHT, "invoice_date": "2026-03-05"})["invoice_date"].factor < 1.0


def test_a_header_of_several_labels_run_together_names_no_value_below_it():
    # the same header and row with their blanks run together (a converter without layout):
    # the columns are gone, so which label stood over which value can no longer be read
    text = "ACME Ltd\nOrder number Invoice date Delivery date\n7781 28.02.2026 05.03.2026\n"
    assert _checks(text, {**RIGHT, "order_no": "7781"})["invoice_date"].factor == 1.0
    # one label over its value still names it, run together or not
    below = "Delivery date\n05.03.2026\nInvoice date\n28.02.2026\n"
    assert _checks(below, {**RIGHT, "invoice_date": "2026-03-05"})["invoice_date"].factor < 1.0


def test_another_fields_declared_label_counts_too():
    schema = {
        "name": "bill",
        "version": 1,
        "fields": {
            "issued": {"kind": "date", "labels": ["Issued"]},
            "pay_until": {"kind": "date", "labels": ["Pay until"]},
        },
    }
    text = "Issued 01.03.2026\nPay until 31.03.2026\n"
    checks = _checks(text, {"issued": "2026-03-31", "pay_until": "2026-03-31"}, schema)
    assert checks["pay_until"].factor == 1.0
    assert checks["issued"].factor == pytest.approx(F.FOREIGN_LABEL_FACTOR)
    assert "'Pay until'" in checks["issued"].reasons[0]


def test_a_standard_set_a_field_draws_on_is_its_own_in_every_language():
    # labelled only "Invoice date" (a phrase of @invoice_date): "Rechnungsdatum" is its own
    text = "Rechnungsdatum: 28.02.2026\nLieferdatum: 05.03.2026\nBestellnummer: PO-7781\n"
    assert _checks(text, RIGHT)["invoice_date"].factor == 1.0
    wrong = _checks(text, {**RIGHT, "invoice_date": "2026-03-05"})["invoice_date"]
    assert wrong.factor < 1.0 and "'Lieferdatum'" in wrong.reasons[0]


def test_a_longer_form_of_its_own_label_is_its_own():
    schema = {"name": "bill", "version": 1, "fields": {"number": {"kind": "identifier", "labels": ["Invoice"]}}}
    # "Invoice number" is a standard label of another set, but it starts with the field's own
    assert _checks("Invoice number: INV-204\n", {"number": "INV-204"}, schema)["number"].factor == 1.0


@pytest.mark.parametrize(
    "text,record",
    [
        ("Rechnungs-/Lieferdatum: 05.03.2026\n", {"issued": "2026-03-05"}),
        ("Rechnungs- und Lieferdatum      05.03.2026\n", {"issued": "2026-03-05"}),
        ("Rechnungs-/Lieferschein-Nr. 2026-117\n", {"number": "2026-117"}),
        ("Rechnung / Lieferschein-Nr.: 2026-117\n", {"number": "2026-117"}),
    ],
)
def test_a_label_written_in_short_before_anothers_is_its_own(text, record):
    """A word joined before a label that takes the label's last part names the value too:
    "Rechnungs-/Lieferdatum" is the invoice date and the delivery date; a word that makes
    no label of the field with it ("Kunden-/Lieferdatum") leaves the value the other's."""
    assert _factors(text, record) == {name: 1.0 for name in record}
    other = text.replace("Rechnungs", "Kunden").replace("Rechnung", "Kunde")
    assert _factors(other, record) == {name: pytest.approx(F.FOREIGN_LABEL_FACTOR) for name in record}


def test_a_column_gap_or_a_words_last_letter_joins_no_label_to_the_next():
    # "ISSUE  DUE DATE": the E ending "ISSUE" is no "e" (and) making "issue date" of "due date"
    text = "INVOICE NUMBER  DATE OF ISSUE  DUE DATE\n1               01/04/2025     16/04/2025\n"
    assert _factors(text, {"issued": "2025-04-01"}) == {"issued": 1.0}
    assert _factors(text, {"issued": "2025-04-16"}) == {"issued": pytest.approx(F.FOREIGN_LABEL_FACTOR)}
    gap = "Rechnungs-   /   Lieferdatum: 05.03.2026\n"
    assert _factors(gap, {"issued": "2026-03-05"}) == {"issued": pytest.approx(F.FOREIGN_LABEL_FACTOR)}


def test_a_text_field_under_another_fields_label_is_lowered():
    schema = {
        "name": "deal",
        "version": 1,
        "fields": {
            "seller": {"kind": "text", "labels": ["Seller"]},
            "buyer": {"kind": "text", "labels": ["Buyer"]},
        },
    }
    text = "Seller: Northwind Traders\nBuyer: Contoso Pharmacy\n"
    assert _checks(text, {"seller": "Northwind Traders", "buyer": "Contoso Pharmacy"}, schema)["seller"].factor == 1.0
    wrong = _checks(text, {"seller": "Contoso Pharmacy", "buyer": "Contoso Pharmacy"}, schema)["seller"]
    assert wrong.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and "'Buyer'" in wrong.reasons[0]


def test_fields_without_labels_and_list_items_are_not_read_by_label():
    schema = {
        "name": "bill",
        "version": 1,
        "fields": {
            "invoice_date": {"kind": "date"},
            "lines": {"kind": "list", "fields": {"shipped": {"kind": "date", "labels": ["Invoice date"]}}},
        },
    }
    text = "Invoice date: 28.02.2026\nDelivery date: 05.03.2026\n"
    compiled = compile_schema(schema)
    assert compiled.value_lexicon is None  # nothing outside a list declares value labels
    checks = run_heuristics(text, {"invoice_date": "2026-03-05", "lines": [{"shipped": "2026-03-05"}]}, compiled)
    assert checks["invoice_date"].factor == 1.0 and checks["lines[0].shipped"].factor == 1.0


def test_a_label_names_one_field_whatever_its_kind():
    schema = {
        "name": "bill",
        "version": 1,
        "fields": {
            "issued": {"kind": "date", "labels": ["Date"]},
            "number": {"kind": "identifier", "labels": ["date"]},
        },
    }
    with pytest.raises(SchemaInvalidError, match=r"fields\.number\.labels: the label 'date' is also issued's"):
        compile_schema(schema)


def test_a_standard_value_set_is_taken_by_name():
    compiled = compile_schema(
        {"name": "bill", "version": 1, "fields": {"due": {"kind": "date", "labels": ["@due_date"]}}}
    )
    assert "fällig am" in compiled.by_path["due"].labels
    checks = run_heuristics("Fällig am 31.03.2026\nLieferdatum 05.03.2026\n", {"due": "2026-03-05"}, compiled)
    assert checks["due"].factor < 1.0 and "'Lieferdatum'" in checks["due"].reasons[0]


NUMBERED = {
    "name": "bill",
    "version": 1,
    "fields": {"number": {"kind": "identifier", "labels": ["@invoice_number"]}},
}


def test_a_sellers_order_number_stands_in_only_where_no_invoice_number_label_is():
    receipt = "RECEIPT\nOrder #: ORD-2025-078\nCustomer no: C-1042\n"
    assert _checks(receipt, {"number": "ORD-2025-078"}, NUMBERED)["number"].factor == 1.0
    # a customer's number is no stand-in, nor is a buyer's purchase order
    assert _checks(receipt, {"number": "C-1042"}, NUMBERED)["number"].factor == pytest.approx(F.FOREIGN_LABEL_FACTOR)
    purchase = "RECEIPT\nPO number: PO-7781\n"
    assert _checks(purchase, {"number": "PO-7781"}, NUMBERED)["number"].factor == pytest.approx(F.FOREIGN_LABEL_FACTOR)
    # with an invoice number label in the document, the order number is another value
    invoice = "Invoice number: INV-204\nOrder #: ORD-2025-078\n"
    wrong = _checks(invoice, {"number": "ORD-2025-078"}, NUMBERED)["number"]
    assert wrong.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and "'Order #'" in wrong.reasons[0]


def test_a_value_under_no_label_is_lowered_where_its_own_label_names_another():
    text = "ACME Ltd, 28.02.2026, ref PO-7781\nInvoice date: 01.03.2026\nOrder number: PO-9000\n"
    checks = _checks(text, RIGHT)
    date, number = checks["invoice_date"], checks["order_no"]
    assert date.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and "'01.03.2026'" in date.reasons[0]
    assert number.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and "'PO-9000'" in number.reasons[0]
    assert not date.verified and date.spans  # where the record's value stands, for the reviewer
    fixed = _checks(text, {**RIGHT, "invoice_date": "2026-03-01", "order_no": "PO-9000"})
    assert fixed["invoice_date"].factor == 1.0 and fixed["order_no"].factor == 1.0
    # a longer form of the value its label names is no other value
    longer = _checks("ACME Ltd, ref PO-7781-B\nOrder number: PO-7781\n", {**RIGHT, "order_no": "PO-7781-B"})
    assert longer["order_no"].factor == 1.0


@pytest.mark.parametrize(
    "text",
    [
        # the label qualified by words after it names another document's date
        "ACME Ltd, 28.02.2026, ref PO-7781\nInvoice date of the credited bill: 01.03.2026\n",
        # the label inside a longer one ("… issue date") names another value's date
        "ACME Ltd, 28.02.2026, ref PO-7781\nBusiness ID Invoice date: 01.03.2026\n",
    ],
)
def test_only_a_label_naming_another_value_outright_lowers_one_under_no_label(text):
    checks = _checks(text, RIGHT)
    assert checks["invoice_date"].factor == 1.0 and checks["order_no"].factor == 1.0


def test_a_receipts_number_is_a_fair_reading_of_the_invoice_number_beside_an_invoice_label():
    text = "Receipt from Remix Studios\nReceipt number  1923-2093\nInvoice number  2ABC1234-20923\n"
    assert _checks(text, {"number": "1923-2093"}, NUMBERED)["number"].factor == 1.0
    assert _checks(text, {"number": "2ABC1234-20923"}, NUMBERED)["number"].factor == 1.0
    # a customer's number beside them still is another value
    wrong = _checks(text + "Customer no: C-1042\n", {"number": "C-1042"}, NUMBERED)["number"]
    assert wrong.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR)


INVOICE_FIELDS = {
    "name": "bill",
    "version": 1,
    "fields": {
        "number": {"kind": "identifier", "labels": ["@invoice_number"]},
        "issued": {"kind": "date", "labels": ["@invoice_date"]},
    },
}


def _factors(text, record):
    """Each field of `record` checked against `text` with INVOICE_FIELDS: its factor."""
    checks = _checks(text, record, INVOICE_FIELDS)
    return {path: checks[path].factor for path in record}


@pytest.mark.parametrize(
    "text,record",
    [
        # a credit note's own number and date after words any number or date follows,
        # beside the labels of the invoice it credits
        (
            "Credit note no.: CN-2024-0017\nDate: 12.03.2024\nOriginal invoice\n"
            "Invoice number: RE-2024-0112\nInvoice date: 20.02.2024\n",
            {"number": "CN-2024-0017", "issued": "2024-03-12"},
        ),
        ("Fattura n. 118/2024 del 06/03/2024\nData fattura: 02/01/2024 (acconto)\n", {"issued": "2024-03-06"}),
        # a statement's rows: its labels name several values, none of them the document's
        (
            "Statement S-77  12/03/2024\nInvoice date: 02/03/2024   Invoice no: 10021\n"
            "Invoice date: 05/03/2024   Invoice no: 10022\n",
            {"number": "S-77", "issued": "2024-03-12"},
        ),
    ],
)
def test_a_documents_own_value_beside_another_documents_labels_is_not_lowered(text, record):
    assert _factors(text, record) == dict.fromkeys(record, 1.0)


def test_a_label_names_its_value_across_its_abbreviations_full_stop_and_past_another_label():
    wrong = _checks("Invoice No. 4471\nOrder 98765\n", {"number": "98765"}, INVOICE_FIELDS)["number"]
    assert wrong.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and "'4471'" in wrong.reasons[0]
    # once under another value's label, once under none: the label naming the invoice's says
    text = "ACME 11.06.2018\nInvoice date: 13.06.2018\nDelivery date: 11.06.2018\n"
    wrong = _checks(text, {"issued": "2018-06-11"}, INVOICE_FIELDS)["issued"]
    assert wrong.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and "'13.06.2018'" in wrong.reasons[0]


def test_the_word_date_alone_starting_its_line_names_the_documents_date():
    text = "Invoice INV-9\nDate: 31/01/2026\nShipped 28/01/2026 by courier\n"
    assert _checks(text, {"issued": "2026-01-31"}, INVOICE_FIELDS)["issued"].factor == 1.0
    wrong = _checks(text, {"issued": "2026-01-28"}, INVOICE_FIELDS)["issued"]
    assert wrong.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and "'31/01/2026'" in wrong.reasons[0]
    # "Due Date:" is no "Date:"; the value under "日付:" is the one it names, in any form
    text = "Invoice INV-9\nDue Date: 28/02/2026\nACME, 31/01/2026\n"
    assert _checks(text, {"issued": "2026-01-31"}, INVOICE_FIELDS)["issued"].factor == 1.0
    text = "請求書\n日付: 2025 年 12 月 05 日\n"
    assert _checks(text, {"issued": "2025-12-05"}, INVOICE_FIELDS)["issued"].factor == 1.0


def test_a_documents_title_names_its_number():
    text = "Handelsrechnung (380)  Nr. 471113  vom  13.06.2018\nProjekt P-5521\n"
    assert _checks(text, {"number": "471113"}, INVOICE_FIELDS)["number"].factor == 1.0
    wrong = _checks(text, {"number": "P-5521"}, INVOICE_FIELDS)["number"]
    assert wrong.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and "'471113'" in wrong.reasons[0]
    wrong = _checks("Facture FA-2017-0010\nClient 40012\n", {"number": "40012"}, INVOICE_FIELDS)["number"]
    assert wrong.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and "'FA-2017-0010'" in wrong.reasons[0]


@pytest.mark.parametrize(
    "text",
    [
        "Invoice Calle Pradillo 42, Madrid\nEXPORT-001\n",  # cells run together: a street's number
        "Invoice 7 of 9\nEXPORT-001\n",  # a page count
    ],
)
def test_a_title_names_no_number_across_other_words_or_a_count(text):
    assert _checks(text, {"number": "EXPORT-001"}, INVOICE_FIELDS)["number"].factor == 1.0


@pytest.mark.parametrize(
    "text,record",
    [
        # "Date:" below the document's first date is another document's, a payment's
        (
            "Factura F-88\nFecha Factura: 12/03/2024\nAlbarán: A-5531    Fecha: 08/03/2024\n",
            {"issued": "2024-03-12"},
        ),
        (
            "Invoice F-88\nIssued 12/03/2024\nPayments received\nDate: 20/03/2024  Amount: 119.00\n",
            {"issued": "2024-03-12"},
        ),
        # a title's compound, a title about another document, a count, a period, an amount
        ("Reference: 4711\nRechnungsbetrag: 1.190,00 EUR\n", {"number": "4711"}),
        ("Reference: 4711\nUmrechnungskurs: 1.0856\n", {"number": "4711"}),
        ("Reference: 4711\nRechnungsanschrift: 10115 Berlin\n", {"number": "4711"}),
        ("Rechnung zu Auftrag Nr. 12345\nReferenz 4711\n", {"number": "4711"}),
        ("Invoice 1/2\nRef 4711\n", {"number": "4711"}),
        ("Rechnung 03/2024\nRef 4711\n", {"number": "4711"}),
        ("INVOICE 2024\nRef 4711\n", {"number": "4711"}),
    ],
)
def test_words_that_name_the_documents_date_or_number_only_where_they_are_its(text, record):
    assert _factors(text, record) == dict.fromkeys(record, 1.0)


def test_the_fields_own_label_outranks_the_word_date():
    text = "Date: 20/03/2024\nInvoice date: 12/03/2024\nShipped 10/03/2024\n"
    wrong = _checks(text, {"issued": "2024-03-10"}, INVOICE_FIELDS)["issued"]
    assert wrong.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and "'12/03/2024'" in wrong.reasons[0]


def test_a_label_ending_its_line_names_the_value_starting_the_next():
    text = "Invoice date:\n13.06.2018\nShipped 11.06.2018\nInvoice number:\n  INV-77\nOrder 55512\n"
    assert _checks(text, {"issued": "2018-06-13", "number": "INV-77"}, INVOICE_FIELDS)["issued"].factor == 1.0
    checks = _checks(text, {"issued": "2018-06-11", "number": "55512"}, INVOICE_FIELDS)
    assert "'13.06.2018'" in checks["issued"].reasons[0] and "'INV-77'" in checks["number"].reasons[0]


@pytest.mark.parametrize(
    "text,wrong,label",
    [
        # a due date under the one word "Due", as a template's header cells print it
        ("Acme Trading Ltd   Issued  31 July 2026\nStudio 4, Brick Lane   Due  30 August 2026\n", "2026-08-30", "Due"),
        ("Total $550.00\ndue May 15, 2020\n", "2020-05-15", "due"),
        ("Facture 2014-01\nBordeaux  Date limite de paiement  11/11/2014\n", "2014-11-11", "Date limite de paiement"),
        ("Bitte überweisen Sie bis zum 19.11.2015.\n", "2015-11-19", "bis zum"),
        ("振込期限  2026 年 01 月 31 日\n", "2026-01-31", "振込期限"),
        # the supply date (tax point), the date paid, the date printed, a quote's validity
        ("Invoice Issue Date  2022-09-07\nSupply Date  تاريخ التوريد\n2022-09-08\n", "2022-09-08", "Supply Date"),
        (
            "Data wystawienia / Date of issue: 2018-02-06\nData sprzedaży / Date of sell: 2018-02-05\n",
            "2018-02-05",
            "Date of sell",
        ),
        ("Invoice date:  8/1/2022\nPaid on:     6/13/2022\n", "2022-06-13", "Paid on"),
        ("NFEDanfe impresso em 30/06/2026 01:17:29\n", "2026-06-30", "impresso em"),
        ("Dieses Angebot ist gültig bis 28.02.2026.\n", "2026-02-28", "gültig bis"),
    ],
)
def test_a_date_written_only_under_another_dates_label_is_not_the_documents(text, wrong, label):
    check = _checks(text, {"issued": wrong}, INVOICE_FIELDS)["issued"]
    assert check.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and f"'{label}'" in check.reasons[0]


@pytest.mark.parametrize(
    "text,right,wrong,label",
    [
        (
            "Rechnungsdatum: 12.03.2024\nLieferschein Nr. LS-4471 vom 08.03.2024\n",
            "2024-03-12",
            "2024-03-08",
            "Lieferschein Nr",
        ),
        ("Date: 08/02/2024\nYour PO 4500123 dated 07/15/2024\n", "2024-08-02", "2024-07-15", "Your PO"),
        (
            "Data documento: 18/04/2024    Numero: 127/2024\nDDT n. 88 del 10/04/2024\n",
            "2024-04-18",
            "2024-04-10",
            "DDT n",
        ),
        (
            "Date : 14/05/2024\nBon de livraison n° BL-5521 du 09/05/2024\n",
            "2024-05-14",
            "2024-05-09",
            "Bon de livraison n°",
        ),
    ],
)
def test_a_date_written_after_another_documents_number_is_that_documents(text, right, wrong, label):
    """A number's label, its number and a dating word ("vom", "dated", "del", "du") name
    the date after them as that document's: a delivery note's or an order's date is no
    invoice date, even with the invoice's own date labelled elsewhere."""
    check = _checks(text, {"issued": wrong}, INVOICE_FIELDS)["issued"]
    assert check.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and f"'{label}'" in check.reasons[0]
    assert _checks(text, {"issued": right}, INVOICE_FIELDS)["issued"].factor == 1.0


def test_the_invoices_own_number_dates_the_invoice():
    text = "Rechnung Nr. 471113 vom 13.06.2018\nLieferschein Nr. LS-1 vom 10.06.2018\n"
    assert _factors(text, {"number": "471113", "issued": "2018-06-13"}) == {"number": 1.0, "issued": 1.0}
    wrong = _checks(text, {"issued": "2018-06-10"}, INVOICE_FIELDS)["issued"]
    assert wrong.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and "'Lieferschein Nr'" in wrong.reasons[0]
    # a number and date of two documents at once ("Rechnung / Lieferschein Nr."), or a
    # title naming both over the number, are the invoice's
    both = "Rechnung / Lieferschein Nr. 4471 vom 08.03.2024\n"
    assert _factors(both, {"number": "4471", "issued": "2024-03-08"}) == {"number": 1.0, "issued": 1.0}
    titled = "                FACTURA - ALBARÁN\n                Nº 2024-118   Fecha 05/03/2024\n"
    assert _factors(titled, {"number": "2024-118", "issued": "2024-03-05"}) == {"number": 1.0, "issued": 1.0}
    # a word that makes another document's number label with it dates that document
    ordered = "Rechnungsdatum: 12.03.2024\nAuftrag / Lieferschein Nr. 4471 vom 08.03.2024\n"
    assert _factors(ordered, {"issued": "2024-03-08"}) == {"issued": pytest.approx(F.FOREIGN_LABEL_FACTOR)}
    # another document's number is no invoice number either
    for line, number in (
        ("DDT n. 88 del 10/04/2024\n", "88"),
        ("Bon de livraison n° BL-5521 du 09/05/2024\n", "BL-5521"),
    ):
        assert _factors(line, {"number": number}) == {"number": pytest.approx(F.FOREIGN_LABEL_FACTOR)}


@pytest.mark.parametrize(
    "text,bound,period",
    [
        (
            "Rechnung 2020110601\nLeistungszeitraum: 1. September 2020 – 2. Oktober 2020\n",
            "2020-10-02",
            "1. September 2020 – 2. Oktober 2020",
        ),
        ("Berechnungszeitraum: 06.10.2026 bis 21.10.2026\n", "2026-10-21", "06.10.2026 bis 21.10.2026"),
        ("Chambre du 27/09/2023 au 28/09/2023   205,90 €\n", "2023-09-27", "27/09/2023 au 28/09/2023"),
        ("For 2022-02-01 to 2022-02-28  Prepared for ACME\n", "2022-02-28", "2022-02-01 to 2022-02-28"),
        ("JULY 10, 2023 – AUGUST 1, 2023\n", "2023-07-10", "JULY 10, 2023 – AUGUST 1, 2023"),
    ],
)
def test_a_date_written_only_as_a_periods_bound_is_not_the_documents(text, bound, period):
    check = _checks(text, {"issued": bound}, INVOICE_FIELDS)["issued"]
    assert check.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and f"the period '{period}'" in check.reasons[0]


def test_a_periods_bound_is_the_documents_where_it_also_stands_alone_or_the_field_is_a_periods():
    # the bound written once more under no label: nothing says which date it is
    text = "Invoice 17  28.02.2026\nService period 01.02.2026 – 28.02.2026\n"
    assert _checks(text, {"issued": "2026-02-28"}, INVOICE_FIELDS)["issued"].factor == 1.0
    # two dates side by side with no join between them are two cells, not a period
    assert _checks("21/04/2023  21/05/2023\n", {"issued": "2023-04-21"}, INVOICE_FIELDS)["issued"].factor == 1.0
    # a field that is a period's own bound
    ends = {"name": "bill", "version": 1, "fields": {"ends": {"kind": "date", "labels": ["@billing_period"]}}}
    text = "Statement 4471\n06.10.2026 bis 21.10.2026\n"
    assert _checks(text, {"ends": "2026-10-21"}, ends)["ends"].factor == 1.0


def test_a_receipts_payment_date_stands_in_for_the_invoice_date_where_no_invoice_date_is_labelled():
    receipt = "Your receipt from Lumen Cloud, Inc.\nReceipt #2026-4410-8832\nDate paid: March 1, 2026\n"
    assert _checks(receipt, {"issued": "2026-03-01"}, INVOICE_FIELDS)["issued"].factor == 1.0
    invoice = "Invoice date: February 20, 2026\n" + receipt
    wrong = _checks(invoice, {"issued": "2026-03-01"}, INVOICE_FIELDS)["issued"]
    assert wrong.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and "'Date paid'" in wrong.reasons[0]


@pytest.mark.parametrize(
    "text,wrong,label",
    [
        # a tax or company registration number, an account, a delivery note, a buyer's order
        ("Invoice no: INV-1\nVAT number: GB123456789\n", "GB123456789", "VAT number"),
        ("Faktura nr FV/1/2018\nNIP: 5265877635\n", "5265877635", "NIP"),
        ("Invoice No. 77\nSteuer-Nr. 201/113/40209\n", "201/113/40209", "Steuer-Nr"),
        ("Invoice # 2016-1\nAccount NO  156546546465\n", "156546546465", "Account NO"),
        ("Rechnungsnummer 90005178\nLieferschein-Nr: 80003371\n", "80003371", "Lieferschein-Nr"),
        ("INV# INV0001\nPurchase Order: ABC123\n", "ABC123", "Purchase Order"),
        ("Numéro de facture : 2021-001-F\nNuméro de devis : 2021-001-D\n", "2021-001-D", "Numéro de devis"),
    ],
)
def test_a_number_written_only_under_another_numbers_label_is_not_the_documents(text, wrong, label):
    check = _checks(text, {"number": wrong}, INVOICE_FIELDS)["number"]
    assert check.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and f"'{label}'" in check.reasons[0]


def test_an_estimates_number_is_its_own_where_no_invoice_number_is_labelled():
    estimate = "AUTO REPAIR ESTIMATE\nESTIMATE NUMBER  IN0912496\n"
    assert _checks(estimate, {"number": "IN0912496"}, INVOICE_FIELDS)["number"].factor == 1.0
    wrong = _checks("Invoice number: INV-9\n" + estimate, {"number": "IN0912496"}, INVOICE_FIELDS)["number"]
    assert wrong.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR)
    # "Faktura VAT nr" is the Polish invoice's own label, not a VAT number's
    assert (
        _checks("FAKTURA VAT nr FV/03/2026/118\n", {"number": "FV/03/2026/118"}, INVOICE_FIELDS)["number"].factor == 1.0
    )


@pytest.mark.parametrize(
    "text,code,address",
    [
        ("Société Hôtelière du Pacano\n2, rue de la Paix\n75000 Paris\n nº 2023-6013\n", "75000", "75000 Paris"),
        (
            "Acme Inc.\n123 Market Street  #INV-2048\nSan Francisco, CA 94107  PAID\n",
            "94107",
            "San Francisco, CA 94107",
        ),
        (
            "Buyer: BEST SOLUTIONS\nAddress : Calmstreet 1/1, 00-950 Dreamcity\nNo. 1/21.08.2024\n",
            "00-950",
            "00-950 Dreamcity",
        ),
        (
            "Kratka 2                Dlouha 1\n 60200 Brno              11000 Praha\nFaktura 201900021\n",
            "60200",
            "60200 Brno",
        ),
    ],
)
def test_a_number_written_only_as_a_postal_code_is_no_documents_number(text, code, address):
    check = _checks(text, {"number": code}, INVOICE_FIELDS)["number"]
    assert check.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR)
    assert f"the postal address '{address}'" in check.reasons[0]


@pytest.mark.parametrize(
    "text,number",
    [
        ("Rechnung Nr. 47110 Datum 12.03.2024\n", "47110"),  # after a number word, then a capitalised word
        ("Order 12345\n12345 Widgets shipped\n", "12345"),  # a count before a word, under no label elsewhere
        ("Invoice\n 4711 items  4711\n", "4711"),  # a lowercase word after it
    ],
)
def test_a_number_before_a_word_is_no_postal_code_unless_it_reads_as_one(text, number):
    assert _checks(text, {"number": number}, INVOICE_FIELDS)["number"].factor == 1.0


def test_a_postal_codes_own_field_takes_it():
    schema = {"name": "addr", "version": 1, "fields": {"zip": {"kind": "identifier", "labels": ["@postal_code"]}}}
    assert _checks("2, rue de la Paix\n75000 Paris\n", {"zip": "75000"}, schema)["zip"].factor == 1.0


def test_a_label_with_a_value_after_its_colon_heads_no_column():
    # "Tel : test@test.in" names its (digitless) value: the row below is not under it
    text = "Date :      Expired Date :  Invoice Number :\n        Tel : test@test.in\n21/04/2023  21/05/2023      # 10/2023\n"
    assert _checks(text, {"number": "10/2023"}, INVOICE_FIELDS)["number"].factor == 1.0
    text = "VAT no.: DE XXX XXX XXX\nCompany Number: X.XXX.XXX.XXX\n12.03.2021\nInvoice No. 1\n"
    assert _checks(text, {"issued": "2021-03-12"}, INVOICE_FIELDS)["issued"].factor == 1.0


def test_another_cells_colon_leaves_a_label_heading_its_column():
    # pdftotext -layout: "Issue date" heads the date under it; the colon after it is the
    # next cell's ("Invoice currency: EUR"), not the label's own value
    gap = " " * 40
    text = (
        f"Buyer:{gap}Payment due date{gap}Payable amount\n\n  Naam Overheidsorganisatie{gap}227.00\n\n"
        f"{gap}      Issue date{gap}Invoice currency: EUR\n{gap}      11/06/2017\n"
    )
    assert _checks(text, {"issued": "2017-11-06"}, INVOICE_FIELDS)["issued"].factor == 1.0
    # a label's own colon after blanks that line the colons up is its own: it heads no column
    assert _checks("INVOICE\nTel      : n/a\n4711\n", {"number": "4711"}, INVOICE_FIELDS)["number"].factor == 1.0


@pytest.mark.parametrize(
    "text,wrong,phone",
    [
        (
            "INVOICE  Serial No. 00667/BIG\nPhone: (520) 318-9486  Address: The Green Street\n",
            "318-9486",
            "Phone: (520) 318-9486",
        ),
        ("Correo: ventas@example.cl  N° 4117\nTeléfono: +56 912345678\n", "912345678", "Teléfono: +56 912345678"),
        (
            "ESTIMATE NUMBER  IN0912496\nCLIENT PHONE       (888) 571-2048     PREPARED BY\n",
            "571-2048",
            "PHONE       (888) 571-2048",
        ),
        ("Invoice No. 42\nphone : 123123123123\n", "123123123123", None),  # right after its label: under it
    ],
)
def test_a_number_written_only_in_a_telephone_number_is_no_documents_number(text, wrong, phone):
    check = _checks(text, {"number": wrong}, INVOICE_FIELDS)["number"]
    assert check.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR)
    assert (f"the telephone number '{phone}'" if phone else "'phone'") in check.reasons[0]


def test_a_telephone_number_ends_at_its_cell():
    # two blanks end the number: the invoice number in the next cell is no group of it
    text = "Tel: +49 30 1234567  12/2023\n"
    assert _checks(text, {"number": "12/2023"}, INVOICE_FIELDS)["number"].factor == 1.0


@pytest.mark.parametrize(
    "text,group",
    [
        ("NF-e  N°. 13415\nCHAVE DE ACESSO\n3520 0159 5943 1500 0157 5500 1000\n", "0159"),
        ("Rechnung 2021-01\nBank Account:\nDE18 9289 0020 9201 2719 92\n", "2719"),
    ],
)
def test_a_number_written_only_as_a_group_of_a_longer_grouped_number_is_no_documents_number(text, group):
    check = _checks(text, {"number": group}, INVOICE_FIELDS)["number"]
    assert check.factor == pytest.approx(F.FOREIGN_LABEL_FACTOR) and "the grouped number '" in check.reasons[0]


def test_a_number_printed_whole_in_groups_is_itself():
    text = "Invoice\nReference 4711 0815 2024 1234\n"
    assert _checks(text, {"number": "4711 0815 2024 1234"}, INVOICE_FIELDS)["number"].factor == 1.0
    # three groups are no long number: a row's figures
    assert _checks("Invoice\n4711 0815 2024\n", {"number": "0815"}, INVOICE_FIELDS)["number"].factor == 1.0


@pytest.mark.parametrize(
    "text,record",
    [
        # payment terms in words after a due label, a generic date word between
        ("INVOICE 1042\nDue on receipt  06/01/2024\n", {"issued": "2024-06-01"}),
        (
            "ACME LLC\nInvoice No.   Terms            Invoice Date\n1042          Due on receipt   06/01/2024\n",
            {"issued": "2024-06-01", "number": "1042"},
        ),
        ("Invoice #: 1042\nTerms: Due upon receipt    Date: 06/01/2024\n", {"issued": "2024-06-01"}),
        ("Rechnung 1042\nFälligkeit: sofort   Datum: 01.06.2024\n", {"issued": "2024-06-01"}),
        ("Fatura 1042\nVencimento: à vista   Data: 01/06/2024\n", {"issued": "2024-06-01"}),
        # labels joined into one: either is the value's
        ("SALES INVOICE 1042\nInvoice Date (Tax Point)   01/06/2024\n", {"issued": "2024-06-01"}),
        ("Faktura 1042\nDatum vystavení / DUZP: 01.06.2024\n", {"issued": "2024-06-01"}),
        ("Faktura 1042\nDatum vystavení a DUZP: 01.06.2024\n", {"issued": "2024-06-01"}),
        ("Faktura 1042\nData wystawienia i data sprzedaży: 2024-06-01\n", {"issued": "2024-06-01"}),
        # a tax point or a sale date as the document's only date
        ("VAT INVOICE  No. 1042\nTax point: 01/06/2024\n", {"issued": "2024-06-01"}),
        ("RECEIPT\nSale Date: 06/01/2024\nReceipt # 1042\n", {"issued": "2024-06-01"}),
        # a number's label over a date, in a name: no label of a date
        ("T-Mobile\n06/01/2024\n", {"issued": "2024-06-01"}),
        ("Acme Ltd, Tel Aviv\n01/06/2024\n", {"issued": "2024-06-01"}),
        ("Incoterms: CIF    Date: 01/06/2024\nInvoice 1042\n", {"issued": "2024-06-01", "number": "1042"}),
        # a receipt's payment date that also bounds its period
        (
            "Receipt from Lumen Cloud, Inc.\nReceipt #2026-4410\nDate paid  June 1, 2024\nJun 1, 2024 - Jul 1, 2024\n",
            {"issued": "2024-06-01"},
        ),
        # an empty cell's dash between two dates, the document's date beside its period
        ("INVOICE 1042\nDate        PO No.   Due\n01/06/2024  -        15/06/2024\n", {"issued": "2024-06-01"}),
        ("Invoice 1042\nDate   01.06.2024 - 30.06.2024\n", {"issued": "2024-06-01"}),
        # a number before a capitalised word with no street above it, a state too short
        ("INVOICE\n4711 Paid\n", {"number": "4711"}),
        ("ACME Sp. z o.o.\nFAKTURA\n24-001 Kopia\n", {"number": "24-001"}),
        ("ACME Inc.\nINVOICE\nID, OR 4711\n", {"number": "4711"}),
    ],
)
def test_correct_values_other_labels_and_parts_do_not_claim(text, record):
    assert _factors(text, record) == dict.fromkeys(record, 1.0)
