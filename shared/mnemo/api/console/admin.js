// Workspace administration for admin keys: keys, projects, limits with the buckets' current
// levels, and a project's export as JSON Lines.

import { h, mount, splitList, when } from "./dom.js";

const SCOPES = [
  ["memory:read", "read: the read tools"],
  ["memory:write", "write: add, update, delete, forget"],
  ["memory:delete", "delete: delete and forget only"],
  ["admin", "admin: everything, this console's admin pages too"],
];

function projectSlug(ctx, id) {
  const found = ctx.me.projects.find((p) => p.id === id);
  return found ? found.slug : id;
}

// ---- keys ----------------------------------------------------------------------------------

export async function keysView(ctx) {
  const table = h("tbody", { id: "keys" });
  const secretSlot = h("div", { id: "secret-slot" });

  async function refresh() {
    const answer = await ctx.api.admin("GET", "keys");
    if (!ctx.current()) return;
    mount(
      table,
      answer.keys.map((key) =>
        h(
          "tr",
          { "data-key-id": key.id, class: key.revoked ? "revoked" : "" },
          h("td", {}, key.label, key.id === ctx.me.key.id ? h("span", { class: "muted" }, " (this console)") : null),
          h("td", {}, h("code", {}, key.id)),
          h("td", {}, key.scopes.join(", ")),
          h("td", {}, key.default_project_id ? projectSlug(ctx, key.default_project_id) : "—"),
          h("td", {}, key.team_ids.join(", ") || "—"),
          h("td", {}, when(key.created_at)),
          h("td", {}, key.revoked ? "revoked" : revokeControl(key)),
        ),
      ),
    );
  }

  function revokeControl(key) {
    const cell = h("span", {});
    const ask = h("button", { type: "button", class: "danger revoke" }, "Revoke");
    ask.addEventListener("click", () =>
      mount(
        cell,
        "Refuse this key from its next call? ",
        h(
          "button",
          {
            type: "button",
            class: "danger revoke-confirm",
            onclick: async () => {
              try {
                await ctx.api.admin("POST", `keys/${encodeURIComponent(key.id)}/revoke`);
                if (key.id === ctx.me.key.id) {
                  ctx.signOut("You revoked the key this console was using.");
                  return;
                }
                ctx.showInfo(`Revoked ${key.label} (${key.id}).`);
                await refresh();
              } catch (err) {
                ctx.showError(err);
              }
            },
          },
          "Yes, revoke",
        ),
        h("button", { type: "button", onclick: () => mount(cell, ask) }, "Cancel"),
      ),
    );
    return mount(cell, ask);
  }

  const label = h("input", { id: "key-label", required: true, maxlength: 128, placeholder: "ci-bot" });
  const scopeBoxes = SCOPES.map(([scope, words]) =>
    h("label", { class: "check" }, h("input", { type: "checkbox", name: "scope", value: scope, checked: scope === "memory:read" }), ` ${words}`),
  );
  const defaultProject = h(
    "select",
    { id: "key-project" },
    h("option", { value: "" }, "the workspace's default"),
    ctx.me.projects.map((p) => h("option", { value: p.id }, p.slug)),
  );
  const teams = h("input", { id: "key-teams", placeholder: "red, blue" });
  const form = h(
    "form",
    {
      id: "key-form",
      method: "post",
      class: "card",
      onsubmit: async (event) => {
        event.preventDefault();
        const scopes = scopeBoxes.map((l) => l.querySelector("input")).filter((i) => i.checked).map((i) => i.value);
        const args = { label: label.value.trim(), scopes, team_ids: splitList(teams.value) };
        if (defaultProject.value) args.default_project = defaultProject.value;
        try {
          const created = await ctx.api.admin("POST", "keys", args);
          showSecret(created);
          form.reset();
          await refresh();
        } catch (err) {
          ctx.showError(err);
        }
      },
    },
    h("h3", {}, "Create a key"),
    h("label", { for: "key-label" }, "Label (who uses it; also its memories' default source)", label),
    h("fieldset", {}, h("legend", {}, "Scopes"), scopeBoxes),
    h("div", { class: "row" },
      h("label", { for: "key-project" }, "Default project", defaultProject),
      h("label", { for: "key-teams" }, "Teams (comma-separated)", teams),
    ),
    h("button", { type: "submit", class: "primary", id: "key-create" }, "Create key"),
  );

  // The secret exists only in this element: not in storage, not in the keys table, gone when the
  // panel is dismissed or the page changes. Mnemo itself keeps only a salted hash.
  function showSecret(created) {
    const field = h("input", { id: "new-secret", readonly: true, value: created.secret, "aria-label": "The new key" });
    const copy = h(
      "button",
      {
        type: "button",
        onclick: async () => {
          try {
            await navigator.clipboard.writeText(created.secret);
            copy.textContent = "Copied";
          } catch {
            field.select();
            ctx.showInfo("Copying is not allowed here: the key is selected, press Ctrl+C (⌘C) to copy it.");
          }
        },
      },
      "Copy",
    );
    mount(
      secretSlot,
      h(
        "div",
        { class: "notice secret", role: "alert" },
        h("strong", {}, `Key “${created.key.label}” created. `),
        "Copy it now: this is the only time it is shown, and Mnemo keeps only a hash of it.",
        h("div", { class: "row" }, field, copy),
        h("button", { type: "button", id: "secret-done", onclick: () => secretSlot.replaceChildren() }, "I have stored it"),
      ),
    );
    field.select();
  }

  mount(
    ctx.view,
    h("h2", {}, "Keys"),
    secretSlot,
    h(
      "table",
      { class: "grid" },
      h("thead", {}, h("tr", {}, ["Label", "Id", "Scopes", "Default project", "Teams", "Created", ""].map((c) => h("th", {}, c)))),
      table,
    ),
    form,
  );
  await refresh();
}

// ---- projects ------------------------------------------------------------------------------

export async function projectsView(ctx) {
  const table = h("tbody", { id: "projects" });
  async function refresh() {
    const answer = await ctx.api.admin("GET", "projects");
    if (!ctx.current()) return;
    mount(
      table,
      answer.projects.map((p) =>
        h(
          "tr",
          { "data-project-id": p.id },
          h("td", {}, p.slug),
          h("td", {}, p.name),
          h("td", {}, h("code", {}, p.id)),
          h("td", {}, p.default ? "default" : ""),
          h("td", {}, when(p.created_at)),
        ),
      ),
    );
    return answer.projects;
  }
  const slug = h("input", { id: "project-slug", required: true, maxlength: 63, placeholder: "acme-pricing" });
  const name = h("input", { id: "project-name", maxlength: 128, placeholder: "Acme pricing" });
  const form = h(
    "form",
    {
      id: "project-form",
      method: "post",
      class: "card",
      onsubmit: async (event) => {
        event.preventDefault();
        const args = { slug: slug.value.trim() };
        if (name.value.trim()) args.name = name.value.trim();
        try {
          const created = await ctx.api.admin("POST", "projects", args);
          ctx.showInfo(`Created project ${created.project.slug}; the project switcher lists it.`);
          form.reset();
          await refresh();
          const me = await ctx.api.whoami();
          ctx.me.projects.splice(0, ctx.me.projects.length, ...me.projects);
          const switcher = document.getElementById("project");
          if (switcher && !switcher.querySelector(`option[value="${CSS.escape(created.project.id)}"]`)) {
            switcher.appendChild(h("option", { value: created.project.id }, created.project.slug));
          }
        } catch (err) {
          ctx.showError(err);
        }
      },
    },
    h("h3", {}, "Create a project"),
    h("div", { class: "row" },
      h("label", { for: "project-slug" }, "Slug (a-z, 0-9, -)", slug),
      h("label", { for: "project-name" }, "Name", name),
    ),
    h("button", { type: "submit", class: "primary", id: "project-create" }, "Create project"),
  );
  mount(
    ctx.view,
    h("h2", {}, "Projects"),
    h("table", { class: "grid" }, h("thead", {}, h("tr", {}, ["Slug", "Name", "Id", "", "Created"].map((c) => h("th", {}, c)))), table),
    form,
  );
  await refresh();
}

// ---- limits --------------------------------------------------------------------------------

export async function limitsView(ctx) {
  const body = h("div", { id: "limits" });
  async function refresh() {
    const answer = await ctx.api.admin("GET", "limits");
    if (!ctx.current()) return;
    const bucket = (name, words, level) =>
      h(
        "div",
        { class: "bucket card", "data-bucket": name },
        h("h3", {}, words),
        h("meter", { min: 0, max: level.limit, value: level.remaining, "aria-label": `${name} calls left` }),
        h("p", {}, h("strong", { class: "remaining" }, String(level.remaining)), ` of ${level.limit} calls left this minute`),
        h(
          "p",
          { class: "muted" },
          level.full_in_s ? `full again in ${level.full_in_s} s` : "full",
          level.retry_after_s ? ` · next call admitted in ${level.retry_after_s} s` : "",
        ),
      );
    mount(
      body,
      h(
        "p",
        {},
        answer.custom ? "This workspace has its own limits." : "This workspace uses the deployment's default limits.",
        " Only the operator changes them (mnemo limits set).",
      ),
      h(
        "div",
        { class: "buckets" },
        bucket("search", "Search calls (read tools)", answer.levels.search),
        bucket("write", "Write calls", answer.levels.write),
      ),
      h("p", { class: "muted small" }, "Levels as they stand after this page's own call (one search call)."),
    );
  }
  mount(
    ctx.view,
    h("h2", {}, "Rate limits"),
    body,
    h("button", { type: "button", id: "limits-refresh", onclick: () => refresh().catch(ctx.showError) }, "Refresh"),
  );
  await refresh();
}

// ---- export --------------------------------------------------------------------------------

export function exportView(ctx) {
  const select = h(
    "select",
    { id: "export-project" },
    ctx.me.projects.map((p) => h("option", { value: p.id, selected: p.id === ctx.api.project }, p.slug)),
  );
  const status = h("p", { id: "export-status", role: "status" });
  const button = h("button", { type: "button", class: "primary", id: "export-start" }, "Download JSONL");
  button.addEventListener("click", async () => {
    button.disabled = true;
    const lines = [];
    let cursor = null;
    let slug = "";
    try {
      do {
        const page = await ctx.api.admin("POST", "export", { project: select.value, cursor, limit: 500 });
        slug = page.project.slug;
        for (const memory of page.memories) lines.push(JSON.stringify(memory) + "\n");
        cursor = page.cursor;
        status.textContent = `${lines.length} memories read…`;
      } while (cursor);
      const blob = new Blob(lines, { type: "application/x-ndjson" });
      const url = URL.createObjectURL(blob);
      const link = h("a", { href: url, download: `mnemo-${slug}.jsonl` });
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      status.textContent = `Exported ${lines.length} ${lines.length === 1 ? "memory" : "memories"} of ${slug} as mnemo-${slug}.jsonl.`;
      status.dataset.count = String(lines.length);
    } catch (err) {
      status.textContent = "";
      ctx.showError(err);
    } finally {
      button.disabled = false;
    }
  });
  mount(
    ctx.view,
    h("h2", {}, "Export a project"),
    h(
      "p",
      {},
      "Every live memory of the project as JSON Lines, one record a line with its id, version and timestamps — the " +
        "format of mnemo export, which mnemo import reads back.",
    ),
    h("div", { class: "row" }, h("label", { for: "export-project" }, "Project", select), button),
    status,
  );
}
