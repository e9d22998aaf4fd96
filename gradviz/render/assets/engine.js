/* gradviz's engine in the page: the forward pass, the backward pass and its trace, and the
   number formats, so a moved slider gives the numbers the Python engine gives.
   OPS (generated from gradviz.render.html.JS_OPS: each op table row's own expressions) is
   put in front of this file; they call the helpers below (gradviz.ops.JS_HELPERS), each
   the same IEEE operations as gradviz.ops's helper of that name. Numbers follow numpy's scalar float64 semantics: the same
   IEEE operations in the same order; exp, log, tanh, sin, cos and pow with an exponent
   other than -1, 0, 0.5, 1, 2 go through the platform's Math (tests/test_html_parity.py
   measures how many ulps that can differ). */
var GV = (function () {
  "use strict";
  var OPS = GV_OPS;

  // numpy's power takes exact shortcuts for these exponents (gradviz.engine._POWER_SHORTCUTS).
  function pow(a, b) {
    if (b === 2) return a * a;
    if (b === 1) return a;
    if (b === 0) return 1;
    if (b === -1) return 1 / a;
    if (b === 0.5) return Math.sqrt(a);
    // IEEE pow (and numpy): 1 ** anything is 1 (NaN too), (-1) ** ±inf is 1; Math.pow says NaN
    if (a === 1 || (a === -1 && (b === Infinity || b === -Infinity))) return 1;
    return Math.pow(a, b);
  }
  function sigmoid(a) {
    var e = Math.exp(-Math.abs(a)); // never a positive exponent (engine._sigmoid)
    return a >= 0 ? 1 / (1 + e) : e / (1 + e);
  }
  function sign(a) { return a > 0 ? 1 : a < 0 ? -1 : a === 0 ? 0 : a; }
  function step(a) { return a > 0 ? 1 : a <= 0 ? 0 : a; } // NaN passed through
  function relu(a) { return a > 0 ? a : a <= 0 ? 0 : a; }
  function div(a, b) { return a / b; } // IEEE at b = 0, as gradviz.ops.div
  function where(c, x, y) { return c ? x : y; }
  var exp = Math.exp, log = Math.log, log1p = Math.log1p, expm1 = Math.expm1, tanh = Math.tanh;
  var sin = Math.sin, cos = Math.cos, sqrt = Math.sqrt, abs = Math.abs;
  var inf = Infinity, nan = NaN;

  function number(v) { // JSON carries nan and infinities as strings (gradviz.numbers)
    if (v === "nan") return NaN;
    if (v === "inf") return Infinity;
    if (v === "-inf") return -Infinity;
    return v;
  }

  // -- running the graph --------------------------------------------------------------

  function forward(nodes, leaves) {
    var data = new Array(nodes.length);
    for (var i = 0; i < nodes.length; i++) {
      var nd = nodes[i];
      if (nd.k === null) { data[i] = leaves[i]; continue; }
      var p = nd.p, op = OPS[nd.k];
      data[i] = op.f(data[p[0]], p.length === 2 ? data[p[1]] : 0, nd.n);
    }
    return data;
  }

  function locals(nd, data, i) {
    var p = nd.p;
    return OPS[nd.k].d(data[i], data[p[0]], p.length === 2 ? data[p[1]] : 0, nd.n);
  }

  // engine.backpropagate with trace.trace's observer: the same additions in the same order.
  function run(nodes, leaves) {
    var n = nodes.length, root = n - 1;
    var data = forward(nodes, leaves);
    var grad = new Array(n), reached = new Array(n), edges = new Array(n), sources = new Array(n);
    for (var i = 0; i < n; i++) { grad[i] = 0; reached[i] = false; edges[i] = []; sources[i] = []; }
    grad[root] = 1; reached[root] = true;
    for (i = root; i >= 0; i--) {
      var nd = nodes[i];
      if (nd.k === null || !OPS[nd.k].passes || !reached[i]) continue;
      var g = grad[i], ls = locals(nd, data, i), op = OPS[nd.k], p = nd.p;
      // g · local, or the product as the op's row writes it (log: g / a, Op.chain)
      var amounts = op.c ? op.c(g, data[i], data[p[0]], p.length === 2 ? data[p[1]] : 0, nd.n) : null;
      for (var k = 0; k < nd.p.length; k++) {
        var parent = nd.p[k], amount = amounts ? amounts[k] : g * ls[k];
        grad[parent] = grad[parent] + amount;
        reached[parent] = true;
        edges[i].push({ position: k, parent: parent, local: ls[k], amount: amount, total: grad[parent] });
        sources[parent].push({ consumer: i, position: k, amount: amount });
      }
    }
    var totals = {}, steps = [];
    for (i = root; i >= 0; i--) {
      nd = nodes[i];
      // No step behind a detach (no credit), nor for a constant (nobody nudges it).
      if (i !== root && (sources[i].length === 0 || nd.constant)) continue;
      var contributions = [];
      if (nd.k !== null && !OPS[nd.k].passes) {
        ls = locals(nd, data, i);
        for (k = 0; k < nd.p.length; k++) {
          if (nodes[nd.p[k]].constant) continue;
          var t = totals[nd.p[k]] || [0, 0];
          contributions.push({ position: k, parent: nd.p[k], local: ls[k], amount: 0,
            before: t[0], total: t[0], earlier: t[1], passes: false });
        }
      }
      for (var e = 0; e < edges[i].length; e++) {
        var edge = edges[i][e];
        if (nodes[edge.parent].constant) continue; // credit added, but nothing to move
        var before = totals[edge.parent] || [0, 0];
        totals[edge.parent] = [edge.total, before[1] + 1];
        contributions.push({ position: edge.position, parent: edge.parent, local: edge.local,
          amount: edge.amount, before: before[0], total: edge.total, earlier: before[1], passes: true });
      }
      steps.push({ index: steps.length, node: i, credit: grad[i], sources: sources[i],
        contributions: contributions, isOutput: i === root });
    }
    return { data: data, grad: grad, reached: reached, steps: steps };
  }

  // -- numbers as gradviz prints them -------------------------------------------------------

  function split(s) { // "1.234e+5" -> ["1234", 5]
    var m = s.split("e");
    return [m[0].replace(".", ""), parseInt(m[1], 10)];
  }

  // p significant digits of |x|: JavaScript rounds an exact tie away from zero, Python's
  // format to even; ties are exact, so a longer expansion shows them (the 5, then zeros).
  function digits(x, p) {
    var a = Math.abs(x), r = split(a.toExponential(p - 1));
    var full = split(a.toExponential(Math.min(p + 25, 100))), d = full[0];
    if (d.charAt(p) === "5" && /^0*$/.test(d.slice(p + 1)) && "02468".indexOf(d.charAt(p - 1)) >= 0) {
      return [d.slice(0, p), full[1]];
    }
    return r;
  }

  function strip(text) { // trailing zeros of a fraction, and a bare point
    return text.indexOf(".") < 0 ? text : text.replace(/0+$/, "").replace(/\.$/, "");
  }

  // gradviz.numbers.fmt: Python's `g` format, exponent written plainly (1e-7, 1.234e4).
  function fmt(x, p) {
    if (x !== x) return "nan";
    if (x === Infinity) return "inf";
    if (x === -Infinity) return "-inf";
    if (x === 0) return "0";
    var r = digits(x, p), d = r[0], e = r[1], sign = x < 0 ? "-" : "";
    if (e < -4 || e >= p) return sign + strip(d.charAt(0) + "." + d.slice(1)) + "e" + e;
    if (e >= 0) return sign + strip(d.slice(0, e + 1) + "." + d.slice(e + 1));
    return sign + strip("0." + new Array(-e).join("0") + d);
  }

  // Python's repr of a float (gradviz.numbers.fmt_full): the shortest digits that read back.
  function repr(x) {
    if (x !== x || x === Infinity || x === -Infinity) return fmt(x, 17);
    if (x === 0) return 1 / x < 0 ? "-0.0" : "0.0";
    var r = split(Math.abs(x).toExponential()), d = r[0], e = r[1], sign = x < 0 ? "-" : "";
    if (e < -4 || e >= 16) {
      var ae = Math.abs(e);
      return sign + d.charAt(0) + (d.length > 1 ? "." + d.slice(1) : "") + "e" +
        (e < 0 ? "-" : "+") + (ae < 10 ? "0" : "") + ae;
    }
    if (e >= 0) {
      if (d.length <= e + 1) return sign + d + new Array(e + 2 - d.length).join("0") + ".0";
      return sign + d.slice(0, e + 1) + "." + d.slice(e + 1);
    }
    return sign + "0." + new Array(-e).join("0") + d;
  }

  // shlex.quote: a word a POSIX shell reads back as it is.
  function quote(s) {
    if (s === "") return "''";
    if (!/[^\w@%+=:,./-]/.test(s)) return s;
    return "'" + s.replace(/'/g, "'\"'\"'") + "'";
  }

  // rich's cell width, enough for names: East Asian wide characters take two cells.
  function cells(text) {
    var n = 0;
    for (var ch of text) {
      var c = ch.codePointAt(0);
      if (c >= 0x300 && c < 0x370) continue;
      n += (c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0xa4cf) || (c >= 0xac00 && c <= 0xd7a3) ||
        (c >= 0xf900 && c <= 0xfaff) || (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0xff00 && c <= 0xff60) ||
        (c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1f300 && c <= 0x1faff) || (c >= 0x20000 && c <= 0x3fffd) ? 2 : 1;
    }
    return n;
  }

  // -- the trace as text, as gradviz.render.trace_view.backward_view prints it ---------------

  function operand(name) { return name.charAt(0) === "-" ? "(" + name + ")" : name; }

  function stepText(graph, result, step, total, p) {
    var nodes = graph.nodes, out = graph.out, nd = nodes[step.node];
    var f = function (x) { return fmt(x, p); };
    var factor = function (x) { var t = f(x); return t.charAt(0) === "-" ? "(" + t + ")" : t; };
    var d = function (name) { return "d" + out + "/d" + operand(name); };
    var kind = step.isOutput ? "the output" : nd.k === null ? "leaf" : "";
    var head = "Step " + (step.index + 1) + "/" + total + "  " + nd.name +
      (nd.def !== null ? " = " + nd.def : "") + (kind ? "  (" + kind + ")" : "");
    var credit = "  " + d(nd.name) + " = ";
    if (step.isOutput) {
      credit += "1  (the output: a nudge of " + out + " moves " + out + " by the same amount)";
    } else {
      if (step.sources.length > 1) {
        credit += step.sources.map(function (s, i) { return i ? factor(s.amount) : f(s.amount); })
          .join(" + ") + " = ";
      }
      credit += f(step.credit) + "  (from " + (step.sources.length > 1 ? step.sources.length + " uses: " : "") +
        step.sources.map(function (s) { return nodes[s.consumer].name; }).join(", ") + ")";
      if (nd.k === null) credit += "  — the credit stops at a leaf: its gradient";
    }
    var parents = step.contributions.map(function (c) { return c.parent; });
    var twice = parents.some(function (p, k) { return parents.indexOf(p) !== k; }); // x*x
    var rows = step.contributions.map(function (c) {
      var inp = nd.c[c.position], parent = nodes[c.parent].name;
      var target = "→ " + parent + (twice ? " (input " + "ab".charAt(c.position) + ")" : "");
      var local = inp.nf + (c.passes && inp.lt !== f(c.local) ? " = " + f(c.local) : "");
      if (!c.passes) return [target, local, nd.op + " passes no credit: the gradient stops here"];
      var passed = d(parent) + " += " + d(nd.name) + " · " + (inp.lt.indexOf(" ") < 0 ? inp.lt : "(" + inp.lt + ")") +
        " = " + f(step.credit) + " · " + factor(c.local) +
        // (trace_view.ONE_QUOTIENT: a slope that overflowed where the credit did not)
        (isFinite(c.amount) && !isFinite(c.local) ? " (taken as one quotient: the slope alone overflows)" : "") +
        " = " + f(c.amount);
      if (c.earlier) passed += "   (so far " + f(c.before) + " + " + factor(c.amount) + " = " + f(c.total) + ")";
      return [target, local, passed];
    });
    var lines = [head, credit];
    if (rows.length) {
      var widths = rows[0].map(function (_, i) {
        return Math.max.apply(null, rows.map(function (r) { return cells(r[i]); }));
      });
      rows.forEach(function (r) {
        var line = r.map(function (cell, i) {
          return i === r.length - 1 ? cell : cell + new Array(widths[i] - cells(cell) + 1).join(" ") + "   ";
        }).join("");
        lines.push("  " + line.replace(/\s+$/, ""));
      });
    }
    return lines.join("\n");
  }

  // The tooltip texts of gradviz.render.diagram (_value_detail, _op_detail) at these numbers.
  function valueDetail(nd, data, grad) {
    if (nd.constant) return nd.name + ": a constant, data = " + repr(data);
    return nd.name + ": data = " + repr(data) + "\ngrad = " + repr(grad) + (nd.k !== null ? "\nmade by " + nd.op : "");
  }
  function inputLine(nd, k, ls) { return nd.c[k].nf + (nd.c[k].same ? "" : " = " + repr(ls[k])); }
  function opDetail(graph, i, result) {
    var nd = graph.nodes[i], data = result.data, lines = [nd.op + ": " + nd.name + " = " + nd.applied + " = " + repr(data[i])];
    var ls = locals(nd, data, i);
    nd.c.forEach(function (inp, k) {
      if (!graph.nodes[nd.p[k]].constant) lines.push(inputLine(nd, k, ls)); // a constant's slope moves nothing
    });
    lines.push(OPS[nd.k].passes ? "grad in = " + repr(result.grad[i]) : "passes no gradient to its input");
    return lines.join("\n");
  }

  return { OPS: OPS, pow: pow, number: number, forward: forward, run: run, fmt: fmt, repr: repr,
    quote: quote, cells: cells, stepText: stepText, valueDetail: valueDetail, opDetail: opDetail,
    inputLine: inputLine, locals: locals };
})();
if (typeof module !== "undefined") module.exports = GV;
