"""The dashboard's pages over real HTTP: search with signals and preview, vault edits
through the config editor, builds with live progress, health from doctor's checks."""

from __future__ import annotations

import html
import http.client
import json
import re
import shutil
import time
from urllib.parse import urlencode, urlsplit

import pytest

from tests.conftest import write_config

EVENT_DEADLINE = 300.0


def _search(live, **params):
    reply = live.http().get("/?" + urlencode(params))
    assert reply.status == 200, reply.text
    return reply.text


def _previews(page: str) -> list[str]:
    return [html.unescape(u) for u in re.findall(r'href="(/preview\?[^"]+)"', page)]


def test_search_shows_hits_with_location_snippet_score_and_signal_bars(live):
    page = _search(live, q="rollback release")
    assert "notes:deploy.md:" in page
    assert 'class="date"' in page and ">2026-11-20</span>" in page  # its frontmatter date
    assert "<mark>" in page.split('id="hits"')[1]  # the query's words highlighted
    assert re.search(r'class="score"[^>]*>\d\.\d{4}<', page)
    for signal in ("bm25", "dense"):  # hybrid: both signals ran, each with its bar
        assert f'<span class="sname">{signal}</span>' in page
    assert re.search(r'class="fill bm25" width="[1-9]', page)  # BM25 did contribute


def test_a_superseded_record_says_so_beside_its_date(live, vault):
    """The status is read from the record when shown: one superseded since the build
    says so at once."""
    deploy = vault / "deploy.md"
    deploy.write_text(deploy.read_text().replace(
        "\n# ", "\n## Status\n\nSuperseded by [ADR-0042](0042-deploy.md)\n\n# ", 1))
    page = _search(live, q="rollback release")
    head = page.split("notes:deploy.md:")[1].split("</div>")[0]
    assert '<span class="status"' in head and ">Superseded by ADR-0042</span>" in head


def test_filters_reach_the_search(live):
    assert "notes:cooking.md" in _search(live, q="bake bread oven", method="lexical")
    page = _search(live, q="bake bread oven", method="lexical", path="adr/**")
    assert "notes:cooking.md" not in page
    assert "lexical" in page.split('id="meta"')[1][:200]
    assert 'id="empty"' in _search(live, q="bake bread oven", method="lexical",
                                   vault="notes", kind="code")


def test_a_bad_filter_shows_the_error_and_its_fix(live):
    reply = live.http().get("/?" + urlencode({"q": "rollback", "since": "yesterday-ish"}))
    assert reply.status == 400
    assert "is not a date" in reply.text and "next:" in reply.text


def test_the_preview_shows_the_hit_lines_in_context(live):
    link = _previews(_search(live, q="rollback release redeploy"))[0]
    reply = live.http().get(link + "&fragment=1")
    assert reply.status == 200
    assert "<html" not in reply.text  # a fragment for the page's script
    assert "redeploy the previous image tag" in reply.text
    assert 'class="line hl"' in reply.text
    assert "## Rollout" in reply.text  # context above the hit


def test_the_editor_link_follows_the_configured_template(live, vault):
    page = _search(live, q="rollback release")
    assert f'href="vscode://file{vault}/deploy.md:' in page
    text = live.config.read_text() + 'ui:\n  editor_url: "idea://open?file={path}&line={line}"\n'
    live.config.write_text(text)
    page = _search(live, q="rollback release")
    assert html.escape(f"idea://open?file={vault}/deploy.md&line=") in page


@pytest.mark.parametrize("query", [
    {"vault": "notes", "path": "../vq.yaml"},
    {"vault": "notes", "path": "adr/../../vq.yaml"},
    {"vault": "notes", "path": "/etc/passwd"},
    {"vault": "notes", "path": "secret.md"},       # not indexed
    {"vault": "other", "path": "deploy.md"},       # not a vault
    {"vault": "notes", "path": "deploy.md", "start": "-3"},
])
def test_the_preview_serves_nothing_outside_the_indexed_files(live, query):
    reply = live.http().get("/preview?" + urlencode(query))
    assert reply.status == 404
    assert 'class="lines"' not in reply.text


def test_the_preview_follows_no_symlink_out_of_the_vault(live, vault, tmp_path):
    """An indexed folder swapped for a link to a folder outside: refused, not read."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "0001-storage.md").write_text("TOP SECRET outside the vault\n")
    shutil.rmtree(vault / "adr")
    (vault / "adr").symlink_to(outside, target_is_directory=True)
    reply = live.http().get("/preview?" + urlencode({"vault": "notes",
                                                     "path": "adr/0001-storage.md"}))
    assert reply.status == 404
    assert "TOP SECRET" not in reply.text
    assert "symlink" in reply.text


def test_vault_add_edit_remove_go_through_the_config_editor(live, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    client = live.http()
    csrf = live.ctx.csrf
    reply = client.post("/vaults/add", {"csrf": csrf, "id": "docs", "path": str(docs),
                                        "kind": "docs", "include": "*.md\n*.txt"})
    assert reply.status == 303 and reply.headers["location"].startswith("/vaults?done=")
    added = live.ctx.settings().vault("docs")
    assert added.kind == "docs" and added.include == ("*.md", "*.txt")
    page = client.get("/vaults").text
    assert 'id="vault-docs"' in page and "+*.txt" in page
    reply = client.post("/vaults/docs/edit", {"csrf": csrf, "path": str(docs), "kind": "notes",
                                              "include": "", "exclude": "drafts/**, *.tmp"})
    assert reply.status == 303
    edited = live.ctx.settings().vault("docs")
    assert (edited.kind, edited.include, edited.exclude) == ("notes", (), ("drafts/**", "*.tmp"))
    assert client.post("/vaults/docs/remove", {"csrf": csrf}).status == 303
    assert live.ctx.settings().vault("docs") is None
    assert 'id="vault-docs"' not in client.get("/vaults").text


def test_config_comments_survive_an_edit_from_the_page(live, tmp_path):
    live.config.write_text("# my vaults, by hand\n" + live.config.read_text())
    (tmp_path / "more").mkdir()
    live.http().post("/vaults/add", {"csrf": live.ctx.csrf, "id": "more",
                                     "path": str(tmp_path / "more")})
    assert live.config.read_text().startswith("# my vaults, by hand\n")


@pytest.mark.parametrize("form, words", [
    ({"id": "bad id!", "path": "{tmp}"}, "a vault id may use letters"),
    ({"id": "notes", "path": "{tmp}"}, "a vault with this id exists"),
    ({"id": "nowhere", "path": "{tmp}/missing"}, "is not a folder"),
    ({"id": "everything", "path": "/"}, "the file system root"),
    ({"id": "", "path": "{tmp}"}, "needs an id"),
])
def test_a_rejected_vault_shows_inline_and_changes_nothing(live, tmp_path, form, words):
    before = live.config.read_bytes()
    form = {k: v.replace("{tmp}", str(tmp_path)) for k, v in form.items()}
    reply = live.http().post("/vaults/add", {"csrf": live.ctx.csrf, **form})
    assert reply.status == 400
    assert words in html.unescape(reply.text)
    assert 'id="error"' in reply.text.split('id="add"')[1]  # beside the add form
    assert f'value="{html.escape(form["id"])}"' in reply.text  # what was typed stays
    assert live.config.read_bytes() == before


def test_a_rejected_edit_shows_beside_its_row_and_changes_nothing(live, tmp_path):
    before = live.config.read_bytes()
    reply = live.http().post("/vaults/notes/edit", {"csrf": live.ctx.csrf,
                                                    "path": str(tmp_path / "gone")})
    assert reply.status == 400
    row = reply.text.split('id="vault-notes"')[1].split("</tr>")[0]
    assert "is not a folder" in row and "<details class=\"edit\" open>" in row
    assert live.config.read_bytes() == before


def test_the_vaults_table_counts_files_pending_and_failing(live, vault):
    (vault / "new.md").write_text("# New\n\nNot built yet.\n")
    page = live.http().get("/vaults").text
    row = page.split('id="vault-notes"')[1].split("</tr>")[0]
    cells = re.findall(r'<td class="num">(\d+)</td>', row)
    assert cells[0] == "4"             # files indexed (the shared tree)
    assert int(cells[1]) >= 4          # chunks
    assert cells[2] == "1"             # pending: the new file
    assert "1 to index" in row


def _events(live, run: int) -> list[dict]:
    """Read the run's server-sent events until ``done`` (or the deadline)."""
    where = urlsplit(live.base)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=EVENT_DEADLINE)
    conn.request("GET", f"/builds/events?run={run}",
                 headers={"Cookie": f"vq_ui={live.ctx.session}"})
    response = conn.getresponse()
    assert response.status == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    out: list[dict] = []
    deadline = time.monotonic() + EVENT_DEADLINE
    while time.monotonic() < deadline:
        line = response.readline().decode()
        if not line:
            break
        if line.startswith("data: "):
            out.append(json.loads(line[6:]))
            if out[-1]["kind"] == "done":
                break
    conn.close()
    return out


def _build_now(live) -> int:
    reply = live.http().post("/builds/run", {"csrf": live.ctx.csrf},
                             headers={"Accept": "application/json"})
    assert reply.status == 200, reply.text
    return json.loads(reply.text)["run"]


@pytest.mark.slow
def test_build_now_streams_progress_to_completion(live, vault):
    (vault / "more.md").write_text("# More\n\nA new note about sourdough starters.\n")
    events = _events(live, _build_now(live))
    assert events[0]["kind"] == "started"
    stages = [e["stage"] for e in events if e["kind"] == "progress"]
    assert stages[0] == "discover" and len(set(stages)) >= 2  # the build's own stages, live
    done = events[-1]
    assert done["kind"] == "done" and done["outcome"] == "ok"
    assert done["summary"]["files_new"] == 1
    page = live.http().get("/builds").text
    assert page.count('<span class="badge ok">ok</span>') == 2  # the fixture's and this one
    assert "sourdough" in _search(live, q="sourdough starters", method="lexical")


@pytest.mark.slow
def test_build_now_reports_a_held_lock_as_skipped(live):
    from filelock import FileLock

    from vq.core.lock import clear_holder, write_holder

    lock_path = live.ctx.settings().build_lock
    with FileLock(str(lock_path), timeout=0):
        write_holder(lock_path)
        try:
            assert "held by pid" in live.http().get("/builds").text
            events = _events(live, _build_now(live))
        finally:
            clear_holder(lock_path)
    assert events[-1]["outcome"] == "skipped"
    assert events[-1]["summary"]["holder"].startswith("pid ")


def test_the_builds_page_lists_history_with_a_chart(live):
    page = live.http().get("/builds").text
    assert 'id="builds"' in page and '<rect class="dur ok"' in page
    assert 'class="chunks"' in page


def test_an_unknown_build_run_is_404(live):
    assert live.http().get("/builds/events?run=99").status == 404
    assert live.http().get("/builds/events?run=x").status == 404


def test_health_shows_doctor_checks_and_the_running_parts(live):
    page = live.http().get("/health").text
    for name in ("config", "index tables", "freshness", "build lock", "warm service"):
        assert f"<td>{name}</td>" in page, name
    for title in ("Resident service", "Scheduler", "Build lock", "Watcher"):
        assert f"<h2>{title}</h2>" in page
    watcher = page.split("<h2>Watcher</h2>")[1].split("</section>")[0]
    assert "not running" in watcher and "vq watch" in watcher  # doctor's own watcher check
    assert "not checked (--no-model)" in page


def test_pages_work_before_the_first_build(ui_config, tmp_path):
    from tests.ui.conftest import make_live

    write_config(ui_config, {"index_dir": str(tmp_path / "fresh-index"),
                             "model": "vq-test/hash-384", "vaults": {}})
    gen = make_live(ui_config)
    live = next(gen)
    try:
        client = live.http()
        assert "No vaults yet" in client.get("/vaults").text
        assert "No builds recorded yet" in client.get("/builds").text
        reply = client.get("/?q=anything")
        assert "next:" in reply.text  # no index: the error and its fix, not a traceback
    finally:
        gen.close()


def test_a_signal_with_a_flag_shows_its_name():
    """A chunk waiting for its vectors carries ``vectors: {pending: true}``: a bar label of
    "pending", not "pending 1"."""
    from vq.query.ui.search_page import signal_bars

    bars = signal_bars({"bm25": {"rank": 2, "score": 3.5}, "fused": {"bm25": 0.4},
                        "vectors": {"pending": True}})
    assert [(b["name"], b["detail"]) for b in bars] == [("bm25", "rank 2, score 3.5"),
                                                        ("vectors", "pending")]
    # a prior's bar is the factor it multiplied by; the matched piece's lines are no bar
    bars = signal_bars({"code": {"secondary": 0.5, "imports": 0.5},
                        "piece": {"start_line": 172, "end_line": 175}})
    assert [(b["name"], b["value"]) for b in bars] == [("code", 0.25)]
