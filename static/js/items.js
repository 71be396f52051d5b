// Item lists where each item gets one point of a scale: screen 1 ratings, side-by-side
// judgments, verification ratings. Keyboard-first. Everything comes from the page: the list's
// data attributes (save and submit URLs, the field the choice is sent as, the name of the
// seconds field), and each button's stored value and key, rendered from core.scales, so this
// script holds no scale of its own. Each choice is saved as it is given; Enter submits (on
// screen 1: goes on to writing) once every item has its answer, or once the last answers are
// saved. The submit carries a key kept in sessionStorage, so a retry or double press stores
// one result. The page knows only the choice as seen: never a system or a side.
//
// The current item and the keyboard focus are one thing: the keys act on the item that holds
// the focus (Tab onto a button of image 3, press 2: image 3 is rated), and moving the current
// item moves the focus. A click or a tap on a point does what its key does, moving on too.
//
// The current item is always one the annotator can see: scrolled away from it (wheel, touch,
// scroll bar), the selection follows to the item most in view, so a key never rates an image
// out of sight. A key that still finds the selection out of view (pressed before the page
// caught up) only brings the selection into view and says so. The script's own smooth scrolls
// (to the next open item) are not followed: they are taking the view to the selection.
"use strict";

(function () {
  const { list, items, submitUrl, batchId, submitBtn, countEl, watch, pageStart } = Annot.itemPage();
  const saveUrl = list.dataset.saveUrl;
  const field = list.dataset.field;
  const secondsField = list.dataset.secondsField || "seconds";
  const pending = new Map(); // assignment -> value not yet saved
  let submitWhenSaved = false;
  let current = 0;
  let submitting = false;
  let attempts = 0; // submits tried: what one was refused for is judged afresh by the next
  let autoScroll = false; // a smooth scroll started here is taking the view to the selection
  let autoScrollTimer = null;

  Annot.setupGuidelines(["?"]);

  function doneCount() { return items.filter((li) => li.dataset.value).length; }

  function refresh() {
    const n = doneCount();
    countEl.textContent = String(n);
    submitBtn.disabled = submitting || n < items.length || pending.size > 0;
  }

  function select(index, scroll = true, takeFocus = true) {
    current = Math.max(0, Math.min(items.length - 1, index));
    items.forEach((li, i) => li.classList.toggle("selected", i === current));
    const li = items[current];
    watch.focus(li.dataset.assignment);
    if (scroll) scrollTo(li);
    // Focus already inside this item (a button tabbed to or clicked) stays where it is.
    if (takeFocus && !li.contains(document.activeElement)) li.focus({ preventScroll: true });
  }

  // --- What is on screen: the band between the sticky top bar and the fixed footer. ---

  function band() {
    const bar = document.querySelector(".topbar");
    const footer = document.querySelector(".footer-actions");
    const top = bar ? Math.max(0, bar.getBoundingClientRect().bottom) : 0;
    const bottom = footer ? Math.min(window.innerHeight, footer.getBoundingClientRect().top) : window.innerHeight;
    return { top, bottom: Math.max(bottom, top + 1) };
  }

  // How much of an element the annotator sees: 1 for all of it, or a whole band of a taller one.
  function shareInView(el, b) {
    const r = el.getBoundingClientRect();
    const seen = Math.max(0, Math.min(r.bottom, b.bottom) - Math.max(r.top, b.top));
    return r.height > 0 ? seen / Math.min(r.height, b.bottom - b.top) : 0;
  }

  // The selection is in view when half of its item shows, or when the focus inside it (a button
  // tabbed to, which the browser scrolls only just into view) shows whole.
  function selectionInView() {
    const li = items[current];
    const b = band();
    const active = document.activeElement;
    if (active !== li && li.contains(active) && shareInView(active, b) >= 1) return true;
    return shareInView(li, b) >= 0.5;
  }

  // The item most in view (the first of equals, in reading order).
  function itemInView() {
    const b = band();
    let best = current;
    let bestShare = -1;
    items.forEach((li, i) => {
      const share = shareInView(li, b);
      if (share > bestShare + 0.01) { best = i; bestShare = share; }
    });
    return best;
  }

  // Select the item in view if the selection is not; the focus follows where it was on an item
  // (or nowhere), never out of the top bar. True if the selection moved.
  function followView() {
    if (autoScroll || selectionInView()) return false;
    const i = itemInView();
    if (i === current) return false;
    const active = document.activeElement;
    select(i, false, !active || active === document.body || list.contains(active));
    return true;
  }

  function endAutoScroll() {
    clearTimeout(autoScrollTimer);
    autoScroll = false;
  }

  // Ends our smooth scroll 2.5 s after its last scroll event: a scroll that had nowhere to go (it
  // fires no scrollend) and browsers without scrollend. Not sooner: on a busy machine a smooth scroll
  // can pause for over a second between frames, and ending it mid-way would move the selection to
  // the image the view has reached so far, so that keys pressed in quick succession answered nothing.
  // (The annotator's own wheel or touch ends it at once; see below.)
  function armAutoScrollTimer() {
    clearTimeout(autoScrollTimer);
    autoScrollTimer = setTimeout(() => { endAutoScroll(); followView(); }, 2500);
  }

  function scrollTo(li) {
    autoScroll = true;
    armAutoScrollTimer();
    li.scrollIntoView({ block: "center", behavior: "smooth" });
  }

  let followPending = false;
  window.addEventListener("scroll", () => {
    if (autoScroll) { armAutoScrollTimer(); return; }
    if (followPending) return;
    followPending = true;
    requestAnimationFrame(() => { followPending = false; followView(); });
  }, { passive: true });
  // A scrollend queued by the previous smooth scroll may arrive just after the next one started
  // (keys pressed in quick succession): only the selection in view says the page got there.
  window.addEventListener("scrollend", () => { if (autoScroll && selectionInView()) { endAutoScroll(); followView(); } });
  // The annotator scrolling takes over from a smooth scroll of ours.
  for (const type of ["wheel", "touchstart"]) window.addEventListener(type, endAutoScroll, { passive: true });
  window.addEventListener("resize", () => followView());

  function show(li, value) {
    li.dataset.value = value;
    li.classList.remove("invalid");
    li.querySelectorAll(".choice").forEach((b) => b.setAttribute("aria-checked", String(b.dataset.value === value)));
  }

  async function choose(li, value) {
    if (Annot.isLocked()) return;
    const assignment = li.dataset.assignment;
    show(li, value);
    li.classList.add("unsaved");
    pending.set(assignment, value);
    refresh();
    const body = { assignment: Number(assignment), seconds: watch.seconds(assignment) };
    body[field] = value;
    try {
      await Annot.postJSON(saveUrl, body, { onRetry: () => Annot.status(gettext("Not saved yet, retrying…"), "warn") });
      if (pending.get(assignment) === value) {
        pending.delete(assignment);
        li.classList.remove("unsaved");
      }
      Annot.status(pending.size ? gettext("Saving…") : gettext("All saved."), "ok");
    } catch (err) {
      // The batch moved on (submitted, or screen 2 opened, maybe in another tab): say so and stop.
      if (Annot.lockIfSubmitted(err)) return;
      if (err.status === 409) { Annot.lockPage(err.message, Annot.batchUrl(), gettext("Go to the batch")); return; }
      // Stands until this image's answer is saved (or changed): other images' saves do not answer it.
      Annot.problem(interpolate(gettext("Not saved: %s"), [err.message]), () => pending.get(assignment) !== value);
    }
    refresh();
    if (submitWhenSaved && pending.size === 0) submit();
  }

  function nextOpen(from) {
    for (let k = 1; k <= items.length; k++) {
      const i = (from + k) % items.length;
      if (!items[i].dataset.value) return i;
    }
    return Math.min(from + 1, items.length - 1);
  }

  async function submit() {
    if (submitBtn.disabled) {
      // Everything judged, the last answers still on their way: submit once they are saved.
      if (!submitting && doneCount() === items.length && pending.size > 0) {
        submitWhenSaved = true;
        Annot.status(gettext("Saving the last answers, then going on…"), "");
      }
      return;
    }
    submitWhenSaved = false;
    submitting = true;
    const attempt = ++attempts;
    refresh();
    watch.stop();
    try {
      const data = {};
      data[secondsField] = (performance.now() - pageStart) / 1000;
      // What this page shows: a choice changed in another tab since is refused, not stored unseen.
      data.shown = Object.fromEntries(items.map((li) => [li.dataset.assignment, li.dataset.value]));
      await Annot.submitBatch(submitUrl, batchId, data);
    } catch (err) {
      if (Annot.lockIfSubmitted(err)) return;
      // Another tab's choice is what is stored: the page shows it, marked, until submitted again.
      const first = Annot.markDetails(items, err, (li, d) => {
        if (d.theirs) show(li, d.theirs);
        li.classList.add("invalid");
      });
      if (first >= 0) select(first);
      // Images named: it stands until each has its answer again; otherwise until the next submit.
      Annot.problem(err.message, () => attempts !== attempt || (first >= 0 && !items.some((li) => li.classList.contains("invalid"))));
      submitting = false;
      refresh();
    }
  }

  // Give an item its answer and move on to the next open one: the same for a key, a click, a tap.
  function answer(li, value) {
    choose(li, value);
    select(nextOpen(items.indexOf(li)));
  }

  items.forEach((li, i) => {
    // Focus entering an item (Tab, click, a screen reader) makes it the current one.
    li.addEventListener("focusin", () => { if (current !== i) select(i, false); });
    li.addEventListener("click", (e) => {
      const btn = e.target.closest(".choice");
      if (current !== i) select(i, false);
      if (btn) answer(li, btn.dataset.value);
    });
  });

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || Annot.dialogOpen()) return;
    const btn = items[current].querySelector('.choice[data-key="' + CSS.escape(e.key) + '"]');
    if (btn && followView()) {
      // Pressed before the selection caught up with the scrolling: the annotator may not have
      // seen which image it meant, so nothing is answered this time.
      e.preventDefault();
      const position = items[current].querySelector(".position").textContent;
      Annot.status(interpolate(gettext("Nothing changed: the selected image was out of view. %(image)s is selected now; press the key again."), { image: position }, true), "warn");
    } else if (btn) {
      e.preventDefault();
      answer(items[current], btn.dataset.value);
    } else if (e.key === "ArrowDown" || e.key === "j") {
      e.preventDefault(); followView(); select(current + 1);
    } else if (e.key === "ArrowUp" || e.key === "k") {
      e.preventDefault(); followView(); select(current - 1);
    } else if (e.key === "Enter" && !(e.target instanceof HTMLButtonElement)) {
      e.preventDefault(); submit();
    }
  });
  submitBtn.addEventListener("click", submit);

  window.addEventListener("beforeunload", (e) => {
    if (pending.size > 0 && !Annot.isLocked()) { e.preventDefault(); e.returnValue = ""; }
  });

  Annot.watchBatch(list.dataset.stateUrl);

  const firstOpen = items.findIndex((li) => !li.dataset.value);
  select(firstOpen === -1 ? 0 : firstOpen, false);
  // Coming back to a batch half done: the first open item is brought into view, not left below.
  if (!selectionInView()) scrollTo(items[current]);
  refresh();
})();
