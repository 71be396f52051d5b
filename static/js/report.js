// "Report a problem with this image": a button under each image opens one dialog; the report is
// posted for that image's assignment. Reporting twice changes nothing on the server. The texts
// come translated from the page (data-* of the dialog): this script has none of its own.
"use strict";

(function () {
  const dialog = document.getElementById("report-dialog");
  if (!dialog) return;
  const form = document.getElementById("report-form");
  const error = document.getElementById("report-error");
  let button = null;

  document.querySelectorAll(".report-open").forEach((btn) => {
    btn.addEventListener("click", () => {
      button = btn;
      form.reset();
      error.hidden = true;
      dialog.showModal();
    });
  });

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const reason = form.querySelector("input[name=reason]:checked");
    if (!reason || !button) return;
    try {
      const body = await Annot.postJSON(dialog.dataset.url, {
        assignment: Number(button.dataset.assignment),
        reason: reason.value,
        note: form.elements.note.value,
      });
      dialog.close();
      button.textContent = dialog.dataset.done;
      button.disabled = true;
      button.closest(".item").classList.add("reported");
      document.dispatchEvent(new CustomEvent("annot:reported"));
      Annot.status(body.message, "ok");
    } catch (err) {
      error.textContent = dialog.dataset.failed + " " + err.message;
      error.hidden = false;
    }
  });
})();
