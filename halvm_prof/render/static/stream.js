// What the live and fleet pages share of their event stream (each inlines this file before its
// own script): window.halvmNewest.
(function () {
  "use strict";
  // Only the newest message is drawn: a message just keeps its text, and one timer draws what
  // is newest. A page that draws slower than messages come (a busy machine, a hidden tab) then
  // falls behind by one drawing, never by a queue of them that would hold up everything else
  // the page does. `show` takes the parsed message; the result takes a message's text.
  function newest(show) {
    let pending = null;
    let drawing = false;
    function drawNewest() {
      drawing = false;
      const data = pending;
      pending = null;
      if (data !== null) show(JSON.parse(data));
    }
    return function (text) {
      pending = text;
      if (!drawing) { drawing = true; setTimeout(drawNewest, 50); }
    };
  }
  window.halvmNewest = newest;
})();
