// Admin lists: orders of one status on one day (one query per bucket of
// ordersByStatus, whose synthetic key "status:bucket:day" spreads a status
// over many partitions, merged by the API), and the change-feed workers'
// state.

import { get, query, request } from "../api.js";
import { date, field, h, money, problemText, say, showCost, showWrite } from "../ui.js";

// next is where an admin may move an order of each status: cancelling
// voids a placed order's authorization and refunds a shipped one's
// capture (the workflow does it once the order has moved).
const next = { placed: ["shipped", "cancelled"], shipped: ["delivered", "cancelled"] };

// moveWords names a move on its button.
function moveWords(from, to) {
  return from === "shipped" && to === "cancelled" ? "Cancel and refund" : `Mark ${to}`;
}

function today() {
  return new Date().toISOString().slice(0, 10);
}

export function ordersSection() {
  const status = h("select", { id: "orderStatus" },
    ["placed", "shipped", "delivered", "cancelled", "rejected", "expired"].map((s) => h("option", { value: s }, s)));
  const day = h("input", { id: "orderDay", type: "date", required: true, value: today() });
  const list = h("div", {});

  async function show(e) {
    if (e) e.preventDefault();
    const path = "/v1/admin/orders";
    try {
      const { data, cost } = await get(path + query({ status: status.value, day: day.value, limit: 50 }));
      showCost(`GET ${path}?status=${status.value}&day=${day.value}`, cost);
      if (!data.items.length) {
        list.replaceChildren(h("p", {}, `No ${status.value} orders on ${day.value}.`));
        return;
      }
      list.replaceChildren(h("ul", { class: "orders" }, data.items.map((o) => h("li", { class: "order-row" },
        h("div", { class: "order-main" },
          h("span", {}, `${o.userId} · ${date(o.createdAt)}`),
          h("small", { class: "muted order-id" }, o.id)),
        h("span", {}, `${o.itemCount} item${o.itemCount === 1 ? "" : "s"}`),
        h("span", { class: "price" }, money(o.totalCents)),
        actions(o)))));
    } catch (err) {
      list.replaceChildren(h("p", {}, problemText(err)));
    }
  }

  // move changes an order's status; the orders feed then moves its summary
  // from the old status:bucket:day partition to the new one (delete + create: a
  // partition key never changes in place).
  // The row's buttons are disabled while its move is in flight; once
  // done they give way, in the row, to what the order now is (focused, so
  // the confirmation is where the admin is, not at the top of the page).
  function actions(o) {
    const cell = h("span", { class: "actions" });
    cell.replaceChildren(...(next[o.status] || []).map((to) => h("button", {
      type: "button", class: "secondary", onclick: () => move(o, to, cell),
    }, moveWords(o.status, to))));
    return cell;
  }

  async function move(o, to, cell) {
    const buttons = [...cell.querySelectorAll("button")];
    for (const b of buttons) b.disabled = true;
    try {
      const path = `/v1/admin/orders/${encodeURIComponent(o.userId)}/${encodeURIComponent(o.id)}`;
      const res = await request("PATCH", path, { body: { status: to } });
      showWrite(`Marked the order ${to}`, res.cost);
      const done = h("span", { class: "row-note", tabindex: "-1", "data-testid": "moved" }, `Now ${to}`);
      cell.replaceChildren(done);
      done.focus();
      say(`Order ${o.id} is now ${to}. The list follows once the orders feed has moved its summary.`, "ok");
    } catch (err) {
      for (const b of buttons) b.disabled = false;
      say(problemText(err), "error");
    }
  }

  return h("section", { "aria-labelledby": "orders-h", class: "panel" },
    h("h2", { id: "orders-h" }, "Orders by status and day"),
    h("form", { class: "inline", onsubmit: show },
      field("Status", status), field("Day", day),
      h("button", { type: "submit", class: "secondary" }, "List orders")),
    list);
}

// lagText says a lease's lag in words: -1 is "not read yet".
function lagText(n) {
  if (n < 0) return "not read yet";
  return n === 0 ? "up to date" : `${n} change${n === 1 ? "" : "s"} behind`;
}

// leasesTable shows every processor's leases, one row per lease.
function leasesTable(processors) {
  const rows = processors.flatMap((p) => (p.leases || []).map((l) => h("tr", {},
    h("th", { scope: "row" }, p.processor),
    h("td", {}, l.lease),
    h("td", {}, l.owner || "none"),
    h("td", {}, lagText(l.lagEstimate)),
    h("td", {}, l.lastCheckpoint ? date(l.lastCheckpoint) : "never"),
    h("td", {}, String(l.deadLetters)))));
  return h("div", { class: "scroll" }, h("table", { class: "leases" },
    h("caption", {}, "Leases, one per feed range of each processor"),
    h("thead", {}, h("tr", {}, ["Processor", "Lease", "Owner", "Lag", "Last checkpoint", "Dead letters"]
      .map((k) => h("th", { scope: "col" }, k)))),
    h("tbody", {}, rows)));
}

// words turns a camelCase key into words: "cartsUpdated" → "Carts updated",
// "queryRu" → "Query RU".
function words(key) {
  const w = key.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase().replace(/\bru\b/, "RU");
  return w.charAt(0).toUpperCase() + w.slice(1);
}

// statsList shows a flat object of figures as a list of "name: value".
function statsList(title, stats) {
  return h("section", { class: "stats" },
    h("h3", {}, title),
    h("dl", { class: "totals" }, Object.entries(stats || {}).flatMap(([k, v]) => [
      h("dt", {}, words(k)), h("dd", {}, typeof v === "number" ? v.toLocaleString() : String(v))])));
}

// feedsSection reads the workers' state: a point read of every lease
// document, so it costs one operation per lease (the cost bar says how
// many), unlike the shopper's screens.
export function feedsSection() {
  const out = h("div", {});
  async function show() {
    try {
      const { data, cost } = await get("/v1/admin/feeds");
      showCost("GET /v1/admin/feeds", cost);
      out.replaceChildren(leasesTable(data.processors || []), statsList("Cart fan-out so far", data.fanout));
    } catch (err) {
      out.replaceChildren(h("p", {}, problemText(err)));
    }
  }
  return h("section", { "aria-labelledby": "feeds-h", class: "panel" },
    h("h2", { id: "feeds-h" }, "Change-feed workers"),
    h("p", {}, "One lease per feed range; the lag is an estimate of the changes not yet handled. This panel reads every lease, so it costs one store operation per lease."),
    h("button", { type: "button", class: "secondary", onclick: show }, "Show feed status"),
    out);
}
