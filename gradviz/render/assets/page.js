/* The live page: sliders for the inputs, the graph's numbers and colours, the nudge
   readout, node details on hover and focus, and the backward pass step by step.
   Reads its graph from the JSON block #gv-data (written by gradviz.render.html). */
(function () {
  "use strict";
  var G = JSON.parse(document.getElementById("gv-data").textContent);
  var P = G.precision, nodes = G.nodes, N = nodes.length;
  var $ = function (id) { return document.getElementById(id); };
  var fmt = function (x) { return GV.fmt(x, P); };
  nodes.forEach(function (nd) { if (nd.v !== undefined) nd.v = GV.number(nd.v); });

  var values = nodes.map(function (nd) { return nd.v; });
  var initial = values.slice();
  var result = GV.run(nodes, values);
  var step = G.startStep || 0, changed = false, reference = null, timer = null;

  // The graph is fitted to the page's width (page.css), never cut: the page was laid out
  // in the direction that keeps its text readable at 800 px (gradviz.output.html_page).

  // -- the picture: Graphviz's SVG, addressed by node id (each node group's <title>) ----------
  var svgNodes = {}, svgEdges = [];
  document.querySelectorAll("#graph g.node").forEach(function (g) {
    var id = g.querySelector("title").textContent;
    var shape = g.querySelector("polygon, ellipse");
    var texts = Array.prototype.slice.call(g.querySelectorAll("text"));
    svgNodes[id] = {
      g: g, shape: shape, texts: texts,
      data: texts.filter(function (t) { return /^\s*data /.test(t.textContent); })[0],
      grad: texts.filter(function (t) { return /^\s*grad /.test(t.textContent); })[0],
      look: [shape.getAttribute("fill"), shape.getAttribute("stroke"), shape.getAttribute("stroke-width")],
    };
    svgNodes[id].texts.forEach(function (t) { // the room Graphviz gave the text (padded numbers)
      t.room = t.getComputedTextLength ? t.getComputedTextLength() : 0;
    });
  });
  // Edges are emphasised by (source, target), as Diagram.with_states does: x*x's two at once.
  document.querySelectorAll("#graph g.edge").forEach(function (g) {
    var key = g.querySelector("title").textContent.replace("->", "\u2192");
    svgEdges.push({ g: g, key: key, parts: g.querySelectorAll("path, polygon") });
  });

  function band(data, grad) {
    if (!isFinite(data) || (grad !== null && !isFinite(grad))) return G.bad;
    if (grad === null) return null;
    var m = Math.abs(grad);
    if (m === 0) return G.bands[0];
    var k = 1;
    G.edges.forEach(function (edge) { if (m >= edge) k++; });
    return G.bands[k];
  }
  var written = [];
  function setText(t, text) {
    if (t.textContent === text) return;
    t.textContent = text;
    t.removeAttribute("textLength");
    written.push(t);
  }
  function fit() { // squeeze numbers wider than their box into it: all writes, then all reads
    written.forEach(function (t) {
      if (t.room && t.getComputedTextLength() > t.room) {
        t.setAttribute("textLength", String(t.room));
        t.setAttribute("lengthAdjust", "spacingAndGlyphs");
      }
    });
    written = [];
  }
  function numberText(x) { return fmt(x) + (isFinite(x) ? "" : " " + G.mark); }

  function setLook(s, fill, stroke, width, ink) {
    s.shape.setAttribute("fill", fill);
    s.shape.setAttribute("stroke", stroke);
    if (width) s.shape.setAttribute("stroke-width", width); else s.shape.removeAttribute("stroke-width");
    s.texts.forEach(function (t) { if (ink && ink !== "#000000") t.setAttribute("fill", ink); else t.removeAttribute("fill"); });
  }

  // Which nodes the current step marks, and the credit received so far (trace_frames' rules).
  function frame() {
    if (step === 0) return null;
    var states = {}, received = {}, emphasis = [];
    result.steps.forEach(function (s, i) {
      if (i >= step) return;
      var current = i === step - 1, state = current ? "current" : "done";
      states[s.node] = state;
      if (s.isOutput) received[s.node] = s.credit;
      s.contributions.forEach(function (c) { if (c.passes) received[c.parent] = c.total; });
      if (current) {
        var nd = nodes[s.node];
        if (nd.k !== null) {
          nd.p.forEach(function (p) {
            if (!nodes[p].constant) emphasis.push(nodes[p].id + "\u2192" + nd.id + "_op");
          });
          emphasis.push(nd.id + "_op\u2192" + nd.id);
        } else {
          s.sources.forEach(function (src) { emphasis.push(nd.id + "\u2192" + nodes[src.consumer].id + "_op"); });
        }
      }
    });
    return { states: states, received: received, emphasis: emphasis };
  }

  function reveal(g) { // scroll a wide graph sideways to the node of the current step
    var box = $("graph"), r = g.getBoundingClientRect(), c = box.getBoundingClientRect();
    if (r.left < c.left || r.right > c.right) box.scrollLeft += (r.left + r.right - c.left - c.right) / 2;
  }

  function paint() {
    var f = frame();
    if (f !== null && svgNodes[nodes[result.steps[step - 1].node].id]) reveal(svgNodes[nodes[result.steps[step - 1].node].id].g);
    nodes.forEach(function (nd, i) {
      var s = svgNodes[nd.id], grad = result.grad[i], data = result.data[i];
      if (f !== null) grad = f.received.hasOwnProperty(i) ? f.received[i] : null;
      if (nd.constant) grad = null; // shown by its number alone
      if (s) {
        if (s.data) setText(s.data, "data " + numberText(data));
        if (s.grad) setText(s.grad, "grad " + (grad === null ? "\u2013" : numberText(grad)));
        var b = band(data, grad), state = f === null ? null : (f.states[i] || (result.reached[i] || nd.constant ? null : "dim"));
        var fill = b ? b.fill : "#ffffff", stroke = s.look[1], width = s.look[2], ink = b ? b.ink : null;
        if (b === G.bad) { stroke = G.badBorder; width = "3"; }
        if (state) { stroke = G.states[state][0]; width = G.states[state][1]; }
        if (state === "dim") { fill = "#ffffff"; ink = G.states.dim[2]; }
        setLook(s, fill, stroke, width, ink);
        s.g.setAttribute("aria-label", nd.name + ": data " + fmt(data) + (grad === null ? "" : ", grad " + fmt(grad)));
      }
      var o = svgNodes[nd.id + "_op"];
      if (o) {
        var ostate = f === null ? null : (f.states[i] || (result.reached[i] ? null : "dim"));
        setLook(o, "#ffffff", ostate ? G.states[ostate][0] : o.look[1], ostate ? G.states[ostate][1] : o.look[2],
          ostate === "dim" ? G.states.dim[2] : null);
      }
    });
    fit();
    svgEdges.forEach(function (e) {
      var on = f !== null && f.emphasis.indexOf(e.key) >= 0;
      e.parts.forEach(function (part) {
        part.setAttribute("stroke", on ? G.states.current[0] : "#555555");
        if (part.tagName === "polygon") part.setAttribute("fill", on ? G.states.current[0] : "#555555");
        if (on) part.setAttribute("stroke-width", "2.5"); else part.removeAttribute("stroke-width");
      });
    });
  }

  // -- the inputs ---------------------------------------------------------------------
  var leaves = G.leaves;
  function leafRow(i) { return $("leaf-" + i); }

  function readout(i) {
    var out = G.out, nd = nodes[i], root = N - 1;
    if (!reference || reference.leaf !== i) return;
    var x0 = reference.values[i], x1 = values[i], dx = x1 - x0;
    var measured = result.data[root] - reference.data[root];
    var estimate = reference.grad[i] * dx;
    var lines = [
      nd.name + ": " + fmt(x0) + " \u2192 " + fmt(x1) + "   (\u0394" + nd.name + " = " + fmt(dx) + ")",
      out + ": " + fmt(reference.data[root]) + " \u2192 " + fmt(result.data[root]) + "   measured \u0394" + out + " = " + fmt(measured),
      "estimate d" + out + "/d" + nd.name + " \u00b7 \u0394" + nd.name + " = " + fmt(reference.grad[i]) + " \u00b7 " +
        (fmt(dx).charAt(0) === "-" ? "(" + fmt(dx) + ")" : fmt(dx)) + " = " + fmt(estimate),
    ];
    var gap = measured - estimate;
    lines.push(dx === 0 ? "move " + nd.name + " to compare" :
      "the linear estimate is off by " + fmt(gap) + (measured !== 0 ? " (" + fmt(Math.abs(gap / measured) * 100) + "% of the change)" : ""));
    $("nudge").textContent = lines.join("\n");
  }

  function setLeaf(i, x, from) {
    values[i] = x;
    changed = true;
    result = GV.run(nodes, values);
    var row = leafRow(i), range = row.querySelector("input[type=range]"), box = row.querySelector("input[type=number]");
    if (from !== range) {
      if (x < +range.min) range.min = String(x);
      if (x > +range.max) range.max = String(x);
      range.value = String(x);
    }
    if (from !== box) box.value = String(x);
    update(from === range);
    readout(i);
  }

  function remember(i) { // the point the nudge readout measures from
    if (reference && reference.leaf === i) return;
    reference = { leaf: i, values: values.slice(), data: result.data.slice(), grad: result.grad.slice() };
  }

  leaves.forEach(function (i) {
    var row = leafRow(i), range = row.querySelector("input[type=range]"), box = row.querySelector("input[type=number]");
    [range, box].forEach(function (control) { control.addEventListener("focus", function () { remember(i); }); });
    range.addEventListener("input", function () { remember(i); setLeaf(i, parseFloat(range.value), range); });
    box.addEventListener("input", function () {
      var x = parseFloat(box.value);
      if (isFinite(x)) { remember(i); setLeaf(i, x, box); }
    });
  });

  function leafGrads() {
    leaves.forEach(function (i) {
      leafRow(i).querySelector(".leaf-grad").textContent =
        "d" + G.out + "/d" + nodes[i].name + " = " + fmt(result.grad[i]);
    });
    $("output-value").textContent = G.out + " = " + fmt(result.data[N - 1]);
  }

  // -- steps ----------------------------------------------------------------------------
  function showStep() {
    var total = result.steps.length;
    step = Math.max(0, Math.min(step, total));
    $("step-count").textContent = step === 0 ? "before the backward pass (" + total + " steps)" : "step " + step + " of " + total;
    $("step-text").textContent = step === 0 ? G.intro :
      (!changed && G.trace ? G.trace[step - 1] : GV.stepText(G, result, result.steps[step - 1], total, G.tracePrecision));
    $("prev").disabled = step === 0;
    $("next").disabled = step === total;
  }
  $("prev").addEventListener("click", function () { stop(); step--; update(); });
  $("next").addEventListener("click", function () { stop(); step++; update(); });
  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; $("play").textContent = "Play"; }
  }
  $("play").addEventListener("click", function () {
    if (timer !== null) { stop(); return; }
    if (step >= result.steps.length) step = 0;
    $("play").textContent = "Pause";
    timer = setInterval(function () {
      step++;
      update();
      if (step >= result.steps.length) stop();
    }, 1200);
  });

  // -- details on hover and focus -------------------------------------------------------
  function detail(id) {
    var op = /_op$/.test(id), base = op ? id.slice(0, -3) : id;
    for (var i = 0; i < N; i++) if (nodes[i].id === base) break;
    if (i === N) return "";
    return op ? GV.opDetail(G, i, result) : GV.valueDetail(nodes[i], result.data[i], result.grad[i]);
  }
  function showDetail(target) {
    var g = target.closest ? target.closest("g.node, g.edge") : null;
    if (!g) return;
    var text;
    if (g.classList.contains("node")) {
      text = detail(g.querySelector("title").textContent);
    } else { // an edge into an op: that input's line of the op's detail
      var title = g.querySelector("title").textContent, m = /^(.*)->(.*)_op$/.exec(title);
      if (!m) { // from an op to its value: the op's line
        var out = /^(.*)_op->/.exec(title);
        if (out) $("detail").textContent = detail(out[1] + "_op").split("\n")[0];
        return;
      }
      for (var i = 0; i < N; i++) if (nodes[i].id === m[2]) break;
      var k = nodes[i].p.map(function (p) { return nodes[p].id; }).indexOf(m[1]);
      text = detail(m[2] + "_op").split("\n")[0];
      if (!nodes[nodes[i].p[k]].constant) text += "\n" + GV.inputLine(nodes[i], k, GV.locals(nodes[i], result.data, i));
    }
    $("detail").textContent = text;
  }
  var graph = $("graph");
  graph.addEventListener("mouseover", function (ev) { showDetail(ev.target); });
  graph.addEventListener("focusin", function (ev) { showDetail(ev.target); });
  // One Tab stop for the whole graph (a roving tabindex): arrow keys go from node to edge to
  // node, in the drawing's order, and each shows its details; Tab goes on to the inputs.
  var order = Array.prototype.slice.call(document.querySelectorAll("#graph g.node, #graph g.edge"));
  order.forEach(function (g, k) {
    g.setAttribute("tabindex", k === 0 ? "0" : "-1");
    g.setAttribute("role", "img");
    if (g.classList.contains("edge")) {
      g.setAttribute("aria-label", "edge " + g.querySelector("title").textContent.replace("->", " to "));
    }
    g.addEventListener("keydown", function (ev) {
      var move = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1, Home: -order.length, End: order.length }[ev.key];
      if (!move) return;
      ev.preventDefault();
      var next = order[Math.max(0, Math.min(order.length - 1, k + move))];
      order.forEach(function (other) { other.setAttribute("tabindex", other === next ? "0" : "-1"); });
      next.focus();
    });
  });

  // -- the state in the address, and the command that reproduces it -----------------------
  function command() {
    if (!G.expression) return "";
    var words = ["gradviz", G.command];
    if (G.expression.charAt(0) === "-") words.push("--");
    words.push(GV.quote(G.expression));
    leaves.forEach(function (i) { words.push(GV.quote(nodes[i].name + "=" + String(values[i]))); });
    return words.join(" ");
  }
  var saving = null;
  function save(later) { // a dragged slider saves at most 5 times a second (browsers throttle history updates)
    if (!later) { clearTimeout(saving); saving = null; saveNow(); return; }
    if (saving === null) saving = setTimeout(function () { saving = null; saveNow(); }, 200);
  }
  function saveNow() {
    var parts = leaves.map(function (i) { return encodeURIComponent(nodes[i].name) + "=" + encodeURIComponent(String(values[i])); });
    parts.push("step=" + step);
    try { history.replaceState(null, "", "#" + parts.join("&")); } catch (e) { /* a sandboxed frame */ }
  }
  function load() {
    var hash = location.hash.slice(1);
    if (!hash) return;
    hash.split("&").forEach(function (part) {
      var kv = part.split("="), key, value;
      try { key = decodeURIComponent(kv[0]); value = decodeURIComponent(kv.slice(1).join("=")); } catch (e) { return; }
      if (key === "step" && /^\d+$/.test(value)) { step = parseInt(value, 10); return; }
      var x = parseFloat(value);
      leaves.forEach(function (i) {
        if (nodes[i].name === key && isFinite(x) && x !== values[i]) {
          values[i] = x;
          changed = true;
          var row = leafRow(i), range = row.querySelector("input[type=range]");
          if (x < +range.min) range.min = String(x);
          if (x > +range.max) range.max = String(x);
          range.value = String(x);
          row.querySelector("input[type=number]").value = String(x);
        }
      });
    });
    result = GV.run(nodes, values);
  }
  $("copy").addEventListener("click", function () {
    var text = command(), status = $("copy-status");
    var fallback = function () {
      var area = $("command");
      var range = document.createRange();
      range.selectNodeContents(area);
      var sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      status.textContent = ok ? "copied" : "selected: press Ctrl+C to copy";
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(function () { status.textContent = "copied"; }, fallback);
    } else {
      fallback();
    }
  });
  $("reset").addEventListener("click", function () {
    leaves.forEach(function (i) { setLeaf(i, initial[i], null); });
    changed = false;
    reference = null;
    $("nudge").textContent = G.nudgeIntro;
    update();
  });

  function update(dragged) {
    showStep();
    paint();
    leafGrads();
    $("command").textContent = command();
    save(dragged);
  }
  $("reproduce").hidden = !G.expression; // a graph built in Python has no command line
  load();
  update();
  document.documentElement.classList.add("live");
})();
