// Screen 2's typing record (annotation.quality.typing): per caption, keystrokes, paste (and drop)
// events with the characters they brought, and the time of the first and last key, kept in hidden
// fields that start from the stored figures. screen2.js sends Annot.typing(li) with every draft
// save and with the submit. Nothing here blocks pasting: the server only flags, a manager decides.
"use strict";

(function () {
  // Keys that do not change the text: modifiers, navigation, function keys.
  const IGNORED = /^(Shift|Control|Alt|Meta|AltGraph|CapsLock|Tab|Escape|Arrow\w+|Home|End|PageUp|PageDown|F\d+|Insert|ContextMenu|NumLock|ScrollLock|Pause)$/;

  function field(li, name) {
    return li.querySelector(".typing-" + name);
  }

  function add(li, name, n) {
    const el = field(li, name);
    if (el) el.value = String((parseInt(el.value, 10) || 0) + n);
  }

  function keyTime(li) {
    const now = Date.now();
    const first = field(li, "first-key");
    if (first && !first.value) first.value = String(now);
    const last = field(li, "last-key");
    if (last) last.value = String(now);
  }

  function pasted(li, text) {
    add(li, "paste-count", 1);
    add(li, "pasted-chars", text ? text.length : 0);
  }

  document.querySelectorAll("#items .item").forEach((li) => {
    const area = li.querySelector("textarea");
    if (!area || !field(li, "keystrokes")) return;
    area.addEventListener("keydown", (e) => {
      if (e.ctrlKey || e.metaKey || IGNORED.test(e.key)) return;
      add(li, "keystrokes", 1);
      keyTime(li);
    });
    area.addEventListener("paste", (e) => pasted(li, e.clipboardData ? e.clipboardData.getData("text") : ""));
    area.addEventListener("drop", (e) => pasted(li, e.dataTransfer ? e.dataTransfer.getData("text") : ""));
  });

  function number(li, name) {
    const el = field(li, name);
    const value = el ? parseInt(el.value, 10) : NaN;
    return Number.isFinite(value) ? value : null;
  }

  window.Annot = window.Annot || {};
  // The figures to send for one item, or undefined where the page has no typing fields.
  window.Annot.typing = function (li) {
    if (!field(li, "keystrokes")) return undefined;
    return {
      keystrokes: number(li, "keystrokes") || 0,
      paste_count: number(li, "paste-count") || 0,
      pasted_chars: number(li, "pasted-chars") || 0,
      first_key_ms: number(li, "first-key"),
      last_key_ms: number(li, "last-key"),
    };
  };
})();
