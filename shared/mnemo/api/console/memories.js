// Memories: the list and search page, a memory's own page (edit, delete, copy its reference, its
// history and supersession chain) and the add form. Content is user input: it only ever reaches
// the page as text nodes (dom.js).

import { ApiError } from "./api.js";
import { h, highlighted, mount, splitList, utf8Bytes, when } from "./dom.js";

const MAX_CONTENT_BYTES = 4096;

const MODES = {
  list: {
    tool: "memory_search",
    label: "Full text",
    hint: "memory_search: every word must occur; an empty query lists the newest memories.",
  },
  strict: {
    tool: "search_memory",
    label: "Strict",
    hint: "search_memory: every word and every filter must match, or it says why nothing did.",
  },
  forgiving: {
    tool: "recall",
    label: "Forgiving",
    hint: "recall: any word, prefixes too (deploy finds deployment), most words matched first.",
  },
};

/** A value for a LIKE pattern that matches `text` exactly (search_memory's memory_type). */
function likeExact(text) {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** "2026-01-31T12:00" (datetime-local, the reader's zone) → RFC 3339 UTC, or null. */
function rfc3339(local) {
  if (!local) return null;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

function copyButton(ctx, text, label = "Copy reference") {
  const button = h("button", {
    type: "button",
    class: "copy",
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(text);
        button.textContent = "Copied";
      } catch {
        const field = h("input", { class: "copy-field", readonly: true, value: text, "aria-label": "Reference" });
        button.replaceWith(field);
        field.select();
        ctx.showInfo("Copying is not allowed here: the reference is selected, press Ctrl+C (⌘C) to copy it.");
      }
    },
  }, label);
  return button;
}

function tagList(tags) {
  return tags && tags.length ? h("span", { class: "tags" }, tags.map((t) => h("span", { class: "tag" }, t))) : null;
}

function memoryLink(id) {
  return h("a", { href: `#/memory/${id}`, class: "ref", "data-ref": id }, id);
}

/** "superseded" (and when, where the answer says: search results carry only by whom), or null. */
function supersededBadge(memory) {
  if (!memory.superseded_by) return null;
  return h(
    "span",
    { class: "badge superseded", title: `replaced by ${memory.superseded_by}` },
    "superseded",
    memory.superseded_at ? [" ", when(memory.superseded_at)] : null,
  );
}

// ---- the list and search page ----------------------------------------------------------------

export async function searchView(ctx) {
  const caps = ctx.caps;
  const state =
    searchView.state || (searchView.state = { mode: "list", q: "", explain: true, superseded: false, filters: {} });
  const results = h("div", { id: "results", "aria-live": "polite" });
  const summary = h("p", { id: "results-summary", class: "muted" });
  let inflight = null;
  let timer = null;
  let painted = 0;

  const field = (id, label, attrs = {}) =>
    h(
      "label",
      { class: "filter", for: id, "data-filter": id },
      label,
      h("input", {
        id,
        value: state.filters[id] || "",
        oninput: (e) => {
          state.filters[id] = e.target.value;
          schedule();
        },
        onchange: (e) => {
          if (state.filters[id] === e.target.value) return;
          state.filters[id] = e.target.value;
          schedule();
        },
        ...attrs,
      }),
    );

  const query = h("input", {
    id: "search-q",
    type: "search",
    value: state.q,
    autocomplete: "off",
    placeholder: "Search memories — English, 中文, 日本語, 한국어…",
    "aria-label": "Search",
    oninput: (e) => {
      state.q = e.target.value;
      schedule();
    },
  });
  const modeButtons = Object.entries(MODES).map(([mode, m]) =>
    h(
      "label",
      { class: "mode", title: m.hint },
      h("input", {
        type: "radio",
        name: "mode",
        value: mode,
        checked: state.mode === mode,
        onchange: () => {
          state.mode = mode;
          showFilters();
          run();
        },
      }),
      ` ${m.label}`,
    ),
  );
  // a checkbox of the search's state: ticking it searches again
  const check = (filter, id, key, label) =>
    h(
      "label",
      { class: "filter check", "data-filter": filter },
      h("input", {
        id,
        type: "checkbox",
        checked: state[key],
        onchange: (e) => {
          state[key] = e.target.checked;
          run();
        },
      }),
      ` ${label}`,
    );
  const explain = check("explain", "explain", "explain", "Explain the ranking");
  // superseded memories are left out by every search tool unless asked for (docs/contract.md §3)
  const superseded = check("superseded", "show-superseded", "superseded", "Show superseded");
  const filters = {
    kind: field("f-kind", "Kind", { placeholder: "decision" }),
    tags: field("f-tags", "Tags", { placeholder: "billing, q3" }),
    path: field("f-path", "Path pattern", { placeholder: "acme/%" }),
    after: field("f-after", "Changed after", { type: "datetime-local" }),
    before: field("f-before", "Changed before", { type: "datetime-local" }),
  };
  const hint = h("p", { class: "muted small", id: "mode-hint" });

  function tool() {
    // an empty query in the strict or forgiving mode lists the newest memories
    return state.q.trim() ? MODES[state.mode].tool : "memory_search";
  }

  function showFilters() {
    const mode = MODES[state.mode];
    hint.textContent = mode.hint;
    const name = mode.tool;
    const retrieval = name !== "memory_search";
    filters.kind.hidden = !(caps.takes(name, retrieval ? "memory_type" : "kind"));
    filters.tags.hidden = !caps.takes(name, "tags");
    filters.path.hidden = !caps.takes(name, "path_filter");
    filters.after.hidden = !caps.takes(name, "updated_after");
    filters.before.hidden = !caps.takes(name, "updated_before");
    explain.hidden = !caps.takes(name, "explain");
    superseded.hidden = !caps.takes(name, "include_superseded");
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(run, 200);
  }

  function args(name) {
    const f = state.filters;
    const out = {};
    const kind = (f["f-kind"] || "").trim();
    const tags = splitList(f["f-tags"]);
    const path = (f["f-path"] || "").trim();
    const after = rfc3339(f["f-after"]);
    const before = rfc3339(f["f-before"]);
    if (name === "memory_search") {
      out.q = state.q;
      out.limit = 50;
      if (kind && caps.takes(name, "kind")) out.kind = kind;
      if (tags.length && caps.takes(name, "tags")) out.tags = tags;
    } else {
      out.query = state.q;
      out.limit = 20;
      if (kind && caps.takes(name, "memory_type")) out.memory_type = likeExact(kind);
      if (path && caps.takes(name, "path_filter")) out.path_filter = path;
      if (caps.takes(name, "explain")) out.explain = state.explain;
    }
    if (after && caps.takes(name, "updated_after")) out.updated_after = after;
    if (before && caps.takes(name, "updated_before")) out.updated_before = before;
    if (state.superseded && caps.takes(name, "include_superseded")) out.include_superseded = true;
    return out;
  }

  async function run() {
    clearTimeout(timer);
    if (inflight) inflight.abort();
    const controller = new AbortController();
    inflight = controller;
    const name = tool();
    const sent = args(name);
    results.setAttribute("aria-busy", "true");
    try {
      const answer = await ctx.api.tool(name, sent, { signal: controller.signal });
      if (controller.signal.aborted || !ctx.current()) return;
      ctx.clearError();
      paint(name, sent, answer);
    } catch (err) {
      if (err && err.name === "AbortError") return;
      if (!ctx.current()) return;
      ctx.showError(err);
    } finally {
      if (inflight === controller) {
        inflight = null;
        results.removeAttribute("aria-busy");
      }
    }
  }

  function paint(name, sent, answer) {
    // what was painted, for people's assistive tech and for the browser tests' waits
    painted += 1;
    results.dataset.painted = String(painted);
    results.dataset.query = name === "memory_search" ? sent.q : sent.query;
    results.dataset.superseded = String(Boolean(sent.include_superseded));
    if (name === "memory_search") {
      const items = answer.memories;
      summary.textContent = sent.q.trim()
        ? `${items.length} ${items.length === 1 ? "memory contains" : "memories contain"} every word`
        : `${items.length} most recently changed ${items.length === 1 ? "memory" : "memories"}, newest first`;
      mount(results, items.length ? items.map((m) => memoryCard(m)) : h("p", { class: "empty" }, "No memories."));
      results.dataset.tool = name;
      return;
    }
    const items = answer.results;
    results.dataset.tool = name;
    if (!answer.matched) {
      summary.textContent = "Nothing matched.";
      const why = answer.no_match;
      mount(
        results,
        h(
          "div",
          { class: "no-match", id: "no-match" },
          h("strong", {}, "Why: "),
          why ? why.reason : "no memory matches",
          why && why.missing_terms && why.missing_terms.length
            ? h("p", {}, "No memory contains: ", why.missing_terms.map((t) => h("code", {}, t)))
            : null,
        ),
      );
      return;
    }
    summary.textContent = `${items.length} ${items.length === 1 ? "result" : "results"}, best first (${MODES[state.mode].label.toLowerCase()})`;
    mount(results, items.map((item) => resultCard(item)));
  }

  mount(
    ctx.view,
    h(
      "section",
      { class: "search" },
      h("div", { class: "searchbar" }, query),
      h("div", { class: "modes", role: "radiogroup", "aria-label": "Matching" }, modeButtons),
      hint,
      h("div", { class: "filters" }, Object.values(filters), explain, superseded),
    ),
    summary,
    results,
  );
  showFilters();
  query.focus();
  await run();
}

function meta(memory, extra = []) {
  const bits = [];
  if (memory.kind) bits.push(h("span", { class: "kind" }, memory.kind));
  const tags = tagList(memory.tags);
  if (tags) bits.push(tags);
  const path = memory.path ?? memory.location;
  if (path) bits.push(h("span", { class: "path" }, path));
  bits.push(h("span", { class: "updated" }, "changed ", when(memory.updated_at)));
  return h("div", { class: "meta" }, bits, extra);
}

function memoryCard(memory) {
  return h(
    "article",
    { class: memory.superseded_by ? "memory-card superseded" : "memory-card", "data-id": memory.id },
    h("a", { class: "content", href: `#/memory/${memory.id}` }, memory.content),
    meta(memory, [h("span", { class: "version" }, `v${memory.version}`), supersededBadge(memory)]),
  );
}

function resultCard(item) {
  const ex = item.explanation;
  const contentTerms = ex ? ex.fields.content : [];
  return h(
    "article",
    { class: item.superseded_by ? "memory-card result superseded" : "memory-card result", "data-id": item.reference },
    h("a", { class: "content", href: `#/memory/${item.reference}` }, highlighted(item.content, contentTerms)),
    meta(item, [
      h("span", { class: "score", title: "relevance score (comparable within one answer)" }, `score ${item.score.toFixed(2)}`),
      supersededBadge(item),
    ]),
    ex ? explanation(ex) : null,
  );
}

function explanation(ex) {
  const terms = (list) => list.map((t) => h("code", {}, t));
  const lines = [];
  const matched = [h("span", { class: "what" }, "Matched "), ex.matched_terms.length ? terms(ex.matched_terms) : "nothing"];
  if (ex.unmatched_terms && ex.unmatched_terms.length) {
    matched.push(h("span", { class: "what" }, " · not in this memory "), terms(ex.unmatched_terms));
  }
  lines.push(h("p", { class: "terms" }, matched));
  const where = [];
  for (const [field, words] of [["content", ex.fields.content], ["tags", ex.fields.tags], ["path", ex.fields.path]]) {
    if (words && words.length) where.push(h("span", { class: "field" }, h("span", { class: "what" }, `in the ${field} `), terms(words)));
  }
  if (where.length) lines.push(h("p", { class: "where" }, where));
  // fields a newer server adds (e.g. which matches came through a stem) are shown as they come
  for (const [name, value] of Object.entries(ex)) {
    if (["matched_terms", "unmatched_terms", "fields", "rank", "reason"].includes(name)) continue;
    const shown = Array.isArray(value) ? terms(value.map(String)) : typeof value === "object" ? JSON.stringify(value) : String(value);
    lines.push(h("p", {}, h("span", { class: "what" }, `${name.replaceAll("_", " ")} `), shown));
  }
  lines.push(h("p", { class: "reason", "data-rank": ex.rank }, h("span", { class: "what" }, "Why: "), ex.reason));
  return h("div", { class: "explanation" }, lines);
}

// ---- a memory's page -----------------------------------------------------------------------

export async function memoryView(ctx, id) {
  const answer = await ctx.api.tool("memory_get", { id });
  if (!ctx.current()) return;
  let memory = answer.memory;
  const project = answer.project;

  const facts = h("dl", { class: "record", id: "record" });
  const content = h("pre", { class: "content", id: "memory-content" });
  const status = h("span", { id: "memory-status" });
  function paintRecord() {
    content.textContent = memory.content;
    mount(status, supersededBadge(memory));
    const row = (name, value) => [h("dt", {}, name), h("dd", {}, value ?? "—")];
    mount(
      facts,
      row("Reference", h("code", { id: "memory-id" }, memory.id)),
      row("Project", project.slug),
      row("Kind", memory.kind),
      row("Tags", tagList(memory.tags) || "—"),
      row("Path", memory.path),
      row("Team", memory.team_id),
      row("Source", memory.source),
      row("Version", h("span", { id: "memory-version" }, String(memory.version))),
      row("Created", when(memory.created_at)),
      row("Changed", when(memory.updated_at)),
      row("Expires", memory.expires_at ? when(memory.expires_at) : "never"),
    );
  }
  paintRecord();

  const actions = h("div", { class: "actions" }, copyButton(ctx, memory.id));
  const sections = [];
  const history = ctx.can("memory_history") && ctx.caps.takes("memory_history", "id") ? historySection(ctx, id) : null;
  if (history) sections.push(history.element);
  if (ctx.can("memory_update")) sections.push(editForm(ctx, () => memory, (updated) => {
    memory = updated;
    paintRecord();
    if (history) history.load();  // the change kept the version it replaced
  }));
  if (ctx.can("memory_delete")) actions.appendChild(deleteControl(ctx, () => memory));

  mount(
    ctx.view,
    h("p", {}, h("a", { href: "#/" }, "← Memories")),
    h("h2", {}, "Memory ", status),
    content,
    actions,
    facts,
    sections,
  );
  // read when the page opens, not on a click: whether the memory is still current (and what
  // replaced it) is what a reader checks first, and it is one call in the search bucket
  if (history) await history.load();
}

/**
 * The History card of a memory's page: its supersession chain and its earlier versions newest
 * first (memory_history). `load()` reads it again; only the answer to the latest load is painted.
 */
function historySection(ctx, id) {
  const element = h("section", { class: "card history", id: "history", "aria-busy": "true" }, h("h3", {}, "History"));
  let asked = 0;
  async function load() {
    asked += 1;
    const mine = asked;
    element.setAttribute("aria-busy", "true");
    try {
      const answer = await ctx.api.tool("memory_history", { id, limit: 50 });  // 50: every kept version
      if (mine !== asked || !ctx.current()) return;
      paintHistory(element, answer);
    } catch (err) {
      if (mine !== asked || !ctx.current()) return;
      mount(element, h("h3", {}, "History"), h("p", { class: "muted" }, "The history could not be read."));
      ctx.showError(err);
    } finally {
      if (mine === asked) element.removeAttribute("aria-busy");
    }
  }
  return { element, load };
}

function paintHistory(element, answer) {
  const parts = [h("h3", {}, "History")];
  const chain = answer.superseded_by || [];
  if (chain.length) {
    const links = chain.map((ref, at) => [at ? " → " : null, memoryLink(ref)]);
    parts.push(h("p", { id: "replaced-by" }, h("span", { class: "what" }, "Replaced by "), links, chain.length > 1 ? " (the latest last)" : null));
  }
  const replaced = answer.supersedes || [];
  if (replaced.length) {
    parts.push(h("p", { id: "replaces" }, h("span", { class: "what" }, "Replaces "), replaced.map((ref, at) => [at ? ", " : null, memoryLink(ref)])));
  }
  const versions = answer.versions || [];
  if (versions.length) {
    // each version beside the one that followed it: kind, tags, path and source where they differ
    let newer = answer.memory;
    const items = versions.map((v) => {
      const item = versionItem(v, newer);
      newer = v;
      return item;
    });
    parts.push(h("p", { class: "muted small" }, "Earlier versions, newest first:"), h("ol", { class: "versions", id: "versions" }, items));
  } else {
    parts.push(h("p", { class: "muted", id: "no-versions" }, "No earlier versions."));
  }
  if (answer.dropped > 0) {
    parts.push(
      h(
        "p",
        { class: "muted small", id: "history-dropped" },
        `${answer.dropped} older ${answer.dropped === 1 ? "version is" : "versions are"} no longer kept `,
        "(a memory keeps at most 50 versions and 64 KiB of their contents).",
      ),
    );
  }
  mount(element, parts);
}

function versionItem(version, newer) {
  const differs = [];
  if ((version.kind ?? null) !== (newer.kind ?? null)) differs.push(["kind", version.kind ?? "—"]);
  if ((version.tags || []).join("\u0000") !== (newer.tags || []).join("\u0000")) {
    differs.push(["tags", tagList(version.tags) || "—"]);
  }
  if ((version.path ?? null) !== (newer.path ?? null)) differs.push(["path", version.path ?? "—"]);
  if (version.source !== newer.source) differs.push(["source", version.source]);
  return h(
    "li",
    { class: "version", "data-version": version.version },
    h(
      "div",
      { class: "meta" },
      h("span", { class: "version-number" }, `v${version.version}`),
      h("span", {}, "written ", when(version.updated_at)),
      version.content === newer.content ? h("span", {}, `same content as v${newer.version}`) : null,
    ),
    h("pre", { class: "content" }, version.content),
    differs.length
      ? h("p", { class: "differs small" }, differs.map(([name, value]) => h("span", { class: "field" }, h("span", { class: "what" }, `${name} `), value)))
      : null,
  );
}

function editForm(ctx, current, changed) {
  let base = current();
  const contentField = h("textarea", { id: "edit-content", rows: 6, required: true }, base.content);
  const counter = h("span", { class: "counter muted small" });
  const kind = h("input", { id: "edit-kind", value: base.kind || "" });
  const tags = h("input", { id: "edit-tags", value: (base.tags || []).join(", ") });
  const path = h("input", { id: "edit-path", value: base.path || "" });
  const conflict = h("div", { id: "conflict", class: "notice warning", role: "alert", hidden: true });
  const countBytes = () => {
    const n = utf8Bytes(contentField.value);
    counter.textContent = `${n} / ${MAX_CONTENT_BYTES} bytes`;
    counter.classList.toggle("over", n > MAX_CONTENT_BYTES);
  };
  contentField.addEventListener("input", countBytes);
  countBytes();

  const form = h(
    "form",
    {
      id: "edit-form",
      method: "post",
      class: "card",
      onsubmit: async (event) => {
        event.preventDefault();
        const args = { id: base.id, if_version: base.version };
        if (contentField.value !== base.content) args.content = contentField.value;
        const k = kind.value.trim();
        if (k !== (base.kind || "")) args.kind = k || null;
        const t = splitList(tags.value);
        if (t.join("\u0000") !== (base.tags || []).join("\u0000")) args.tags = t;
        const p = path.value.trim();
        if (p !== (base.path || "")) args.path = p || null;
        if (Object.keys(args).length === 2) {
          ctx.showInfo("Nothing changed.");
          return;
        }
        try {
          const answer = await ctx.api.tool("memory_update", args);
          base = answer.memory;
          conflict.hidden = true;
          changed(base);
          ctx.showInfo(`Saved: version ${base.version}.`);
        } catch (err) {
          if (err instanceof ApiError && err.code === "conflict") {
            showConflict(err);
          } else {
            ctx.showError(err);
          }
        }
      },
    },
    h("h3", {}, "Edit"),
    h("label", { for: "edit-content" }, "Content ", counter),
    contentField,
    h("div", { class: "row" },
      h("label", { for: "edit-kind" }, "Kind", kind),
      h("label", { for: "edit-tags" }, "Tags (comma-separated)", tags),
      h("label", { for: "edit-path" }, "Path", path),
    ),
    conflict,
    h("button", { type: "submit", class: "primary", id: "save" }, "Save"),
  );

  function showConflict(err) {
    mount(
      conflict,
      h("strong", {}, "Someone else changed this memory first. "),
      `You were editing version ${base.version}; your changes are not saved (the server says: ${err.message}). `,
      "Your text is still in the form. ",
      h(
        "button",
        {
          type: "button",
          id: "reload-latest",
          onclick: async () => {
            try {
              const latest = await ctx.api.tool("memory_get", { id: base.id });
              base = latest.memory;
              changed(base);
              conflict.hidden = true;
              ctx.showInfo(
                `Loaded version ${base.version} above. Your edits are kept in the form: save again to apply them on top of it.`,
              );
            } catch (e) {
              ctx.showError(e);
            }
          },
        },
        "Load their version",
      ),
    );
    conflict.hidden = false;
  }
  return form;
}

function deleteControl(ctx, current) {
  const wrap = h("span", { class: "delete-control" });
  const ask = h("button", { type: "button", class: "danger", id: "delete" }, "Delete");
  ask.addEventListener("click", () => {
    mount(
      wrap,
      h("span", {}, "Delete this memory for good? "),
      h(
        "button",
        {
          type: "button",
          class: "danger",
          id: "delete-confirm",
          onclick: async () => {
            const memory = current();
            try {
              await ctx.api.tool("memory_delete", { id: memory.id });
              ctx.navigate("#/", `Deleted ${memory.id}.`);
            } catch (err) {
              ctx.showError(err);
            }
          },
        },
        "Yes, delete",
      ),
      h("button", { type: "button", id: "delete-cancel", onclick: () => mount(wrap, ask) }, "Cancel"),
    );
  });
  return mount(wrap, ask);
}

// ---- add -----------------------------------------------------------------------------------

function newIdempotencyKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function addView(ctx) {
  const teams = ctx.me.key.team_ids;
  const content = h("textarea", { id: "add-content", rows: 6, required: true, placeholder: "What should be remembered?" });
  const counter = h("span", { class: "counter muted small" });
  const kind = h("input", { id: "add-kind", placeholder: "decision, insight, fact, working…" });
  const tags = h("input", { id: "add-tags", placeholder: "billing, q3" });
  const path = h("input", { id: "add-path", placeholder: "acme/pricing/decisions" });
  const team = teams.length
    ? h("select", { id: "add-team" }, h("option", { value: "" }, "no team"), teams.map((t) => h("option", { value: t }, t)))
    : null;
  // one idempotency key per form: a double submit or a retry after a timeout stores one memory
  let idempotencyKey = newIdempotencyKey();
  const countBytes = () => {
    const n = utf8Bytes(content.value);
    counter.textContent = `${n} / ${MAX_CONTENT_BYTES} bytes`;
    counter.classList.toggle("over", n > MAX_CONTENT_BYTES);
  };
  content.addEventListener("input", () => {
    idempotencyKey = newIdempotencyKey();
    countBytes();
  });
  countBytes();
  const form = h(
    "form",
    {
      id: "add-form",
      method: "post",
      class: "card",
      onsubmit: async (event) => {
        event.preventDefault();
        const args = { content: content.value };
        if (kind.value.trim()) args.kind = kind.value.trim();
        const t = splitList(tags.value);
        if (t.length) args.tags = t;
        if (path.value.trim()) args.path = path.value.trim();
        if (team && team.value) args.team_id = team.value;
        try {
          const answer = await ctx.api.tool("memory_add", args, { headers: { "Idempotency-Key": idempotencyKey } });
          ctx.navigate(
            `#/memory/${answer.memory.id}`,
            answer.deduplicated
              ? "An identical memory was stored already: here it is."
              : `Saved in ${answer.project.slug} as ${answer.memory.id}.`,
          );
        } catch (err) {
          ctx.showError(err);
        }
      },
    },
    h("h2", {}, "Add a memory"),
    h("label", { for: "add-content" }, "Content ", counter),
    content,
    h("div", { class: "row" },
      h("label", { for: "add-kind" }, "Kind", kind),
      h("label", { for: "add-tags" }, "Tags (comma-separated)", tags),
      h("label", { for: "add-path" }, "Path", path),
      team ? h("label", { for: "add-team" }, "Team", team) : null,
    ),
    h("p", { class: "muted small" }, `Saved in project ${ctx.project() ? ctx.project().slug : "(default)"}.`),
    h("button", { type: "submit", class: "primary", id: "add-save" }, "Save"),
  );
  mount(ctx.view, form);
  content.focus();
}

export { copyButton, memoryCard };
