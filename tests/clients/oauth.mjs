// The official TypeScript SDK's OAuth client (@modelcontextprotocol/sdk, pinned in package.json)
// against a Mnemo whose MCP endpoint wants a token, as a host runs it — nothing of the flow is
// hand-made here, only the user's part (tests/integration/test_mcp_oauth.py decides):
//
//   authorization_code: connect → the SDK reads the 401's WWW-Authenticate, Mnemo's protected-
//     resource metadata, the authorization server's metadata, registers itself (dynamic client
//     registration, RFC 7591) and sends "the user" to the authorization URL (PKCE S256). The user
//     here is a headless browser made of plain form posts: it opens that URL, fills Keycloak's
//     login form, accepts the consent page if one comes, and hands the code from the redirect to
//     transport.finishAuth(); then a new session calls tools.
//   client_credentials: the SDK's ClientCredentialsProvider, what a gateway runs: discovery from
//     the 401, a token from the token endpoint (client_secret_basic), then tools.
//
//   node oauth.mjs '{"flow": "authorization_code", "url": "http://127.0.0.1:8787/mcp",
//                    "username": "alice", "password": "...", "marker": "m1"}'
//   node oauth.mjs '{"flow": "client_credentials", "url": "...", "issuer": "...",
//                    "clientId": "...", "clientSecret": "...", "scope": "memory:read memory:write"}'
//
// Prints one JSON document: every HTTP exchange the SDK made (method, URL, status), what the
// user saw at the authorization server, the registered client, the token's claims (decoded for
// the test's bookkeeping; Mnemo verifies them), and each call's result or {"threw": {...}}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const spec = JSON.parse(process.argv[2]);
const marker = spec.marker ?? `m${Date.now()}`;
const seen = { exchanges: [], userAgent: [] };

// every request the SDK makes, in order (its fetchFn)
async function recordingFetch(input, init) {
  const answer = await fetch(input, init);
  seen.exchanges.push({ method: init?.method ?? "GET", url: String(input), status: answer.status });
  return answer;
}

function claims(token) {
  return JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString("utf8"));
}

async function attempt(fn) {
  try {
    return await fn();
  } catch (error) {
    return { threw: { name: error?.constructor?.name, code: error?.code, message: String(error?.message) } };
  }
}

// -- the user at the authorization server: a browser of form posts ------------------------------

const cookies = new Map();

async function browse(url, init = {}) {
  const headers = { ...(init.headers ?? {}), cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") };
  const answer = await fetch(url, { ...init, headers, redirect: "manual" });
  for (const line of answer.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const at = pair.indexOf("=");
    cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
  }
  return answer;
}

const entities = { "&amp;": "&", "&quot;": '"', "&#39;": "'", "&lt;": "<", "&gt;": ">" };
const unescape = (text) => text.replace(/&(amp|quot|#39|lt|gt);/g, (e) => entities[e]);

function form(html) {
  const found = html.match(/<form\b[^>]*\baction="([^"]+)"[^>]*>([\s\S]*?)<\/form>/);
  if (!found) return null;
  const fields = {};
  for (const input of found[2].matchAll(/<input\b[^>]*>/g)) {
    const name = input[0].match(/\bname="([^"]*)"/)?.[1];
    const type = input[0].match(/\btype="([^"]*)"/)?.[1] ?? "text";
    const value = input[0].match(/\bvalue="([^"]*)"/)?.[1] ?? "";
    if (name && type === "hidden") fields[name] = unescape(value);
    if (name && type === "submit" && name === "accept") fields[name] = unescape(value) || "Yes";
  }
  return { action: unescape(found[1]), fields, login: /name="password"/.test(found[2]) };
}

// follows the authorization server's pages until it redirects to the client's redirect URI
async function authorizeAsUser(authorizationUrl, redirectUrl) {
  let page = new URL(authorizationUrl);
  let answer = await browse(page);
  for (let step = 0; step < 10; step++) {
    const location = answer.headers.get("location");
    if (location?.startsWith(redirectUrl)) {
      const back = new URL(location);
      return { code: back.searchParams.get("code"), state: back.searchParams.get("state"), error: back.searchParams.get("error") };
    }
    if (location) {
      page = new URL(location, page);
      answer = await browse(page);
      continue;
    }
    const html = await answer.text();
    const next = form(html);
    if (answer.status !== 200 || next === null) {
      throw new Error(`the authorization server answered ${answer.status} without a form: ${html.slice(0, 500)}`);
    }
    const fields = { ...next.fields };
    if (next.login) {
      seen.userAgent.push("login");
      Object.assign(fields, { username: spec.username, password: spec.password });
    } else {
      seen.userAgent.push("consent");
    }
    page = new URL(next.action, page);  // Keycloak's consent form posts to a relative URL
    answer = await browse(page, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
  }
  throw new Error("no redirect back to the client after 10 pages");
}

class HeadlessUserProvider {
  constructor(redirectUrl) {
    this._redirectUrl = redirectUrl;
    this._state = crypto.randomUUID();
    this.authorized = null;
  }
  get redirectUrl() { return this._redirectUrl; }
  get clientMetadata() {
    return {
      client_name: "Mnemo test host (TypeScript SDK)",
      redirect_uris: [this._redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() { return this._state; }
  clientInformation() { return this._client; }
  saveClientInformation(info) { this._client = info; }
  tokens() { return this._tokens; }
  saveTokens(tokens) { this._tokens = tokens; }
  saveCodeVerifier(verifier) { this._verifier = verifier; }
  codeVerifier() { return this._verifier; }
  async redirectToAuthorization(url) {
    seen.authorization = {
      url: url.origin + url.pathname,
      params: Object.fromEntries(url.searchParams),
    };
    this.authorized = await authorizeAsUser(url.href, this._redirectUrl);
  }
}

// -- the session: tools through the authorized transport ----------------------------------------

async function session(provider) {
  const transport = new StreamableHTTPClientTransport(new URL(spec.url), { authProvider: provider, fetch: recordingFetch });
  const client = new Client({ name: "mnemo-test-ts-sdk-oauth", version: "1.0.0" });
  await client.connect(transport);
  const result = {};
  result.tools = (await client.listTools()).tools.map((tool) => tool.name);
  result.added = await attempt(() =>
    client.callTool({ name: "memory_add", arguments: { content: `OAuth host note ${marker}` } }));
  result.found = await attempt(() => client.callTool({ name: "search_memory", arguments: { query: marker } }));
  await client.close();
  return result;
}

if (spec.flow === "authorization_code") {
  const provider = new HeadlessUserProvider(spec.redirectUrl ?? "http://127.0.0.1:33418/callback");
  const first = new StreamableHTTPClientTransport(new URL(spec.url), { authProvider: provider, fetch: recordingFetch });
  seen.firstConnect = await attempt(() => new Client({ name: "mnemo-test-ts-sdk-oauth", version: "1.0.0" }).connect(first));
  seen.redirected = seen.firstConnect?.threw?.name === UnauthorizedError.name;
  seen.authorized = provider.authorized;
  seen.stateMatched = provider.authorized?.state === provider.state();
  if (provider.authorized?.code) {
    seen.finishAuth = (await attempt(() => first.finishAuth(provider.authorized.code))) ?? "exchanged";
  }
  seen.client = provider.clientInformation() ?? null;
  const tokens = provider.tokens();
  seen.token = tokens ? { claims: claims(tokens.access_token), scope: tokens.scope ?? null } : null;
  seen.session = tokens ? await attempt(() => session(provider)) : null;
} else if (spec.flow === "client_credentials") {
  const provider = new ClientCredentialsProvider({
    clientId: spec.clientId,
    clientSecret: spec.clientSecret,
    scope: spec.scope,
    expectedIssuer: spec.issuer,
  });
  seen.session = await attempt(() => session(provider));
  const tokens = provider.tokens();
  seen.token = tokens ? { claims: claims(tokens.access_token), scope: tokens.scope ?? null } : null;
} else {
  throw new Error(`unknown flow ${spec.flow}`);
}
process.stdout.write(JSON.stringify(seen));
