// The one way this frontend talks to the shop: a fetch wrapper that sends
// the Bearer token and the session token, turns RFC 9457 problem+json into
// an ApiError, and reads what the request cost from the response headers.

const tokenKey = "shop.token";

// sessionKey keeps the store's session token (X-Session-Token) for this
// tab: sent back on every request, so that a page reads what this tab has
// just written even when another instance of the shop serves it. A header
// and not a cookie: the API uses none (see api/session.go).
const sessionKey = "shop.session";

// ApiError carries the problem document of a failed request.
export class ApiError extends Error {
  constructor(status, problem, cost, request) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
    this.cost = cost;
    // request is "GET /v1/products/x", for the cost bar.
    this.request = request;
  }

  // fieldErrors maps a JSON pointer ("/shippingAddress/city") to its message.
  get fieldErrors() {
    const out = {};
    for (const e of this.problem.errors || []) out[e.pointer] = e.detail;
    return out;
  }
}

export function token() {
  return localStorage.getItem(tokenKey);
}

export function setToken(value) {
  if (value) localStorage.setItem(tokenKey, value);
  else localStorage.removeItem(tokenKey);
}

// user decodes the token's claims for display only; the server checks the
// signature and never trusts what the page thinks.
export function user() {
  const t = token();
  if (!t) return null;
  try {
    const payload = t.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    // The claims are UTF-8 JSON: atob gives bytes, TextDecoder the text.
    const bytes = Uint8Array.from(atob(payload), (c) => c.charCodeAt(0));
    const claims = JSON.parse(new TextDecoder().decode(bytes));
    if (claims.exp && claims.exp * 1000 < Date.now()) return null;
    const roles = claims.roles || [];
    return {
      id: claims.sub,
      name: claims.name || claims.sub,
      email: claims.email || "",
      admin: roles.includes("admin"),
    };
  } catch {
    return null;
  }
}

// readCost reads the cost headers every /v1 response carries.
// Server-Timing looks like: store;dur=0.31;desc="1 op, 1.00 RU";
// X-Request-Charge-Estimated: true says the charge is an estimate.
export function readCost(headers) {
  const ops = headers.get("X-Store-Operations");
  const ru = headers.get("X-Request-Charge");
  let timing = null;
  for (const entry of (headers.get("Server-Timing") || "").split(",")) {
    const parts = entry.trim().split(";").map((p) => p.trim());
    if (parts[0] !== "store") continue;
    for (const p of parts.slice(1)) {
      if (p.startsWith("dur=")) timing = Number(p.slice(4));
    }
  }
  if (ops === null && ru === null) return null;
  return {
    ops: Number(ops || 0),
    ru: Number(ru || 0),
    timing,
    estimated: headers.get("X-Request-Charge-Estimated") === "true",
  };
}

// request sends one API call and returns {data, cost, etag, status,
// location}. options: body (JSON-encoded unless a string), etag (sent as
// If-Match), headers, contentType.
export async function request(method, path, options = {}) {
  const headers = { Accept: "application/json, application/problem+json" };
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  const session = sessionStorage.getItem(sessionKey);
  if (session) headers["X-Session-Token"] = session;
  if (options.etag) headers["If-Match"] = options.etag;
  let body;
  if (options.body !== undefined) {
    headers["Content-Type"] = options.contentType || "application/json";
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
  }
  Object.assign(headers, options.headers || {});

  let res;
  try {
    res = await fetch(path, { method, headers, body, credentials: "same-origin" });
  } catch {
    // No response at all: problemText says the shop could not be reached.
    throw new ApiError(0, { title: "The shop could not be reached" }, null, `${method} ${path}`);
  }
  keepSession(res.headers);
  const cost = readCost(res.headers);
  const type = res.headers.get("Content-Type") || "";
  let data = null;
  if (res.status !== 204 && type.includes("json")) {
    data = await res.json().catch(() => null);
  }
  if (!res.ok) {
    const problem = data && typeof data === "object" ? data : { title: res.statusText };
    if (res.status === 401) setToken(null);
    throw new ApiError(res.status, problem, cost, `${method} ${path.split("?")[0]}`);
  }
  return {
    data,
    cost,
    status: res.status,
    etag: res.headers.get("ETag"),
    location: res.headers.get("Location"),
  };
}

// keepSession stores the response's session token: a new one replaces
// the held one, an empty one drops it, none leaves it as it is.
function keepSession(headers) {
  const issued = headers.get("X-Session-Token");
  if (issued === null) return;
  if (issued) sessionStorage.setItem(sessionKey, issued);
  else sessionStorage.removeItem(sessionKey);
}

export const get = (path, options) => request("GET", path, options);

// query builds "?a=1&b=2" from the defined values of params.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, v);
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}
