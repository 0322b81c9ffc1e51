// Row filter for the report tables: type part of a clause, case or target to narrow the rows.
// Plain DOM, no libraries, so the report works from disk with no network.
(function () {
  "use strict";
  function apply(input) {
    var needle = input.value.trim().toLowerCase();
    var rows = document.querySelectorAll("table.filterable tbody tr");
    var shown = 0;
    rows.forEach(function (row) {
      var keep = needle === "" || row.textContent.toLowerCase().indexOf(needle) !== -1;
      row.classList.toggle("hidden", !keep);
      if (keep) { shown += 1; }
    });
    var counter = document.getElementById("shown");
    if (counter) { counter.textContent = shown + " of " + rows.length + " rows"; }
  }
  document.addEventListener("DOMContentLoaded", function () {
    var input = document.getElementById("filter");
    if (!input) { return; }
    input.addEventListener("input", function () { apply(input); });
    apply(input);
    document.body.setAttribute("data-rendered", "yes");
  });
})();
