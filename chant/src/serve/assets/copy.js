// chant serve: the copy buttons of long commands, the dashboard's one script (served from
// /assets/copy.js; the pages allow no inline script). Without it each command is still
// selectable text and its button stays hidden. No library: the Clipboard API only.
"use strict";
(function () {
  var root = document.documentElement;
  if (!navigator.clipboard || !window.isSecureContext) {
    root.setAttribute("data-copy", "unavailable");
    return;
  }
  var buttons = document.querySelectorAll("button[data-copy]");
  buttons.forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(button.getAttribute("data-copy")).then(
        function () {
          button.textContent = "copied";
          setTimeout(function () { button.textContent = "copy"; }, 1500);
        },
        function () { button.textContent = "select the text to copy"; }
      );
    });
  });
  root.setAttribute("data-copy", "ready");
})();
