// Markdown from the model, rendered safely: the text is parsed here and every piece becomes a DOM node
// built with createElement/textContent. No model text ever reaches innerHTML, so no tag, attribute
// or script in a reply can run. Links keep only http(s) and mailto targets and open outside the app.

import { desktop } from "./api.js";
import { highlightInto } from "./highlight.js";
import { t } from "./strings.js";

const SAFE_LINK = /^(https?:|mailto:)/i;

export function renderMarkdown(source) {
  const root = document.createDocumentFragment();
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s*(```+|~~~+)\s*([\w+.#-]*)/);
    if (fence) {
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) body.push(lines[i++]);
      i++; // the closing fence (or the end of a still-streaming block)
      root.append(codeBlock(body.join("\n"), fence[2]));
      continue;
    }
    if (!line.trim()) { i++; continue; }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      const h = document.createElement(`h${Math.min(heading[1].length + 1, 6)}`);
      inline(h, heading[2]);
      root.append(h);
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) { root.append(document.createElement("hr")); i++; continue; }
    if (line.startsWith(">")) {
      const quoted = [];
      while (i < lines.length && lines[i].startsWith(">")) quoted.push(lines[i++].replace(/^>\s?/, ""));
      const q = document.createElement("blockquote");
      q.append(renderMarkdown(quoted.join("\n")));
      root.append(q);
      continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d+[.)]/.test(line);
      const list = document.createElement(ordered ? "ol" : "ul");
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        const li = document.createElement("li");
        let text = lines[i++].replace(/^\s*([-*+]|\d+[.)])\s+/, "");
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !/^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
          text += " " + lines[i++].trim();
        }
        const task = text.match(/^\[([ xX])\]\s+(.*)$/);
        if (task) {
          const box = document.createElement("input");
          box.type = "checkbox";
          box.disabled = true;
          box.checked = task[1] !== " ";
          li.append(box, " ");
          text = task[2];
        }
        inline(li, text);
        list.append(li);
      }
      root.append(list);
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && /^\s*\|?\s*:?-{3,}/.test(lines[i + 1])) {
      const table = document.createElement("table");
      const row = (text, cell) => {
        const tr = document.createElement("tr");
        for (const part of text.trim().replace(/^\||\|$/g, "").split("|")) {
          const td = document.createElement(cell);
          inline(td, part.trim());
          tr.append(td);
        }
        return tr;
      };
      table.append(row(line, "th"));
      i += 2;
      while (i < lines.length && lines[i].includes("|") && lines[i].trim()) table.append(row(lines[i++], "td"));
      const wrap = document.createElement("div");
      wrap.className = "table-wrap";
      wrap.append(table);
      root.append(wrap);
      continue;
    }
    const paragraph = [];
    while (i < lines.length && lines[i].trim() && !/^(\s*(```|~~~)|#{1,6}\s|>|\s*([-*+]|\d+[.)])\s+)/.test(lines[i])) {
      paragraph.push(lines[i++]);
    }
    if (!paragraph.length) paragraph.push(lines[i++]);
    const p = document.createElement("p");
    inline(p, paragraph.join("\n"));
    root.append(p);
  }
  return root;
}

function codeBlock(code, language) {
  const wrap = document.createElement("div");
  wrap.className = "code";
  const bar = document.createElement("div");
  bar.className = "code-bar";
  const label = document.createElement("span");
  label.textContent = language || "text";
  const copy = document.createElement("button");
  copy.type = "button";
  copy.className = "copy";
  copy.textContent = t("copy");
  copy.addEventListener("click", async () => {
    await copyText(code);
    copy.textContent = t("copied");
    setTimeout(() => (copy.textContent = t("copy")), 1200);
  });
  bar.append(label, copy);
  const pre = document.createElement("pre");
  const c = document.createElement("code");
  highlightInto(c, code, language);
  pre.append(c);
  wrap.append(bar, pre);
  return wrap;
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = document.createElement("textarea"); // clipboard API needs a secure context or focus
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
}

// Underscores inside a word are the word's (read_file, mcp_list_tools): never emphasis, as CommonMark reads them.
// A link's target may hold one level of parentheses (`javascript:alert(2)`, a Wikipedia page): cut at its first ")",
// the rest leaked into the text. An image (`![alt](url)`) is its link: the page loads no outside picture.
const INLINE = /(`+)([^`]+?)\1|\*\*([^*]+)\*\*|(?<!\w)__([^_]+)__(?!\w)|\*([^*\s][^*]*)\*|(?<!\w)_([^_\s][^_]*)_(?!\w)|~~([^~]+)~~|!?\[([^\]]*)\]\(((?:[^()\s]|\([^()\s]*\))+)(?:\s+"[^"]*")?\)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/;

// Inline spans: code, bold, italic, strike, links, bare URLs, and line breaks — each as a node.
function inline(parent, text) {
  let rest = text;
  while (rest) {
    const match = rest.match(INLINE);
    if (!match) { appendText(parent, rest); break; }
    appendText(parent, rest.slice(0, match.index));
    rest = rest.slice(match.index + match[0].length);
    if (match[2] !== undefined) {
      const code = document.createElement("code");
      code.textContent = match[2];
      parent.append(code);
    } else if (match[3] !== undefined || match[4] !== undefined) {
      const strong = document.createElement("strong");
      inline(strong, match[3] ?? match[4]);
      parent.append(strong);
    } else if (match[5] !== undefined || match[6] !== undefined) {
      const em = document.createElement("em");
      inline(em, match[5] ?? match[6]);
      parent.append(em);
    } else if (match[7] !== undefined) {
      const s = document.createElement("s");
      inline(s, match[7]);
      parent.append(s);
    } else if (match[8] !== undefined) {
      parent.append(link(match[8] || match[9], match[9]));
    } else {
      parent.append(link(match[10], match[10]));
    }
  }
}

function appendText(parent, text) {
  const parts = text.split("\n");
  parts.forEach((part, index) => {
    if (index) parent.append(document.createElement("br"));
    if (part) parent.append(document.createTextNode(part));
  });
}

function link(label, target) {
  if (!SAFE_LINK.test(target)) {
    const span = document.createElement("span");
    span.textContent = label; // javascript:, data:, file: … stay plain text
    return span;
  }
  const a = document.createElement("a");
  a.href = target;
  a.textContent = label;
  a.rel = "noopener noreferrer";
  a.target = "_blank";
  a.addEventListener("click", (event) => {
    const bridge = desktop();
    if (bridge) { // in the desktop window: the system browser, never the app's own view
      event.preventDefault();
      bridge.open_external(target);
    }
  });
  return a;
}
