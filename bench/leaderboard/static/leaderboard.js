// Sorting, filtering, "Rank by" and the suite tabs for the leaderboard tables. The tables are complete without
// this script (served ranked by mean, every suite shown); the "Model details" toggle is CSS only.
(function () {
  "use strict";
  var each = function (list, fn) { Array.prototype.forEach.call(list, fn); };

  function cellValue(row, index, numeric) {
    var raw = row.cells[index].getAttribute("data-value");
    if (raw === null) raw = row.cells[index].textContent;
    if (!numeric) return raw.trim().toLowerCase();
    var n = parseFloat(raw);
    return isNaN(n) ? null : n;
  }

  function order(table, key, sign) {  // rows by key(row): missing (null or "") always last
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a), y = key(b);
      if (x === y) return 0;
      if (x === null || x === "") return 1;
      if (y === null || y === "") return -1;
      return (x < y ? -1 : 1) * sign;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function sortBy(table, th) {
    var numeric = th.getAttribute("data-sort") === "num";
    var current = th.getAttribute("aria-sort");
    var first = th.getAttribute("data-first") || (numeric ? "descending" : "ascending");  // ranks: 1 first
    var dir = current === "descending" ? "ascending" : current === "ascending" ? "descending" : first;
    var index = Array.prototype.indexOf.call(th.parentNode.children, th);
    table.querySelectorAll("th[aria-sort]").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir);
    order(table, function (r) { return cellValue(r, index, numeric); }, dir === "ascending" ? 1 : -1);
  }

  // "Rank by: Mean | Borda": the rank cells show data-rank or data-borda-rank, rows re-sorted by it.
  function rankBy(table, how) {
    var attr = how === "borda" ? "data-borda-rank" : "data-rank";
    each(table.tBodies[0].rows, function (row) {
      var cell = row.querySelector("td.rank"), rank = row.getAttribute(attr) || "";
      cell.textContent = rank || "—";
      cell.setAttribute("data-value", rank);
      cell.classList.toggle("tied", how !== "borda" && row.hasAttribute("data-tied"));  // bands follow the mean
    });
    table.querySelectorAll("th[aria-sort]").forEach(function (h) { h.removeAttribute("aria-sort"); });
    if (how === "borda") {
      order(table, function (r) { return +r.getAttribute("data-order"); }, 1);  // ties keep the served order
      order(table, function (r) { var v = r.getAttribute(attr); return v ? +v : null; }, 1);
      table.querySelector("th.rank").setAttribute("aria-sort", "ascending");
    } else {  // the served order: by the first average
      order(table, function (r) { return +r.getAttribute("data-order"); }, 1);
      var avg = table.querySelector("th.avg");
      if (avg) avg.setAttribute("aria-sort", "descending");
    }
  }

  // MTEB's zero-shot filter: "" allow all, "known" remove unknown, "yes" only zero-shot (unknown removed too).
  function zeroShotKeeps(setting, value) {
    if (!setting) return true;
    if (value === "unknown" || !value) return false;
    return setting === "known" || value === "yes";
  }

  // Text terms, family, size class, instruction-aware only, verified only, source and "Hide reported", all at once.
  function filter(controls) {
    var table = document.getElementById(controls.getAttribute("data-for"));
    var get = function (sel) { return controls.querySelector(sel); };
    var text = get("input.filter"), family = get("select.f-family"), size = get("select.f-size");
    var aware = get("input.f-aware"), verified = get("input.f-verified");
    var source = get("select.f-source"), hideReported = get("input.f-hide-reported");
    var zeroShot = get("select.f-zero-shot"), comparable = get("input.f-comparable");
    var open = get("input.f-open");
    var terms = text ? text.value.toLowerCase().split(/\s+/).filter(Boolean) : [];
    var shown = 0, rows = table.tBodies[0].rows;
    each(rows, function (row) {
      var words = row.textContent.toLowerCase();
      var keep = terms.every(function (t) { return words.indexOf(t) !== -1; }) &&
        (!family || !family.value || row.getAttribute("data-family") === family.value) &&
        (!size || !size.value || row.getAttribute("data-size") === size.value) &&
        (!aware || !aware.checked || row.getAttribute("data-aware") === "true") &&
        (!verified || !verified.checked || row.getAttribute("data-verification") === "verified") &&
        (!source || !source.value || row.getAttribute("data-source") === source.value) &&
        (!hideReported || !hideReported.checked || row.getAttribute("data-source") !== "reported") &&
        zeroShotKeeps(zeroShot ? zeroShot.value : "", row.getAttribute("data-zero-shot")) &&
        (!comparable || !comparable.checked || row.getAttribute("data-comparable") !== "false") &&
        (!open || !open.checked || row.getAttribute("data-open") === "true");
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
  document.querySelectorAll(".controls[data-for]").forEach(function (controls) {
    var table = document.getElementById(controls.getAttribute("data-for"));
    each(controls.querySelectorAll(".js-only"), function (el) { el.hidden = false; });
    each(controls.querySelectorAll("details.filters"), function (el) {  // open beside the table; a phone keeps the table near the top
      el.open = window.matchMedia("(min-width: 769px)").matches;
    });
    each(controls.querySelectorAll("input.filter, select, input.f-aware, input.f-verified, input.f-hide-reported, input.f-comparable, input.f-open"), function (el) {
      el.addEventListener(el.type === "search" ? "input" : "change", function () { filter(controls); });
    });
    each(controls.querySelectorAll(".rank-by input"), function (radio) {
      radio.addEventListener("change", function () { if (radio.checked) rankBy(table, radio.value); });
    });
    filter(controls);
  });

  // One suite at a time (a board of every suite is megabytes of rows): the tab the address names (#suite-x, or
  // any element inside that suite, such as a table), else the first; the other suites' sections are hidden.
  var suites = document.querySelectorAll("section.suite");
  var tabs = document.querySelectorAll("nav.suites a[data-suite]");
  function showSuite() {
    var target = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
    var inside = target && target.closest ? target.closest("section.suite") : null;
    var current = document.querySelector("section.suite:not([hidden])");
    var shown = inside || (target ? current : null) || suites[0];
    each(suites, function (s) { s.hidden = s !== shown; });
    each(tabs, function (a) {
      if ("suite-" + a.getAttribute("data-suite") === shown.id) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    });
  }
  if (suites.length > 1) {
    window.addEventListener("hashchange", showSuite);
    showSuite();
  }
})();
