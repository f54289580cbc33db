// Sorting and filtering of the static site's tables (nlpbench demo --no-serve), without a server.
// Inlined into each written page by nlpbench.cli.demo; the served site sorts by query parameter instead.
(function () {
  "use strict";
  var NUMBER = /^-?\d+(\.\d+)?$/;
  function key(row, column) {
    var cell = row.cells[column];
    var text = cell ? cell.textContent.trim() : "";
    var first = text.split(/\s+/)[0];
    if (text === "" || text === "—") return null;
    return NUMBER.test(first) ? parseFloat(first) : text.toLowerCase();
  }
  function compare(a, b) {
    if (typeof a === typeof b) return a < b ? -1 : a > b ? 1 : 0;
    return typeof a === "number" ? -1 : 1;
  }
  document.querySelectorAll("table.board").forEach(function (table) {
    var body = table.tBodies[0];
    if (!body || !table.tHead) return;
    var filter = document.createElement("input");
    filter.type = "search";
    filter.className = "filter";
    filter.placeholder = "filter rows";
    filter.setAttribute("aria-label", "filter rows");
    table.parentNode.insertBefore(filter, table);
    filter.addEventListener("input", function () {
      var words = filter.value.toLowerCase();
      Array.prototype.forEach.call(body.rows, function (row) {
        row.hidden = words !== "" && row.textContent.toLowerCase().indexOf(words) < 0;
      });
    });
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, column) {
      th.addEventListener("click", function (event) {
        event.preventDefault();
        var descending = th.getAttribute("aria-sort") !== "descending";
        Array.prototype.forEach.call(heads, function (other) { other.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a, column), y = key(b, column);
          if (x === null || y === null) return (x === null) - (y === null);  // rows without a value last
          return descending ? compare(y, x) : compare(x, y);
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
})();
