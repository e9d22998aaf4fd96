// Opens a page written by gradviz in jsdom, runs its scripts, performs actions, and prints
// what the page shows after each one. node page.js PAGE.html ACTIONS.json [HASH]
// Actions: {"type": [leafIndex, "text"]} types into a number box; {"click": "id"} presses a
// button; {"hover": "n2_op"} points at a node.
"use strict";
const fs = require("fs");
const { openPage } = require("./open.js");

function run(pageFile, actionsFile, hash) {
  // jsdom refuses history.replaceState on file: URLs (Chromium allows it: tests/test_html_browser.py)
  const { window, errors } = openPage(pageFile, "https://gradviz.invalid/page.html" + (hash || ""));
  const doc = window.document;
  const state = () => ({
    nodes: Array.from(doc.querySelectorAll("#graph g.node")).map((g) => ({
      id: g.querySelector("title").textContent,
      texts: Array.from(g.querySelectorAll("text")).map((t) => t.textContent),
      fill: (g.querySelector("polygon, ellipse") || { getAttribute: () => null }).getAttribute("fill"),
    })),
    step: doc.getElementById("step-text") && doc.getElementById("step-text").textContent,
    nudge: doc.getElementById("nudge") && doc.getElementById("nudge").textContent,
    command: doc.getElementById("command") && doc.getElementById("command").textContent,
    detail: doc.getElementById("detail") && doc.getElementById("detail").textContent,
    hash: window.location.hash,
    scripts: doc.querySelectorAll("script").length,
    h1: doc.querySelector("h1").textContent,
    pwned: window.pwned === undefined ? null : window.pwned,
  });
  const states = [state()];
  for (const action of JSON.parse(fs.readFileSync(actionsFile, "utf8"))) {
    if (action.type) {
      const box = doc.getElementById("box-" + action.type[0]);
      box.dispatchEvent(new window.FocusEvent("focus"));
      box.value = action.type[1];
      box.dispatchEvent(new window.Event("input", { bubbles: true }));
    } else if (action.click) {
      doc.getElementById(action.click).click();
    } else if (action.hover) {
      const g = Array.from(doc.querySelectorAll("#graph g.node, #graph g.edge"))
        .find((n) => n.querySelector("title").textContent === action.hover);
      g.querySelector("text, path").dispatchEvent(new window.MouseEvent("mouseover", { bubbles: true }));
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
