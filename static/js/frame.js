// What every annotator screen shares beyond saving: the time left on the batch's lease and the
// enlarged image. Both live in the fixed footer or in a <dialog>, so they show where the
// annotator is looking. The lease end comes from the server (the page, then every save's
// answer, announced by common.js as "annot:lease"); the clock offset is measured once against
// the server's time in the page, so a wrong clock on this machine does not matter.
"use strict";

(function () {
  const lease = document.getElementById("lease");
  const leaseInfo = document.getElementById("lease-info");
  const zoom = document.getElementById("zoom");
  const zoomImg = document.getElementById("zoom-img");

  // --- Time left on the lease.
  let expiresAt = Number(lease.dataset.expires) * 1000; // server clock, ms
  const offset = Number(lease.dataset.serverNow) * 1000 - Date.now(); // server minus this machine

  function leaseText(ms) {
    if (ms <= 0) return [gettext("Time is up: submit to keep your work"), "expired"];
    // Rounded: the server's times come in whole seconds, so a fresh 30-minute lease may be a
    // second over or under; it reads "30 min".
    const minutes = Math.round(ms / 60000);
    if (ms >= 120000) return [interpolate(gettext("Time left: %(minutes)s min"), { minutes: minutes }, true), minutes <= 5 ? "low" : ""];
    const seconds = Math.floor(ms / 1000);
    const clock = Math.floor(seconds / 60) + ":" + String(seconds % 60).padStart(2, "0");
    return [interpolate(gettext("Time left: %(time)s"), { time: clock }, true), "low"];
  }

  function tick() {
    const [text, kind] = leaseText(expiresAt - (Date.now() + offset));
    if (lease.textContent !== text) lease.textContent = text;
    lease.className = "linklike lease" + (kind ? " " + kind : "");
  }

  document.addEventListener("annot:lease", (e) => {
    const t = Date.parse(e.detail);
    if (!Number.isNaN(t)) { expiresAt = t; tick(); }
  });
  lease.addEventListener("click", () => { if (!Annot.dialogOpen()) leaseInfo.showModal(); });
  tick();
  setInterval(tick, 1000);

  // --- Enlarged image: click an image, or z (Alt+Z where the focus is in a text field).
  function currentItem() {
    const active = document.activeElement;
    return (active && active.closest && active.closest(".item")) || document.querySelector(".item.selected");
  }

  function enlarge(li) {
    const img = li && li.querySelector(".thumb img");
    if (!img || Annot.dialogOpen()) return;
    zoomImg.src = img.currentSrc || img.src;
    zoomImg.alt = img.alt;
    zoom.showModal();
  }

  document.querySelectorAll(".zoom-open").forEach((btn) => {
    btn.addEventListener("click", () => enlarge(btn.closest(".item")));
  });
  // A click on the dark backdrop (outside the picture and its button) closes it too.
  zoom.addEventListener("click", (e) => { if (e.target === zoom) zoom.close(); });

  document.addEventListener("keydown", (e) => {
    const typing = e.target instanceof HTMLTextAreaElement || e.target instanceof HTMLInputElement;
    const alt = e.altKey && !e.ctrlKey && !e.metaKey && e.code === "KeyZ";
    const plain = !e.altKey && !e.ctrlKey && !e.metaKey && (e.key === "z" || e.key === "Z") && !typing;
    if (!alt && !plain) return;
    e.preventDefault();
    if (zoom.open) zoom.close();
    else enlarge(currentItem());
  });
})();
