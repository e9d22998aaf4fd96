// Parse Mermaid texts with the real mermaid.js (under jsdom) and report what it read.
//
// stdin: {"texts": [Mermaid texts], "titles": bool}. stdout: a JSON array, one result per text:
//   {ok: true, type, title, nodes: {id: label}, edges: [[from, to, stroke]],
//    subgraphs: [[id, title, [ids]]]}
//   {ok: false, error: "..."}
// Labels are decoded the way a browser shows them: Mermaid's entity codes (#quot;, #35;)
// become characters and <br> a newline, so tests can compare them with the original text.
// `title` is the text of the title node (id `caption`) exactly as Mermaid draws it, read
// from the SVG that mermaid.render makes (entity codes decoded by Mermaid itself, not by
// `shown`); null without a title, or when jsdom cannot render the text (a graph with
// subgraphs: "Invalid character"), and then `render_error` says why. Rendering costs most
// of the time (a layout per text): with `titles` false nothing is rendered (title null).
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!DOCTYPE html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
// jsdom does no layout: rendering (done only to read a title) needs text sizes of some kind.
window.SVGElement.prototype.getBBox = () => ({ x: 0, y: 0, width: 100, height: 20 });
window.SVGElement.prototype.getComputedTextLength = () => 50;
const { default: mermaid } = await import("mermaid");
mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });

function shown(text) {
  // Mermaid keeps entity codes as placeholders until rendering (its decodeEntities).
  const html = String(text ?? "")
    .replace(/ﬂ°°/g, "&#")
    .replace(/ﬂ°/g, "&")
    .replace(/¶ß/g, ";")
    .replace(/<br\s*\/?>/gi, "\n");
  const element = document.createElement("textarea");
  element.innerHTML = html;
  return element.value;
}

let renders = 0;

async function drawnTitle(text) {
  const { svg } = await mermaid.render(`title${renders++}`, text);
  // as a page holds it (jsdom serialises the labels' HTML, `<br>` included, not as XML)
  const drawn = new window.DOMParser().parseFromString(svg, "text/html");
  const title = drawn.querySelector('g.node[id^="flowchart-caption-"]');
  return title ? title.textContent : null;
}

async function check(text, titles) {
  try {
    await mermaid.parse(text);
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
    const db = diagram.db;
    const nodes = {};
    for (const vertex of db.getVertices().values()) nodes[vertex.id] = shown(vertex.text);
    const edges = db.getEdges().map((e) => [e.start, e.end, e.stroke]);
    const subgraphs = db.getSubGraphs().map((s) => [s.id, shown(s.title), s.nodes]);
    let title = null;
    let render_error = null;
    if (titles && /^ +caption\["/m.test(text)) {
      try {
        title = await drawnTitle(text);
      } catch (error) {
        render_error = String(error?.message ?? error);
      }
    }
    return { ok: true, type: diagram.type, title, render_error, nodes, edges, subgraphs };
  } catch (error) {
    return { ok: false, error: String(error?.message ?? error) };
  }
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { texts, titles } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const results = [];
for (const text of texts) results.push(await check(text, titles));
process.stdout.write(JSON.stringify(results));
