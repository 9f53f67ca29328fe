// The live room board: follow the server's events and put each new table,
// and the room at a glance that follows it, in place of the old ones. Both
// are rendered by the server with every name and text escaped; nothing
// here builds HTML from data.
"use strict";
(function () {
  var status = document.getElementById("status");
  var events = new EventSource("/events");
  events.addEventListener("grid", function (e) {
    var tmpl = document.createElement("template");
    tmpl.innerHTML = e.data;
    ["glance", "room"].forEach(function (id) {
      var old = document.getElementById(id);
      var next = tmpl.content.getElementById(id);
      if (old && next) {
        old.replaceWith(next);
      }
    });
    var table = document.getElementById("room");
    if (table) {
      var rows = table.querySelectorAll("tbody tr").length;
      document.querySelector("h1").textContent =
        "Room · " + rows + " participants · " + table.querySelectorAll("thead th[data-kata]").length + " katas";
      document.title = "Room · " + rows + " participants";
    }
    status.textContent = "live · updated " + new Date().toLocaleTimeString();
  });
  events.onerror = function () {
    status.textContent = "connection lost: retrying…";
  };
})();
