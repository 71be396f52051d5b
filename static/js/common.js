// Shared helpers for the annotator screens: JSON posts with CSRF and retry, a status line,
// the guidelines toggle. No framework: the pages must load fast and work with a keyboard.
"use strict";

window.Annot = (function () {
  function csrfToken() {
    const m = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return m ? decodeURIComponent(m[1]) : "";
  }

  class HttpError extends Error {
    constructor(status, body) {
      super((body && body.message) || ("The server answered " + status));
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
          headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken(), "Accept": "application/json" },
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
          throw new HttpError(403, { message: "Your session has ended. Log in again in another tab, then come back: nothing you typed is lost." });
        }
        throw new HttpError(response.status, body);
      }
      if (attempt >= retries) {
        throw new HttpError(response ? response.status : 0, { message: "Cannot reach the server. Your work is kept on this page; it will be saved when the connection is back." });
      }
      attempt += 1;
      if (onRetry) onRetry(attempt);
      await new Promise((r) => setTimeout(r, 400 * 2 ** attempt));
    }
  }

  function status(text, kind) {
    const el = document.getElementById("save-status");
    if (!el) return;
    el.textContent = text || "";
    el.className = "save-status" + (kind ? " " + kind : "");
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
      onRetry: () => status("Submitting: cannot reach the server, retrying…", "warn"),
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

  return { postJSON, status, setupGuidelines, dialogOpen, Stopwatch, HttpError, submitKey, forgetSubmitKey, submitBatch, markDetails };
})();
