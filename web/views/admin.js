// Admin: change a product's price and watch an open cart follow, set a
// product's variants (variantsForm) and a product's or a variant's stock
// (stockForm). The price PATCH only rewrites the product
// (priceVersion + 1); the products change feed then updates every open
// cart line holding it (model-denormalize-reads, kept true by the change
// feed). Polling the cart shows how long that took.

import { ApiError, get, request, user } from "../api.js";
import {
  availabilityText, field, h, money, needSignIn, parseMoney, problemText, say, screenCost, showCost, showWrite,
} from "../ui.js";
import { loadCart } from "./cart.js";
import { feedsSection, ordersSection } from "./adminlists.js";

const pollEvery = 300; // ms between cart reads while watching
const watchFor = 60000; // ms before giving up on the feed

// watch polls the cart until the line of productId shows priceCents, and
// reports each read in out. It resolves to true when the price arrived.
async function watch(productId, priceCents, out, signal) {
  const started = performance.now();
  let reads = 0;
  let ru = 0;
  // Stop when the visitor leaves the admin screen (out is then detached).
  while (!signal.aborted && out.isConnected && performance.now() - started < watchFor) {
    const { cart, cost } = await loadCart();
    reads++;
    ru += cost ? cost.ru : 0;
    const l = (cart.items || []).find((x) => x.productId === productId);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (!l) {
      out.textContent = "This product is not in your cart: add it to your cart, then change the price again to watch it follow.";
      return false;
    }
    out.replaceChildren(
      `Cart read ${reads} after ${seconds} s: the line shows `,
      h("strong", { "data-testid": "watched-price" }, money(l.unitPriceCents)),
      ` (price version ${l.priceVersion}); ${reads} store reads, ${ru.toFixed(2)} RU so far.`);
    if (l.unitPriceCents === priceCents) {
      say(`Your cart shows the new price ${money(priceCents)} after ${seconds} s.`, "ok");
      return true;
    }
    await new Promise((r) => setTimeout(r, pollEvery));
  }
  if (!signal.aborted && out.isConnected) say("The cart did not follow within a minute: are the feed workers running?", "error");
  return false;
}

function priceForm(initialId) {
  let product = null;
  let etag = null;
  let watching = null;
  const idInput = h("input", { id: "productId", type: "text", required: true, value: initialId || "" });
  const priceInput = h("input", { id: "newPrice", type: "text", inputmode: "decimal", required: true, disabled: true });
  const current = h("p", { class: "muted", "data-testid": "admin-product" }, "Load a product to change its price.");
  const out = h("p", { class: "watch", "aria-live": "polite" });
  const save = h("button", { type: "submit", id: "savePrice", disabled: true }, "Save price");

  async function load(e) {
    if (e) e.preventDefault();
    const id = idInput.value.trim();
    if (!id) return;
    try {
      const res = await get(`/v1/products/${encodeURIComponent(id)}`);
      showCost(`GET /v1/products/${id}`, res.cost);
      product = res.data;
      etag = res.etag;
      // A product with variants is priced by them (the API refuses a
      // priceCents for it): the variants' form changes their prices.
      const priced = (product.variants || []).length > 0;
      current.replaceChildren(h("strong", {}, product.name), priced
        ? ` is priced by its variants, ${variantPrices(product)}: change them under “Variants” below.`
        : ` costs ${money(product.priceCents, product.currency)} (price version ${product.priceVersion}).`);
      priceInput.disabled = priced;
      save.disabled = priced;
      priceInput.value = (product.priceCents / 100).toFixed(2);
    } catch (err) {
      current.textContent = err.status === 404 ? `No product ${id}.` : problemText(err);
    }
  }

  async function savePrice(e) {
    e.preventDefault();
    const cents = parseMoney(priceInput.value);
    if (cents === null || cents <= 0) {
      say("Enter a price such as 19.99.", "error");
      priceInput.focus();
      return;
    }
    save.disabled = true;
    try {
      // JSON merge patch: only the fields sent change. If-Match makes a
      // concurrent edit by another admin a 412, not a lost update.
      const res = await request("PATCH", `/v1/products/${encodeURIComponent(product.id)}`, {
        body: { priceCents: cents },
        contentType: "application/merge-patch+json",
        etag,
      });
      showWrite("Changed the price", res.cost);
      product = res.data;
      etag = res.etag;
      current.replaceChildren(h("strong", {}, product.name), ` now costs ${money(product.priceCents, product.currency)} (price version ${product.priceVersion}).`);
      say("Price saved. Watching your cart…");
      if (watching) watching.abort();
      watching = new AbortController();
      await watch(product.id, cents, out, watching.signal);
    } catch (err) {
      await saveFailed(err, say, load, "Someone changed this product since you loaded it; we reloaded it — check the price and save again.");
    } finally {
      save.disabled = false;
    }
  }

  const section = h("section", { "aria-labelledby": "price-h", class: "panel" },
    h("h2", { id: "price-h" }, "Change a price and watch a cart follow"),
    h("p", {}, "Put the product in your own cart first, then change its price here: the page reads your cart until the change feed has carried the new price into it."),
    h("form", { class: "inline", onsubmit: load }, field("Product id", idInput), h("button", { type: "submit", class: "secondary" }, "Load product")),
    current,
    h("form", { class: "inline", onsubmit: savePrice }, field("New price", priceInput, "For example 19.99"), save),
    out);
  return { section, load };
}

// variantPrices says what a product's variants cost: "$19.99" or
// "$19.99 to $24.99".
function variantPrices(p) {
  const prices = p.variants.map((v) => v.priceCents);
  const lo = Math.min(...prices), hi = Math.max(...prices);
  return lo === hi ? money(lo, p.currency) : `${money(lo, p.currency)} to ${money(hi, p.currency)}`;
}

// variantsJSON is the editable form of a product's variants: what the
// API takes back (sku, attributes, priceCents, imageUrl), not the
// availability copies it adds.
function variantsJSON(variants) {
  return JSON.stringify((variants || []).map((v) => ({
    sku: v.sku, attributes: v.attributes, priceCents: v.priceCents, ...(v.imageUrl ? { imageUrl: v.imageUrl } : {}),
  })), null, 2);
}

// variantsForm sets a product's variants as JSON: a merge patch of the
// whole list (a merge patch replaces arrays) with If-Match, so a
// concurrent edit is a 412, not a lost update. A new SKU starts with no
// stock (sold out) until the stock form counts it; [] sells the product
// as one again, at the price sent with it (the price form).
function variantsForm(initialId) {
  let product = null;
  let etag = null;
  const idInput = h("input", { id: "variantsProductId", type: "text", required: true, value: initialId || "" });
  const json = h("textarea", {
    id: "variantsJson", rows: "8", spellcheck: "false", disabled: true, class: "code",
  });
  const current = h("p", { class: "muted", "data-testid": "admin-variants" }, "Load a product to set its variants.");
  const save = h("button", { type: "submit", id: "saveVariants", disabled: true }, "Save variants");

  function show(p, verb) {
    const n = (p.variants || []).length;
    current.replaceChildren(h("strong", {}, p.name), n
      ? ` ${verb} in ${n} variant${n === 1 ? "" : "s"}, ${variantPrices(p)}.`
      : ` ${verb} as one, without variants.`);
    json.value = variantsJSON(p.variants);
  }

  async function load(e) {
    if (e) e.preventDefault();
    const id = idInput.value.trim();
    if (!id) return;
    try {
      const res = await get(`/v1/products/${encodeURIComponent(id)}`);
      showCost(`GET /v1/products/${id}`, res.cost);
      product = res.data;
      etag = res.etag;
      show(product, "is sold");
      json.disabled = false;
      save.disabled = false;
    } catch (err) {
      current.textContent = err.status === 404 ? `No product ${id}.` : problemText(err);
    }
  }

  async function saveVariants(e) {
    e.preventDefault();
    let variants;
    try {
      variants = JSON.parse(json.value);
    } catch {
      variants = null;
    }
    if (!Array.isArray(variants)) {
      say("Write the variants as a JSON list: [{\"sku\": \"tee-m\", \"attributes\": {\"size\": \"M\"}, \"priceCents\": 1999}].", "error");
      json.focus();
      return;
    }
    save.disabled = true;
    try {
      const res = await request("PATCH", `/v1/products/${encodeURIComponent(product.id)}`, {
        body: { variants },
        contentType: "application/merge-patch+json",
        etag,
      });
      showWrite("Set the variants", res.cost);
      product = res.data;
      etag = res.etag;
      show(product, "is now sold");
      say("Variants saved. A new variant is sold out until its stock is set below (Variant SKU).", "ok");
    } catch (err) {
      await saveFailed(err, say, load, "Someone changed this product since you loaded it; we reloaded it — check the variants and save again.");
    } finally {
      save.disabled = false;
    }
  }

  const section = h("section", { "aria-labelledby": "variants-h", class: "panel" },
    h("h2", { id: "variants-h" }, "Variants"),
    h("p", {}, "The sizes, colours… a product is sold in, each with its SKU and price, at most 50 with up to 4 attributes (the same names for every variant)."),
    h("form", { class: "inline", onsubmit: load },
      field("Product id", idInput), h("button", { type: "submit", class: "secondary" }, "Load variants")),
    current,
    h("form", { class: "stack", onsubmit: saveVariants },
      field("Variants (JSON)", json, "For example [{\"sku\": \"tee-m\", \"attributes\": {\"size\": \"M\"}, \"priceCents\": 1999}]; [] sells it as one"),
      h("p", {}, save)));
  return { section, load };
}

// stockForm reads and sets a product's stock through the admin routes: a
// point read in inventory (pk = the product), and a count (not a delta)
// written with If-Match on the stock's ETag, so two admins counting at
// once get a 412 rather than a lost count. Checkouts take units with a
// conditional patch of their own and never race a count into the red. The
// product page's availability follows through the inventory feed. Each
// variant has a stock of its own, named by its SKU (?sku=).
function stockForm(initialId) {
  let productId = null;
  let sku = "";
  let etag = null;
  const idInput = h("input", { id: "stockProductId", type: "text", required: true, value: initialId || "" });
  const skuInput = h("input", { id: "stockSku", type: "text", maxlength: "64", spellcheck: "false" });
  const countInput = h("input", {
    id: "newStock", type: "number", min: "0", max: "1000000", inputmode: "numeric", required: true, disabled: true,
  });
  const current = h("p", { class: "muted", "data-testid": "admin-stock" }, "Load a product to set its stock.");
  const save = h("button", { type: "submit", id: "saveStock", disabled: true }, "Save stock");
  const shardsInput = h("input", {
    id: "stockShards", type: "number", min: "1", max: "64", inputmode: "numeric", required: true, disabled: true, value: "1",
  });
  const split = h("button", { type: "submit", id: "saveShards", class: "secondary", disabled: true }, "Split or merge");
  const layout = h("p", { class: "muted", "data-testid": "admin-shards" });

  function show(s, verb) {
    current.replaceChildren(h("strong", {}, s.sku ? `${s.productId} (SKU ${s.sku})` : s.productId),
      ` ${verb} ${s.available} unit${s.available === 1 ? "" : "s"} available: ${availabilityText(s.status).toLowerCase()}.`,
      s.shards ? ` Split into ${s.shards} shards: merge it into 1 to count it.` : "");
    shardsInput.value = String(s.shards || 1);
  }

  // saveShards splits the stock into shards (one document each, under its
  // own partition key, so a hot product's sales spread over partitions) or
  // merges it back: PUT stock/shards answers the units of every shard.
  async function saveShards(e) {
    e.preventDefault();
    const n = Number(shardsInput.value);
    if (!Number.isInteger(n) || n < 1 || n > 64) {
      say("Enter a whole number of shards from 1 to 64.", "error");
      shardsInput.focus();
      return;
    }
    split.disabled = true;
    const path = stockPath(productId, sku, "/shards");
    try {
      const res = await request("PUT", path, { body: { shards: n } });
      showWrite("Split the stock", res.cost);
      const l = res.data;
      layout.textContent = l.shards === 1 && l.shardsMade === 1 ? "One shard: the stock is not split." :
        `${l.shards} shard${l.shards === 1 ? "" : "s"} (units per shard: ${l.units.join(", ")}).`;
      await load();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return needSignIn();
      say(problemText(err), "error");
    } finally {
      split.disabled = false;
    }
  }

  async function load(e) {
    if (e) e.preventDefault();
    const id = idInput.value.trim();
    if (!id) return;
    const wanted = skuInput.value.trim();
    const path = stockPath(id, wanted);
    try {
      const res = await get(path);
      showCost(`GET ${path}`, res.cost);
      productId = id;
      sku = wanted;
      etag = res.etag;
      show(res.data, "has");
      countInput.value = String(res.data.available);
      countInput.disabled = false;
      save.disabled = false;
      shardsInput.disabled = false;
      split.disabled = false;
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return needSignIn();
      current.textContent = problemText(err);
    }
  }

  async function saveStock(e) {
    e.preventDefault();
    const n = Number(countInput.value);
    if (countInput.value.trim() === "" || !Number.isInteger(n) || n < 0 || n > 1000000) {
      say("Enter a whole number of units from 0 to 1,000,000.", "error");
      countInput.focus();
      return;
    }
    save.disabled = true;
    const path = stockPath(productId, sku);
    try {
      const res = await request("PUT", path, { body: { available: n }, etag });
      showWrite("Set the stock", res.cost);
      etag = res.etag;
      show(res.data, "now has");
      say(`Stock saved. The product page shows “${availabilityText(res.data.status)}” once the inventory feed has copied it.`, "ok");
    } catch (err) {
      await saveFailed(err, say, load, "Someone changed this stock since you loaded it; we reloaded it — check the count and save again.");
    } finally {
      save.disabled = false;
    }
  }

  const section = h("section", { "aria-labelledby": "stock-h", class: "panel" },
    h("h2", { id: "stock-h" }, "Set a product's stock"),
    h("p", {}, "The units that can still be bought. At 5 or fewer the shop says “Only a few left”, at 0 “Sold out”."),
    h("form", { class: "inline", onsubmit: load },
      field("Product id", idInput), field("Variant SKU (optional)", skuInput),
      h("button", { type: "submit", class: "secondary" }, "Load stock")),
    current,
    h("form", { class: "inline", onsubmit: saveStock }, field("Units available", countInput), save),
    h("p", {}, "A product selling faster than one partition serves (a flash sale) can have its stock split into shards, each under its own partition key; 1 merges it back."),
    h("form", { class: "inline", onsubmit: saveShards }, field("Shards", shardsInput), split),
    layout);
  return { section, load };
}

export async function admin(main, _params, params) {
  const u = user();
  if (!u) return needSignIn();
  if (!u.admin) {
    screenCost(main, "No request", null);
    main.replaceChildren(h("h1", {}, "Admin"),
      h("p", {}, "This page needs an administrator. ", h("a", { href: "#/signin?next=%23%2Fadmin" }, "Sign in again"), " with “Administrator” ticked."));
    return;
  }
  const price = priceForm(params.get("product"));
  const variants = variantsForm(params.get("product"));
  const stock = stockForm(params.get("product"));
  main.replaceChildren(h("h1", {}, "Admin"),
    h("p", {}, h("a", { href: "#/admin/webhooks" }, "Webhook subscriptions"), ": the receivers of the shop's events, their deliveries and dead letters."),
    price.section, variants.section, stock.section, ordersSection(), feedsSection());
  screenCost(main, "No store read yet", null);
  if (params.get("product")) {
    price.load();
    variants.load();
    stock.load();
  }
}

// stockPath is the admin route of a product's stock, or of its variant
// sku's, or of its sub-resource sub ("/shards").
function stockPath(productId, sku, sub = "") {
  return `/v1/admin/products/${encodeURIComponent(productId)}/stock${sub}${sku ? `?sku=${encodeURIComponent(sku)}` : ""}`;
}

// saveFailed explains a failed save of an admin form: a stale If-Match
// (412) reloads what changed, a lost sign-in asks for it again, anything
// else is the problem's own words.
async function saveFailed(err, say, reload, stale) {
  if (err instanceof ApiError && err.status === 412) {
    say(stale, "error");
    await reload();
    return;
  }
  if (err instanceof ApiError && err.status === 401) return needSignIn();
  say(problemText(err), "error");
}
