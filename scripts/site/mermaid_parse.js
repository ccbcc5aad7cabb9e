// Parse mermaid diagrams with the pinned bundle's own parser, outside a browser.
// Usage: node mermaid_parse.js MERMAID_MIN_JS < diagrams.json, a JSON list of diagram sources.
// Prints a JSON list with one entry per diagram: "" when it parses, else mermaid's error message.
"use strict";
const fs = require("fs");
const vm = require("vm");

// The bundle expects a browser's global object; parsing needs none of the DOM.
const browser = { console, setTimeout, clearTimeout, queueMicrotask, URL, TextEncoder, TextDecoder };
browser.window = browser;
browser.self = browser;
browser.globalThis = browser;
vm.createContext(browser);
vm.runInContext(fs.readFileSync(process.argv[2], "utf8"), browser);

async function main() {
  const sources = JSON.parse(fs.readFileSync(0, "utf8"));
  const errors = [];
  for (const source of sources) {
    try {
      await browser.mermaid.parse(source);
      errors.push("");
    } catch (error) {
      errors.push(String((error && error.message) || error));
    }
  }
  process.stdout.write(JSON.stringify(errors));
}

main();
