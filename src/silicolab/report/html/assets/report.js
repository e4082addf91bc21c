// silicolab report: search inside lists and open the fold a link points to. No network.
(function () {
  "use strict";
  document.querySelectorAll(".searchable").forEach(function (box) {
    var input = box.querySelector("input.search");
    var count = box.querySelector(".count");
    var items = Array.prototype.slice.call(box.querySelectorAll(".items > details"));
    function update() {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      items.forEach(function (item) {
        var text = (item.getAttribute("data-search") || item.textContent).toLowerCase();
        var hit = words.every(function (w) { return text.indexOf(w) >= 0; });
        item.classList.toggle("hidden", !hit);
        if (hit) { shown += 1; }
      });
      count.textContent = shown + " of " + items.length;
    }
    input.addEventListener("input", update);
    update();
  });
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var node = id && document.getElementById(id);
    while (node) {
      if (node.tagName === "DETAILS") { node.open = true; }
      node = node.parentElement;
    }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
