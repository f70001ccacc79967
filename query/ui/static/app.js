// vq ui: progressive enhancement only; every page works without this file.
"use strict";

const csrf = () => document.querySelector('meta[name="csrf"]').content;

// Search: "Preview" fetches the hit's lines and shows them under the hit.
function previews() {
  document.querySelectorAll(".hit .preview-link").forEach((link) => {
    link.addEventListener("click", async (event) => {
      event.preventDefault();
      const hit = link.closest(".hit");
      const pane = hit.querySelector(".preview");
      if (!pane.hidden && pane.dataset.loaded) { pane.hidden = true; return; }
      pane.hidden = false;
      pane.textContent = "Loading…";
      try {
        const response = await fetch(link.getAttribute("href") + "&fragment=1",
                                     { credentials: "same-origin" });
        pane.innerHTML = await response.text();  // server-rendered, escaped by Jinja
        pane.dataset.loaded = "1";
        const first = pane.querySelector(".line.hl");
        if (first) first.scrollIntoView({ block: "nearest" });
      } catch (err) {
        pane.textContent = "Could not load the preview: " + err;
      }
    });
  });
}

// Vaults: ask before a remove.
function confirms() {
  document.querySelectorAll("form[data-confirm]").forEach((form) => {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  });
}

// Builds: start a build, then follow its events (server-sent) until it is done.
function builds() {
  const form = document.getElementById("build-form");
  const live = document.getElementById("build-live");
  if (!live) return;
  if (form) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const button = document.getElementById("build-button");
      button.disabled = true;
      const response = await fetch("/builds/run", {
        method: "POST", credentials: "same-origin",
        headers: { "X-CSRF-Token": csrf(), "Accept": "application/json" },
      });
      if (!response.ok) {
        live.hidden = false;
        document.getElementById("build-stage").textContent =
          "refused: " + (await response.text());
        button.disabled = false;
        return;
      }
      follow((await response.json()).run);
    });
  }
  if (live.dataset.run) follow(live.dataset.run);
}

function follow(run) {
  const live = document.getElementById("build-live");
  const stage = document.getElementById("build-stage");
  const bar = document.getElementById("build-progress");
  const log = document.getElementById("build-log");
  const button = document.getElementById("build-button");
  live.hidden = false;
  live.dataset.state = "running";
  stage.textContent = "starting…";
  log.textContent = "";
  bar.removeAttribute("value");
  const source = new EventSource("/builds/events?run=" + encodeURIComponent(run));
  source.onmessage = (message) => {
    const event = JSON.parse(message.data);
    if (event.kind === "progress") {
      stage.textContent = event.stage + (event.total ? ` ${event.done} / ${event.total}` : "…");
      if (event.total) { bar.max = event.total; bar.value = event.done; }
      else bar.removeAttribute("value");
    } else if (event.kind === "line") {
      log.textContent += event.text + "\n";
    } else if (event.kind === "done") {
      source.close();
      const s = event.summary || {};
      let words = event.outcome;
      if (event.outcome === "skipped") words = "skipped: another build holds the lock" +
        (s.holder ? ` (${s.holder})` : "");
      else if (event.outcome === "ok") words = `done: ${s.files_seen ?? 0} files, ` +
        `${s.chunks_encoded ?? 0} chunks encoded`;
      stage.textContent = words;
      bar.max = 1; bar.value = 1;
      live.dataset.state = event.outcome;
      if (button) button.disabled = false;
    }
  };
  source.onerror = () => {
    if (live.dataset.state === "running") stage.textContent += " (connection lost; reload)";
    source.close();
  };
}

document.addEventListener("DOMContentLoaded", () => { previews(); confirms(); builds(); });
