// Gradient Accumulation Lab: host-page helper for course pages that are neither H5P nor Canvas.
// Include it once, mark each iframe with data-gradlab, and give the iframe's URL your page's
// origin (…&origin=https://your.site). It sizes the iframe to its content and re-emits the
// app's xAPI statements as `gradlab:xapi` DOM events on the iframe (they bubble).
(function () {
  'use strict';
  function frameFor(event) {
    var frames = document.querySelectorAll('iframe[data-gradlab]');
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].contentWindow === event.source) return frames[i];
    }
    return null;
  }
  window.addEventListener('message', function (event) {
    var frame = frameFor(event);
    if (!frame) return;
    var expected;
    try {
      expected = new URL(frame.src, window.location.href).origin;
    } catch (e) {
      return;
    }
    if (event.origin !== expected) return;
    var data = event.data || {};
    if (data.type === 'gradlab.resize' && typeof data.height === 'number') {
      frame.style.height = Math.ceil(data.height) + 'px';
    } else if (data.type === 'gradlab.xapi' && data.statement) {
      frame.dispatchEvent(new CustomEvent('gradlab:xapi', { detail: data.statement, bubbles: true }));
    }
  });
})();
