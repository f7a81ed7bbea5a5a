// Which of the app's two documents shows the page this URL asks for, decided before any wasm
// loads: index.html holds the Lab, pages.html every other page (gradlab_route::Document), so a
// first visit to the Lab loads none of the other pages' code. Any URL of either document may
// name any page (links in certificates, course pages and SCORM packages say index.html?view=...),
// and this moves it, query and fragment kept, to the document that holds it. The rule is the
// app's own (page_route in crates/web/src/lib.rs over Route::from_pairs and EmbedOptions): a
// key's first value, trimmed; an embed shows the quiz for embed=quiz and the Lab for any other
// value, whatever `view` says; without `view`, a `bench` key asks for the bench page.
(function () {
  var params = new URLSearchParams(window.location.search);
  var first = function (key) {
    var value = params.get(key);
    return value === null ? null : value.trim();
  };
  var embed = first('embed');
  var view = first('view');
  if (view === null) view = params.has('bench') ? 'bench' : 'lab';
  var pages = ['quiz', 'certificate', 'bench', 'plan', 'gpt', 'verify'];
  var wanted = (embed !== null ? embed === 'quiz' : pages.indexOf(view) >= 0) ? 'pages.html' : 'index.html';
  var here = document.documentElement.getAttribute('data-document');
  if (here !== wanted) {
    // Read by the loader (Trunk.toml's patterns): this document's wasm is not fetched.
    window.gradlabElsewhere = true;
    window.location.replace(wanted + window.location.search + window.location.hash);
  }
})();
