// Runs the page harnesses (page.js, report.js) on many pages in one Node process: starting
// Node and loading jsdom cost most of a harness run. One request a line on stdin,
// {"harness": "page.js", "args": [PAGE.html, ACTIONS.json, ...]}, and one line on stdout
// for it: what the harness returns ({states, errors}), or {crashed: "its stack"}.
"use strict";
const path = require("path");
const readline = require("readline");

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const { harness, args } = JSON.parse(line);
  let result;
  try {
    result = require(path.join(__dirname, path.basename(harness))).run(...args);
  } catch (error) {
    result = { crashed: String((error && error.stack) || error) };
  }
  process.stdout.write(JSON.stringify(result) + "\n");
});
