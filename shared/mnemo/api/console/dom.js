// Building the page without ever parsing HTML: every string becomes a text node, so memory
// content, tags, paths and error messages can never turn into markup or script.

/**
 * h("a", {href: "#/x", class: "link", onclick: fn}, "text", childNode, [more, children])
 * Attributes are set with setAttribute (never innerHTML); `on…` keys add event listeners;
 * null, undefined and false attributes and children are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      el.addEventListener(name.slice(2), value);
    } else if (name === "value" && "value" in el) {
      el.value = String(value);
    } else if (name === "checked" || name === "selected" || name === "disabled" || name === "hidden") {
      el[name] = Boolean(value);
    } else {
      if (/^on/i.test(name) || name === "style" || name === "srcdoc") {
        throw new Error(`refusing to set the attribute ${name}`);
      }
      el.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

/** Replace every child of `el` with `children`. */
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/**
 * `text` as nodes with each occurrence of any of `terms` wrapped in <mark> (case-insensitive).
 * Used for explain's matched terms; falls back to plain text when case folding would change the
 * string's length (offsets would no longer line up).
 */
export function highlighted(text, terms) {
  const folded = text.toLowerCase();
  const wanted = [...new Set((terms || []).map((t) => String(t).toLowerCase()).filter(Boolean))];
  if (!wanted.length || folded.length !== text.length) return [text];
  const ranges = [];
  for (const term of wanted) {
    for (let at = folded.indexOf(term); at !== -1; at = folded.indexOf(term, at + 1)) {
      ranges.push([at, at + term.length]);
    }
  }
  if (!ranges.length) return [text];
  ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const merged = [];
  for (const [start, end] of ranges) {
    const last = merged[merged.length - 1];
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  const out = [];
  let cursor = 0;
  for (const [start, end] of merged) {
    if (start > cursor) out.push(text.slice(cursor, start));
    out.push(h("mark", {}, text.slice(start, end)));
    cursor = end;
  }
  if (cursor < text.length) out.push(text.slice(cursor));
  return out;
}

/** A timestamp as a <time> element in the reader's locale (the RFC 3339 value in its title). */
export function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  const shown = Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
  return h("time", { datetime: iso, title: iso }, shown);
}

/** UTF-8 length of a string (the content limit is 4096 bytes of UTF-8). */
export function utf8Bytes(text) {
  return new TextEncoder().encode(text).length;
}

/** "a, b ,c" → ["a", "b", "c"] */
export function splitList(text) {
  return String(text || "")
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
}
