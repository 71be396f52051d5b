// Screen 2: write one caption per image. Drafts are saved on the server as they are typed, one
// request per image at a time, each carrying the stored revision its text grew from: when
// another tab or window saved that image in between, the server refuses (409) and the page
// shows both texts at the image to choose from. The submit carries what the page shows, so
// exactly that is stored, or the server names the images another tab changed. A submitted
// batch (here, in another tab, or found on coming back to this page) turns the page read-only
// and says so. The page will not close while anything typed is unsaved.
"use strict";

(function () {
  const { list, items, submitUrl, batchId, submitBtn, countEl, watch, pageStart } = Annot.itemPage();
  const draftUrl = list.dataset.draftUrl;
  // assignment -> {base: stored revision the text grew from, savedText: its text, timer,
  //                inflight: the save under way (a promise), conflict: {theirs, revision} or null,
  //                dirtySince: when the first change not yet sent was typed, or null}
  const state = new Map();
  let submitting = false;
  // A draft is saved once typing pauses (SAVE_PAUSE), and while the annotator types on at least
  // every SAVE_MAX_WAIT: the server judges how a caption grew from the saves it receives
  // (annotation.quality.integrity), so a caption typed in one go must not reach it whole. One
  // second holds under 20 characters (TYPING_MIN_CHARS) even at 15 keys a second.
  const SAVE_PAUSE = 600;
  const SAVE_MAX_WAIT = 1000;
  let attempts = 0; // submits tried: what one was refused for is judged afresh by the next

  const noConflicts = () => !items.some((li) => stateOf(li).conflict);

  Annot.setupGuidelines(["F1"]);

  const textarea = (li) => li.querySelector("textarea");
  // An image the annotator reported (broken, offensive, private) may stay without a caption.
  const missing = (li) => !textarea(li).value.trim() && !li.classList.contains("reported");
  const stateOf = (li) => state.get(li.dataset.assignment);

  function unsaved() {
    return items.some((li) => {
      const s = stateOf(li);
      return s.inflight || textarea(li).value !== s.savedText;
    });
  }

  function refresh() {
    countEl.textContent = String(items.filter((li) => !missing(li)).length);
  }

  function fieldError(li, message) {
    const el = li.querySelector(".field-error");
    el.textContent = message || "";
    el.hidden = !message;
    li.classList.toggle("invalid", Boolean(message));
  }

  // --- Another tab or window saved this image: show both texts, let the annotator choose ---

  function showConflict(li, theirs, revision) {
    const s = stateOf(li);
    clearTimeout(s.timer);
    s.conflict = { theirs, revision };
    let box = li.querySelector(".conflict");
    if (!box) {
      box = document.createElement("div");
      box.className = "conflict";
      box.setAttribute("role", "group");
      const title = document.createElement("p");
      title.className = "conflict-title";
      box.append(title);
      const choices = document.createElement("div");
      choices.className = "conflict-choices";
      for (const [side, label, button] of [
        ["mine", gettext("On this page"), gettext("Keep the text of this page")],
        ["theirs", gettext("Saved from another tab or window"), gettext("Take the other text")],
      ]) {
        const col = document.createElement("div");
        col.className = "conflict-side " + side;
        const h = document.createElement("p");
        h.className = "conflict-label";
        h.textContent = label;
        const text = document.createElement("p");
        text.className = "conflict-text";
        text.lang = textarea(li).lang;
        text.dir = textarea(li).dir;
        const b = document.createElement("button");
        b.type = "button";
        b.className = "choose-" + side;
        b.textContent = button;
        b.addEventListener("click", () => resolve(li, side));
        col.append(h, text, b);
        choices.append(col);
      }
      box.append(choices);
      li.querySelector(".field-error").before(box);
    }
    const position = li.querySelector(".position").textContent;
    box.querySelector(".conflict-title").textContent =
      interpolate(gettext("%(position)s was changed in another tab or window. Which text do you keep?"), { position: position }, true);
    box.querySelector(".mine .conflict-text").textContent = textarea(li).value;
    box.querySelector(".theirs .conflict-text").textContent = theirs;
    li.classList.add("invalid", "has-conflict");
  }

  function resolve(li, side) {
    const s = stateOf(li);
    const { theirs, revision } = s.conflict;
    s.conflict = null;
    li.querySelector(".conflict").remove();
    li.classList.remove("invalid", "has-conflict");
    // Either way the page now knows the stored text and revision; "keep mine" saves over it.
    s.base = revision;
    s.savedText = theirs;
    if (side === "theirs") textarea(li).value = theirs;
    refresh();
    if (noConflicts()) Annot.status(gettext("Chosen. Submit again when you are ready."), "ok");
    else Annot.problem(gettext("Choose a text for the other images marked, too."), noConflicts, "warn");
    save(li);
  }

  // 409s: a submitted batch locks the page; another tab's text is shown at its image. True if handled.
  function handleConflict(err) {
    if (Annot.lockIfSubmitted(err)) {
      items.forEach((li) => clearTimeout(stateOf(li).timer));
      return true;
    }
    if (err.status === 409 && err.body && err.body.error === "edit_conflict") {
      const first = Annot.markDetails(items, err, (li, d) => showConflict(li, d.theirs, d.revision));
      if (first >= 0) focusItem(first);
      Annot.problem(err.message, noConflicts);
      return true;
    }
    return false;
  }

  // --- Saving ---

  async function send(li, text) {
    const s = stateOf(li);
    const assignment = li.dataset.assignment;
    Annot.status(gettext("Saving…"), "");
    try {
      const body = await Annot.postJSON(
        draftUrl,
        { assignment: Number(assignment), text, base_revision: s.base, seconds: watch.seconds(assignment), typing: Annot.typing(li) },
        { retries: 6, onRetry: () => Annot.status(gettext("Not saved yet: cannot reach the server, retrying…"), "warn") },
      );
      s.base = body.revision;
      s.savedText = text;
      return true;
    } catch (err) {
      if (handleConflict(err)) return false;
      // Stands until this image's text is saved: a later save of another image is no answer to it.
      Annot.problem(interpolate(gettext("Not saved: %s"), [err.message]), () => Annot.isLocked() || (!s.inflight && textarea(li).value === s.savedText));
      // Only what can get better by waiting is retried: the connection, the session (log in again).
      if (err.status === 0 || err.status === 403 || err.status >= 500) s.timer = setTimeout(() => save(li), 5000);
      return false;
    }
  }

  // Save after a pause in typing, or SAVE_MAX_WAIT after the first change not yet sent.
  function schedule(li) {
    const s = stateOf(li);
    const now = performance.now();
    if (s.dirtySince === null) s.dirtySince = now;
    clearTimeout(s.timer);
    s.timer = setTimeout(() => save(li), Math.max(0, Math.min(SAVE_PAUSE, s.dirtySince + SAVE_MAX_WAIT - now)));
  }

  async function save(li) {
    const s = stateOf(li);
    clearTimeout(s.timer);
    while (s.inflight) await s.inflight; // one save per image at a time: its base is always current
    if (Annot.isLocked() || s.conflict) return;
    const text = textarea(li).value;
    s.dirtySince = null; // what is typed from now on goes in the next save
    if (text === s.savedText) return;
    s.inflight = send(li, text);
    const ok = await s.inflight;
    s.inflight = null;
    if (!ok) return;
    if (!unsaved()) Annot.status(gettext("All changes saved."), "ok");
    else if (textarea(li).value !== s.savedText) schedule(li); // typed on meanwhile
  }

  items.forEach((li, i) => {
    const ta = textarea(li);
    const assignment = li.dataset.assignment;
    state.set(assignment, { base: Number(li.dataset.revision || 0), savedText: ta.value, timer: null, inflight: null, conflict: null, dirtySince: null });
    ta.addEventListener("focus", () => watch.focus(assignment));
    ta.addEventListener("input", () => {
      const s = stateOf(li);
      refresh();
      if (s.conflict) { li.querySelector(".mine .conflict-text").textContent = ta.value; return; }
      fieldError(li, "");
      Annot.problemsChanged();
      schedule(li);
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
    textarea(li).focus({ preventScroll: true });
  }

  // --- Submitting: what this page shows, per image, with the revision it grew from ---

  async function submit() {
    if (submitting || Annot.isLocked()) return;
    const attempt = ++attempts;
    const retried = () => attempts !== attempt;
    const open = items.findIndex((li) => stateOf(li).conflict);
    if (open >= 0) {
      focusItem(open);
      Annot.problem(gettext("Choose which text to keep for the images marked, then submit."), noConflicts);
      return;
    }
    let firstEmpty = -1;
    items.forEach((li, i) => {
      const empty = missing(li);
      fieldError(li, empty ? gettext("Write a caption for this image.") : "");
      if (empty && firstEmpty < 0) firstEmpty = i;
    });
    if (firstEmpty >= 0) {
      // Empty here may be written elsewhere: another tab may have saved or even submitted the batch.
      await recheck();
      if (Annot.isLocked()) return;
      const stillEmpty = items.findIndex(missing);
      if (stillEmpty >= 0) {
        // Stands until every image has its caption (or the annotator submits again): leaving the
        // field just typed in saves it, and that save's news must not cover the refusal.
        Annot.problem(gettext("Some images have no caption yet."), () => retried() || !items.some(missing));
        focusItem(stillEmpty);
      } else {
        items.forEach((li) => fieldError(li, ""));
        Annot.status(gettext("Texts saved in another tab or window were filled in. Check them, then submit again."), "warn");
      }
      return;
    }
    submitting = true;
    submitBtn.disabled = true;
    if (await submitShown(retried)) return; // stored: the page is on its way to the batch page
    submitting = false;
    submitBtn.disabled = Annot.isLocked();
  }

  // True once the server stored the batch; otherwise the reason is shown on the page.
  async function submitShown(retried) {
    try {
      await Promise.all(items.map((li) => save(li))); // surfaces another tab's changes early
      if (Annot.isLocked() || items.some((li) => stateOf(li).conflict)) return false;
      watch.stop();
      const captions = items.map((li) => ({
        assignment: Number(li.dataset.assignment),
        text: textarea(li).value,
        base_revision: stateOf(li).base,
        seconds: watch.seconds(li.dataset.assignment),
        typing: Annot.typing(li),
      }));
      await Annot.submitBatch(submitUrl, batchId, { writing_seconds: (performance.now() - pageStart) / 1000, captions });
      return true;
    } catch (err) {
      if (!handleConflict(err)) {
        const first = Annot.markDetails(items, err, (li, d) => fieldError(li, d.message));
        // Images named: it stands until each has been edited; otherwise until the next submit.
        const marked = first >= 0;
        Annot.problem(err.message, () => retried() || (marked && !items.some((li) => li.classList.contains("invalid"))));
        if (first >= 0) focusItem(first);
      }
      return false;
    }
  }

  submitBtn.addEventListener("click", submit);
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey && e.key === "Enter") { e.preventDefault(); submit(); }
  });
  window.addEventListener("beforeunload", (e) => {
    if (unsaved() && !submitting && !Annot.isLocked()) { e.preventDefault(); e.returnValue = ""; }
  });

  // Coming back to this page (Back, a restored tab, a tab shown again): what did the server get meanwhile?
  const recheck = Annot.watchBatch(list.dataset.stateUrl, (server) => {
    items.forEach((li) => {
      const d = server.drafts[li.dataset.assignment];
      const s = stateOf(li);
      if (!d || d.revision === s.base || s.inflight || s.conflict) return;
      const ta = textarea(li);
      if (d.text === ta.value) { s.base = d.revision; s.savedText = d.text; }
      else if (ta.value === s.savedText) {
        // Nothing typed here since the last save: the other tab's newer text simply shows.
        ta.value = d.text; s.base = d.revision; s.savedText = d.text;
      } else showConflict(li, d.text, d.revision);
    });
    refresh();
    Annot.problemsChanged();
  });

  document.addEventListener("annot:reported", () => { refresh(); Annot.problemsChanged(); });
  refresh();
  const firstEmpty = items.findIndex((li) => !textarea(li).value.trim());
  focusItem(firstEmpty === -1 ? 0 : firstEmpty);
})();
