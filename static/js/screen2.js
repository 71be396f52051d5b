// Screen 2: write one caption per image. Drafts are saved on the server as they are typed,
// newest revision wins, failures are shown and retried, and the page will not close while
// anything typed is unsaved. Submit carries a key, so a retry or double click stores once.
"use strict";

(function () {
  const list = document.getElementById("items");
  const items = Array.from(list.querySelectorAll(".item"));
  const draftUrl = list.dataset.draftUrl;
  const submitUrl = list.dataset.submitUrl;
  const batchId = list.dataset.batch;
  const submitBtn = document.getElementById("submit");
  const countEl = document.getElementById("done-count");
  const watch = new Annot.Stopwatch();
  const pageStart = performance.now();
  const state = new Map(); // assignment -> {revision, saved, timer, inflight}
  let submitting = false;

  Annot.setupGuidelines(["F1"]);

  function unsaved() {
    return Array.from(state.values()).some((s) => s.revision > s.saved || s.inflight);
  }

  function refresh() {
    countEl.textContent = String(items.filter((li) => li.querySelector("textarea").value.trim()).length);
  }

  function fieldError(li, message) {
    const el = li.querySelector(".field-error");
    el.textContent = message || "";
    el.hidden = !message;
    li.classList.toggle("invalid", Boolean(message));
  }

  async function save(li) {
    const assignment = li.dataset.assignment;
    const s = state.get(assignment);
    clearTimeout(s.timer);
    if (s.revision <= s.saved) return;
    const revision = s.revision;
    const text = li.querySelector("textarea").value;
    s.inflight = true;
    Annot.status("Saving…", "");
    try {
      const body = await Annot.postJSON(draftUrl, { assignment: Number(assignment), text, revision, seconds: watch.seconds(assignment) }, {
        retries: 6,
        onRetry: () => Annot.status("Not saved yet: cannot reach the server, retrying…", "warn"),
      });
      s.saved = Math.max(s.saved, Math.min(revision, body.revision));
      s.inflight = false;
      if (!unsaved()) Annot.status("All changes saved.", "ok");
      else if (s.revision > s.saved) save(li); // typed on while this save was in flight
    } catch (err) {
      s.inflight = false;
      Annot.status("Not saved: " + err.message, "error");
      s.timer = setTimeout(() => save(li), 5000);
    }
  }

  items.forEach((li) => {
    const ta = li.querySelector("textarea");
    const assignment = li.dataset.assignment;
    const rev = Number(li.dataset.revision || 0);
    state.set(assignment, { revision: rev, saved: rev, timer: null, inflight: false });
    ta.addEventListener("focus", () => watch.focus(assignment));
    ta.addEventListener("input", () => {
      const s = state.get(assignment);
      s.revision += 1;
      fieldError(li, "");
      clearTimeout(s.timer);
      s.timer = setTimeout(() => save(li), 600);
      refresh();
    });
    ta.addEventListener("blur", () => save(li));
  });
  followFocus();

  // The current image is the one holding the focus (its text or its enlarge button): it is
  // highlighted, and Ctrl+↓/↑ move from it, wherever in the item the focus is.
  function followFocus() {
    let current = 0;
    items.forEach((li, i) => li.addEventListener("focusin", () => {
      current = i;
      items.forEach((other) => other.classList.toggle("selected", other === li));
    }));
    document.addEventListener("keydown", (e) => {
      if (!e.ctrlKey || e.altKey || e.metaKey || Annot.dialogOpen()) return;
      if (e.key === "ArrowDown") { e.preventDefault(); focusItem(current + 1); }
      if (e.key === "ArrowUp") { e.preventDefault(); focusItem(current - 1); }
    });
  }

  function focusItem(i) {
    const li = items[Math.max(0, Math.min(items.length - 1, i))];
    li.scrollIntoView({ block: "center", behavior: "smooth" });
    li.querySelector("textarea").focus({ preventScroll: true });
  }

  async function submit() {
    if (submitting) return;
    let firstEmpty = -1;
    items.forEach((li, i) => {
      const empty = !li.querySelector("textarea").value.trim();
      fieldError(li, empty ? "Write a caption for this image." : "");
      if (empty && firstEmpty < 0) firstEmpty = i;
    });
    if (firstEmpty >= 0) { focusItem(firstEmpty); Annot.status("Some images have no caption yet.", "error"); return; }
    submitting = true;
    submitBtn.disabled = true;
    try {
      await Promise.all(items.map((li) => save(li)));
      if (unsaved()) throw new Annot.HttpError(0, { message: "Some text is not saved yet; try again in a moment." });
      watch.stop();
      await Annot.submitBatch(submitUrl, batchId, { writing_seconds: (performance.now() - pageStart) / 1000 });
    } catch (err) {
      const first = Annot.markDetails(items, err, (li, d) => fieldError(li, d.message));
      if (first >= 0) focusItem(first);
      Annot.status(err.message, "error");
      submitting = false;
      submitBtn.disabled = false;
    }
  }

  submitBtn.addEventListener("click", submit);
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey && e.key === "Enter") { e.preventDefault(); submit(); }
  });
  window.addEventListener("beforeunload", (e) => {
    if (unsaved() && !submitting) { e.preventDefault(); e.returnValue = ""; }
  });

  refresh();
  const firstEmpty = items.findIndex((li) => !li.querySelector("textarea").value.trim());
  focusItem(firstEmpty === -1 ? 0 : firstEmpty);
})();
