(function () {
  "use strict";
  var doc = document, bar = doc.getElementById("tb");
  if (!bar) return;
  bar.hidden = false;
  function all(open) {
    var calls = doc.querySelectorAll("details.c");
    for (var i = 0; i < calls.length; i++) calls[i].open = open;
  }
  bar.addEventListener("click", function (event) {
    var button = event.target.closest("button");
    if (!button) return;
    var action = button.getAttribute("data-a");
    if (action === "open") all(true);
    else if (action === "close") all(false);
    else if (action === "err") {
      var on = doc.body.classList.toggle("only-err");
      button.setAttribute("aria-pressed", on ? "true" : "false");
    }
  });
})();
