// My account: ONE point read of the customerSummary document, a
// pre-computed aggregate (model-denormalize-reads) that checkout and cancel
// keep true in the same transactional batch as the order.

import { get, user } from "../api.js";
import { date, h, money, needSignIn, put, screenCost } from "../ui.js";

export async function account(main) {
  const u = user();
  if (!u) return needSignIn();
  const { data: s, cost } = await get("/v1/me/summary");
  screenCost(main, "GET /v1/me/summary", cost);
  // The summary keeps lastOrderAt when an order is cancelled (it cannot
  // tell the one before without reading the orders), so with no order
  // counted the page shows no date beside "Orders 0".
  put(main,
    h("h1", {}, "Your account"),
    h("p", {}, `${u.name}${u.email ? ` · ${u.email}` : ""}`),
    h("dl", { class: "totals" },
      h("dt", {}, "Orders"), h("dd", { "data-testid": "total-orders" }, String(s.totalOrders)),
      h("dt", {}, "Spent"), h("dd", { "data-testid": "total-spent" }, money(s.totalSpentCents)),
      h("dt", {}, "Average order"), h("dd", {}, money(s.averageOrderCents)),
      h("dt", {}, "Last order"), h("dd", {}, s.totalOrders && s.lastOrderAt ? date(s.lastOrderAt) : "none yet")),
    h("p", { class: "muted" }, "Cancelled orders are not counted. ", h("a", { href: "#/orders" }, "See your orders"), "."),
  );
}
