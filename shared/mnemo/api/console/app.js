// The console's shell: sign-in, the header (who is signed in, the project switcher, the
// navigation the key's scopes allow), the notices area and the hash router.
//
// The API key lives in sessionStorage only: gone when the tab closes, never in a URL, a cookie,
// localStorage or a log line.

import { Api, ApiError, describe, loadCapabilities } from "./api.js";
import { h, mount } from "./dom.js";
import { keysView, limitsView, exportView, projectsView } from "./admin.js";
import { contextView } from "./context.js";
import { addView, memoryView, searchView } from "./memories.js";

function forgetViews() {
  delete searchView.state;
  delete contextView.state;
}

const KEY_SLOT = "mnemo.console.key";
const PROJECT_SLOT = "mnemo.console.project";

const root = document.getElementById("app");
let session = null;
let countdown = null;

// ---- notices ------------------------------------------------------------------------------

function noticeArea() {
  return document.getElementById("notice");
}

/** Show an error in words; a rate limit or an outage counts down the time to wait. */
export function showError(err) {
  if (err && err.name === "AbortError") return;
  const area = noticeArea();
  if (!area) return;
  if (err instanceof ApiError && err.code === "unauthorized" && session) {
    signOut("The key was refused (unknown or revoked). Sign in with a valid key.");
    return;
  }
  const { title, message, details } = describe(err);
  const wait = h("span", { class: "wait" });
  const box = h(
    "div",
    { class: "notice error", role: "alert", "data-code": err instanceof ApiError ? err.code : "client" },
    h("strong", {}, `${title}: `),
    message,
    details.length ? h("ul", {}, details.map((d) => h("li", {}, d))) : null,
    wait,
    h("button", { type: "button", class: "link close", onclick: clearNotice, "aria-label": "Dismiss" }, "×"),
  );
  mount(area, box);
  clearInterval(countdown);
  if (err instanceof ApiError && err.retryAfter && ["rate_limited", "unavailable"].includes(err.code)) {
    const until = Date.now() + err.retryAfter * 1000;
    const tick = () => {
      const left = Math.ceil((until - Date.now()) / 1000);
      if (left > 0) {
        wait.textContent = ` Try again in ${left} s.`;
      } else {
        wait.textContent = " You can try again now.";
        clearInterval(countdown);
      }
    };
    tick();
    countdown = setInterval(tick, 1000);
  }
}

export function showInfo(text) {
  const area = noticeArea();
  if (!area) return;
  clearInterval(countdown);
  mount(
    area,
    h(
      "div",
      { class: "notice info", role: "status" },
      text,
      h("button", { type: "button", class: "link close", onclick: clearNotice, "aria-label": "Dismiss" }, "×"),
    ),
  );
}

export function clearNotice() {
  clearInterval(countdown);
  const area = noticeArea();
  if (area) area.replaceChildren();
}

/** Remove an error notice (a later call succeeded) but keep an information one. */
export function clearError() {
  const area = noticeArea();
  if (area && area.querySelector(".notice.error")) clearNotice();
}

/** shown once the next page is painted (e.g. "Deleted …" after a delete) */
let pendingInfo = null;

// ---- sign-in ------------------------------------------------------------------------------

function signInView(message) {
  const input = h("input", {
    id: "signin-key",
    name: "key",
    type: "password",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    placeholder: "mnemo_…",
  });
  const status = h("p", { class: "muted", id: "signin-status", role: "status" });
  const form = h(
    "form",
    {
      id: "signin",
      method: "post",
      class: "card narrow",
      onsubmit: async (event) => {
        event.preventDefault();
        const key = input.value.trim();
        if (!key) return;
        status.textContent = "Checking the key…";
        try {
          await start(key);
          input.value = "";
        } catch (err) {
          status.textContent = "";
          if (err instanceof ApiError && err.code === "unauthorized") {
            showError(new ApiError(401, { message: "unknown or revoked API key", code: "unauthorized" }));
          } else {
            showError(err);
          }
        }
      },
    },
    h("h1", {}, "Mnemo console"),
    h("p", {}, "See, search, fix and prune your agents' memories."),
    h("label", { for: "signin-key" }, "API key"),
    input,
    h("button", { type: "submit", class: "primary" }, "Sign in"),
    status,
    h(
      "p",
      { class: "muted small" },
      "The key stays in this tab's session storage only and is sent to this server alone, in the " +
        "Authorization header. Closing the tab forgets it.",
    ),
  );
  mount(root, h("div", { id: "notice", class: "notices" }), form);
  if (message) showInfo(message);
  input.focus();
}

async function start(key) {
  const api = new Api(key);
  const [me, caps] = await Promise.all([api.whoami(), loadCapabilities()]);
  sessionStorage.setItem(KEY_SLOT, key);
  const allowed = new Set(me.operations);
  const projects = me.projects;
  const stored = sessionStorage.getItem(PROJECT_SLOT);
  const fallback = me.key.default_project_id || me.workspace.default_project_id;
  const project = projects.find((p) => p.id === stored) || projects.find((p) => p.id === fallback) || projects[0];
  api.project = project ? project.id : null;
  session = {
    api,
    me,
    caps,
    can: (operation) => allowed.has(operation),
    project: () => projects.find((p) => p.id === api.project) || null,
  };
  renderShell();
  route();
}

function signOut(message) {
  sessionStorage.removeItem(KEY_SLOT);
  sessionStorage.removeItem(PROJECT_SLOT); // the next key starts in its own default project
  session = null;
  forgetViews(); // the next key must not see the last one's queries and filters
  if (location.hash && location.hash !== "#/") history.replaceState(null, "", location.pathname);
  signInView(message);
}

// ---- the shell ----------------------------------------------------------------------------

const SCOPE_WORDS = {
  "memory:read": "read",
  "memory:write": "write",
  "memory:delete": "delete",
  admin: "admin",
};

function navigation() {
  const can = session.can;
  const links = [
    ["#/", "Memories", can("memory_search")],
    ["#/add", "Add", can("memory_add")],
    ["#/context", "Context preview", can("recall_context")],
    ["#/key", "This key", true],
    ["#/keys", "Keys", can("admin_keys_list")],
    ["#/projects", "Projects", can("admin_projects_list")],
    ["#/limits", "Limits", can("admin_limits_get")],
    ["#/export", "Export", can("admin_project_export")],
  ];
  return h(
    "nav",
    { "aria-label": "Sections" },
    links.filter(([, , shown]) => shown).map(([href, label]) => h("a", { href, "data-nav": href }, label)),
  );
}

function projectSwitcher() {
  const { me, api } = session;
  const select = h(
    "select",
    {
      id: "project",
      "aria-label": "Project",
      onchange: () => {
        api.project = select.value;
        sessionStorage.setItem(PROJECT_SLOT, select.value);
        // a memory belongs to one project: after a switch, its page would be "not found"
        if (location.hash.startsWith("#/memory/")) location.hash = "#/";
        else route();
      },
    },
    me.projects.map((p) =>
      h("option", { value: p.id, selected: p.id === api.project }, p.slug + (p.default ? " (default)" : "")),
    ),
  );
  return h("label", { class: "switcher" }, "Project ", select);
}

function renderShell() {
  const { me } = session;
  const header = h(
    "header",
    {},
    h("a", { href: "#/", class: "brand" }, "Mnemo"),
    h(
      "span",
      { class: "identity", id: "identity" },
      h("span", { class: "label" }, me.key.label),
      " · ",
      h("span", { class: "workspace", title: me.workspace.id }, me.workspace.name),
      " · ",
      me.key.scopes.map((s) => h("span", { class: "scope", "data-scope": s }, SCOPE_WORDS[s] || s)),
    ),
    projectSwitcher(),
    h("button", { type: "button", id: "signout", class: "link", onclick: () => signOut("Signed out.") }, "Sign out"),
  );
  mount(root, header, navigation(), h("div", { id: "notice", class: "notices" }), h("main", { id: "view" }));
}

// ---- routing ------------------------------------------------------------------------------

const ROUTES = [
  // a key that may not list memories (memory:delete alone) starts on its own page
  [/^#?\/?$/, (ctx) => (ctx.can("memory_search") ? searchView(ctx) : keyView(ctx))],
  [/^#\/memory\/(mem_[0-9A-Za-z]{26})$/, (ctx, id) => memoryView(ctx, id), "memory_get"],
  [/^#\/add$/, (ctx) => addView(ctx), "memory_add"],
  [/^#\/context$/, (ctx) => contextView(ctx), "recall_context"],
  [/^#\/key$/, (ctx) => keyView(ctx)],
  [/^#\/keys$/, (ctx) => keysView(ctx), "admin_keys_list"],
  [/^#\/projects$/, (ctx) => projectsView(ctx), "admin_projects_list"],
  [/^#\/limits$/, (ctx) => limitsView(ctx), "admin_limits_get"],
  [/^#\/export$/, (ctx) => exportView(ctx), "admin_project_export"],
];

let generation = 0;

function route() {
  if (!session) return;
  const view = document.getElementById("view");
  const hash = location.hash || "#/";
  for (const link of document.querySelectorAll("nav a")) {
    link.classList.toggle("active", link.getAttribute("href") === hash);
  }
  clearNotice();
  if (pendingInfo) {
    showInfo(pendingInfo);
    pendingInfo = null;
  }
  generation += 1;
  const mine = generation;
  const ctx = {
    ...session,
    view,
    showError,
    showInfo,
    clearNotice,
    clearError,
    /** go to `to`; `info` is shown on the page it opens */
    navigate: (to, info) => {
      pendingInfo = info || null;
      if (location.hash === to) route();
      else location.hash = to;
    },
    /** false once the user has moved on: late answers must not paint over the new view */
    current: () => mine === generation,
    signOut,
  };
  for (const [pattern, render, needs] of ROUTES) {
    const found = pattern.exec(hash);
    if (!found) continue;
    if (needs && !session.can(needs)) {
      mount(view, h("p", { class: "muted" }, "This key may not open this page."));
      return;
    }
    mount(view);
    Promise.resolve(render(ctx, ...found.slice(1))).catch(showError);
    return;
  }
  mount(view, h("p", { class: "muted" }, "No such page. "), h("a", { href: "#/" }, "Back to the memories"));
}

function keyView(ctx) {
  const { me } = ctx;
  const row = (name, ...value) => [h("dt", {}, name), h("dd", {}, ...value)];
  const defaultProject = me.projects.find((p) => p.id === me.key.default_project_id);
  mount(
    ctx.view,
    h("h2", {}, "This key"),
    h(
      "dl",
      { class: "record", id: "key-facts" },
      row("Label", me.key.label),
      row("Key id", h("code", {}, me.key.id)),
      row("Scopes", me.key.scopes.join(", ")),
      row("Workspace", `${me.workspace.name} `, h("code", {}, me.workspace.id)),
      row("Default project", defaultProject ? defaultProject.slug : "the workspace's default"),
      row("Teams", me.key.team_ids.length ? me.key.team_ids.join(", ") : "none (memories without a team only)"),
      row("Projects it can reach", me.projects.map((p) => p.slug).join(", ")),
    ),
    h("h3", {}, "What it may call"),
    h(
      "ul",
      { class: "operations", id: "key-operations" },
      me.operations.map((op) => h("li", {}, h("code", {}, op))),
    ),
  );
}

// ---- start --------------------------------------------------------------------------------

window.addEventListener("hashchange", route);

const saved = sessionStorage.getItem(KEY_SLOT);
if (saved) {
  start(saved).catch((err) => {
    sessionStorage.removeItem(KEY_SLOT);
    signInView(err instanceof ApiError && err.code === "unauthorized" ? "The saved key was refused; sign in again." : "");
    if (!(err instanceof ApiError && err.code === "unauthorized")) showError(err);
  });
} else {
  signInView();
}
