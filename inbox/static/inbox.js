// Keyboard shortcuts for the review page; every page works without this file.
// List: j/k select an item, Enter reviews it. Item: j/k move between flagged values,
// Ctrl/Cmd+Enter resolves (unchanged values are confirmed). A focused value lights up
// its place in the document (a mark in its text, or a box on its PDF page).
(function () {
  "use strict";
  function typing(event) {
    var tag = event.target && event.target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT";
  }
  function marksOf(field) {
    return Array.prototype.filter.call(document.querySelectorAll("mark.span, rect.box"), function (mark) {
      return mark.getAttribute("data-field") === field;
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    var rows = Array.prototype.slice.call(document.querySelectorAll("tr.item-row"));
    var selected = rows.length ? 0 : -1;
    function select(index) {
      if (!rows.length) { return; }
      selected = Math.max(0, Math.min(rows.length - 1, index));
      rows.forEach(function (row, i) { row.classList.toggle("selected", i === selected); });
      rows[selected].scrollIntoView({ block: "nearest" });
    }
    if (rows.length) { select(0); }

    var fields = Array.prototype.slice.call(document.querySelectorAll(".field"));
    fields.forEach(function (box) {
      var control = box.querySelector("input, select, textarea");
      if (!control) { return; }
      control.addEventListener("focus", function () {
        marksOf(box.getAttribute("data-field")).forEach(function (mark, i) {
          mark.classList.add("active");
          if (i === 0) { mark.scrollIntoView({ block: "nearest" }); }
        });
      });
      control.addEventListener("blur", function () {
        marksOf(box.getAttribute("data-field")).forEach(function (mark) { mark.classList.remove("active"); });
      });
    });
    var flagged = fields.filter(function (box) { return box.classList.contains("flagged"); });
    var current = -1;
    function focusFlagged(step) {
      var pool = flagged.length ? flagged : fields;
      if (!pool.length) { return; }
      current = (current + step + pool.length) % pool.length;
      var control = pool[current].querySelector("input:not([disabled]), select:not([disabled]), textarea:not([disabled])");
      if (control) { control.focus(); }
    }
    var form = document.getElementById("resolve-form");

    document.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && form && document.getElementById("resolve")) {
        event.preventDefault();
        form.requestSubmit ? form.requestSubmit() : form.submit();
        return;
      }
      if (event.key === "Escape" && typing(event)) { event.target.blur(); return; }
      if (typing(event) || event.ctrlKey || event.metaKey || event.altKey) { return; }
      if (rows.length) {
        if (event.key === "j") { select(selected + 1); }
        if (event.key === "k") { select(selected - 1); }
        if (event.key === "Enter" && selected >= 0) {
          var button = rows[selected].querySelector("button.review");
          if (button) { button.click(); }
        }
      } else if (fields.length) {
        if (event.key === "j") { event.preventDefault(); focusFlagged(1); }
        if (event.key === "k") { event.preventDefault(); focusFlagged(-1); }
      }
    });
  });
})();
