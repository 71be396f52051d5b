// Screen 1: rate each English caption; keyboard-first. Ratings are saved as they are given.
"use strict";

(function () {
  const list = document.getElementById("items");
  const items = Array.from(list.querySelectorAll(".item"));
  const ratingUrl = list.dataset.ratingUrl;
  const openUrl = list.dataset.openUrl;
  const continueBtn = document.getElementById("continue");
  const countEl = document.getElementById("rated-count");
  const watch = new Annot.Stopwatch();
  const pageStart = performance.now();
  const pending = new Map(); // assignment -> value not yet saved
  let goOnWhenSaved = false;
  let current = 0;

  Annot.setupGuidelines(["?"]);

  function ratedCount() { return items.filter((li) => li.dataset.rating).length; }

  function refresh() {
    const n = ratedCount();
    countEl.textContent = String(n);
    continueBtn.disabled = n < items.length || pending.size > 0;
  }

  function select(index, scroll = true) {
    current = Math.max(0, Math.min(items.length - 1, index));
    items.forEach((li, i) => li.classList.toggle("selected", i === current));
    const li = items[current];
    watch.focus(li.dataset.assignment);
    if (scroll) li.scrollIntoView({ block: "center", behavior: "smooth" });
    li.focus({ preventScroll: true });
  }

  function show(li, value) {
    li.dataset.rating = value;
    li.querySelectorAll(".choice").forEach((b) => b.setAttribute("aria-checked", String(b.dataset.value === value)));
  }

  async function rate(li, value) {
    const assignment = li.dataset.assignment;
    show(li, value);
    li.classList.add("unsaved");
    pending.set(assignment, value);
    refresh();
    try {
      await Annot.postJSON(ratingUrl, { assignment: Number(assignment), value, seconds: watch.seconds(assignment) }, {
        onRetry: () => Annot.status("Not saved yet, retrying…", "warn"),
      });
      if (pending.get(assignment) === value) {
        pending.delete(assignment);
        li.classList.remove("unsaved");
      }
      Annot.status(pending.size ? "Saving…" : "All ratings saved.", "ok");
    } catch (err) {
      Annot.status(err.message, "error");
      if (err.status === 409) window.location.reload();
    }
    refresh();
    if (goOnWhenSaved && pending.size === 0) goOn();
  }

  function nextUnrated(from) {
    for (let k = 1; k <= items.length; k++) {
      const i = (from + k) % items.length;
      if (!items[i].dataset.rating) return i;
    }
    return Math.min(from + 1, items.length - 1);
  }

  async function goOn() {
    if (continueBtn.disabled) {
      // Everything rated, the last ratings still on their way: go on once they are saved.
      if (ratedCount() === items.length && pending.size > 0) {
        goOnWhenSaved = true;
        Annot.status("Saving the last ratings, then going on…", "");
      }
      return;
    }
    goOnWhenSaved = false;
    continueBtn.disabled = true;
    watch.stop();
    try {
      const body = await Annot.postJSON(openUrl, { rating_seconds: (performance.now() - pageStart) / 1000 });
      window.location.assign(body.next);
    } catch (err) {
      Annot.status(err.message, "error");
      refresh();
    }
  }

  items.forEach((li, i) => {
    li.addEventListener("click", (e) => {
      const btn = e.target.closest(".choice");
      if (current !== i) select(i, false);
      if (btn) rate(li, btn.dataset.value);
    });
  });

  const keyValues = { "1": "excellent", "2": "good", "3": "medium", "4": "bad", "5": "nei" };
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (keyValues[e.key]) {
      e.preventDefault();
      rate(items[current], keyValues[e.key]);
      select(nextUnrated(current));
    } else if (e.key === "ArrowDown" || e.key === "j") {
      e.preventDefault(); select(current + 1);
    } else if (e.key === "ArrowUp" || e.key === "k") {
      e.preventDefault(); select(current - 1);
    } else if (e.key === "Enter" && !(e.target instanceof HTMLButtonElement)) {
      e.preventDefault(); goOn();
    }
  });
  continueBtn.addEventListener("click", goOn);

  window.addEventListener("beforeunload", (e) => {
    if (pending.size > 0) { e.preventDefault(); e.returnValue = ""; }
  });

  const firstUnrated = items.findIndex((li) => !li.dataset.rating);
  select(firstUnrated === -1 ? 0 : firstUnrated, false);
  refresh();
})();
