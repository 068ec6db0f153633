"""`vetq inbox serve`: the review page, rendered on the server (Starlette, Jinja2).

Reviewers sign in with the token `vetq inbox add-reviewer` printed; a session is a
random cookie (HttpOnly, SameSite=Strict) whose hash the database keeps, with the
CSRF token every form echoes (compared in constant time; a POST without it is 403).
Templates autoescape: a document's text, values and reasons are always text, never
markup, and the Content-Security-Policy allows this server's own script and style
only (no inline script), so a hostile document cannot run anything. The one script,
static/inbox.js, adds keyboard shortcuts; every page works without it.

A PDF item shows its pages as images with each value's provenance boxes drawn over
them (SVG, in the page's own points). The pages are drawn from the PDF the item keeps,
on the first view, in a child process (core.documents.pdf.render_isolated: the server
never runs PDFium itself), and kept in memory per item (PageImages), served only to
signed-in reviewers. Drawn on view, not at ingest: most items' pages would be drawn
for nobody, PNGs are several times the PDF's size in the database, and the PDF stays
the one record of the document (a later release may draw it differently).

The server also keeps the inbox in step (service.Inbox.sync on a background thread):
new handoffs become items, unwritten results are written, lapsed claims return."""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from vetq.core.documents.pdf import PageImage, RenderOptions, render_isolated
from vetq.core.errors import ConflictError, InvalidInputError, NotFoundError, VetqError
from vetq.core.logging import get_logger
from vetq.inbox.models import Item, ItemField, WebSession
from vetq.inbox.service import Inbox
from vetq.inbox.store import NUMERIC_KINDS, compiled_schema_of, value_from_text

log = get_logger("vetq.inbox")

HERE = Path(__file__).parent
SESSION_COOKIE = "vetq_session"
LOGIN_COOKIE = "vetq_login"
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
INPUT_TYPES = {"date": "date", "time": "time", "email": "email", "url": "url", "phone": "tel"}
# The drawn pages kept in memory, the items viewed last kept first; an item larger than
# this alone is still kept (until the next is drawn).
PAGE_CACHE_BYTES = 64 * 1024 * 1024
# A box around a value reaches this far (points) past its words' own boxes.
BOX_MARGIN = 2.0


def _templates() -> Any:
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    return Environment(
        loader=FileSystemLoader(str(HERE / "templates")),
        autoescape=select_autoescape(["html"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )


def segments(text: str, fields: list[ItemField], provenance: Any) -> list[dict[str, Any]]:
    """The document cut at every value's provenance span: plain text, and marks that
    name their field (flagged or not). Overlapping spans keep the first, a flagged
    value's before another's at the same place."""
    spans = []
    by_path = {field.path: field for field in fields}
    for path, entries in (provenance or {}).items() if isinstance(provenance, dict) else []:
        field = by_path.get(path)
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(entry, dict):
                continue
            start, end = entry.get("start"), entry.get("end")
            if isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text):
                spans.append((start, end, path, index, bool(field and field.flagged)))
    # Two values at one place (a total read where the subtotal stands): the flagged one shows.
    spans.sort(key=lambda span: (span[0], -span[1], not span[4]))
    out: list[dict[str, Any]] = []
    cursor = 0
    for start, end, path, index, flagged in spans:
        if start < cursor:
            continue
        if start > cursor:
            out.append({"text": text[cursor:start]})
        out.append({"text": text[start:end], "field": path, "id": f"mark-{path}-{index}", "flagged": flagged})
        cursor = end
    if cursor < len(text):
        out.append({"text": text[cursor:]})
    return out


def page_boxes(fields: list[ItemField], provenance: Any) -> dict[int, list[dict[str, Any]]]:
    """Per page, a box for each line of each value's provenance span (its words' boxes
    joined), in the page's points from its top-left corner; a flagged value's last, so
    it is drawn over another's at the same place."""
    by_path = {field.path: field for field in fields}
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for path, entries in provenance.items() if isinstance(provenance, dict) else []:
        field = by_path.get(path)
        flagged = bool(field and field.flagged)
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(entry, dict) or not isinstance(entry.get("page"), int):
                continue
            words = [box for box in entry.get("boxes") or [] if _is_box(box)]
            for line, (x0, y0, x1, y1) in enumerate(lines_of(words)):
                out[entry["page"]].append(
                    {
                        "field": path,
                        "id": f"box-{path}-{index}-{line}",
                        "flagged": flagged,
                        "reason": field.reason if field is not None and flagged else None,
                        "x": round(x0 - BOX_MARGIN, 2),
                        "y": round(y0 - BOX_MARGIN, 2),
                        "width": round(x1 - x0 + 2 * BOX_MARGIN, 2),
                        "height": round(y1 - y0 + 2 * BOX_MARGIN, 2),
                    }
                )
    for boxes in out.values():
        boxes.sort(key=lambda box: box["flagged"])
    return dict(out)


def _is_box(box: Any) -> bool:
    return (
        isinstance(box, list)
        and len(box) == 4
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in box)
        and box[0] <= box[2]
        and box[1] <= box[3]
    )


def lines_of(words: list[list[float]]) -> list[tuple[float, float, float, float]]:
    """Consecutive word boxes that share a line, joined into one box each."""
    lines: list[list[float]] = []
    for x0, y0, x1, y1 in words:
        if lines:
            current = lines[-1]
            overlap = min(current[3], y1) - max(current[1], y0)
            if overlap > 0.5 * min(current[3] - current[1], y1 - y0):
                current[:] = [min(current[0], x0), min(current[1], y0), max(current[2], x1), max(current[3], y1)]
                continue
        lines.append([x0, y0, x1, y1])
    return [(a, b, c, d) for a, b, c, d in lines]


class PageImages:
    """Each PDF item's pages, drawn once and kept (most recently viewed first, within
    PAGE_CACHE_BYTES). One drawing at a time: the requests for a new item's page images
    wait for its first drawing, not each its own. A drawing that failed (a timeout
    under load, say) is not kept: the item's next view tries again."""

    def __init__(self, options: RenderOptions, limit_bytes: int = PAGE_CACHE_BYTES) -> None:
        self.options = options
        self.limit_bytes = limit_bytes
        self._lock = threading.Lock()
        self._kept: OrderedDict[int, list[PageImage]] = OrderedDict()

    def of(self, item: Item) -> list[PageImage] | str:
        """The item's pages, or the message saying why there are none."""
        if item.document_pdf is None:
            return "this item keeps no PDF"
        with self._lock:
            kept = self._kept.get(item.id)
            if kept is not None:
                self._kept.move_to_end(item.id)
                return kept
            try:
                drawn = render_isolated(item.document_pdf, self.options)
            except VetqError as exc:
                log.warning("inbox_pages_not_drawn", item_id=item.id, error=exc.code.value)
                return exc.message
            self._kept[item.id] = drawn
            while len(self._kept) > 1 and self._size() > self.limit_bytes:
                self._kept.popitem(last=False)
            return drawn

    def _size(self) -> int:
        return sum(len(page.png) for pages in self._kept.values() for page in pages)


def as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) else str(value)
    return json.dumps(value, ensure_ascii=False)


# A signed-in page: the request, the reviewer's session, and the form a POST sent.
Handler = Callable[[Request, WebSession, Mapping[str, Any] | None], Response]


class ReviewPage:
    def __init__(self, inbox: Inbox, *, sync_every_s: float = 2.0, secure_cookies: bool = False) -> None:
        self.inbox = inbox
        self.store = inbox.store
        self.templates = _templates()
        self.sync_every_s = sync_every_s
        self.secure_cookies = secure_cookies
        self._stop = threading.Event()
        self._syncer: threading.Thread | None = None
        self.page_images = PageImages(inbox.settings.render_options())

    # ----------------------------------------------------------------- plumbing

    def render(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = self.templates.get_template(name).render(**context)
        return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)

    def session_of(self, request: Request) -> WebSession | None:
        return self.store.web_session(request.cookies.get(SESSION_COOKIE))

    @staticmethod
    def checked_form(form: Mapping[str, Any] | None, session: WebSession) -> Mapping[str, Any]:
        sent = str((form or {}).get("csrf") or "")
        if form is None or not hmac.compare_digest(sent.encode(), session.csrf_token.encode()):
            raise PermissionError("the form's CSRF token is missing or wrong: reload the page")
        return form

    def signed_in(self, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        """The page of a signed-in reviewer. Only the request's body is read on the event
        loop; the handler, whose database and Redis calls block, runs in a worker thread,
        so one slow query (or page rendering) does not hold up every other reviewer."""

        async def endpoint(request: Request) -> Response:
            session = await run_in_threadpool(self.session_of, request)
            if session is None:  # before the body is read
                return RedirectResponse("/login", status_code=303, headers=SECURITY_HEADERS)
            form = await request.form() if request.method == "POST" else None
            return await run_in_threadpool(self._as_reviewer, handler, request, session, form)

        return endpoint

    def _as_reviewer(
        self, handler: Handler, request: Request, session: WebSession, form: Mapping[str, Any] | None
    ) -> Response:
        try:
            return handler(request, session, form)
        except PermissionError as exc:
            return self.render("message.html", 403, title="Refused", message=str(exc), session=session)
        except NotFoundError as exc:
            return self.render("message.html", 404, title="Not found", message=exc.message, session=session)

    # ----------------------------------------------------------------- sign-in

    async def login(self, request: Request) -> Response:
        form = await request.form() if request.method == "POST" else None
        return await run_in_threadpool(self._login, request, form)

    def _login(self, request: Request, form: Mapping[str, Any] | None) -> Response:
        if form is None:
            token = secrets.token_urlsafe(24)
            page = self.render("login.html", login_csrf=token, error=None, session=None)
            self._cookie(page, LOGIN_COOKIE, token, max_age=600)
            return page
        sent, expected = str(form.get("csrf") or ""), request.cookies.get(LOGIN_COOKIE) or ""
        if not expected or not hmac.compare_digest(sent.encode(), expected.encode()):
            return self.render("message.html", 403, title="Refused", message="reload the sign-in page", session=None)
        reviewer = self.store.reviewer_by_token(str(form.get("token") or "").strip())
        if reviewer is None:
            token = secrets.token_urlsafe(24)
            page = self.render(
                "login.html", 401, login_csrf=token, error="That token opens no reviewer's account.", session=None
            )
            self._cookie(page, LOGIN_COOKIE, token, max_age=600)
            return page
        cookie, _ = self.store.open_session(reviewer)
        response = RedirectResponse("/", status_code=303, headers=SECURITY_HEADERS)
        self._cookie(response, SESSION_COOKIE, cookie, max_age=12 * 3600)
        response.delete_cookie(LOGIN_COOKIE)
        log.info("inbox_signed_in", reviewer=reviewer.name)
        return response

    def _cookie(self, response: Response, name: str, value: str, *, max_age: int) -> None:
        response.set_cookie(
            name, value, max_age=max_age, httponly=True, samesite="strict", secure=self.secure_cookies, path="/"
        )

    def logout(self, request: Request, session: WebSession, form: Mapping[str, Any] | None) -> Response:
        self.checked_form(form, session)
        self.store.close_session(request.cookies.get(SESSION_COOKIE))
        response = RedirectResponse("/login", status_code=303, headers=SECURITY_HEADERS)
        response.delete_cookie(SESSION_COOKIE)
        return response

    # ----------------------------------------------------------------- pages

    def index(self, request: Request, session: WebSession, form: Mapping[str, Any] | None) -> Response:
        filters = {key: request.query_params.get(key) or None for key in ("schema", "tenant", "field")}
        items = self.store.items(schema=filters["schema"], tenant=filters["tenant"], flagged_field=filters["field"])
        now = self.store.clock()
        rows = []
        for item in items:
            held = item.claimed_by is not None and item.claim_expires_at is not None and item.claim_expires_at > now
            rows.append(
                {
                    "item": item,
                    "flagged": [field.path for field in item.fields if field.flagged],
                    "holder": item.claimer.name if held and item.claimer is not None else None,
                    "age_minutes": int((now - item.created_at).total_seconds() // 60),
                }
            )
        return self.render(
            "list.html",
            session=session,
            rows=rows,
            filters=filters,
            facets=self.store.facets(),
            counts=self.store.counts(),
            notice=request.query_params.get("notice"),
        )

    def claim(self, request: Request, session: WebSession, form: Mapping[str, Any] | None) -> Response:
        self.checked_form(form, session)
        item_id = int(request.path_params["item_id"])
        try:
            self.store.claim(item_id, session.reviewer)
        except ConflictError as exc:
            return self.render("message.html", 409, title="Taken", message=exc.message, session=session)
        return RedirectResponse(f"/items/{item_id}", status_code=303, headers=SECURITY_HEADERS)

    def item(self, request: Request, session: WebSession, form: Mapping[str, Any] | None) -> Response:
        item = self.store.item(int(request.path_params["item_id"]))
        return self.item_page(item, session)

    def page_image(self, request: Request, session: WebSession, form: Mapping[str, Any] | None) -> Response:
        """One page of a PDF item, as the PNG the item view shows."""
        item = self.store.item(int(request.path_params["item_id"]))
        number = int(request.path_params["number"])
        pages = self.page_images.of(item)
        if isinstance(pages, str) or not 1 <= number <= len(pages):
            raise NotFoundError(f"item {item.id} has no page image {number}")
        return Response(pages[number - 1].png, media_type="image/png", headers=SECURITY_HEADERS)

    def item_page(
        self, item: Item, session: WebSession, *, status: int = 200, error: str | None = None, typed: Any = None
    ) -> HTMLResponse:
        now = self.store.clock()
        mine = (
            item.state == "open"
            and item.claimed_by == session.reviewer.id
            and item.claim_expires_at is not None
            and item.claim_expires_at > now
        )
        holder = item.claimer.name if item.claimer is not None and not mine else None
        provenance = item.machine_result.get("field_provenance")
        pages: list[dict[str, Any]] = []
        pages_problem = None
        if item.document_pdf is not None:
            drawn = self.page_images.of(item)
            if isinstance(drawn, str):
                pages_problem = drawn
            else:
                boxes = page_boxes(item.fields, provenance)
                pages = [
                    {
                        "number": page.number,
                        "width": round(page.width, 2),
                        "height": round(page.height, 2),
                        "boxes": boxes.get(page.number, []),
                    }
                    for page in drawn
                ]
        return self.render(
            "item.html",
            status,
            session=session,
            item=item,
            mine=mine,
            holder=holder,
            error=error,
            segments=segments(item.document_text or "", item.fields, provenance),
            inputs=self.inputs(item, typed),
            provenance=provenance if isinstance(provenance, dict) else {},
            pages=pages,
            pages_problem=pages_problem,
        )

    def inputs(self, item: Item, typed: Any) -> list[dict[str, Any]]:
        """Each field's input, typed by its kind; a reviewer's text kept after an error."""
        try:
            schema = compiled_schema_of(item.schema_ref) if item.kind != "review" else None
        except Exception:  # noqa: BLE001 - a schema this release cannot compile: plain text inputs
            schema = None
        out = []
        for field in item.fields:
            kind = field.field_kind or "text"
            definition = schema.by_path.get(field.template) if schema is not None else None
            choices: list[str] = []
            if kind == "enum":
                choices = list(definition.values) if definition is not None else []
                if item.kind == "review":
                    from vetq.inbox.store import REVIEW_VERDICTS

                    choices = list(REVIEW_VERDICTS)
            machine_text = as_text(field.machine_value)
            value = typed.get(f"v:{field.path}", machine_text) if typed is not None else machine_text
            out.append(
                {
                    "field": field,
                    "name": f"v:{field.path}",
                    "kind": kind,
                    "type": "number" if kind in NUMERIC_KINDS else INPUT_TYPES.get(kind, "text"),
                    "multiline": kind in ("list", "object") or (kind == "text" and len(machine_text) > 80),
                    "choices": choices,
                    "boolean": kind == "boolean",
                    "value": value,
                    "machine_text": machine_text,
                    "reviewed_text": as_text(field.reviewed_value) if field.outcome else None,
                }
            )
        return out

    def resolve(self, request: Request, session: WebSession, form: Mapping[str, Any] | None) -> Response:
        form = self.checked_form(form, session)
        item = self.store.item(int(request.path_params["item_id"]))
        values: dict[str, Any] = {}
        for field in item.fields:
            sent = form.get(f"v:{field.path}")
            if sent is None or str(sent) == as_text(field.machine_value):
                continue  # unchanged: the machine's value, confirmed
            values[field.path] = value_from_text(field.field_kind, str(sent))
        try:
            resolution = self.inbox.resolve(item.id, session.reviewer, values)
        except InvalidInputError as exc:
            return self.item_page(item, session, status=422, error=exc.message, typed=dict(form))
        except ConflictError as exc:
            return self.render("message.html", 409, title="Not resolved", message=exc.message, session=session)
        notice = f"Item {item.id} resolved."
        if resolution.error:
            notice += f" {resolution.error}"
        following = self.store.next_open(resolution.item, session.reviewer)
        if following is not None:
            try:
                self.store.claim(following, session.reviewer)
                return RedirectResponse(f"/items/{following}", status_code=303, headers=SECURITY_HEADERS)
            except ConflictError:
                pass
        from urllib.parse import quote

        return RedirectResponse(f"/?notice={quote(notice)}", status_code=303, headers=SECURITY_HEADERS)

    def release(self, request: Request, session: WebSession, form: Mapping[str, Any] | None) -> Response:
        self.checked_form(form, session)
        self.store.release(int(request.path_params["item_id"]), session.reviewer)
        return RedirectResponse("/", status_code=303, headers=SECURITY_HEADERS)

    async def metrics(self, request: Request) -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        from vetq.workers.metrics import registry

        return Response(generate_latest(registry()), media_type=CONTENT_TYPE_LATEST)

    async def health(self, request: Request) -> Response:
        return PlainTextResponse("ok")

    # ----------------------------------------------------------------- sync

    def start_sync(self) -> None:
        if self.sync_every_s <= 0 or self._syncer is not None:
            return

        def loop() -> None:
            while not self._stop.is_set():
                try:
                    self.inbox.sync()
                except Exception as exc:  # noqa: BLE001 - the page keeps serving; the next round tries again
                    log.warning("inbox_sync_failed", error=type(exc).__name__)
                self._stop.wait(self.sync_every_s)

        self._syncer = threading.Thread(target=loop, name="vetq-inbox-sync", daemon=True)
        self._syncer.start()

    def stop_sync(self) -> None:
        self._stop.set()
        if self._syncer is not None:
            self._syncer.join(timeout=10)

    def app(self) -> Starlette:
        from contextlib import asynccontextmanager

        @asynccontextmanager
        async def lifespan(_app: Starlette) -> Any:
            self.start_sync()
            try:
                yield
            finally:
                self.stop_sync()

        routes = [
            Route("/login", self.login, methods=["GET", "POST"]),
            Route("/logout", self.signed_in(self.logout), methods=["POST"]),
            Route("/", self.signed_in(self.index)),
            Route("/items/{item_id:int}", self.signed_in(self.item)),
            Route("/items/{item_id:int}/pages/{number:int}.png", self.signed_in(self.page_image)),
            Route("/items/{item_id:int}/claim", self.signed_in(self.claim), methods=["POST"]),
            Route("/items/{item_id:int}/resolve", self.signed_in(self.resolve), methods=["POST"]),
            Route("/items/{item_id:int}/release", self.signed_in(self.release), methods=["POST"]),
            Route("/metrics", self.metrics),
            Route("/healthz", self.health),
            Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
        ]
        return Starlette(routes=routes, lifespan=lifespan)
