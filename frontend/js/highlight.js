// Syntax highlighting for code blocks: a small highlighter of our own (no CDN, no dependency). One
// regular expression per language finds comments, strings, numbers and words; keywords and literals are
// looked up by word. It returns nodes built with textContent, like the Markdown renderer: code from a
// model is never parsed as HTML. Unknown languages, and very large blocks, stay plain.

const MAX_CHARS = 100_000; // beyond this a block is shown plain: highlighting must never stall a frame

const QUOTED = String.raw`"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'`;
const NUMBER = String.raw`\b(?:0x[\da-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)\b`;
const SLASHES = String.raw`\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$)`;

const words = (text) => new Set(text.split(" "));
const LITERALS = words("true false null undefined None True False nil NaN Infinity self this super");

const LANGUAGES = {
  js: {
    comment: SLASHES,
    string: String.raw`\x60(?:[^\x60\\]|\\.)*(?:\x60|$)|${QUOTED}`,
    keywords: words("async await break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return static switch throw try typeof var void while with yield interface type enum implements private public protected readonly as"),
  },
  python: {
    comment: "#[^\\n]*",
    string: String.raw`[rbfuRBFU]{0,2}(?:"""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|${QUOTED})`,
    keywords: words("and as assert async await break class continue def del elif else except finally for from global if import in is lambda match case nonlocal not or pass raise return try while with yield"),
  },
  sh: {
    comment: "(?:^|[ \\t\\n;])#[^\\n]*", // not the # inside a word or ${#var}
    string: QUOTED,
    keywords: words("if then else elif fi for while until do done case esac in function return local export set unset echo exit source cd sudo"),
  },
  clike: { // C, C++, C#, Java, Kotlin, Swift, Go, Rust: close enough for colour
    comment: SLASHES,
    string: QUOTED,
    keywords: words("auto break case catch char class const continue default do double else enum extern final float for fn func go goto if impl import int let long loop match mod mut namespace new package private protected pub public return short signed sizeof static struct switch template throw try typedef union unsigned use using var void volatile while where trait interface defer chan select map range type val fun override"),
  },
  sql: {
    comment: "--[^\\n]*|\\/\\*[\\s\\S]*?(?:\\*\\/|$)",
    string: QUOTED,
    keywords: words("select from where insert into values update set delete create table drop alter add index join left right inner outer on group by order having limit offset as and or not null is in exists union all distinct primary key foreign references default case when then else end with returning"),
    caseless: true,
  },
  css: { comment: "\\/\\*[\\s\\S]*?(?:\\*\\/|$)", string: QUOTED, keywords: words("important media import from to") },
  json: { comment: "(?!)", string: QUOTED, keywords: words("") },
  yaml: { comment: "#[^\\n]*", string: QUOTED, keywords: words("") },
  html: { comment: "<!--[\\s\\S]*?(?:-->|$)", string: QUOTED, keywords: words(""), tags: true },
};

const ALIASES = {
  javascript: "js", jsx: "js", ts: "js", typescript: "js", tsx: "js", mjs: "js", node: "js",
  py: "python", python3: "python",
  bash: "sh", shell: "sh", zsh: "sh", console: "sh", shellsession: "sh",
  c: "clike", h: "clike", cpp: "clike", "c++": "clike", cc: "clike", cs: "clike", csharp: "clike", java: "clike",
  kotlin: "clike", kt: "clike", swift: "clike", go: "clike", golang: "clike", rust: "clike", rs: "clike",
  scss: "css", less: "css", yml: "yaml", toml: "yaml", ini: "yaml", xml: "html", svg: "html", vue: "html",
  postgres: "sql", mysql: "sql", sqlite: "sql",
};

const compiled = new Map();

function scanner(name) {
  if (!compiled.has(name)) {
    const spec = LANGUAGES[name];
    const parts = [`(?<comment>${spec.comment})`, `(?<string>${spec.string})`];
    if (spec.tags) parts.push(String.raw`(?<keyword><\/?[A-Za-z][\w:-]*|\/?>)`);
    parts.push(`(?<number>${NUMBER})`, String.raw`(?<word>[A-Za-z_$][\w$]*)`);
    compiled.set(name, { spec, pattern: new RegExp(parts.join("|"), "g") });
  }
  return compiled.get(name);
}

export function languageOf(label) {
  const name = (label || "").toLowerCase();
  return LANGUAGES[name] ? name : ALIASES[name] ?? null;
}

// Fill `target` (a <code>) with the code, coloured when the language is known.
export function highlightInto(target, code, label) {
  const name = languageOf(label);
  if (!name || code.length > MAX_CHARS) { target.textContent = code; return; }
  try {
    paint(target, code, scanner(name));
  } catch {
    target.textContent = code; // a web view without some regular expression feature: plain, never broken
  }
}

function paint(target, code, { spec, pattern }) {
  const fragment = document.createDocumentFragment();
  let at = 0;
  pattern.lastIndex = 0;
  for (let match = pattern.exec(code); match; match = pattern.exec(code)) {
    if (!match[0]) { pattern.lastIndex++; continue; } // an empty match must not loop
    const groups = match.groups;
    let kind = groups.comment !== undefined ? "comment" : groups.string !== undefined ? "string"
      : groups.keyword !== undefined ? "keyword" : groups.number !== undefined ? "number" : null;
    if (!kind) {
      const word = spec.caseless ? groups.word.toLowerCase() : groups.word;
      kind = spec.keywords.has(word) ? "keyword" : LITERALS.has(groups.word) ? "literal" : null;
      if (!kind) continue; // a plain name: part of the text run
    }
    if (match.index > at) fragment.append(code.slice(at, match.index));
    const span = document.createElement("span");
    span.className = `tok-${kind}`;
    span.textContent = match[0];
    fragment.append(span);
    at = match.index + match[0].length;
  }
  if (at < code.length) fragment.append(code.slice(at));
  target.replaceChildren(fragment);
}
