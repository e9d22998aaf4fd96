// A page written by gradviz, opened in jsdom with its scripts running; every error the page
// raises is collected in `errors` (the harnesses print them, and the tests expect none).
"use strict";
const fs = require("fs");
const { JSDOM, VirtualConsole } = require("jsdom");

function openPage(pageFile, url) {
  const errors = [];
  const virtualConsole = new VirtualConsole();
  virtualConsole.on("jsdomError", (e) => errors.push(String(e.stack || e)));
  virtualConsole.on("error", (e) => errors.push(String(e)));
  const dom = new JSDOM(fs.readFileSync(pageFile, "utf8"), {
    runScripts: "dangerously",
    url,
    virtualConsole,
  });
  return { window: dom.window, errors };
}

module.exports = { openPage };
