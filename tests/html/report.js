// Opens a report page written by gradviz in jsdom, runs its scripts, performs actions, and
// prints what the page shows after each one. node report.js PAGE.html ACTIONS.json
// Actions: {"epoch": k} moves the epoch slider to recorded epoch k; {"show": i} presses
// example i's button; {"point": i} clicks example i's point in the data picture; {"typed": [x0, …, y]} types an input and its target and submits.
"use strict";
const fs = require("fs");
const { openPage } = require("./open.js");

function run(pageFile, actionsFile) {
  const { window, errors } = openPage(pageFile, "https://gradviz.invalid/report.html");
  const doc = window.document;
  const text = (id) => (doc.getElementById(id) ? doc.getElementById(id).textContent : null);
  const state = () => ({
    layers: Object.fromEntries(Array.from(doc.querySelectorAll("#graph g.node")).map((g) => [
      g.querySelector("title").textContent,
      {
        fill: (g.querySelector("polygon, ellipse, path") || { getAttribute: () => null }).getAttribute("fill"),
        texts: Array.from(g.querySelectorAll("text")).map((t) => t.textContent),
      },
    ])),
    epoch: text("epoch-text"),
    example: text("example-text"),
    rows: Array.from(doc.querySelectorAll("#graph-table tbody tr")).map((tr) =>
      Array.from(tr.querySelectorAll("td")).map((td) => td.textContent)),
    numbers: window.gvExample ? {
      data: window.gvExample.data.map(String), grad: window.gvExample.grad.map(String),
    } : null,
    h1: doc.querySelector("h1").textContent,
    ring: doc.getElementById("scatter-now") &&
      ["cx", "cy"].map((a) => doc.getElementById("scatter-now").getAttribute(a)),
    headers: Array.from(doc.querySelectorAll("#examples th")).map((th) => th.textContent),
    labels: Array.from(doc.querySelectorAll("label")).map((l) => l.textContent),
    scripts: doc.querySelectorAll("script").length,
    pwned: window.pwned === undefined ? null : window.pwned,
  });
  const states = [state()];
  for (const action of JSON.parse(fs.readFileSync(actionsFile, "utf8"))) {
    if (action.epoch !== undefined) {
      const slider = doc.getElementById("epoch");
      slider.value = String(action.epoch);
      slider.dispatchEvent(new window.Event("input", { bubbles: true }));
    } else if (action.show !== undefined) {
      doc.querySelector('#examples button[data-i="' + action.show + '"]').click();
    } else if (action.point !== undefined) {
      doc.querySelector('#scatter circle[data-i="' + action.point + '"]')
        .dispatchEvent(new window.MouseEvent("click", { bubbles: true }));
    } else if (action.typed) {
      const values = action.typed;
      values.slice(0, -1).forEach((v, j) => { doc.getElementById("in-" + j).value = String(v); });
      doc.getElementById("in-y").value = String(values[values.length - 1]);
      doc.getElementById("show-typed").click();
    }
    states.push(state());
  }
  window.close(); // its timers stop: serve.js runs the next page in this process
  return { states, errors };
}

module.exports = { run };
if (require.main === module) {
  process.stdout.write(JSON.stringify(run(...process.argv.slice(2))));
}
