"""Checks across fields, all deterministic and able only to lower scores: a labelled
amount the source contradicts (two different totals), and the schema's declared rules
(`subtotal + tax = total`, `sum(line_items[].amount) = subtotal`, `due_date >=
invoice_date`, ...), each item's rule on that item's fields alone."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from vetq.core.extraction.amounts import CENT, CENTS_RE, to_cents
from vetq.core.extraction.field_checks import FieldCheck, as_given
from vetq.core.extraction.lexicon import normalise_phrase
from vetq.core.extraction.roles import PERCENT_FIRST_RATE_RE, RATE_RE, Label, a_tax_rate_of
from vetq.core.extraction.source import Source, difference_made_of
from vetq.core.schemas.compiled import CompiledRule, CompiledSchema
from vetq.core.schemas.records import Leaf
from vetq.core.schemas.rules import EACH, Expr, PathRef, SumOf, concrete, evaluate, render

__all__ = [
    "ARITHMETIC_FACTOR",
    "CONFLICT_FACTOR",
    "EXTRA_CHARGE_FACTOR",
    "ORDER_FACTOR",
    "UNLABELLED_TOTAL_FACTOR",
    "check_conflicts",
    "check_rules",
    "check_unlabelled_totals",
]

ARITHMETIC_FACTOR = 0.7  # an equation fails, and no labelled charge or rounding explains it
EXTRA_CHARGE_FACTOR = 0.9  # it fails, but a labelled charge / discount or rounding does explain it
CONFLICT_FACTOR = 0.6  # another amount carries this field's label with a different value
ORDER_FACTOR = 0.5  # an order or range rule fails (a due date before the issue date, a rate of 1.5)
# No label names the total, and the value is neither the largest figure nor the
# subtotal plus the tax: one of several line amounts, most likely.
UNLABELLED_TOTAL_FACTOR = 0.7
# Labelled charges and discounts explain a difference up to this share of the sum
# they correct; beyond it (a "total" of 2% of the bill) nothing is forgiven, but one
# labelled charge that is the difference to the cent.
MAX_ADJUSTMENT_SHARE = Decimal("0.25")


# --- conflicting labels ------------------------------------------------------
def _conflict_candidates(src: Source, role: str, *, headed: bool = False, bases: bool = False) -> list[int]:
    """Amounts a label on their own line (or, with headed, a column header) gives this
    role, as a figure for the whole document: not a page or carried-forward figure, not
    a charge or payment ("Total paid 200.00"), not a rate's base (unless `bases`), not
    zero, not after an "incl. VAT" phrase (which may name the tax it includes)."""
    out = []
    for ai, role_of in enumerate(src.roles):
        label = (
            src.assignment.label_of(ai)
            if headed
            else src.labels[src.role_label[ai]]
            if src.role_label[ai] >= 0
            else None
        )
        if role_of != role or label is None or not src.amounts[ai].value:
            continue
        if label.start < src.amounts[ai].start and src.text[label.start : label.end].casefold().startswith(
            src.lexicon.tax_included_prefixes
        ):
            continue
        ctx = src.context(ai)
        line_start = src.lines.starts[src.lines.line_of(src.amounts[ai].start)]
        line_head = src.text[line_start : src.amounts[ai].start].lstrip()
        charge_row = src.lexicon.adjustment_re.match(line_head) is not None  # "Zuschlag Versand ... UST 5,80"
        if ctx.adjustment is None and not ctx.partial and (bases or not ctx.rate_base) and not charge_row:
            out.append(ai)
    return out


_MAX_PARTS = 12
_ROUND_OFF_MAX = Decimal(1)  # a total rounded to the unit: less than one off the sum it rounds
_MAX_REACHABLE = 100_000


_IDENTIFIER_DIGITS = 8


def _identifier_like(raw: str) -> bool:
    """A run of eight digits or more with no separator, no cents: a number (a VAT or
    customer number after its label), not an amount written by someone reading it."""
    return raw.isdigit() and len(raw) >= _IDENTIFIER_DIGITS


def _a_sum_of_some(total: Decimal, parts: list[Decimal]) -> bool:
    """Whether some of `parts` (two or more, each once) add up to `total`: the tax of each
    rate beside their sum, the subtotal of each page beside the document's."""
    distinct = list(dict.fromkeys(parts))
    if total in (sum(parts), sum(distinct)):
        return True
    # a part may stand more than once (the same section subtotal in each of two copies):
    # the sums some of them reach, each at most as often as it stands, with how many
    # parts (counted up to two) made them
    reachable: set[tuple[Decimal, int]] = {(Decimal(0), 0)}
    for part in sorted(parts)[: 2 * _MAX_PARTS]:
        reachable |= {(s + part, min(n + 1, 2)) for s, n in reachable if s + part <= total + CENT}
        if len(reachable) > _MAX_REACHABLE:
            break
    return any(n == 2 and abs(s - total) <= CENT for s, n in reachable)


def check_conflicts(src: Source, checks: Mapping[str, FieldCheck], currency: Any) -> None:
    """A committed amount labelled as its role, while another amount carries the same
    role's label with a different value: the source contradicts itself. Where the
    record's subtotal, tax and total are each found under their own labels and add up,
    the three are the document's sums: a lesser figure under one of their labels is a
    part (a category's base, a line's total), and one worth another of the three is that
    one's; a greater one is still a rival (a total with a charge the record left out)."""
    agreed = _sums_agree(src, checks)
    for role in dict.fromkeys(src.lexicon.role_of_label.values()):
        check = checks.get(role)
        if check is None or not check.verified or check.number is None:
            continue
        name = role
        mine_cents = to_cents(abs(check.number))
        if mine_cents is None or _outranked(src, check, name, mine_cents, currency):
            continue
        candidates = _conflict_candidates(src, name)
        own = _own_figures(src, candidates, mine_cents)
        if _in_another_currency(src, check, name, candidates, own, currency):
            continue
        mine, with_cents, my_pages, my_currencies = own.figures, own.with_cents, own.pages, own.or_record(currency)
        if not mine:
            continue
        after = _left_after_withholding(src, name, candidates, mine_cents, my_pages)
        if after is not None:
            # "Totale documento 1.784,13 / Ritenuta d'acconto -262,00 / Netto a pagare
            # 1.522,13": the tax withheld is the state's, the invoice's total what is left
            check.penalise(
                CONFLICT_FACTOR,
                f"{name} {src.amounts[mine[0]].raw} is the sum before the tax withheld: the source's {after} "
                f"under a {name} label is what is left after it",
            )
            continue
        # a figure a grand total label names has no rival in a lesser one only a plain
        # total label names: a line's, a section's, what is left to pay (see _outranked)
        mine_grand = any(src.labels[src.role_label[ai]].grand for ai in mine)
        # a total's figure before tax ("Summe 283,66", "Mehrwertsteuer 66,54", "Gesamt
        # 350,20"; a VAT table's "Razem" row, net and gross) is no rival for it
        before_tax = _completing(src, name, checks) if _has_grand_labels(src, name) else set()
        # a figure carried forward elsewhere ("Übertrag" / "2 900,00") is a running sum
        carried = {to_cents(abs(am.value)) for ai, am in enumerate(src.amounts) if src.context(ai).partial}
        mine_identifier_like = any(_identifier_like(src.amounts[ai].raw) for ai in mine)
        parts: list[tuple[int, Decimal]] = []
        for ai in candidates:
            cents = to_cents(abs(src.amounts[ai].value))
            if cents is None or cents == mine_cents:
                continue
            if mine_grand and cents < mine_cents and not src.labels[src.role_label[ai]].grand:
                continue
            if with_cents and not CENTS_RE.search(src.amounts[ai].raw):
                continue  # "Total: 3" (a count) beside "Total 583.20"
            if cents in carried:
                continue
            if _identifier_like(src.amounts[ai].raw) and not mine_identifier_like:
                continue  # "P. IVA: 1234567890" (a VAT number) beside "Totale IVA 5,5"
            if name == src.lexicon.goods_role and _a_taxed_base(src, cents, mine_cents, checks):
                continue  # "TAXABLE AMOUNT 27.46" / "SALES TAX 7.000% 1.92": the tax's base, a part
            if cents < mine_cents and any(
                c is not None
                and (
                    abs(mine_cents - cents - c) <= CENT
                    # and a labelled round-off ("Round Off 0.10")
                    or (
                        abs(mine_cents - cents - c) < _ROUND_OFF_MAX
                        and difference_made_of(src, mine_cents - cents - c, either_way=False) is not None
                    )
                )
                for c in before_tax
            ):
                continue
            if name in agreed and (cents < mine_cents or cents in agreed.values()):
                continue
            if _gross_goods_sum(src, name, cents, mine_cents, agreed) or _net_and_gross(
                src, name, cents, mine_cents, checks
            ):
                continue
            parts.append((ai, cents))
        part_cents = [c for _, c in parts]
        if not parts or _a_sum_of_some(mine_cents, part_cents):
            continue  # its parts: tax per rate, subtotals per page
        # its parts with their signs: a sale's tax and a return's ("7.00", "-2.00")
        rivals = _signed_figures(src, candidates, mine_cents)
        mine_signed = to_cents(check.number)
        if (
            len(rivals) > 1
            and mine_signed is not None
            and any(abs(total - mine_signed) <= CENT for total in _counted_sums(rivals))
        ):
            continue
        # its parts before tax, the tax completing their sum: each line's or each rate's net,
        # an exempt category's maybe negative ("1.460,50", "1,00", "-25,00")
        signed_sums = _counted_sums(_signed_figures(src, _conflict_candidates(src, name, bases=True), mine_cents))
        if any(
            c is not None
            and 0 < c < mine_cents
            and (
                _a_sum_of_some(mine_cents - c, part_cents)
                or any(abs(mine_cents - c - total) <= CENT for total in signed_sums)
            )
            for c in before_tax
        ):
            continue
        others: dict[Decimal, str] = {}
        for ai, cents in parts:
            if src.page_of(src.amounts[ai].start) not in my_pages:
                continue  # another page's figure: a running subtotal, a page total
            theirs = src.context(ai).currencies
            if theirs and my_currencies and not theirs & my_currencies:
                continue  # the same figure in another currency
            others.setdefault(cents, src.amounts[ai].raw)
        if not others:
            continue
        unexplained = [
            raw for cents, raw in others.items() if difference_made_of(src, mine_cents - cents, either_way=True) is None
        ]
        before_charges = [
            (raw, charges)
            for cents, raw in others.items()
            if name in src.lexicon.grand_roles
            and cents > mine_cents
            and not any(_owed_on_a_condition(src, ai) for ai, c in parts if c == cents)
            and (charges := difference_made_of(src, cents - mine_cents, either_way=False, kind="charge"))
        ]
        before_payments = [
            (raw, paid)
            for cents, raw in others.items()
            if name in src.lexicon.grand_roles
            and cents > mine_cents
            and (paid := _paid(src, cents - mine_cents, mine_cents))
        ]
        if before_payments:
            # "Do zapłaty 13 661,28 / Zapłacono 3 000,00 / Pozostało do zapłaty 10 661,28":
            # what a payment leaves is still owed, and the sum it was taken off is the total
            raw, paid = before_payments[0]
            check.penalise(
                CONFLICT_FACTOR,
                f"{name} {src.amounts[mine[0]].raw} is what is left after the labelled {paid}: the source's "
                f"{raw} under a {name} label is the {name} before it",
            )
        elif not unexplained and before_charges:
            # "Totale compensi 1.805,00 / Rivalsa imposta di bollo 2,00 / Totale da pagare
            # 1.807,00": the record's total is the sum the charges are added to
            raw, charges = before_charges[0]
            check.penalise(
                CONFLICT_FACTOR,
                f"{name} {src.amounts[mine[0]].raw} is a sum before the labelled {' + '.join(charges)}: the source's "
                f"{raw} under a {name} label adds them",
            )
        elif unexplained:
            shown = src.amounts[mine[0]].raw
            check.penalise(
                CONFLICT_FACTOR,
                f"conflicting {name} in the source: {shown} and {', '.join(unexplained[:3])} are each labelled {name}, "
                "and no labelled payment, charge or discount accounts for the difference",
            )


@dataclass(frozen=True)
class _Own:
    """The figures among a role's candidates worth the record's value, the pages they are
    on, whether one is written with cents, and the currencies written beside them."""

    figures: list[int]
    pages: set[int]
    with_cents: bool
    currencies: frozenset[str]

    def or_record(self, currency: Any) -> frozenset[str]:
        """Their currencies, or the record's where none is written beside them."""
        if not self.currencies and isinstance(currency, str):
            return frozenset({currency.strip().upper()})
        return self.currencies


def _own_figures(src: Source, candidates: list[int], mine_cents: Decimal) -> _Own:
    figures = [ai for ai in candidates if to_cents(abs(src.amounts[ai].value)) == mine_cents]
    return _Own(
        figures,
        {src.page_of(src.amounts[ai].start) for ai in figures},
        any(CENTS_RE.search(src.amounts[ai].raw) for ai in figures),
        frozenset().union(*(src.context(ai).currencies for ai in figures)),
    )


def _signed_figures(src: Source, candidates: list[int], mine_cents: Decimal) -> list[Decimal]:
    """The candidates' figures not worth `mine_cents`, in cents, with their signs."""
    return [
        to_cents(src.amounts[ai].value) or Decimal(0)
        for ai in candidates
        if to_cents(abs(src.amounts[ai].value)) != mine_cents
    ]


def _counted_sums(figures: list[Decimal]) -> set[Decimal]:
    """Their sum, each figure counted as often as it stands or once (a document printed
    twice restates them)."""
    return {sum(figures, Decimal(0)), sum(dict.fromkeys(figures), Decimal(0))}


def _sums_agree(src: Source, checks: Mapping[str, FieldCheck]) -> dict[str, Decimal]:
    """The subtotal's, the tax's and the total's roles with their values in cents, when the
    record's three are each verified under their own labels and subtotal + tax = total,
    or that and labelled charges (a tip: "Jootraha juhile 1,00"); else none."""
    lexicon = src.lexicon
    roles = [lexicon.goods_role, lexicon.tax_sum_role, *sorted(lexicon.grand_roles)]
    if len(roles) != 3 or None in roles:
        return {}
    found = [checks.get(str(role)) for role in roles]
    numbers = [c.number for c in found if c is not None and c.verified and c.number is not None]
    if len(numbers) != 3 or not numbers[2]:
        return {}
    charged = numbers[2] - numbers[0] - numbers[1]
    if abs(charged) > CENT and (
        charged < 0 or difference_made_of(src, charged, either_way=False, kind="charge") is None
    ):
        return {}
    cents = [to_cents(abs(n)) for n in numbers]
    agreed = {str(role): c for role, c in zip(roles, cents, strict=True) if c is not None}
    # a greater figure under one of their labels, worth none of the three ("Summary:
    # subtotal 450.00, VAT 90.00" beside "VAT 43.20"), is another set of sums, not a part:
    # the three are contested
    sums = set(agreed.values())
    contested = any(_greater_under_its_label(src, role, c, sums, agreed) for role, c in agreed.items())
    return {} if contested else agreed


def _gross_goods_sum(
    src: Source, role: str, cents: Decimal, mine_cents: Decimal, agreed: Mapping[str, Decimal]
) -> bool:
    """Whether a figure greater than the record's subtotal under a subtotal's label is the
    goods' sum with the tax in it, beside the net the record gives ("Subtotal 51,20 /
    Gastos de envío 4,95 / Descuento -3,94 / Total 52,21 / Base imponible 43,15 / IVA
    9,06"): with the labelled charges and discounts, or none, it makes the total the net
    and the tax make."""
    total = next((agreed[r] for r in src.lexicon.grand_roles if r in agreed), None)
    if role != src.lexicon.goods_role or role not in agreed or total is None or cents <= mine_cents:
        return False
    return abs(total - cents) <= CENT or difference_made_of(src, total - cents, either_way=False) is not None


def _net_and_gross(
    src: Source, role: str, cents: Decimal, mine_cents: Decimal, checks: Mapping[str, FieldCheck]
) -> bool:
    """Whether two figures under the goods' sum's labels differ by the record's tax, to the
    cent: the goods' sum with the tax in it and without ("Sub Total 1,800.00" over
    "VATable Sales 1,607.14" and "VAT Amount (12%) 192.86", as Philippine tills print
    both), either of which the record may give."""
    tax_role = src.lexicon.tax_sum_role
    tax = checks[tax_role].number if tax_role is not None and tax_role in checks else None
    tax_cents = to_cents(abs(tax)) if tax is not None else None
    if role != src.lexicon.goods_role or not tax_cents:
        return False
    return abs(abs(cents - mine_cents) - tax_cents) <= CENT


def _greater_under_its_label(
    src: Source, role: str, mine_cents: Decimal, sums: set[Decimal], agreed: Mapping[str, Decimal]
) -> bool:
    """A figure of the page of `role`'s own, written as it is (with cents or without),
    that a label of `role` names with a greater value, worth none of `sums` (nor the
    goods' sum with the tax in it)."""
    candidates = _conflict_candidates(src, role)
    own = _own_figures(src, candidates, mine_cents)
    return any(
        (cents := to_cents(abs(src.amounts[ai].value))) is not None
        and cents > mine_cents
        and cents not in sums
        and not _gross_goods_sum(src, role, cents, mine_cents, agreed)
        and src.page_of(src.amounts[ai].start) in own.pages
        and (not own.with_cents or CENTS_RE.search(src.amounts[ai].raw) is not None)
        for ai in candidates
    )


def _in_another_currency(
    src: Source, check: FieldCheck, role: str, candidates: list[int], own: _Own, currency: Any
) -> bool:
    """Penalise (and say so) a committed amount whose own figures are written in another
    currency than the record's, while a figure of its role on the same page is written in
    the record's currency with another value: "TOTAL EUR: 557,67 €" beside "TOTAL DUE:
    600,00 USD" in a USD record is the total restated, not the document's."""
    if not isinstance(currency, str) or not currency.strip():
        return False
    code = currency.strip().upper()
    if not own.figures or not own.currencies or code in own.currencies:
        return False
    for ai in candidates:
        am = src.amounts[ai]
        if ai not in own.figures and src.page_of(am.start) in own.pages and code in src.context(ai).currencies:
            shown = src.amounts[own.figures[0]].raw
            check.penalise(
                CONFLICT_FACTOR,
                f"{shown} is labelled {role} in {', '.join(sorted(own.currencies))}, not in the record's {code}; "
                f"{am.raw} is the {role} in {code}",
            )
            return True
    return False


def _withheld(src: Source, difference: Decimal) -> bool:
    """Whether `difference` is what the source's labelled withholdings come to (one of
    them, or all of them)."""
    withheld = {
        cents: am.raw
        for ai, am in enumerate(src.amounts)
        if src.context(ai).adjustment in src.lexicon.withholdings and (cents := to_cents(abs(am.value)))
    }
    return _one_or_all(withheld, difference) is not None


def _one_or_all(figures: Mapping[Decimal, str], difference: Decimal) -> str | None:
    """The figure (as shown) that `difference` is, or all of them together where they add
    up to it; None otherwise."""
    if difference in figures:
        return figures[difference]
    if len(figures) > 1 and sum(figures) == difference:
        return " + ".join(figures.values())
    return None


def _a_taxed_base(src: Source, cents: Decimal, mine_cents: Decimal, checks: Mapping[str, FieldCheck]) -> bool:
    """Whether a figure worth `cents`, less than the record's subtotal, is what a labelled
    tax is at the rate printed on the tax's line ("TAXABLE AMOUNT 27.46" / "SALES TAX
    7.000%  1.92"), while the record's subtotal and that tax make its total (43.63 + 1.92 =
    45.55): the base of the goods taxed, a part; not the net the record's gross subtotal
    leaves ("Base imponible 43,15" beside a "Subtotal 51,20" with the tax in it)."""
    totals = [check.number for role in src.lexicon.grand_roles if (check := checks.get(role)) and check.number]
    if cents >= mine_cents or not totals:
        return False
    role = src.lexicon.tax_sum_role
    for ai, am in enumerate(src.amounts):
        if src.roles[ai] != role or not am.value or all(abs(mine_cents + abs(am.value) - t) > CENT for t in totals):
            continue
        start = src.lines.bounds(src.lines.line_of(am.start))[0]
        for m in RATE_RE.finditer(src.text, start, am.start):
            rate = Decimal(m.group(1).replace(",", ".")) / 100
            if rate and abs(rate * cents - abs(am.value)) <= CENT / 2:
                return True
    return False


def _left_after_withholding(
    src: Source, role: str, candidates: list[int], mine_cents: Decimal, pages: set[int]
) -> str | None:
    """A figure of `candidates` on the record's pages that the labelled withholdings take
    the record's figure down to (as written), or None: for a total's role only."""
    if role not in src.lexicon.grand_roles:
        return None
    for ai in candidates:
        cents = to_cents(abs(src.amounts[ai].value))
        if (
            cents is not None
            and cents < mine_cents
            and src.page_of(src.amounts[ai].start) in pages
            and _withheld(src, mine_cents - cents)
        ):
            return src.amounts[ai].raw
    return None


# the words that name who paid, before the payer ("Betaald door verzekering", "Paid by insurance")
_PAID_BY = re.compile(
    r"(?i)(?<![^\W_])(?:by|door|par|por|pela|pelo|da|von|durch|af|av|przez|from)[ \t]+(?:the[ \t]+)?\Z"
)


def _an_insurers_payment(src: Source, ai: int, phrase: str) -> bool:
    """Whether the payment at amount ai is an insurer's for the buyer: one of the lexicon's
    `paid_by_others` before or in its phrase ("Ins. paid", "Von Krankenkasse bezahlt") or after a
    word naming the payer ("Betaald door verzekering"), not anywhere on its line ("Payment
    received - Bright Dental", "Paid to date (payment plan)")."""
    start = src.lines.bounds(src.lines.line_of(src.amounts[ai].start))[0]
    end = src.amounts[ai].start
    said = [
        m for m in src.lexicon.adjustment_re.finditer(src.text, start, end) if normalise_phrase(m.group()) == phrase
    ]
    where = said[-1].end() if said else end
    for insurer in src.lexicon.paid_by_others_re.finditer(src.text, start, end):
        if insurer.start() < where or _PAID_BY.search(src.text, start, insurer.start()):
            return True
    return False


def _paid(src: Source, difference: Decimal, mine_cents: Decimal) -> str | None:
    """The labelled payment made before (or the payments together) that `difference` is,
    or None. Cash handed over at a till pays the total or, as "CASH OUT", is added to it:
    no part paid before; an insurer's share leaves what the buyer paid, a receipt's total;
    a payment worth the record's figure is the document's own sum (an advance invoice's
    "Anzahlung 50 %: 2.380,00" under the order's total, a deposit's receipt); a credit may
    be the price's reduction (a trade-in's, a provider's promotional credits)."""
    paid: dict[Decimal, str] = {}
    for ai, am in enumerate(src.amounts):
        phrase = src.context(ai).adjustment
        start, end = src.lines.bounds(src.lines.line_of(am.start))
        if (
            phrase
            and phrase not in src.lexicon.payments_maybe_discounts
            and src.a_payment(ai)
            and not src.lexicon.tender_re.search(src.text, start, end)
            and not _an_insurers_payment(src, ai, phrase)
            and (cents := to_cents(abs(am.value)))
        ):
            paid.setdefault(cents, f"'{phrase}' {am.raw}")
    return None if mine_cents in paid else _one_or_all(paid, difference)


def _outranked(src: Source, check: FieldCheck, role: str, mine_cents: Decimal, currency: Any) -> bool:
    """Penalise (and say so) a committed amount its labels, own or column headers, name
    only as a lesser figure of its role, while another figure of the same page and
    currency is the role's by a stronger claim: a grand total label ("Total TTC 100,00"
    beside "Net à payer 90,00"), or it is this amount plus a figure labelled with
    another role (the tax: "VALOR TOTAL 13.200,00" beside "VALOR TOTAL 13.857,00" and
    657,00 of tax). Labelled charges and discounts forgive neither."""
    if not _has_grand_labels(src, role):
        return False  # not a total's role: none of its labels can be grand
    headed = _conflict_candidates(src, role, headed=True)
    own = _own_figures(src, headed, mine_cents)
    mine, with_cents, my_pages, my_currencies = own.figures, own.with_cents, own.pages, own.or_record(currency)
    if not mine:
        return False
    # what completes a sum before tax: a figure another role's label names (the tax), not
    # the net's (the same figure again under "Subtotal") and no labelled payment
    completing = _completing(src, role) - {mine_cents}
    mine_grand = any(_label(src, ai).grand for ai in mine)
    for ai in headed:
        am = src.amounts[ai]
        cents = to_cents(abs(am.value))
        if cents is None or cents == mine_cents or src.page_of(am.start) not in my_pages:
            continue
        if with_cents and not CENTS_RE.search(am.raw):
            continue
        theirs = src.context(ai).currencies
        if theirs and my_currencies and not theirs & my_currencies:
            continue
        label = _label(src, ai)
        shown, labelled = src.amounts[mine[0]].raw, src.text[label.start : label.end]
        # a grand total is no less than a goods' sum or what is left to pay (a larger
        # figure than the grand total is no lesser total: a line's under a column header)
        if label.grand and not mine_grand and cents > mine_cents:
            if _withheld(src, cents - mine_cents):
                continue  # "Total with tax 358.85", "Tax withheld -62.06": the total to pay is the invoice's
            check.penalise(
                CONFLICT_FACTOR,
                f"{shown} is not the document's {role}: '{labelled}' names {am.raw}, and the labels of {shown} "
                f"name a lesser {role} (a goods' sum, a line's, or what is left after a payment)",
            )
            return True
        if (
            cents > mine_cents
            and cents - mine_cents in completing
            and difference_made_of(src, cents - mine_cents, either_way=True) is None
        ):
            check.penalise(
                CONFLICT_FACTOR,
                f"{shown} is a sum before tax or charges: {shown} plus the labelled {cents - mine_cents} "
                f"is {am.raw}, also labelled '{labelled}'",
            )
            return True
    return False


def _has_grand_labels(src: Source, role: str) -> bool:
    """Whether some of the role's labels can name a grand total (a total's role)."""
    return role in src.lexicon.grand_roles


def _completing(src: Source, role: str, checks: Mapping[str, FieldCheck] | None = None) -> set[Decimal | None]:
    """What completes a sum before tax to this role's figure: a figure another role's
    label names (the tax), not the goods' sum and not a rate's base; with checks, also
    the record's committed value of another role where the source writes it (a tax in
    a VAT table no label reaches)."""
    lexicon = src.lexicon
    out = {
        to_cents(abs(am.value))
        for ai, am in enumerate(src.amounts)
        if src.roles[ai] not in (None, role, lexicon.goods_role) and am.value and not src.context(ai).rate_base
    }
    for other, check in (checks or {}).items():
        if other in (role, lexicon.goods_role) or other not in lexicon.role_of_label.values() or not check.number:
            continue
        cents = to_cents(abs(check.number))
        if cents is not None and src.amounts_of(cents):
            out.add(cents)
    return out


def _label(src: Source, ai: int) -> Label:
    label = src.assignment.label_of(ai)
    assert label is not None  # a conflict candidate has a label
    return label


# --- declared rules ------------------------------------------------------------
def check_rules(src: Source, schema: CompiledSchema, leaves: list[Leaf], checks: Mapping[str, FieldCheck]) -> None:
    values = {leaf.path: leaf for leaf in leaves}
    for rule in schema.rules:
        if rule.scope is None:
            _check_rule(src, rule, values, checks, index=None)
            continue
        count = _items_in(values, rule.scope)
        for index in range(count):
            _check_rule(src, rule, values, checks, index=index)


def _items_in(values: Mapping[str, Leaf], scope: str) -> int:
    """How many items the list `scope` ("line_items[]") holds in the record."""
    prefix = scope[: -len(EACH)] + "["
    indices = {int(path[len(prefix) :].split("]", 1)[0]) for path in values if path.startswith(prefix)}
    return max(indices) + 1 if indices else 0


def _check_rule(
    src: Source, rule: CompiledRule, values: Mapping[str, Leaf], checks: Mapping[str, FieldCheck], *, index: int | None
) -> None:
    def path_of(template: str) -> str:
        return concrete(template, index, rule.scope) if index is not None and rule.scope else template

    read: list[str] = []
    sides = _sides(rule, values, path_of, read)
    if any(side is None for side in sides):
        return
    blamed = path_of(rule.blame) if rule.blame else None
    if rule.comparison.is_equation:
        _check_equation(src, rule, sides, read, blamed, values, checks, path_of)
    else:
        _check_order(rule, sides, read, blamed, checks)


def _sides(
    rule: CompiledRule,
    values: Mapping[str, Leaf],
    path_of: Any,
    read: list[str],
    instead: tuple[str, Decimal] | None = None,
) -> list[Any]:
    """The rule's sides from the record's values (each path it reads appended to
    `read`), or with one path's value `instead` of the record's."""
    optional = set(rule.spec.optional)

    def value_of(template: str) -> Decimal | date | None:
        path = path_of(template)
        if instead is not None and path == instead[0]:
            read.append(path)
            return instead[1]
        leaf = values.get(path)
        if leaf is None or leaf.value is None:
            return Decimal(0) if template in optional else None
        read.append(path)
        return _rule_value(leaf.value)

    def sum_of(template: str) -> Decimal | None:
        paths = _expand(values, path_of(template))
        if not paths:
            return None
        total = Decimal(0)
        for path in paths:
            number = _rule_value(values[path].value)
            if not isinstance(number, Decimal):
                return None  # an item without its value: the sum cannot be checked
            total += number
            read.append(path)
        return total

    return [evaluate(side, value_of, sum_of) for side in rule.comparison.sides]


def _expand(values: Mapping[str, Leaf], template: str) -> list[str]:
    """The concrete paths a template with [] reaches in the record, in order."""
    head, _, rest = template.partition(EACH)
    count = _items_in(values, head + EACH)
    paths = []
    for i in range(count):
        path = f"{head}[{i}]{rest}"
        paths.extend(_expand(values, path) if EACH in rest else [path] if path in values else [])
    return paths


def _rule_value(value: Any) -> Decimal | date | None:
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _weak_or_blamed(read: list[str], blamed: str | None, checks: Mapping[str, FieldCheck]) -> list[str]:
    """Who pays for a failed rule: the values not verified in the source, else the
    rule's blamed field, else every value it read."""
    involved = [path for path in dict.fromkeys(read) if path in checks]
    weak = [path for path in involved if not checks[path].verified]
    if weak:
        return weak
    if blamed is not None and blamed in checks:
        return [blamed]
    return involved


def _forgiven(read: list[str], blamed: str | None, checks: Mapping[str, FieldCheck]) -> list[str]:
    """Who carries a difference that rounding or a labelled charge explains: the
    blamed field (the total), else whoever a failure would blame."""
    if blamed is not None and blamed in checks:
        return [blamed]
    return _weak_or_blamed(read, blamed, checks)


def _shown(expr: Expr, values: Mapping[str, Leaf], path_of: Any) -> str:
    """The expression with each value as the record has it (amounts in cents)."""

    def value_text(template: str) -> str:
        if template.startswith("sum("):
            paths = _expand(values, path_of(template[4:-1]))
            numbers = [_rule_value(values[path].value) for path in paths]
            number: Any = sum((n for n in numbers if isinstance(n, Decimal)), Decimal(0))
            return _number(number, any(values[path].field.kind == "amount" for path in paths))
        leaf = values.get(path_of(template))
        if leaf is None:
            return "0"
        return _number(_rule_value(leaf.value), leaf.field.kind == "amount")

    return render(expr, value_text)


def _check_equation(
    src: Source,
    rule: CompiledRule,
    sides: list[Any],
    read: list[str],
    blamed: str | None,
    values: Mapping[str, Leaf],
    checks: Mapping[str, FieldCheck],
    path_of: Any,
) -> None:
    left, right = sides
    try:
        diff = right - left
        if abs(diff) <= Decimal(repr(rule.spec.tolerance)):
            return
    except (InvalidOperation, ArithmeticError):
        return
    money = any(values[path].field.kind == "amount" for path in read if path in values)
    left_expr, right_expr = rule.comparison.sides
    left_text = render(left_expr, path_of)  # the item's own paths: lines[1].qty
    if isinstance(left_expr, (PathRef, SumOf)):
        left_summary = f"{left_text} = {_number(left, money)}"
    else:
        left_summary = f"{left_text} = {_shown(left_expr, values, path_of)} = {_number(left, money)}"
    if isinstance(right_expr, PathRef):
        leaf = values.get(path_of(right_expr.template))
        right_summary = f"{path_of(right_expr.template)} is {as_given(leaf.value if leaf else None)}"
    else:
        right_summary = f"{render(right_expr, path_of)} is {_number(right, money)}"
    summary = f"{left_summary}, but {right_summary}"
    # a figure the source writes in whole units only ("+$1602253" beside "$196767.95") is
    # rounded to the unit: half of one is rounding too
    whole = _in_whole_units(right_expr, path_of, checks) and rule.spec.rounding is not None
    rounding = None if rule.spec.rounding is None else Decimal(repr(rule.spec.rounding))
    if rounding is not None and whole:
        rounding = max(rounding, HALF_UNIT)
    if rounding is not None and abs(diff) <= rounding:
        for path in _forgiven(read, blamed, checks):
            checks[path].penalise(EXTRA_CHARGE_FACTOR, f"{summary}: the difference {diff:.2f} is within rounding")
        return
    if isinstance(right_expr, PathRef) and EACH in right_expr.template and diff < 0:
        rows = [checks.get(p) for p in read if p != path_of(right_expr.template)]
        rate = _rate_on_its_line(src, left, diff, checks.get(path_of(right_expr.template)), rows)
        if rate is not None:
            for path in _forgiven(read, blamed, checks):
                checks[path].penalise(
                    EXTRA_CHARGE_FACTOR, f"{summary}: the difference {diff:.2f} is the line's printed {rate}"
                )
            return
    if rule.spec.adjustments:
        bases = [left, *(checks[p].number for p in read if p in checks and checks[p].number is not None)]
        at_rate = _at_its_rate(src, diff, bases, HALF_UNIT if whole else CENT)
        if at_rate is not None:
            for path in _forgiven(read, blamed, checks):
                checks[path].penalise(
                    EXTRA_CHARGE_FACTOR, f"{summary}: the difference {diff:.2f} is the labelled {at_rate}"
                )
            return
    included = _tax_included(src, left, diff, read, checks, _record_total(values)) if rule.spec.adjustments else None
    if included is not None:
        for path in _forgiven(read, blamed, checks):
            checks[path].penalise(EXTRA_CHARGE_FACTOR, f"{summary}: the difference {diff:.2f} is {included}")
        return
    made_of = difference_made_of(src, diff, either_way=False) if rule.spec.adjustments else None
    read_spans = {(span.start, span.end) for p in read if p in checks for span in checks[p].spans}
    if made_of is not None and (abs(diff) <= MAX_ADJUSTMENT_SHARE * abs(left) or _one_charge(src, diff, read_spans)):
        for path in _forgiven(read, blamed, checks):
            checks[path].penalise(
                EXTRA_CHARGE_FACTOR,
                f"{summary}: the difference {diff:.2f} is an extra charge or discount the source labels "
                f"({' + '.join(made_of)})",
            )
        return
    # Never forgiven, however well the values are grounded: the source (or the record)
    # contradicts itself. Blame the values not verified, else the blamed field.
    if made_of is not None:
        beyond = (
            f"is more than {MAX_ADJUSTMENT_SHARE:.0%} of {_number(left, money)}: more than the labelled charges "
            f"and discounts ({' + '.join(made_of)}) are taken to explain"
        )
    elif rule.spec.adjustments:
        beyond = "is beyond rounding and no labelled charge or discount in the source makes it up"
    else:
        beyond = "is beyond the rule's tolerance"
    reason = f"arithmetic: {summary}: the difference {diff:.2f} {beyond}"
    labelled = _labelled_to_add_up(src, rule, diff, read, values, path_of)
    if labelled is not None and labelled[0] in checks:
        path, figure = labelled
        checks[path].penalise(ARITHMETIC_FACTOR, f"{reason}; the source labels {figure} as the {path}, which adds up")
        return
    for path in _weak_or_blamed(read, blamed, checks):
        checks[path].penalise(ARITHMETIC_FACTOR, reason)


def _labelled_to_add_up(
    src: Source, rule: CompiledRule, diff: Decimal, read: list[str], values: Mapping[str, Leaf], path_of: Any
) -> tuple[str, str] | None:
    """The one value of a failed equation the source contradicts: the value that would
    make it hold, the others as they are, is a figure the source labels as that field
    ("Total TVA 9,16 €" when the record's tax is one rate's 8,32 and the total is the
    subtotal plus 9,16); failing that, the sum of the figures it labels so. The field and
    the figure as printed, or None when no field's or more than one field's figure is."""
    wanted: list[tuple[str, Decimal, Decimal]] = []  # each field, its value, the value that adds up
    labelled_roles = set(src.lexicon.role_of_label.values())  # an item's path never is one
    for path in dict.fromkeys(read):
        if path not in labelled_roles:
            continue
        given = _rule_value(values[path].value) if path in values else None
        if not isinstance(given, Decimal):
            continue
        moved = _sides(rule, values, path_of, [], instead=(path, given + 1))
        if any(not isinstance(side, Decimal) for side in moved):
            continue
        slope = (moved[1] - moved[0]) - diff
        cents = to_cents(given - diff / slope) if slope else None
        if cents is not None:
            wanted.append((path, given, cents))
    # the figure as signed: a credit note's "-200,00" is no tax of +200
    found = [
        (path, src.amounts[hits[0]].raw)
        for path, _, cents in wanted
        if (
            hits := [
                i for i in src.amounts_of(cents) if src.roles[i] == path and to_cents(src.amounts[i].value) == cents
            ]
        )
    ]
    if not found:
        found = [(path, parts) for path, given, cents in wanted if (parts := _parts_adding_to(src, path, given, cents))]
    return found[0] if len(found) == 1 else None


def _parts_adding_to(src: Source, path: str, given: Decimal, cents: Decimal) -> str | None:
    """The figures the source labels as `path`, each on a line with its rate and one of
    them the record's value, written added ("20,223.00 + 20,223.00") when their sum is
    `cents`: each rate's tax ("CGST9 (9%) 20,223.00", "SGST9 (9%) 20,223.00")."""
    parts = [i for i, role in enumerate(src.roles) if role == path]
    worth = [to_cents(src.amounts[i].value) for i in parts]
    if (
        len(parts) < 2
        or any(c is None or c <= 0 for c in worth)
        or to_cents(abs(given)) not in worth
        or sum(c for c in worth if c is not None) != cents
    ):
        return None
    lines = src.lines
    if not all(RATE_RE.search(src.text, *lines.bounds(lines.line_of(src.amounts[i].start))) for i in parts):
        return None
    return " + ".join(src.amounts[i].raw for i in parts)


HALF_UNIT = Decimal("0.50")


def _record_total(values: Mapping[str, Leaf]) -> Decimal | date | None:
    """The record's total: the value of its field drawing on the standard total labels."""
    leaf = next((leaf for leaf in values.values() if "total" in leaf.field.label_sets and "[" not in leaf.path), None)
    return None if leaf is None else _rule_value(leaf.value)


def _tax_included(
    src: Source,
    left: Decimal,
    diff: Decimal,
    read: list[str],
    checks: Mapping[str, FieldCheck],
    total: Decimal | date | None,
) -> str | None:
    """Whether the difference is minus the tax the rule reads, and the source says its
    figures include the tax ("Subtotal 120.00 / IVA 20.00 / Total 120.00" under "Produto
    com IVA incluido"): a gross subtotal, not a wrong total. Or, said or not, minus the tax
    and plus labelled charges or discounts to the cent ("Subtotal 201 / Shipping 12 / Tax
    19.36 / Total 213", a shop whose prices include the tax): a gross subtotal and its
    charges; the total is then no other line's figure (the subtotal is one). Either way
    the tax is a tax rate's worth of the net it leaves in the gross (not the gross
    itself). A rule of the lines' sum and the net (which reads no tax) is minus the
    record's tax where the lines are priced with it: the source says so, or they add up
    to the record's `total` (a till's lines over its VAT table) or to a figure under a
    total's label (the total before a tip). What the difference is, or None."""
    path = src.lexicon.tax_sum_role
    check = checks.get(path) if path is not None else None
    tax = check.number if check is not None else None
    lines = path not in read and src.lexicon.goods_role in read
    if tax is None or tax == 0 or not (path in read or lines):
        return None
    if not a_tax_rate_of(left - tax if lines else left - tax - tax, tax):
        return None
    rest = diff + tax
    if (
        lines
        and isinstance(total, Decimal)
        and abs(rest) > CENT
        and (abs(total - left - rest) <= CENT or _printed_as_a_total(src, left + rest))
    ):
        # "RABATT -2,00" under a till's lines priced with the tax: the lines and the
        # labelled discount make the total, the net and the tax make it too (or the
        # total before a tip: "Sooduskood -1,50" / "Sõidu hind kokku 10,03")
        made_of = difference_made_of(src, rest, either_way=False)
        return None if made_of is None else f"the tax, which the lines include, and the labelled {' + '.join(made_of)}"
    if abs(rest) <= CENT:
        if src.says_tax_included() and not _net_printed(src, left - tax - tax, checks):
            return "the tax, which the source says is included"
        if lines and isinstance(total, Decimal) and abs(total - left) <= CENT:
            return "the tax: the lines add up to the total, priced with it"
        if lines and _printed_as_a_total(src, left):
            # "SUBTOTAL 51.852 / IMPOCONSUMO 4.148 / TOTAL 56.000 / PROPINA 5.600": the
            # lines make the total before the tip the record's total adds
            return "the tax: the lines add up to a labelled total, priced with it"
        return None
    if lines:
        return None
    made_of = difference_made_of(src, rest, either_way=False)
    if made_of is None:
        return None
    return f"the tax, which the figures include, and the labelled {' + '.join(made_of)}"


def _printed_as_a_total(src: Source, value: Decimal) -> bool:
    """Whether a figure worth `value` stands under a total's label."""
    cents = to_cents(value)
    return cents is not None and any(src.roles[i] in src.lexicon.grand_roles for i in src.amounts_of(cents))


def _net_printed(src: Source, net: Decimal, checks: Mapping[str, FieldCheck]) -> bool:
    """Whether the record's subtotal stands under no label of its own while the source
    prints the net its gross leaves without the tax ("225,00" given, "Netto-Warenwert
    189,08" printed): the subtotal is that net, and the gross given for it the total's
    figure, not a gross subtotal."""
    goods = src.lexicon.goods_role
    check = checks.get(goods) if goods is not None else None
    cents = to_cents(net)
    return check is not None and not check.verified and cents is not None and bool(src.amounts_of(cents))


def _in_whole_units(right: Any, path_of: Any, checks: Mapping[str, FieldCheck]) -> bool:
    """Whether the rule's right-hand value is a field the source writes only in whole units."""
    if not isinstance(right, PathRef):
        return False
    check = checks.get(path_of(right.template))
    if check is None or check.number is None or check.number != check.number.to_integral_value():
        return False
    return bool(check.spans) and not any(CENTS_RE.search(span.text) for span in check.spans)


def _at_its_rate(src: Source, diff: Decimal, bases: list[Decimal], slack: Decimal) -> str | None:
    """The labelled charge or deduction that is the difference (within `slack`) and is
    printed with a rate it is, to the cent, of one of `bases` ("DISCOUNT 28%
    -$546577.65" on a subtotal of 1952063.06): evidence at any share of the sum, as the
    rate says why the figure is what it is. Its phrase and rate, or None."""
    for ai, am in enumerate(src.amounts):
        phrase = src.context(ai).adjustment
        cents = to_cents(abs(am.value))
        if phrase is None or cents is None or abs(cents - abs(diff)) > slack:
            continue
        kind = src.lexicon.adjustment_kind.get(phrase, "either")
        if (kind == "charge" and diff < 0) or (kind == "deduction" and diff > 0):
            continue
        line_start = src.lines.bounds(src.lines.line_of(am.start))[0]
        since = src.amounts[ai - 1].end if ai > 0 and src.amounts[ai - 1].end > line_start else line_start
        for m in RATE_RE.finditer(src.text, since, am.start):
            rate = Decimal(m.group(1).replace(",", ".")) / 100
            if any(abs(rate * abs(base) - cents) <= CENT for base in bases if base):
                return f"{phrase} {am.raw} at {m.group(0)}"
    return None


def _rate_on_its_line(
    src: Source, left: Decimal, diff: Decimal, check: FieldCheck | None, inputs: list[FieldCheck | None]
) -> str | None:
    """The rate printed on the item's row (where its value stands with the values it is
    made of) that is, to the cent, its discount off `left` (its quantity times its price):
    "500  0,12  15,00%  51,00", "4  62,50  Sconto 10%  225,00", Turkish "1.249,00 TL  %10,00".
    The rate, or None."""
    if check is None or not check.spans:
        return None
    rows = {src.lines.line_of(span.start) for span in check.spans}
    for made_of in inputs:
        if made_of is not None and made_of.spans:
            rows &= {src.lines.line_of(span.start) for span in made_of.spans}
    for line in sorted(rows):
        start, end = src.lines.bounds(line)
        printed = [
            (m.group(1), m.group(0))
            for rates in (RATE_RE, PERCENT_FIRST_RATE_RE)
            for m in rates.finditer(src.text, start, end)
        ]
        for figure, shown in printed + _rates_under_a_percent_column(src, line):
            rate = Decimal(figure.replace(",", ".")) / 100
            if abs(rate * abs(left) - abs(diff)) <= CENT:
                return shown
    return None


# a rate written without its sign in a column whose header carries it ("10" under
# "Line Discount %", "Disc%", "Sc.%")
_BARE_RATE_RE = re.compile(r"(?<![0-9.,])[0-9]{1,2}(?:[.,][0-9]{1,2})?(?![0-9.,%])")
_HEADER_LOOKUP_LINES = 40  # a page of rows under their header


def _rates_under_a_percent_column(src: Source, line: int) -> list[tuple[str, str]]:
    """The numbers of the row that stand under a header cell with a percent sign: the
    nearest line above with words over the number (past other rows' figures, and a
    wrapped description's words alone on their line) is its column's header; or, where
    no header stands over it (a header drawn apart from its rows), any in a table with
    a discount's rate column. (The figure, and as shown with its header.)"""
    text, lines = src.text, src.lines
    start, end = lines.bounds(line)
    out = []
    discount_header = _a_discount_rate_header(src, line)
    discount_column = None if discount_header is None else discount_header[1]
    for m in _BARE_RATE_RE.finditer(text, start, end):
        c0, c1 = lines.column(start, m.start()), lines.column(start, m.end())
        header = None
        for above in range(line - 1, max(-1, line - 1 - _HEADER_LOOKUP_LINES), -1):
            above_start = lines.bounds(above)[0]
            cells = lines.cells(above)
            over = [(s, e) for s, e in cells if lines.column(above_start, s) < c1 and lines.column(above_start, e) > c0]
            if not over and discount_header is not None and above == discount_header[0]:
                break  # set right, between the header's cells: the discount's table, no header over it
            words = " ".join(text[s:e] for s, e in over)
            if over and any(c.isalpha() for c in words) and len(cells) > 1:
                header = words
                break  # (a blank, another row's figures, a wrapped description: no header)
        if header is not None and "%" in header:
            out.append((m.group(), f"{m.group()} under '{header}'"))
        elif header is None and discount_column is not None:
            out.append((m.group(), f"{m.group()} in a table with a '{discount_column}' column"))
    return out


# a discount's word and a percent sign, a table's column header ("Disc %", "Remise %",
# "Rabatt (%)", "% Dto")
_PERCENT_BESIDE = re.compile(r"[ \t.]*(?:%|\([ \t]*%[ \t]*\))")
_PERCENT_BEFORE = re.compile(r"%[ \t]*$")


def _a_discount_rate_header(src: Source, line: int) -> tuple[int, str] | None:
    """A header cell above the row, within the lines a header is looked for, that names a
    discount's rate: a deduction's word with a percent sign beside it (its line, and its
    word as written)."""
    lexicon, text = src.lexicon, src.text
    for above in range(line - 1, max(-1, line - 1 - _HEADER_LOOKUP_LINES), -1):
        start, end = src.lines.bounds(above)
        deductions = [
            m
            for m in lexicon.adjustment_re.finditer(text, start, end)
            if lexicon.adjustment_kind.get(normalise_phrase(m.group())) == "deduction"
        ]
        for m in (*deductions, *lexicon.discount_column_re.finditer(text, start, end)):
            if _PERCENT_BESIDE.match(text, m.end(), end) or _PERCENT_BEFORE.search(text, start, m.start()):
                return above, text[m.start() : m.end()]
    return None


_CONDITION_WORDS = re.compile(r"(?i)(?<![^\W_])(?:after|late|overdue)(?![^\W_])")


def _owed_on_a_condition(src: Source, ai: int) -> bool:
    """Whether a figure's line says it is owed only on a condition: "after", "late",
    "overdue" ("Amount Due After 03/25  $92.62" beside "Amount Due by 03/25  $84.20"); a
    due date alone is no condition ("Due Date: 04/01/2026   Amount Due: 1,335.00")."""
    start = src.lines.bounds(src.lines.line_of(src.amounts[ai].start))[0]
    return _CONDITION_WORDS.search(src.text, start, src.amounts[ai].start) is not None


def _one_charge(src: Source, diff: Decimal, read_spans: set[tuple[int, int]]) -> str | None:
    """The labelled charge that is, to the cent, what the total adds to the sum it
    corrects ("Shipping 1.99" on 1.80 + 0.27 = 4.06), or every labelled charge together
    after the goods' last sum, but those the rule already reads (a tip, at `read_spans`)
    ("Booking Fee 3.15", "Airport Surcharge 4.00" on a fare of 22.40), or None. Either is
    evidence at any share of the sum: a corrupted total is off by what the source labels
    as its charges only by chance. Deductions, sums of some of the charges, and charges a
    later subtotal already holds ("Items total 30.00 / Booking fee 6.00 / Subtotal 40.50")
    are not."""
    cents = to_cents(diff)
    if cents is None or cents <= 0:
        return None
    one = next((phrase for value, kind, phrase in src.adjustments() if kind == "charge" and value == cents), None)
    if one is not None:
        return one
    goods = src.lexicon.goods_role
    after = max(
        (am.end for ai, am in enumerate(src.amounts) if goods is not None and src.roles[ai] == goods), default=0
    )
    charges: dict[Decimal, str] = {}
    for ai, worth, kind, phrase in src.adjustment_figures():
        am = src.amounts[ai]
        if kind != "charge" or (am.start, am.end) in read_spans:
            continue
        if am.start < after:
            return None  # a subtotal after it holds it already
        charges.setdefault(worth, phrase)
    if len(charges) > 1 and sum(charges) == cents:
        return " + ".join(charges.values())
    return None


def _number(value: Any, money: bool) -> str:
    if isinstance(value, Decimal):
        return f"{value:.2f}" if money else format(value.normalize(), "f")
    return str(value)


_HOLDS = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _check_order(
    rule: CompiledRule, sides: list[Any], read: list[str], blamed: str | None, checks: Mapping[str, FieldCheck]
) -> None:
    try:
        holds = all(_HOLDS[op](a, b) for op, a, b in zip(rule.comparison.ops, sides, sides[1:], strict=False))
    except TypeError:
        return
    if holds:
        return
    shown = " ".join(
        part
        for pair in zip(
            [_number(s, False) if not isinstance(s, date) else s.isoformat() for s in sides],
            [*rule.comparison.ops, ""],
            strict=True,
        )
        for part in pair
        if part
    )
    reason = f"rule {rule.comparison.text} fails: {shown}"
    if rule.spec.why:
        reason += f" ({rule.spec.why})"
    involved = [path for path in dict.fromkeys(read) if path in checks]
    for path in [blamed] if blamed is not None and blamed in checks else involved:
        checks[path].penalise(ORDER_FACTOR, reason)


# --- a total no label names ---------------------------------------------------------
_MAX_TENDER_PAIRS = 200


def _without_tendered(src: Source, total: Decimal) -> list[Decimal]:
    """The figures written with cents, less cash tendered and its change: two figures
    whose difference is the total, the one given printed before the change it left
    (20,03 given, 11,20 back, 8,83 paid), a word for cash or change on the line of one
    of them or the line over it ("BARGELD", "Change"); so are a figure and a deduction
    taken off it (10,00 and "- 0,10", 9,90 left). A difference printed the other way
    round is a sum and one of its parts (a line of 40.00 above the 240.00 it adds to),
    and one neither names is an account (a gross, its withholdings and what is left):
    no tender."""
    first: dict[Decimal, int] = {}
    last: dict[Decimal, int] = {}
    deducted: set[Decimal] = set()
    for ai, am in enumerate(src.amounts):
        if CENTS_RE.search(am.raw):
            figure = abs(am.value)
            first.setdefault(figure, am.start)
            last[figure] = am.start
            phrase = src.context(ai).adjustment
            if (
                am.value < 0
                or _MINUS_BEFORE.search(src.text, max(0, am.start - 3), am.start)
                or (phrase is not None and src.lexicon.adjustment_kind.get(phrase) == "deduction")
            ):
                deducted.add(figure)
    distinct = sorted(first)[:_MAX_TENDER_PAIRS]
    aside = {
        figure
        for given in distinct
        for change in distinct
        if given > change
        and abs(given - change - total) <= CENT
        and first[given] < last[change]
        and (change in deducted or _tender_named(src, first[given]) or _tender_named(src, last[change]))
        for figure in (given, change)
    }
    return [figure for figure in first if figure not in aside] or [total]


# a minus set apart from its figure ("1,00 %  - 0,10"), which the figure's own sign misses
_MINUS_BEFORE = re.compile(r"(?<![\w.,])[-\u2212\u2013][ \t]?$")


def _tender_named(src: Source, position: int) -> bool:
    line = src.lines.line_of(position)
    start = src.lines.bounds(max(0, line - 1))[0]
    return src.lexicon.tender_re.search(src.text, start, src.lines.bounds(line)[1]) is not None


def check_unlabelled_totals(
    src: Source, schema: CompiledSchema, leaves: list[Leaf], checks: Mapping[str, FieldCheck]
) -> None:
    """A total the document labels nowhere passes as its largest figure (written with
    cents: "Facture 48390" is a number, not an amount; cash tendered and the change it
    left aside), as the subtotal plus the tax, or as the gross the record's tax is
    included in at a rate the source prints; anything else is most likely a line's
    amount taken for the total. So does a subtotal the document labels nowhere when the
    record gives no tax to check it by: as the total, the largest figure, the total less
    a tax rate's worth of it (a tax the record leaves out), or the total less labelled
    charges or discounts."""
    if not any(CENTS_RE.search(am.raw) for am in src.amounts):
        return
    by_set = {name: leaf for leaf in leaves if "[" not in leaf.path for name in leaf.field.label_sets}
    parts = [_rule_value(by_set[name].value) if name in by_set else None for name in ("subtotal", "tax", "total")]
    reconciled = (
        sum(p for p in parts[:2] if isinstance(p, Decimal)) if all(isinstance(p, Decimal) for p in parts[:2]) else None
    )
    tax = parts[1] if isinstance(parts[1], Decimal) and parts[1] else None
    # the subtotal and the tax, the tax left out where the record gives none
    adjusted = parts[0] + (tax or Decimal(0)) if isinstance(parts[0], Decimal) else None
    rates = {Decimal(m.group(1).replace(",", ".")) for m in RATE_RE.finditer(src.text)} if tax is not None else set()
    for leaf in leaves:
        check = checks.get(leaf.path)
        if check is None or not check.unlabelled or check.number is None:
            continue
        if "subtotal" in leaf.field.label_sets and parts[1] is None and isinstance(parts[2], Decimal):
            _check_unlabelled_subtotal(src, leaf, check, abs(check.number), parts[2])
        if "total" not in leaf.field.label_sets:
            continue
        value = abs(check.number)
        largest = max(_without_tendered(src, value))
        if value >= largest - CENT:
            before = _before_its_deductions(src, value, tax)
            if before is not None:
                left, phrases = before
                check.penalise(
                    UNLABELLED_TOTAL_FACTOR,
                    f"no label in the source names the {leaf.field.name}; {as_given(leaf.value)} is the figure it "
                    f"labels the subtotal, and after its {', '.join(phrases)} it prints {left}: the "
                    f"{leaf.field.name} is most likely what they leave",
                )
            continue
        if reconciled is not None and abs(reconciled - value) <= CENT:
            continue
        if adjusted is not None and difference_made_of(src, value - abs(adjusted), either_way=False):
            continue  # the subtotal and the tax after a labelled discount or charge
        if tax is not None and any(
            to_cents(value * rate / (100 + rate)) == to_cents(abs(tax)) for rate in rates if rate
        ):
            continue  # the gross its tax is included in at a rate the source prints (220.00 with 19 %: 35.13)
        check.penalise(
            UNLABELLED_TOTAL_FACTOR,
            f"no label in the source names the {leaf.field.name}, and {as_given(leaf.value)} is neither its largest "
            f"amount ({largest}) nor the subtotal plus the tax: it may be one line's amount",
        )


def _before_its_deductions(src: Source, value: Decimal, tax: Decimal | None) -> tuple[Decimal, list[str]] | None:
    """Where a figure the document labels only as the goods' sum has labelled deductions
    after it, none a payment, and a figure after them is what they leave (with the
    record's tax or a labelled one added, or none: "Subtotal 19.47 / Discount -1.50 /
    BALANCE 17.97"): that figure and the deductions' phrases. Given as the total of a
    document that labels none, the value is most likely the sum before its discount."""
    goods = src.lexicon.goods_role
    cents = to_cents(value)
    hits = src.amounts_of(cents) if cents is not None and goods is not None else []
    if not hits or any(src.roles[i] != goods for i in hits):
        return None
    after = max(src.amounts[i].end for i in hits)
    taxes = {Decimal(0), abs(tax) if tax else Decimal(0)} | {
        abs(am.value) for i, am in enumerate(src.amounts) if src.roles[i] == src.lexicon.tax_sum_role
    }
    for am in src.amounts:
        left = abs(am.value)
        if am.start < after or left >= value or not CENTS_RE.search(am.raw):
            continue
        for added in taxes:
            phrases = difference_made_of(src, left - added - value, either_way=False)
            if phrases is None:
                continue
            # a discount stands between the two figures; a payment leaves what is still
            # owed of the same total ("Payment received", "CASH 20.00 / CARD 25.00")
            between = [
                [i for i in src.adjustments_listed([phrase]) if after <= src.amounts[i].start < am.start]
                for phrase in phrases
            ]
            if all(found and not all(src.a_payment(i) for i in found) for found in between):
                return left, phrases
    return None


def _check_unlabelled_subtotal(src: Source, leaf: Leaf, check: FieldCheck, value: Decimal, total: Decimal) -> None:
    if abs(value - abs(total)) <= CENT:
        return
    largest = max(_without_tendered(src, abs(total)))
    rest = abs(total) - value
    if value >= largest - CENT or a_tax_rate_of(value, rest) or difference_made_of(src, rest, either_way=False):
        return
    check.penalise(
        UNLABELLED_TOTAL_FACTOR,
        f"no label in the source names the {leaf.field.name} and the record gives no tax to check it by; "
        f"{as_given(leaf.value)} is neither the total, its largest amount ({largest}), the total less a tax, "
        "nor the total less labelled charges: it may be one line's amount",
    )
