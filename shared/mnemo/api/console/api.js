// The REST API as the console uses it: the key travels in the Authorization header only (never
// in a URL), every failure becomes an ApiError, and errors are put into words for people.

export class ApiError extends Error {
  constructor(status, body, retryAfter) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.code = (body && body.code) || (status === 0 ? "network" : "internal");
    this.details = (body && body.details) || [];
    this.retryAfter = retryAfter;
  }
}

// URLs relative to the page (/console), so a stage prefix in front of the API is kept.
const base = new URL(".", document.baseURI);

export class Api {
  constructor(key) {
    this.key = key;
    /** the project (id) that tool calls act in; null: the key's or the workspace's default */
    this.project = null;
  }

  async request(method, path, body, { signal, headers = {} } = {}) {
    const init = {
      method,
      headers: { Authorization: `Bearer ${this.key}`, Accept: "application/json", ...headers },
      signal,
      cache: "no-store",
      credentials: "omit",
      referrerPolicy: "no-referrer",
    };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let reply;
    try {
      reply = await fetch(new URL(path, base), init);
    } catch (err) {
      if (err && err.name === "AbortError") throw err;
      throw new ApiError(0, { message: "the server could not be reached", code: "network" });
    }
    let payload = null;
    const text = await reply.text();
    if (text) {
      try {
        payload = JSON.parse(text);
      } catch {
        payload = { message: `the server answered ${reply.status} with a body that is not JSON`, code: "internal" };
      }
    }
    if (!reply.ok) {
      const retry = Number(reply.headers.get("Retry-After") || (payload && payload.retry_after) || 0) || null;
      throw new ApiError(reply.status, payload, retry);
    }
    return payload;
  }

  /** POST /v1/tools/<name> in the selected project. */
  tool(name, args = {}, options = {}) {
    const headers = { ...(options.headers || {}) };
    if (this.project) headers["X-Project"] = this.project;
    return this.request("POST", `v1/tools/${name}`, args, { ...options, headers });
  }

  whoami() {
    return this.request("GET", "v1/whoami");
  }

  admin(method, path, body) {
    return this.request(method, `v1/admin/${path}`, body);
  }
}

/** The OpenAPI document (no key needed): which arguments each tool takes on this server. */
export async function loadCapabilities() {
  const reply = await fetch(new URL("openapi.json", base), { cache: "no-store", credentials: "omit" });
  if (!reply.ok) throw new ApiError(reply.status, { message: "the OpenAPI document could not be read" });
  const doc = await reply.json();
  const schemas = (doc.components && doc.components.schemas) || {};
  const args = {};
  for (const [path, item] of Object.entries(doc.paths || {})) {
    const match = /^\/v1\/tools\/([a-z_]+)$/.exec(path);
    const ref = match && item.post && item.post.requestBody?.content?.["application/json"]?.schema?.$ref;
    if (!ref) continue;
    const schema = schemas[ref.split("/").pop()] || {};
    args[match[1]] = new Set(Object.keys(schema.properties || {}));
  }
  return {
    /** true when the server's `tool` takes the argument `name` */
    takes(tool, name) {
      return Boolean(args[tool] && args[tool].has(name));
    },
  };
}

const CODE_WORDS = {
  invalid_request: "The request was refused",
  unauthorized: "The key was refused",
  forbidden: "This key may not do that",
  not_found: "Not found",
  conflict: "Conflict",
  content_too_large: "Too large",
  rate_limited: "Rate limit reached",
  unavailable: "The service is unavailable for a moment",
  internal: "The server failed unexpectedly",
  network: "No connection",
};

/** An error as a sentence (and its details as a list), for people. */
export function describe(err) {
  if (!(err instanceof ApiError)) {
    return { title: "Something went wrong in the console", message: String((err && err.message) || err), details: [] };
  }
  const details = (err.details || []).map((d) => {
    const where = Array.isArray(d.loc) ? d.loc.filter((p) => p !== "body").join(".") : "";
    return where ? `${where}: ${d.msg || d.type}` : String(d.msg || d.type || "");
  });
  return { title: CODE_WORDS[err.code] || `HTTP ${err.status}`, message: err.message, details };
}
