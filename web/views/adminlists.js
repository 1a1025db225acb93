// Admin lists: orders of one status on one day (one query per bucket of
// ordersByStatus, whose synthetic key "status:bucket:day" spreads a status
// over many partitions, merged by the API), and the change-feed workers'
// state.

import { get, query, request } from "../api.js";
import { date, field, h, money, problemText, say, showCost } from "../ui.js";

const next = { placed: ["shipped", "cancelled"], shipped: ["delivered"] };

function today() {
  return new Date().toISOString().slice(0, 10);
}

export function ordersSection() {
  const status = h("select", { id: "orderStatus" },
    ["placed", "shipped", "delivered", "cancelled"].map((s) => h("option", { value: s }, s)));
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
        h("span", { class: "actions" }, (next[o.status] || []).map((to) => h("button", {
          type: "button", class: "secondary", onclick: () => move(o, to),
        }, `Mark ${to}`)))))));
    } catch (err) {
      list.replaceChildren(h("p", {}, problemText(err)));
    }
  }

  // move changes an order's status; the orders feed then moves its summary
  // from the old status:bucket:day partition to the new one (delete + create: a
  // partition key never changes in place).
  async function move(o, to) {
    try {
      const path = `/v1/admin/orders/${encodeURIComponent(o.userId)}/${encodeURIComponent(o.id)}`;
      const res = await request("PATCH", path, { body: { status: to } });
      showCost(`PATCH ${path}`, res.cost);
      say(`Order ${o.id} is now ${to}. The list follows once the orders feed has moved its summary.`, "ok");
    } catch (err) {
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

// cell renders one value of the feeds report readably.
function cell(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v);
  if (typeof v === "string" && /^\d{4}-\d\d-\d\dT/.test(v)) return date(v);
  return String(v);
}

// table renders a list of flat objects with one column per key.
function table(rows, caption) {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return h("div", { class: "scroll" }, h("table", {},
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, keys.map((k) => h("th", { scope: "col" }, k)))),
    h("tbody", {}, rows.map((r) => h("tr", {}, keys.map((k) => h("td", {}, cell(r[k]))))))));
}

export function feedsSection() {
  const out = h("div", {});
  async function show() {
    try {
      const { data, cost } = await get("/v1/admin/feeds");
      showCost("GET /v1/admin/feeds", cost);
      const groups = Array.isArray(data) ? { feeds: data } : data;
      const parts = [];
      for (const [name, value] of Object.entries(groups)) {
        if (Array.isArray(value) && value.length && typeof value[0] === "object") parts.push(table(value, name));
        else parts.push(h("p", {}, `${name}: ${cell(value)}`));
      }
      out.replaceChildren(...parts);
    } catch (err) {
      out.replaceChildren(h("p", {}, problemText(err)));
    }
  }
  return h("section", { "aria-labelledby": "feeds-h", class: "panel" },
    h("h2", { id: "feeds-h" }, "Change-feed workers"),
    h("p", {}, "One lease per feed range; lag is an estimate of the changes not yet handled."),
    h("button", { type: "button", class: "secondary", onclick: show }, "Show feed status"),
    out);
}
