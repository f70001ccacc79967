"""The dashboard in a real headless Chromium: the token handshake, search and preview,
vault edits, "Build now" with live progress, CSRF, a phone-width window, screenshots.

Set ``VQ_UI_SCREENSHOTS=1`` to write ``docs/img/ui-search.png`` and
``docs/img/ui-vaults.png`` (the README's pictures) from the screenshot test.
"""

from __future__ import annotations

import os
import time

import pytest

from tests.conftest import CODE, REPO, write_config, write_tree

pytestmark = pytest.mark.browser
WAIT = 120.0  # seconds a page may take on a loaded 2-core machine
# Read at import: the autouse fixture clears every VQ_* variable before each test.
SCREENSHOTS = os.environ.get("VQ_UI_SCREENSHOTS") == "1"


def patient(driver, timeout: float = WAIT):
    """A wait that polls through navigation: an element found on the old page goes stale
    when a click or form post swaps the document, which is a "not yet", not a failure."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, ignored_exceptions=(
        NoSuchElementException, StaleElementReferenceException))


# ChromeDriver's words for an element whose document a navigation replaced while it was
# being read, raised as a bare WebDriverException rather than a stale element
SWAPPED = "does not belong to the document"


def settled(fn):
    """``fn`` as a wait condition where a document swapped mid-read is "not yet": a form
    post's new page replaced the old one between finding ``body`` and reading its text."""
    from selenium.common.exceptions import WebDriverException

    def check(driver):
        try:
            return fn(driver)
        except WebDriverException as exc:
            if SWAPPED not in str(exc.msg or ""):
                raise
            return False
    return check


def wait_for(driver, css: str, timeout: float = WAIT, visible: bool = True):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    check = ec.visibility_of_element_located if visible else ec.presence_of_element_located
    return patient(driver, timeout).until(settled(check((By.CSS_SELECTOR, css))))


def wait_until(driver, fn, timeout: float = WAIT):
    return patient(driver, timeout).until(settled(fn))


def sign_in(browser, live) -> None:
    browser.get(live.url)
    wait_for(browser, "header.top nav")


def test_the_token_url_loads_and_a_bare_url_is_refused(browser, live):
    browser.get(live.base + "/")
    assert "no session" in browser.find_element("tag name", "body").text
    browser.get(live.url)
    wait_for(browser, "#q")
    assert "token" not in browser.current_url  # traded for the cookie, then dropped
    cookie = browser.get_cookie("vq_ui")
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    assert browser.execute_script("return document.cookie") == ""  # no script can read it
    browser.get(live.base + "/vaults")
    wait_for(browser, "#vault-notes")


def test_a_search_shows_hits_and_a_click_shows_the_preview(browser, live):
    sign_in(browser, live)
    box = wait_for(browser, "#q")
    box.send_keys("rollback release redeploy\n")
    first = wait_for(browser, "#hits .hit")
    assert "notes:deploy.md" in first.text
    assert first.find_elements("css selector", ".signal .sname")
    first.find_element("css selector", ".actions .preview-link").click()
    line = wait_for(browser, "#hits .hit .preview .line.hl")
    assert "previous image tag" in first.find_element("css selector", ".preview").text
    assert line.is_displayed()


def test_add_a_vault_edit_its_globs_and_remove_it(browser, live, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    sign_in(browser, live)
    browser.get(live.base + "/vaults")
    form = wait_for(browser, "#add-form")
    form.find_element("name", "id").send_keys("docs")
    form.find_element("name", "path").send_keys(str(docs))
    form.find_element("name", "include").send_keys("*.md")
    form.find_element("css selector", "button[type=submit]").click()
    row = wait_for(browser, "#vault-docs")
    assert "+*.md" in row.text and "not built yet" in row.text
    assert live.ctx.settings().vault("docs").include == ("*.md",)

    row.find_element("css selector", "details.edit > summary").click()
    exclude = wait_for(browser, "#vault-docs form textarea[name=exclude]")
    exclude.send_keys("drafts/**")
    browser.find_element("css selector", "#vault-docs form.vault-form button").click()
    wait_until(browser, lambda d: "−drafts/**" in d.find_element("id", "vault-docs").text)
    assert live.ctx.settings().vault("docs").exclude == ("drafts/**",)

    browser.find_element("css selector", "#vault-docs form.remove button").click()
    browser.switch_to.alert.accept()  # "Remove vault docs from the config?"
    wait_for(browser, "#done")
    assert not browser.find_elements("css selector", "#vault-docs")
    assert live.ctx.settings().vault("docs") is None


def test_a_rejected_vault_shows_inline_in_the_page(browser, live, tmp_path):
    before = live.config.read_bytes()
    sign_in(browser, live)
    browser.get(live.base + "/vaults")
    form = wait_for(browser, "#add-form")
    form.find_element("name", "id").send_keys("gone")
    form.find_element("name", "path").send_keys(str(tmp_path / "no-such-folder"))
    form.find_element("css selector", "button[type=submit]").click()
    error = wait_for(browser, "#add #error")
    assert "is not a folder" in error.text
    assert live.config.read_bytes() == before


@pytest.mark.slow
def test_build_now_shows_progress_to_completion(browser, live, vault):
    (vault / "later.md").write_text("# Later\n\nA note written after the first build.\n")
    sign_in(browser, live)
    browser.get(live.base + "/builds")
    wait_for(browser, "#build-button")
    browser.execute_script("""
        window.__stages = [];
        new MutationObserver(() => window.__stages.push(
            document.getElementById('build-stage').textContent)).observe(
            document.getElementById('build-stage'), {childList: true, characterData: true,
                                                      subtree: true});""")
    browser.find_element("id", "build-button").click()
    wait_until(browser, lambda d: d.find_element("id", "build-live")
               .get_attribute("data-state") not in (None, "", "running"))
    live_box = browser.find_element("id", "build-live")
    assert live_box.get_attribute("data-state") == "ok"
    assert browser.find_element("id", "build-stage").text.startswith("done: 5 files")
    stages = browser.execute_script("return window.__stages")
    assert any(s.startswith(("discover", "index", "encode")) for s in stages), stages
    progress = browser.find_element("id", "build-progress")
    assert progress.get_attribute("value") == progress.get_attribute("max")
    browser.refresh()
    assert len(wait_for(browser, "#builds").find_elements("css selector", "tbody tr")) == 2


def test_a_form_post_without_the_csrf_token_is_refused(browser, live, tmp_path):
    (tmp_path / "more").mkdir()
    before = live.config.read_bytes()
    sign_in(browser, live)
    browser.get(live.base + "/vaults")
    form = wait_for(browser, "#add-form")
    browser.execute_script("arguments[0].querySelector('input[name=csrf]').remove()", form)
    form.find_element("name", "id").send_keys("more")
    form.find_element("name", "path").send_keys(str(tmp_path / "more"))
    form.find_element("css selector", "button[type=submit]").click()
    wait_until(browser, lambda d: "CSRF" in d.find_element("tag name", "body").text)
    assert live.config.read_bytes() == before


@pytest.mark.parametrize("page", ["/?q=rollback+release", "/vaults", "/builds", "/health"])
def test_pages_stay_usable_at_phone_width(browser, live, page):
    sign_in(browser, live)
    browser.set_window_size(390, 844)
    browser.get(live.base + page)
    wait_for(browser, "main")
    overflow = browser.execute_script(
        "return document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, f"{page} scrolls sideways by {overflow}px at phone width"
    for link in browser.find_elements("css selector", "header.top nav a"):
        assert link.is_displayed()
    if page.startswith("/?"):
        box = browser.find_element("id", "q")
        assert box.is_displayed() and box.size["width"] >= 150
        assert browser.find_element("css selector", "#hits .hit").is_displayed()


def test_screenshots_of_the_search_and_vaults_pages(browser, ui_config, tmp_path, vault,
                                                   monkeypatch):
    """The README's pictures: a search with its preview open, and the vaults table
    (paths under the home folder show as ``~/...``; here home is the test's folder)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    from tests.ui.conftest import make_live
    from vq.core.settings import load_settings
    from vq.jobs.runner import locked_build

    code = tmp_path / "code"
    write_tree(code, CODE)
    write_config(ui_config, {"index_dir": str(tmp_path / "index"),
                             "model": "vq-test/hash-384",
                             "vaults": {"notes": {"path": str(vault), "kind": "notes"},
                                        "code": {"path": str(code), "kind": "code",
                                                 "include": ["*.py"]}}})
    (vault / "scan.pdf").write_bytes(b"%PDF-1.4 a scan that is no PDF")
    locked_build(load_settings(str(ui_config)))
    (vault / "draft.md").write_text("# Draft\n\nNot indexed yet.\n")
    folder = REPO / "docs" / "img" if SCREENSHOTS else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    gen = make_live(ui_config)
    live = next(gen)
    try:
        sign_in(browser, live)
        browser.set_window_size(1100, 900)
        browser.get(live.base + "/?q=how+do+we+roll+back+a+release")
        wait_for(browser, "#hits .hit .preview-link").click()
        wait_for(browser, "#hits .hit .preview .line.hl")
        time.sleep(0.3)  # let the preview's scroll settle before the picture (not a wait)
        assert browser.save_screenshot(str(folder / "ui-search.png"))
        browser.get(live.base + "/vaults")
        assert "~/notes" in wait_for(browser, "#vault-notes").text
        assert browser.save_screenshot(str(folder / "ui-vaults.png"))
    finally:
        gen.close()
    for name in ("ui-search.png", "ui-vaults.png"):
        png = (folder / name).read_bytes()
        assert png.startswith(b"\x89PNG") and len(png) > 10_000


@pytest.mark.model
def test_a_meaning_search_with_the_real_model(browser, built, config_file):
    """MiniLM end to end: words the note never uses still find it, and the dense bar shows
    the vectors' share."""
    from tests.ui.conftest import make_live

    gen = make_live(config_file)
    live = next(gen)
    try:
        sign_in(browser, live)
        wait_for(browser, "#q").send_keys("how can I revert a broken deployment\n")
        first = wait_for(browser, "#hits .hit")
        assert "notes:deploy.md" in first.text
        assert "hybrid" in browser.find_element("id", "meta").text
        dense = first.find_element("css selector", "rect.fill.dense")
        assert float(dense.get_attribute("width")) > 0
    finally:
        gen.close()


def test_a_code_hit_shows_numbered_source_lines(browser, ui_config, tmp_path):
    """A code hit in the page reads like `vq search`'s: the def line and the lines that
    match, numbered as in the file, a gap marked; a prose hit keeps its snippet."""
    from tests.ui.conftest import make_live
    from vq.core.settings import load_settings
    from vq.jobs.runner import locked_build

    code = tmp_path / "code"
    write_tree(code, CODE)
    write_config(ui_config, {"index_dir": str(tmp_path / "index"), "model": "vq-test/hash-384",
                             "vaults": {"code": {"path": str(code), "kind": "code"}}})
    locked_build(load_settings(str(ui_config)))
    source = (code / "src" / "retry.py").read_text().splitlines()
    head = source.index("def backoff_delays(attempts, base=0.5):") + 1
    gen = make_live(ui_config)
    live = next(gen)
    try:
        sign_in(browser, live)
        browser.get(live.base + "/?q=exponentially+yield+base&method=lexical")
        first = wait_for(browser, "#hits .hit pre.code-hit")
        rows = [(line.find_element("css selector", ".n").text, line.text)
                for line in first.find_elements("css selector", ".line")]
        assert rows[0] == (str(head), f"{head}def backoff_delays(attempts, base=0.5):")
        assert ("", "⋮") in rows, rows
        assert (str(head + 3), f"{head + 3}        yield base * 2 ** n") in rows, rows
        assert first.find_elements("css selector", "mark"), "the query terms are not marked"
    finally:
        gen.close()
