// Same-origin JSON requests to the backend, with the CSRF token read fresh from the cookie
// (it rotates after a new log-in) and every failure sorted into a kind the UI can explain.

/** The CSRF token: the cookie when readable, else the token rendered into the page. */
export function csrfToken(fallback = "") {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : fallback;
}

/**
 * Resolves (never rejects) to {ok, status, data} or {ok: false, kind, status, code, message,
 * fields}; kind is "network", "auth" (log-in expired: redirect, 401, 403), "invalid" (400),
 * "conflict" (409), "server" (5xx) or "error".
 */
export async function sendJson(method, url, body, { headers = {}, csrf = "", keepalive = false } = {}) {
  let response;
  try {
    response = await fetch(url, {
      method,
      credentials: "same-origin",
      redirect: "manual", // a redirect here is the log-in page: never follow it as if it were JSON
      keepalive,
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json",
        "X-CSRFToken": csrfToken(csrf),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    return { ok: false, kind: "network", status: 0, message: "The connection failed.", fields: {} };
  }
  const status = response.status;
  let data = null;
  if ((response.headers.get("content-type") || "").includes("json")) {
    try {
      data = await response.json();
    } catch {
      data = null;
    }
  }
  if (response.type === "opaqueredirect" || status === 401 || status === 403) {
    return { ok: false, kind: "auth", status, message: data?.error?.message ?? "Your log-in expired.", fields: {} };
  }
  if (response.ok) return { ok: true, status, data };
  const error = data?.error ?? {};
  const kind = status === 400 ? "invalid" : status === 409 ? "conflict" : status >= 500 ? "server" : "error";
  return {
    ok: false, kind, status, code: error.code ?? "", fields: error.fields ?? {},
    message: error.message ?? `The server answered ${status}.`,
  };
}
