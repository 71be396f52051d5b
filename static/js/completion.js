// Completion page: once the participant's quota is done, send them back to the study platform
// (the completion URL the project manager set) after a few seconds; the link stays for those
// whose browser does not follow.
"use strict";

(function () {
  const box = document.querySelector(".completion[data-redirect]");
  if (!box) return;
  const url = box.dataset.redirect;
  if (!/^https?:\/\//i.test(url)) return;
  const delay = Math.max(0, Number(box.dataset.delay || 5)) * 1000;
  window.setTimeout(() => window.location.assign(url), delay);
})();
