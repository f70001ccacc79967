"""Who may use the dashboard: the token URL, the session cookie, Host, Origin, CSRF and
--read-only, each checked against a real server on a real port."""

from __future__ import annotations

from urllib.parse import urlsplit

from vq.query.ui.guard import COOKIE


def test_token_url_sets_a_strict_httponly_cookie_and_redirects_to_a_clean_url(live):
    parts = urlsplit(live.url)
    reply = live.http(cookie=False).get(f"/vaults?{parts.query}&x=1")
    assert reply.status == 303
    assert reply.headers["location"] == "/vaults?x=1"  # the token left the URL
    cookie = reply.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}={live.ctx.session};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert live.ctx.token not in cookie  # the cookie is not the URL's token
    again = live.http(cookie=False).get("/vaults?x=1",
                                        headers={"Cookie": cookie.split(";")[0]})
    assert again.status == 200 and "notes" in again.text


def test_a_bare_url_and_a_wrong_token_or_cookie_are_refused(live):
    bare = live.http(cookie=False)
    assert bare.get("/").status == 401
    assert bare.get("/static/app.js").status == 401  # even the script
    assert bare.get("/preview?vault=notes&path=deploy.md").status == 401
    assert bare.get("/?token=not-the-token").status == 403
    assert bare.get("/", headers={"Cookie": f"{COOKIE}={live.ctx.token}"}).status == 403


def test_another_host_name_is_refused_even_with_the_cookie(live):
    """DNS rebinding: a page under evil.example reaches 127.0.0.1 with its own Host."""
    port = urlsplit(live.base).port
    client = live.http()
    assert client.get("/", headers={"Host": f"evil.example:{port}"}).status == 421
    assert client.get("/", headers={"Host": f"localhost:{port}"}).status == 200
    url = urlsplit(live.url)
    assert live.http(cookie=False).get(f"/?{url.query}", headers={
        "Host": f"evil.example:{port}"}).status == 421  # no cookie handed out either


def test_a_cross_site_origin_is_refused(live):
    client = live.http()
    form = {"csrf": live.ctx.csrf, "id": "x", "path": "/tmp"}
    reply = client.post("/vaults/add", form, headers={"Origin": "http://evil.example"})
    assert reply.status == 403
    assert "x" not in _vault_ids(live)
    assert client.get("/", headers={"Origin": "null"}).status == 403


def test_a_post_without_or_with_a_wrong_csrf_token_changes_nothing(live, tmp_path):
    before = live.config.read_bytes()
    target = tmp_path / "more"
    target.mkdir()
    client = live.http()
    assert client.post("/vaults/add", {"id": "more", "path": str(target)}).status == 403
    assert client.post("/vaults/add", {"id": "more", "path": str(target),
                                       "csrf": "0" * 64}).status == 403
    assert client.post("/vaults/notes/remove", {}).status == 403
    assert client.post("/builds/run", {}).status == 403
    assert live.config.read_bytes() == before
    assert live.server.config.app.app.state.runner.current is None  # no build started
    ok = client.post("/vaults/add", {"id": "more", "path": str(target),
                                     "csrf": live.ctx.csrf})
    assert ok.status == 303
    assert "more" in _vault_ids(live)


def test_the_csrf_header_is_accepted_in_place_of_the_field(live, tmp_path):
    (tmp_path / "more").mkdir()
    reply = live.http().post("/vaults/add", {"id": "more", "path": str(tmp_path / "more")},
                             headers={"X-CSRF-Token": live.ctx.csrf})
    assert reply.status == 303


def test_other_methods_are_refused(live):
    assert live.http().request("PUT", "/vaults/add", body="").status == 405
    assert live.http().request("DELETE", "/vaults/notes/remove").status == 405


def test_read_only_refuses_every_change_and_hides_the_forms(live_read_only, tmp_path):
    live = live_read_only
    (tmp_path / "more").mkdir()
    before = live.config.read_bytes()
    client = live.http()
    for path, form in [("/vaults/add", {"id": "more", "path": str(tmp_path / "more")}),
                       ("/vaults/notes/remove", {}), ("/vaults/notes/edit", {"path": "/"}),
                       ("/builds/run", {})]:
        reply = client.post(path, {**form, "csrf": live.ctx.csrf})
        assert reply.status == 403, path
        assert "read-only" in reply.text
    assert live.config.read_bytes() == before
    page = client.get("/vaults").text
    assert "read-only" in page and 'action="/vaults/add"' not in page
    assert 'id="build-form"' not in client.get("/builds").text
    assert client.get("/?q=rollback").status == 200  # searching still works


def test_pages_carry_a_strict_content_security_policy(live):
    reply = live.http().get("/")
    assert "script-src 'self'" in reply.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in reply.headers["content-security-policy"]
    assert reply.headers["x-frame-options"] == "DENY"
    assert float(reply.headers["server-timing"].split("app;dur=")[1]) >= 0  # bench/ui.py reads it


def _vault_ids(live) -> set[str]:
    return {v.id for v in live.ctx.settings().vaults}
