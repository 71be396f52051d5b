// The top bar's interface-language selector: the choice applies as soon as it is made (the
// form's own button stays for browsers without scripts).
"use strict";

(function () {
  const select = document.getElementById("interface-language");
  if (!select) return;
  const apply = select.form.querySelector(".language-apply");
  if (apply) apply.hidden = true;
  select.addEventListener("change", () => select.form.requestSubmit());
})();
