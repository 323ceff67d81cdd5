// The widget manager (@jupyter-widgets/html-manager 1.x) typesets widget labels with
// MathJax 2's MathJax.Hub.Queue. The book loads MathJax 3, which has no Hub: forward
// those calls to MathJax 3's typesetPromise instead of failing.
(function () {
  var mathjax = window.MathJax;
  if (mathjax && !mathjax.Hub) {
    mathjax.Hub = {
      Queue: function () {
        if (mathjax.typesetPromise) {
          mathjax.typesetPromise();
        }
      },
    };
  }
})();
