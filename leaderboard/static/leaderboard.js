// Sorting and filtering for the leaderboard tables. The tables are complete without this script.
(function () {
  "use strict";

  function cellValue(row, index, numeric) {
    var raw = row.cells[index].getAttribute("data-value");
    if (raw === null) raw = row.cells[index].textContent;
    if (!numeric) return raw.trim().toLowerCase();
    var n = parseFloat(raw);
    return isNaN(n) ? null : n;
  }

  function sortBy(table, th) {
    var numeric = th.getAttribute("data-sort") === "num";
    var current = th.getAttribute("aria-sort");
    var first = th.getAttribute("data-first") || (numeric ? "descending" : "ascending");  // ranks: 1 first
    var dir = current === "descending" ? "ascending" : current === "ascending" ? "descending" : first;
    var index = Array.prototype.indexOf.call(th.parentNode.children, th);
    table.querySelectorAll("th[aria-sort]").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir);
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var sign = dir === "ascending" ? 1 : -1;
    rows.sort(function (a, b) {
      var x = cellValue(a, index, numeric), y = cellValue(b, index, numeric);
      if (x === y) return 0;
      if (x === null || x === "") return 1;   // missing scores always last
      if (y === null || y === "") return -1;
      return (x < y ? -1 : 1) * sign;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function filter(input) {
    var table = document.getElementById(input.getAttribute("data-table"));
    var terms = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0, rows = table.tBodies[0].rows;
    Array.prototype.forEach.call(rows, function (row) {
      var text = row.textContent.toLowerCase();
      var keep = terms.every(function (t) { return text.indexOf(t) !== -1; });
      row.hidden = !keep;
      if (keep) shown += 1;
    });
    var count = document.querySelector('[data-count-for="' + table.id + '"]');
    if (count) count.textContent = shown + " of " + rows.length + " shown";
  }

  document.querySelectorAll("table.lb").forEach(function (table) {
    table.querySelectorAll("th[data-sort]").forEach(function (th) {
      var button = th.querySelector("button") || th;
      button.addEventListener("click", function () { sortBy(table, th); });
    });
  });
  document.querySelectorAll("input.filter").forEach(function (input) {
    input.addEventListener("input", function () { filter(input); });
    filter(input);
  });
})();
