// The live room board: follow the server's events and put each new table
// in place of the old one. The table is rendered by the server with every
// name and text escaped; nothing here builds HTML from data.
"use strict";
(function () {
  var status = document.getElementById("status");
  var events = new EventSource("/events");
  events.addEventListener("grid", function (e) {
    var old = document.getElementById("room");
    var tmpl = document.createElement("template");
    tmpl.innerHTML = e.data;
    var table = tmpl.content.getElementById("room");
    if (old && table) {
      old.replaceWith(table);
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
