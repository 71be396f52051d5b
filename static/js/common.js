// Shared helpers for the annotator screens: JSON posts with CSRF and retry, a status line,
// the guidelines toggle. No framework: the pages must load fast and work with a keyboard.
"use strict";

window.Annot = (function () {
  function csrfToken() {
    const m = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return m ? decodeURIComponent(m[1]) : "";
  }

  // The page's interface language: its JSON answers (error messages) are asked for in it.
  function pageLanguage() {
    return document.documentElement.lang || "en";
  }

  class HttpError extends Error {
    constructor(status, body) {
      super((body && body.message) || interpolate(gettext("The server answered %s"), [status]));
      this.status = status;
      this.body = body || {};
    }
  }

  // POST JSON. Network errors and 5xx are retried with backoff (the services are idempotent);
  // 4xx answers are final and thrown as HttpError with the server's message.
  async function postJSON(url, data, { retries = 4, onRetry } = {}) {
    let attempt = 0;
    for (;;) {
      let response;
      try {
        response = await fetch(url, {
          method: "POST",
          credentials: "same-origin",
          headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken(), "Accept": "application/json", "Accept-Language": pageLanguage() },
          body: JSON.stringify(data),
        });
      } catch (networkError) {
        response = null;
      }
      if (response && response.status < 500) {
        let body = null;
        try { body = await response.json(); } catch (e) { body = null; }
        if (response.ok) { announceLease(body); return body; }
        if (response.status === 403 && body && /CSRF|credentials/i.test(body.detail || "")) {
          throw new HttpError(403, { message: gettext("Your session has ended. Log in again in another tab, then come back: nothing you typed is lost.") });
        }
        throw new HttpError(response.status, body);
      }
      if (attempt >= retries) {
        throw new HttpError(response ? response.status : 0, { message: gettext("Cannot reach the server. Your work is kept on this page; it will be saved when the connection is back.") });
      }
      attempt += 1;
      if (onRetry) onRetry(attempt);
      await new Promise((r) => setTimeout(r, 400 * 2 ** attempt));
    }
  }

  // --- The status line in the footer -------------------------------------------------------
  // It says one thing at a time. A problem the annotator has to fix (a refused submit, a text to
  // choose, an answer the server would not save) stands until it is fixed: the news of saves
  // that follow ("Saving…", "All changes saved.") waits behind it instead of replacing it a
  // moment later. A new error always shows at once. Each problem carries the test of its being
  // fixed; the latest one not fixed is the one shown.

  let problems = []; // {text, kind, fixed: () => boolean}

  function show(text, kind) {
    const el = document.getElementById("save-status");
    if (!el) return;
    el.textContent = text || "";
    el.className = "save-status" + (kind ? " " + kind : "");
  }

  function standing() {
    problems = problems.filter((p) => !p.fixed());
    return problems[problems.length - 1] || null;
  }

  // News for the status line; it shows unless a problem still stands (an error always shows).
  function status(text, kind) {
    const p = standing();
    if (p && kind !== "error") show(p.text, p.kind);
    else show(text, kind);
  }

  // Show a problem that stands until fixed() is true; kind "error" (default) or "warn".
  function problem(text, fixed, kind = "error") {
    problems.push({ text, kind, fixed });
    show(text, kind);
  }

  // Something a problem depends on changed: a problem now fixed leaves the line, and the one
  // before it (if any is left) shows again.
  function problemsChanged() {
    const el = document.getElementById("save-status");
    const shown = el && problems.some((p) => p.text === el.textContent);
    const p = standing();
    if (p) show(p.text, p.kind);
    else if (shown) show("", "");
  }

  // The guidelines are a modal <dialog>: it opens in the middle of the view wherever the page is
  // scrolled, Escape or the same key closes it, and focus goes back where it was.
  function setupGuidelines(keys) {
    const toggle = document.getElementById("help-toggle");
    const dialog = document.getElementById("guidelines");
    function flip() {
      if (dialog.open) dialog.close();
      else if (!document.querySelector("dialog[open]")) dialog.showModal();
      toggle.setAttribute("aria-expanded", String(dialog.open));
    }
    dialog.addEventListener("close", () => toggle.setAttribute("aria-expanded", "false"));
    toggle.addEventListener("click", flip);
    document.addEventListener("keydown", (e) => {
      if (keys.includes(e.key) && !(e.target instanceof HTMLTextAreaElement && e.key === "?")) {
        e.preventDefault();
        flip();
      }
    });
  }

  // A dialog is open (guidelines, lease, enlarged image): the screen's keys wait until it closes.
  function dialogOpen() {
    return document.querySelector("dialog[open]") !== null;
  }

  // Every save answers the batch's lease after it; the page's countdown (frame.js) listens.
  function announceLease(body) {
    if (body && body.lease_expires_at) {
      document.dispatchEvent(new CustomEvent("annot:lease", { detail: body.lease_expires_at }));
    }
  }

  // Seconds each item is the current one, measured on the page.
  class Stopwatch {
    constructor() { this.totals = new Map(); this.current = null; this.since = 0; }
    focus(key) {
      this.stop();
      this.current = key;
      this.since = performance.now();
    }
    stop() {
      if (this.current !== null) {
        const t = (performance.now() - this.since) / 1000;
        this.totals.set(this.current, (this.totals.get(this.current) || 0) + t);
      }
      this.current = null;
    }
    seconds(key) {
      let t = this.totals.get(key) || 0;
      if (this.current === key) t += (performance.now() - this.since) / 1000;
      return Math.round(t * 1000) / 1000;
    }
  }

  // What every item screen's script starts from, read from the page the screen templates render: the
  // list (#items, with its batch and submit URL), its items, the submit button and the done counter,
  // a stopwatch per item, and when the page started.
  function itemPage() {
    const list = document.getElementById("items");
    return {
      list,
      items: Array.from(list.querySelectorAll(".item")),
      submitUrl: list.dataset.submitUrl,
      batchId: list.dataset.batch,
      submitBtn: document.getElementById("submit"),
      countEl: document.getElementById("done-count"),
      watch: new Stopwatch(),
      pageStart: performance.now(),
    };
  }

  // One idempotency key per batch and tab: a retry or a double click sends the same key.
  function submitKey(batchId) {
    const name = "submit-key-" + batchId;
    let key = sessionStorage.getItem(name);
    if (!key) {
      const bytes = new Uint8Array(16);
      crypto.getRandomValues(bytes);
      key = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
      sessionStorage.setItem(name, key);
    }
    return key;
  }

  function forgetSubmitKey(batchId) {
    sessionStorage.removeItem("submit-key-" + batchId);
  }

  // Submit a batch: the idempotency key plus `data`, retried longer than a save; on success the
  // key is forgotten and the page goes where the server says. Errors are thrown to the caller.
  async function submitBatch(url, batchId, data) {
    const body = await postJSON(url, Object.assign({ submit_key: submitKey(batchId) }, data), {
      retries: 6,
      onRetry: () => status(gettext("Submitting: cannot reach the server, retrying…"), "warn"),
    });
    forgetSubmitKey(batchId);
    window.location.assign(body.next);
  }

  // The index of the first item the server's error details name (-1 if none), calling
  // mark(li, detail) on each of them.
  function markDetails(items, err, mark) {
    const details = (err.body && err.body.details) || {};
    let first = -1;
    items.forEach((li, i) => {
      const d = details[li.dataset.assignment];
      if (d) { mark(li, d); if (first < 0) first = i; }
    });
    return first;
  }

  // --- A page whose batch moved on: submitted here or in another tab or window ---------------

  const SUBMITTED = gettext("This batch has already been submitted. This page is read-only now: nothing you do here is saved.");
  let locked = false;

  function isLocked() { return locked; }

  // Turn the page read-only for good: no field or button works, pending saves stop, and a
  // banner in the sticky top bar (seen wherever the page is scrolled) says why and where to go.
  function lockPage(message, href, linkText) {
    problems = [];
    problem(message, () => false);
    if (locked) return;
    locked = true;
    document.body.classList.add("locked");
    document.querySelectorAll("main textarea").forEach((ta) => { ta.readOnly = true; ta.setAttribute("aria-readonly", "true"); });
    document.querySelectorAll("main button").forEach((b) => { b.disabled = true; });
    const banner = document.createElement("div");
    banner.className = "lock-banner";
    banner.setAttribute("role", "alert");
    banner.id = "lock-banner";
    const text = document.createElement("span");
    text.textContent = message;
    banner.append(text);
    if (href) {
      const link = document.createElement("a");
      link.href = href;
      link.className = "button primary";
      link.textContent = linkText || gettext("See the submitted batch");
      banner.append(" ", link);
    }
    (document.querySelector(".topbar") || document.body).append(banner);
  }

  function batchUrl() {
    const list = document.getElementById("items");
    return list ? list.dataset.batchUrl : "";
  }

  // Locks the page when the server says the batch is submitted (409 "submitted"); true if so.
  function lockIfSubmitted(err) {
    if (err && err.status === 409 && err.body && err.body.error === "submitted") {
      lockPage(SUBMITTED, batchUrl());
      return true;
    }
    return false;
  }

  // Re-check the batch with the server when the page comes back: restored from the
  // back-forward cache (pageshow with persisted), or its tab shown again. A submitted batch
  // locks the page; otherwise onState(state) may reconcile what another tab saved.
  function watchBatch(stateUrl, onState) {
    async function check() {
      if (locked || !stateUrl) return;
      let state;
      try {
        const response = await fetch(stateUrl, { credentials: "same-origin", cache: "no-store", headers: { "Accept": "application/json", "Accept-Language": pageLanguage() } });
        if (!response.ok) return;
        state = await response.json();
      } catch (e) {
        return; // offline: the next save will tell
      }
      if (state.submitted) lockPage(SUBMITTED, state.next || batchUrl());
      else if (onState) onState(state);
    }
    window.addEventListener("pageshow", (e) => { if (e.persisted) check(); });
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") check(); });
    return check;
  }

  return {
    postJSON, status, problem, problemsChanged, setupGuidelines, dialogOpen, Stopwatch, itemPage, HttpError, submitKey, forgetSubmitKey, submitBatch, markDetails,
    lockPage, lockIfSubmitted, isLocked, watchBatch, batchUrl,
  };
})();
