"""The vaults page: what each vault holds and how healthy it is, and forms that add, edit
and remove vaults through ``vq.core.configedit`` (the locked, validating editor `vq vault`
uses): a rejected edit shows inline and leaves the config file as it was."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from vq.core.errors import VqError
from vq.core.settings import KINDS, Settings
from vq.query.ui import render

MAX_ERRORS = 500  # failing files listed, over all vaults


@dataclass
class VaultRow:
    id: str
    path: str
    kind: str
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    files: int = 0
    chunks: int = 0
    pending: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    error_count: int = 0
    root_exists: bool = True
    configured: bool = True

    @property
    def health(self) -> tuple[str, str]:
        """(css class, words): the worst thing about this vault."""
        if not self.configured:
            return "warn", "not configured (pruned at the next build)"
        if not self.root_exists:
            return "fail", "folder missing"
        if self.error_count:
            return "warn", f"{self.error_count} failing"
        if self.files == 0:
            return "warn", "not built yet"
        if self.pending:
            return "warn", f"{self.pending} to index"
        return "ok", "ok"


def vault_rows(settings: Settings) -> tuple[list[VaultRow], dict[str, Any] | None, str]:
    """Rows for every configured (and every indexed but unconfigured) vault, the last
    build and a note when there is no index yet. Pending files are the next build's own
    plan (``plan_for``), the count `vq status --check` reports."""
    from vq.core import store

    rows = {v.id: VaultRow(v.id, str(v.path), v.kind, v.include, v.exclude,
                           root_exists=v.path.is_dir()) for v in settings.vaults}
    if not store.exists_for(settings):
        return list(rows.values()), None, "no index yet: run a build (Builds › Build now)"
    from vq.core.manifest import plan_for
    from vq.query.status import read_status

    status = read_status(settings, max_errors=MAX_ERRORS)
    for vs in status.vaults:
        row = rows.setdefault(vs.id, VaultRow(vs.id, vs.path, vs.kind, configured=False))
        row.files, row.chunks, row.error_count = vs.files, vs.chunks, vs.errors
    for err in status.errors:
        rows[err["vault"]].errors.append(err)
    plan, _, _ = plan_for(settings, store.open_for(settings))
    for stale in plan.stale:
        if stale.vault in rows and stale.path:
            rows[stale.vault].pending += 1
    return list(rows.values()), status.last_build, ""


def page(request: Request, error: VqError | None = None, form: dict[str, str] | None = None,
         target: str = "") -> Response:
    ctx = request.app.state.ctx
    settings = ctx.settings()
    rows, last, note = vault_rows(settings)
    return render.page(request, "vaults.html", status=400 if error else 200, rows=rows, last=last,
                 note=note, kinds=KINDS, error=error, form=form or {}, target=target,
                 done=request.query_params.get("done", ""),
                 config_file=str(ctx.config_target()))


async def add(request: Request) -> Response:
    form = await _form(request)
    return await _apply(request, form, "add", lambda path: _add(path, form))


async def edit(request: Request) -> Response:
    vault_id = request.path_params["vault_id"]
    form = await _form(request)
    form["id"] = vault_id
    return await _apply(request, form, vault_id, lambda path: _edit(path, form))


async def remove(request: Request) -> Response:
    from vq.core.configedit import remove_vault

    vault_id = request.path_params["vault_id"]
    return await _apply(request, {"id": vault_id}, vault_id,
                        lambda path: remove_vault(path, vault_id), verb="removed")


async def _form(request: Request) -> dict[str, str]:
    data = await request.form()
    return {k: str(v) for k, v in data.items() if k != "csrf"}


async def _apply(request: Request, form: dict[str, str], target: str, change: Any,
                 verb: str = "") -> Response:
    """Run the config edit off the event loop; on a domain error re-render the page with
    the message beside the form that caused it (nothing was written)."""
    from starlette.concurrency import run_in_threadpool

    path = request.app.state.ctx.config_target()
    try:
        await run_in_threadpool(change, path)
    except VqError as exc:
        return await run_in_threadpool(page, request, exc, form, target)
    verb = verb or ("added" if target == "add" else "saved")
    return RedirectResponse("/vaults?" + urlencode({"done": f"{verb} {form.get('id', '')}"}),
                            status_code=303)


def _globs(text: str) -> tuple[str, ...]:
    """One glob per line (or comma-separated), blanks dropped."""
    parts = [p.strip() for line in text.splitlines() for p in line.split(",")]
    return tuple(p for p in parts if p)


def _fields(form: dict[str, str]) -> tuple[str, tuple[str, ...], tuple[str, ...], str]:
    from vq.core.vault_roots import check_vault_root

    root = form.get("path", "").strip()
    if not root:
        raise VqError("the vault needs a path", "give the folder to index, e.g. ~/notes")
    check_vault_root(root)
    kind = form.get("kind", "notes")
    if kind not in KINDS:
        raise VqError(f"kind {kind!r} is not one of {', '.join(KINDS)}", "pick a kind")
    return root, _globs(form.get("include", "")), _globs(form.get("exclude", "")), kind


def _add(path: Any, form: dict[str, str]) -> Any:
    from vq.core.configedit import add_vault

    vault_id = form.get("id", "").strip()
    if not vault_id:
        raise VqError("the vault needs an id", "give a short name such as notes")
    root, include, exclude, kind = _fields(form)
    return add_vault(path, vault_id, root, include, exclude, kind)


def _edit(path: Any, form: dict[str, str]) -> Any:
    from vq.core.configedit import edit_vault

    root, include, exclude, kind = _fields(form)
    return edit_vault(path, form["id"], root, include, exclude, kind)

