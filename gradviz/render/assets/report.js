/* The report page of a trained network: the epoch slider recolours the layer picture with
   that epoch's recorded gradients; an example (or a typed input) is run through its loss
   graph by GV, the engine the expression page uses. Reads #gv-report (written by
   gradviz.render.report_page). */
(function () {
  "use strict";
  var R = JSON.parse(document.getElementById("gv-report").textContent);
  var $ = function (id) { return document.getElementById(id); };
  var fmt = function (x) { return GV.fmt(x, R.precision); };

  // -- the network by epoch ------------------------------------------------------------------
  var layers = {};
  document.querySelectorAll("#graph g.node").forEach(function (g) {
    var id = g.querySelector("title").textContent;
    var texts = Array.prototype.slice.call(g.querySelectorAll("text"));
    var find = function (re) { return texts.filter(function (t) { return re.test(t.textContent); })[0]; };
    layers[id] = { shape: g.querySelector("polygon, ellipse, path"), texts: texts,
      data: find(/^\s*data /), grad: find(/^\s*grad /), max: find(/^\s*max /), status: find(/^\s*status /) };
  });

  // A text rewritten here may be longer than the one the layout measured (a typed input's
  // many digits): squeezed into its box then, never past its border.
  function setFitted(node, t, text) {
    t.textContent = text;
    t.removeAttribute("textLength");
    if (!node.shape || !node.shape.getBBox || !t.getComputedTextLength) return; // no layout (jsdom)
    var room = node.shape.getBBox().width - 8;
    if (room > 0 && t.getComputedTextLength() > room) {
      t.setAttribute("textLength", String(room));
      t.setAttribute("lengthAdjust", "spacingAndGlyphs");
    }
  }

  // A node in a band's colours. The fill is the light theme's, as Graphviz wrote it: the
  // SVG's own style sheet (gradviz.render.themes) maps it to either theme and picks the
  // texts' ink from it. The texts keep no fill of their own: one set to a band's ink
  // ("#000000" is also the nan band's fill) would match that style sheet's rules for the
  // texts after it, white on lavender in the light theme.
  function recolour(node, look) {
    node.shape.setAttribute("fill", look.fill);
    node.texts.forEach(function (t) { t.removeAttribute("fill"); });
  }

  function showEpoch(k) {
    var frame = R.frames[k];
    if (!frame) { $("epoch-text").textContent = "no gradients recorded"; return; }
    frame.layers.forEach(function (layer) {
      var node = layers[layer.name];
      if (!node || !node.shape) return;
      var look = layer.band < 0 ? R.bad : R.bands[layer.band];
      recolour(node, look);
      if (node.grad) setFitted(node, node.grad, "grad " + layer.rms);
      if (node.max) setFitted(node, node.max, layer.max);
      if (node.status) setFitted(node, node.status, layer.status);
    });
    markEpoch(k, frame.epoch);
    $("epoch-text").textContent = (R.unit || "epoch") + " " + frame.epoch + " (" + (k + 1) + " of " +
      R.frames.length + " recorded): rms grad " + frame.layers.map(function (l) {
        return l.name + " " + l.rms;
      }).join(", ");
  }
  // the chosen epoch on the plots (gradviz.render.page_plots): a line across the curves at
  // x = a + b * epoch, the heat map's column of that recorded epoch outlined
  var curveNow = document.querySelector("svg.gvp.curves .now");
  var heatNow = document.querySelector("svg.gvp.grads .now");
  function markEpoch(k, epoch) {
    if (curveNow) {
      var ab = curveNow.getAttribute("data-x").split(" ").map(Number);
      var x = String(ab[0] + ab[1] * epoch);
      curveNow.setAttribute("x1", x);
      curveNow.setAttribute("x2", x);
    }
    if (heatNow) {
      var columns = heatNow.getAttribute("data-columns").split(",");
      var shown = heatNow.getAttribute("data-shown").split(" ").map(Number);
      var at = 0;
      shown.forEach(function (j, i) { if (j <= k) at = i; });
      var xw = columns[at].split(" ");
      heatNow.setAttribute("x", xw[0]);
      heatNow.setAttribute("width", xw[1]);
    }
  }

  var slider = $("epoch");
  slider.addEventListener("input", function () { showEpoch(parseInt(slider.value, 10)); });
  showEpoch(parseInt(slider.value, 10));

  // -- one example's loss graph --------------------------------------------------------------
  var prog = R.program, body = document.querySelector("#graph-table tbody");
  var last = null;
  if (prog.nodes) {
    prog.nodes.forEach(function (nd) { if (nd.v !== undefined) nd.v = GV.number(nd.v); });
  }

  function cell(tr, text) {
    var td = document.createElement("td");
    td.textContent = text;
    tr.appendChild(td);
  }

  function showExample(x, y, what) {
    if (!prog.nodes) { $("example-text").textContent = prog.skip; return; }
    var values = prog.nodes.map(function (nd) { return nd.v; });
    prog.x.forEach(function (i, j) { values[i] = x[j]; });
    values[prog.y] = y;
    var result = GV.run(prog.nodes, values);
    last = { x: x, y: y, data: result.data, grad: result.grad };
    window.gvExample = last; // for tests and the curious: the numbers behind the table
    // the picture's inputs, y and loss are this example's
    var root = prog.nodes.length - 1;
    if (layers.inputs && layers.inputs.texts[1]) {
      setFitted(layers.inputs, layers.inputs.texts[1], x.map(function (v, j) { return "x" + j + " " + fmt(v); }).join(", "));
    }
    if (layers.y && layers.y.data) setFitted(layers.y, layers.y.data, "data " + fmt(y));
    if (layers.y && layers.y.grad) {
      var g = result.grad[prog.y], m = Math.abs(g), k = m === 0 ? 0 : 1;
      if (m > 0) R.edges.forEach(function (edge) { if (m >= edge) k++; });
      var look = isFinite(g) ? R.bands[k] : R.bad; // the shared scale, as page.js reads it
      setFitted(layers.y, layers.y.grad, "grad " + fmt(g));
      recolour(layers.y, look);
    }
    if (layers.loss && layers.loss.data) setFitted(layers.loss, layers.loss.data, "data " + fmt(result.data[root]));
    $("example-text").textContent = what + ": loss " + fmt(result.data[root]) + " (" +
      prog.nodes.length + " nodes; data and grad ∂loss/∂node on every one)";
    body.textContent = "";
    prog.nodes.forEach(function (nd, i) {
      var tr = document.createElement("tr");
      cell(tr, String(i));
      cell(tr, nd.name);
      cell(tr, nd.at);
      cell(tr, nd.k === null ? "" : nd.op);
      cell(tr, nd.p ? nd.p.map(function (p) { return "#" + p; }).join(" ") : "");
      cell(tr, fmt(result.data[i]));
      cell(tr, fmt(result.grad[i]));
      body.appendChild(tr);
    });
  }

  var scatter = $("scatter");
  function mark(i) { // ring the example's point in the data picture
    if (!scatter) return;
    var now = $("scatter-now"), point = i === null ? null : scatter.querySelector('circle[data-i="' + i + '"]');
    now.setAttribute("cx", point ? point.getAttribute("cx") : "-20");
    now.setAttribute("cy", point ? point.getAttribute("cy") : "-20");
  }
  if (scatter) {
    scatter.addEventListener("click", function (event) {
      var i = event.target.getAttribute("data-i");
      if (i !== null) { showRow(parseInt(i, 10)); return; }
      // elsewhere: the input at that spot (pixels back to the data's scale)
      var box = scatter.getBoundingClientRect(), size = parseFloat(scatter.getAttribute("width"));
      var pad = parseFloat(scatter.getAttribute("data-pad"));
      var low = scatter.getAttribute("data-low").split(" ").map(parseFloat);
      var span = scatter.getAttribute("data-span").split(" ").map(parseFloat);
      var u = ((event.clientX - box.left) * size / box.width - pad) / (size - 2 * pad);
      var v = 1 - ((event.clientY - box.top) * size / box.height - pad) / (size - 2 * pad);
      var x = [low[0] + u * span[0], low[1] + v * span[1]].map(function (w) { return parseFloat(w.toPrecision(4)); });
      $("in-0").value = String(x[0]);
      $("in-1").value = String(x[1]);
      $("typed").requestSubmit ? $("typed").requestSubmit() : $("show-typed").click();
    });
  }

  function showRow(i) {
    mark(i);
    document.querySelectorAll("#examples tr.now").forEach(function (tr) { tr.classList.remove("now"); });
    var button = document.querySelector('#examples button[data-i="' + i + '"]');
    if (button) button.closest("tr").classList.add("now");
    var x = R.X[i].map(GV.number), y = GV.number(R.Y[i]);
    x.forEach(function (v, j) { $("in-" + j).value = String(v); });
    $("in-y").value = String(y);
    showExample(x, y, "example " + (i + 1) + " (" + x.map(fmt).join(", ") + "), target " + fmt(y));
  }

  document.querySelectorAll("#examples button.show").forEach(function (button) {
    button.addEventListener("click", function () { showRow(parseInt(button.getAttribute("data-i"), 10)); });
  });

  // (no form for a recorded run: it holds no data to run an example of)
  if ($("typed")) $("typed").addEventListener("submit", function (event) {
    event.preventDefault();
    var x = R.names.map(function (_, j) { return parseFloat($("in-" + j).value); });
    var y = parseFloat($("in-y").value);
    if (x.concat([y]).some(function (v) { return !isFinite(v); })) {
      $("example-text").textContent = "Type a finite number in every box.";
      return;
    }
    document.querySelectorAll("#examples tr.now").forEach(function (tr) { tr.classList.remove("now"); });
    mark(null);
    showExample(x, y, "input (" + x.map(fmt).join(", ") + "), target " + fmt(y));
  });

  if (R.X.length) showRow(0);
})();
