// Runs the page's engine (written by gradviz.render.html.engine_script) on cases from Python.
// node parity.js ENGINE.js CASES.json  ->  JSON on stdout. Floats travel as 16 hex digits
// (their IEEE bits), so -0.0, NaN and infinities arrive exactly.
"use strict";
const fs = require("fs");
const vm = require("vm");
const [engineFile, casesFile] = process.argv.slice(2);
const GV = vm.runInThisContext(fs.readFileSync(engineFile, "utf8") + "\nGV");
const cases = JSON.parse(fs.readFileSync(casesFile, "utf8"));
const view = new DataView(new ArrayBuffer(8));
const bits = (x) => { view.setFloat64(0, x); return view.getBigUint64(0).toString(16).padStart(16, "0"); };
const float = (h) => { view.setBigUint64(0, BigInt("0x" + h)); return view.getFloat64(0); };

const out = {};
out.graphs = cases.graphs.map((g) => {
  const leaves = g.nodes.map((n) => (n.k === null ? float(n.bits) : undefined));
  const r = GV.run(g.nodes, leaves);
  const py = g.pyData.map(float);
  // Each op on Python's own inputs: the op's maths alone, without what came before.
  const forced = g.nodes.map((n, i) => {
    if (n.k === null) return null;
    const op = GV.OPS[n.k], p = n.p;
    const value = op.f(py[p[0]], p.length === 2 ? py[p[1]] : 0, n.n);
    const locals = op.d(py[i], py[p[0]], p.length === 2 ? py[p[1]] : 0, n.n);
    return [bits(value), ...locals.map(bits)];
  });
  return { data: r.data.map(bits), grad: r.grad.map(bits), forced: forced,
    steps: g.trace ? r.steps.map((s) => GV.stepText(g, r, s, r.steps.length, 4)) : null };
});
out.fmt = cases.fmt.map(([h, p]) => GV.fmt(float(h), p));
out.repr = cases.fmt.map(([h]) => GV.repr(float(h)));
out.quote = cases.quote.map((s) => GV.quote(s));
process.stdout.write(JSON.stringify(out));
