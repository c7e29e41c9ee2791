// recall_context preview: the text block an agent would paste into its prompt, with its token count.

import { h, mount } from "./dom.js";

export function contextView(ctx) {
  const state = contextView.state || (contextView.state = { query: "", maxTokens: 2000, maxItems: 10, path: "", kind: "" });
  const query = h("input", {
    id: "ctx-query",
    type: "search",
    value: state.query,
    autocomplete: "off",
    placeholder: "What is the agent about to work on?",
  });
  const maxTokens = h("input", { id: "ctx-max-tokens", type: "number", min: 1, max: 50000, value: state.maxTokens });
  const maxItems = h("input", { id: "ctx-max-items", type: "number", min: 1, max: 100, value: state.maxItems });
  const path = h("input", { id: "ctx-path", value: state.path, placeholder: "acme/%" });
  const kind = h("input", { id: "ctx-kind", value: state.kind, placeholder: "decision or work%" });
  const usage = h("p", { id: "ctx-usage", class: "usage", "aria-live": "polite" });
  const block = h("pre", { id: "ctx-block", class: "context-block" });
  const refs = h("ol", { id: "ctx-refs", class: "refs" });
  let timer = null;
  let inflight = null;

  async function run() {
    clearTimeout(timer);
    Object.assign(state, {
      query: query.value,
      maxTokens: Number(maxTokens.value) || 2000,
      maxItems: Number(maxItems.value) || 10,
      path: path.value.trim(),
      kind: kind.value.trim(),
    });
    if (!state.query.trim()) {
      usage.textContent = "Type what the agent is about to work on to see what it would be given.";
      block.textContent = "";
      refs.replaceChildren();
      return;
    }
    const args = { query: state.query, max_tokens: state.maxTokens, max_items: state.maxItems };
    if (state.path) args.path_filter = state.path;
    if (state.kind) args.memory_type = state.kind;
    if (inflight) inflight.abort();
    const controller = new AbortController();
    inflight = controller;
    try {
      const answer = await ctx.api.tool("recall_context", args, { signal: controller.signal });
      if (controller.signal.aborted || !ctx.current()) return;
      ctx.clearError();
      const n = answer.references.length;
      usage.textContent =
        `${answer.used_tokens} of ${state.maxTokens} tokens · ${n} ${n === 1 ? "memory" : "memories"}` +
        (answer.truncated ? " · cut to fit the budget" : "");
      usage.dataset.usedTokens = String(answer.used_tokens);
      block.textContent = answer.context || "";
      if (answer.no_match) block.textContent = `Nothing to recall: ${answer.no_match.reason}`;
      mount(refs, answer.references.map((ref) => h("li", {}, h("a", { href: `#/memory/${ref}` }, ref))));
    } catch (err) {
      if (err && err.name === "AbortError") return;
      if (ctx.current()) ctx.showError(err);
    } finally {
      if (inflight === controller) inflight = null;
    }
  }
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(run, 250);
  };
  for (const input of [query, maxTokens, maxItems, path, kind]) input.addEventListener("input", schedule);

  mount(
    ctx.view,
    h("h2", {}, "Context preview"),
    h(
      "p",
      { class: "muted" },
      "What recall_context would hand an agent: the best memories packed into one block, never over the token budget " +
        "(Mnemo's estimate: a CJK character is one token, other text about four characters a token).",
    ),
    h(
      "div",
      { class: "filters" },
      h("label", { class: "wide", for: "ctx-query" }, "Query", query),
      h("label", { for: "ctx-max-tokens" }, "Token budget", maxTokens),
      h("label", { for: "ctx-max-items" }, "At most memories", maxItems),
      h("label", { for: "ctx-path" }, "Path pattern", path),
      h("label", { for: "ctx-kind" }, "Kind pattern", kind),
    ),
    usage,
    block,
    h("h3", {}, "Memories in the block"),
    refs,
  );
  query.focus();
  return run();
}
