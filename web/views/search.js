// The search results: ONE single-partition query on productsByTerm
// (GET /v1/search, in the partition of one of the query's words), shown as
// the category page shows its products, one page at a time, each card with
// the rating a result carries (resultCard).

import { get, query } from "../api.js";
import { h, problemText, put, screenCost } from "../ui.js";
import { productGrid, resultCard } from "./catalog.js";

// pageSize is the results of one read, as on the category page.
const pageSize = 24;

// Search screen: #/search?q=words. Without words it asks for some and
// reads nothing; a query the API refuses (400) is explained on the screen.
export async function search(main, _, params) {
  const q = (params.get("q") || "").trim();
  if (!q) {
    put(main,
      h("h1", {}, "Search"),
      h("p", {}, "Type what you are looking for in the search box above: a product, a department or a word such as “gift”."));
    return;
  }
  const path = "/v1/search";
  let first;
  try {
    first = await get(path + query({ q, limit: pageSize }));
  } catch (err) {
    if (err.status !== 400) throw err;
    screenCost(main, `GET ${path} (400)`, err.cost || null);
    put(main,
      h("h1", {}, `Search for “${q}”`),
      h("p", { class: "search-problem", "data-testid": "search-problem" }, searchProblemText(err)),
      h("p", {}, h("a", { href: "#/" }, "Browse the departments")));
    return;
  }
  screenCost(main, `GET ${path}`, first.cost);
  const { list, more } = productGrid({ path, params: { q, limit: pageSize }, first, label: "More results", card: resultCard });
  const found = first.data.items.length > 0;
  put(main,
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "#/" }, "Home")),
    h("h1", {}, `Results for “${q}”`),
    found
      ? [h("p", { class: "muted" }, "Products that match every word, best rated first."), list, more]
      : h("div", { class: "empty", "data-testid": "no-results" },
        h("p", { class: "empty-title" }, `No products match “${q}”.`),
        h("p", {}, "Check the spelling, use fewer words, or ",
          h("a", { href: "#/" }, "browse the departments"), ".")),
  );
}

// The API's reasons for refusing a query (domain.ParseQuery), said to a
// shopper; any other problem is put in words by problemText.
const searchProblems = [
  [/at most (\d+) words/, (m) => `Please search with at most ${m[1]} words: the shop looks for products that match every one.`],
  [/at most (\d+) bytes/, (m) => `That search is too long. Please keep it under ${m[1]} characters.`],
  [/control characters|UTF-8/, () => "That search holds characters that cannot be searched. Please type it again."],
  [/no word that is searched/, () => "Words such as “the” and “with” are not searched. Please add a word that names what you are looking for."],
  [/is required/, () => "Please type a word to search for."],
];

function searchProblemText(err) {
  const detail = (err.problem && err.problem.detail) || "";
  for (const [re, text] of searchProblems) {
    const m = re.exec(detail);
    if (m) return text(m);
  }
  return problemText(err);
}
