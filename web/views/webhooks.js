// Admin: webhook subscriptions (#/admin/webhooks). The list is one query
// of the subscriptions; a subscription's deliveries are one
// single-partition query (its deliveries share its partition), the dead
// letters the same query with status=dead. A subscription's secret is
// shown once, in the answer of its create or of a rotation, and never
// kept by the page: the admin copies it to the receiver then.

import { ApiError, get, query, request, user } from "../api.js";
import { date, field, h, needSignIn, problemText, say, screenCost, showCost, showWrite } from "../ui.js";

// eventTypes is the catalogue a subscription picks from (openapi.yaml,
// domain.EventTypes).
const eventTypes = [
  "order.authorized", "order.placed", "order.shipped", "order.delivered", "order.cancelled",
  "order.rejected", "order.expired", "product.price_changed", "product.availability_changed", "product.deleted",
];

const base = "/v1/admin/webhooks";
const subPath = (id) => `${base}/${encodeURIComponent(id)}`;

// secretShown puts a new secret on the screen, once, with what to do
// with it.
function secretShown(out, words, secret, expires) {
  out.replaceChildren(h("div", { class: "secret", role: "group", "aria-label": "New signing secret" },
    h("p", {}, words, " Copy it now: it is not shown again."),
    h("code", { "data-testid": "secret" }, secret),
    expires ? h("p", { class: "muted" }, `The previous secret still signs until ${date(expires)}.`) : null));
}

// createForm subscribes a receiver; onCreated redraws the list.
function createForm(out, onCreated) {
  const url = h("input", { id: "hookUrl", type: "url", required: true, maxlength: "2000", placeholder: "https://receiver.example.com/hooks" });
  const description = h("input", { id: "hookDescription", type: "text", maxlength: "500" });
  const boxes = eventTypes.map((t) => h("label", { class: "check" },
    h("input", { type: "checkbox", name: "eventType", value: t, checked: t === "order.placed" }), ` ${t}`));

  async function create(e) {
    e.preventDefault();
    const types = boxes.map((l) => l.querySelector("input")).filter((b) => b.checked).map((b) => b.value);
    if (!types.length) {
      say("Pick at least one event type.", "error");
      return;
    }
    try {
      const res = await request("POST", base, { body: { url: url.value.trim(), eventTypes: types, description: description.value } });
      showWrite("Created a webhook subscription", res.cost);
      secretShown(out, `Subscribed ${res.data.url}. Its signing secret:`, res.data.secret);
      say("Subscription created.", "ok");
      url.value = "";
      description.value = "";
      await onCreated();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return needSignIn();
      say(problemText(err, {}, { url: "URL", eventTypes: "Event types", description: "Description" }), "error");
    }
  }

  return h("section", { "aria-labelledby": "hook-new-h", class: "panel" },
    h("h2", { id: "hook-new-h" }, "Subscribe a receiver"),
    h("form", { onsubmit: create, id: "hookCreate" },
      field("URL", url, "https only; not an internal address"),
      field("Description (optional)", description),
      h("fieldset", { class: "event-types" }, h("legend", {}, "Event types"), boxes),
      h("button", { type: "submit" }, "Create subscription")));
}

// deliveriesPanel shows a subscription's recent deliveries, or its dead
// letters, each dead one with a redeliver button.
function deliveriesPanel(sub, status) {
  const out = h("div", { "data-testid": "deliveries" });
  async function show() {
    const path = `${subPath(sub.id)}/deliveries`;
    try {
      const { data, cost } = await get(path + query({ status, limit: 50 }));
      showCost(`GET ${path}${status ? `?status=${status}` : ""}`, cost);
      if (!data.items.length) {
        out.replaceChildren(h("p", {}, status === "dead" ? "No dead letters." : "No deliveries yet."));
        return;
      }
      out.replaceChildren(h("div", { class: "scroll" }, h("table", { class: "deliveries" },
        h("caption", {}, status === "dead" ? `Dead letters of ${sub.url}` : `Deliveries to ${sub.url}`),
        h("thead", {}, h("tr", {}, ["Event", "Type", "Status", "Attempts", "Last answer", ""].map((k) => h("th", { scope: "col" }, k)))),
        h("tbody", {}, data.items.map((d) => h("tr", { "data-delivery": d.id },
          h("th", { scope: "row" }, d.eventId),
          h("td", {}, d.eventType),
          h("td", { class: "delivery-status" }, d.status),
          h("td", {}, String(d.attempts)),
          h("td", {}, d.lastError || (d.lastStatus ? `HTTP ${d.lastStatus}` : "")),
          h("td", {}, d.status === "dead" ? redeliverButton(sub, d) : null)))))));
    } catch (err) {
      out.replaceChildren(h("p", {}, problemText(err)));
    }
  }
  show();
  return out;
}

function redeliverButton(sub, d) {
  return h("button", {
    type: "button", class: "secondary", onclick: async (e) => {
      const b = e.target;
      b.disabled = true;
      try {
        const res = await request("POST", `${subPath(sub.id)}/deliveries/${encodeURIComponent(d.id)}/redeliver`);
        showWrite("Redelivered", res.cost);
        const row = b.closest("tr");
        row.querySelector(".delivery-status").textContent = res.data.status;
        const done = h("span", { class: "row-note", tabindex: "-1", "data-testid": "redelivered" }, "Sent again");
        b.replaceWith(done);
        done.focus();
        say(`Delivery of ${d.eventId} is pending again: the dispatcher sends it next.`, "ok");
      } catch (err) {
        b.disabled = false;
        say(problemText(err), "error");
      }
    },
    "data-action": "redeliver",
  }, "Redeliver");
}

// subscriptionRow is one subscription with its actions; detail is where
// its deliveries and a rotated secret go.
function subscriptionRow(sub, detail, reload) {
  async function act(label, method, path, options) {
    try {
      const res = await request(method, path, options);
      showWrite(label, res.cost);
      return res;
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return needSignIn();
      say(problemText(err), "error");
      return null;
    }
  }
  const pause = h("button", {
    type: "button", class: "secondary", onclick: async () => {
      const res = await act(sub.paused ? "Resumed" : "Paused", "PATCH", subPath(sub.id),
        { body: { paused: !sub.paused }, contentType: "application/merge-patch+json" });
      if (!res) return;
      say(res.data.paused ? `Paused ${sub.url}: its deliveries wait.` : `Resumed ${sub.url}.`, "ok");
      await reload();
    },
    "data-action": "pause",
  }, sub.paused ? "Resume" : "Pause");
  const rotate = h("button", {
    type: "button", class: "secondary", onclick: async () => {
      const res = await act("Rotated the secret", "POST", `${subPath(sub.id)}/rotate-secret`, { body: {} });
      if (!res) return;
      secretShown(detail, `New signing secret of ${sub.url}:`, res.data.secret, res.data.previousSecretExpiresAt);
      say("Secret rotated.", "ok");
    },
    "data-action": "rotate",
  }, "Rotate secret");
  const remove = h("button", {
    type: "button", class: "secondary", onclick: async () => {
      if (!window.confirm(`Delete the subscription of ${sub.url}? Its deliveries go with it.`)) return;
      const res = await act("Deleted a subscription", "DELETE", subPath(sub.id));
      if (!res) return;
      say(`Deleted the subscription of ${sub.url}.`, "ok");
      detail.replaceChildren();
      await reload();
    },
    "data-action": "delete",
  }, "Delete");
  const deliveries = h("button", {
    type: "button", class: "secondary", "data-action": "deliveries", onclick: () => detail.replaceChildren(deliveriesPanel(sub, "")),
  }, "Deliveries");
  const dead = h("button", {
    type: "button", class: "secondary", "data-action": "dead", onclick: () => detail.replaceChildren(deliveriesPanel(sub, "dead")),
  }, "Dead letters");
  return h("tr", { "data-subscription": sub.id },
    h("th", { scope: "row" }, sub.url, sub.description ? h("small", { class: "muted" }, ` ${sub.description}`) : null),
    h("td", {}, sub.eventTypes.join(", ")),
    h("td", { class: "hook-state" }, sub.paused ? "paused" : "active"),
    h("td", { class: "actions" }, deliveries, dead, pause, rotate, remove));
}

export async function webhooks(main) {
  const u = user();
  if (!u) return needSignIn();
  if (!u.admin) {
    screenCost(main, "No request", null);
    main.replaceChildren(h("h1", {}, "Webhooks"),
      h("p", {}, "This page needs an administrator. ", h("a", { href: "#/signin?next=%23%2Fadmin%2Fwebhooks" }, "Sign in again"), " with “Administrator” ticked."));
    return;
  }
  const list = h("div", { "data-testid": "subscriptions" });
  const detail = h("div", { class: "hook-detail", "aria-live": "polite" });
  const created = h("div", { "aria-live": "polite" });

  // load reads the list. A pause sends no If-Match: it sets paused to a
  // value, which is the same whatever the subscription was.
  async function load(first) {
    const res = await get(base);
    if (first) screenCost(main, `GET ${base}`, res.cost);
    else showCost(`GET ${base}`, res.cost);
    if (!res.data.items.length) {
      list.replaceChildren(h("p", {}, "No subscriptions yet."));
      return;
    }
    list.replaceChildren(h("div", { class: "scroll" }, h("table", { class: "subscriptions" },
      h("caption", {}, "Subscriptions"),
      h("thead", {}, h("tr", {}, ["URL", "Event types", "State", ""].map((k) => h("th", { scope: "col" }, k)))),
      h("tbody", {}, res.data.items.map((s) => subscriptionRow(s, detail, () => load(false)))))));
  }

  await load(true);
  main.replaceChildren(h("h1", {}, "Webhooks"),
    h("p", {}, "The shop POSTs each event a subscription picks to its URL, signed with its secret (Shop-Signature), at least once and in order per order or product. ",
      h("a", { href: "#/admin" }, "Back to the admin")),
    createForm(created, () => load(false)), created,
    h("section", { "aria-labelledby": "hooks-h", class: "panel" }, h("h2", { id: "hooks-h" }, "Subscriptions"), list, detail));
}
