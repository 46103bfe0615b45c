// Linked highlight: hovering an entity highlights every label with the same badge (data-e).
(function () {
  function mark(e, on) {
    document.querySelectorAll('.case [data-e]').forEach(function (el) {
      if (el.getAttribute('data-e') === e && el.closest('.case') === current) { el.classList.toggle('hi', on); }
    });
  }
  var current = null;
  document.addEventListener('mouseover', function (ev) {
    var el = ev.target.closest ? ev.target.closest('[data-e]') : null;
    if (!el) { return; }
    current = el.closest('.case');
    mark(el.getAttribute('data-e'), true);
  });
  document.addEventListener('mouseout', function (ev) {
    var el = ev.target.closest ? ev.target.closest('[data-e]') : null;
    if (!el) { return; }
    mark(el.getAttribute('data-e'), false);
  });
})();
