// Command example calls the shop through its generated Go client
// (github.com/reference-shop/shop/api/client): it browses the categories, walks a category page by
// page, reads a product and asks for one that does not exist, fills a cart
// (a product sold in variants, sizes or colours, in one of them, named by
// its SKU), checks out with an Idempotency-Key, sends the same checkout again to show
// that the key gives back the same order, and prints what each call cost
// the store. Its client keeps the session token (client.WithSessions) and
// retries a 429 or 503 after its Retry-After (client.WithRetry).
//
//	go run ./cmd/shop                # the shop, in dev mode, in one terminal
//	go run ./api/client/example      # this, in another
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/reference-shop/shop/api/client"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("example", flag.ContinueOnError)
	base := fs.String("url", "http://localhost:8080", "the shop; in dev mode, which issues tokens")
	user := fs.String("user", "example", "the user who shops")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// The client sends back the session token each response hands it
	// (read your writes on any instance), and sends a GET, or a checkout
	// with its Idempotency-Key, again when the shop answers 429 or 503.
	var session client.Sessions
	c, err := client.NewClientWithResponses(*base,
		client.WithRetry(client.RetryPolicy{Attempts: 3, Within: 10 * time.Second}),
		client.WithSessions(&session))
	if err != nil {
		return err
	}
	// show prints one call: what it was, what it cost, what it answered.
	show := func(r *http.Response, answer string) {
		cost, err := client.CostOf(r)
		if err != nil {
			fmt.Fprintf(out, "%-6s %-36s %s (%v)\n", r.Request.Method, r.Request.URL.Path, answer, err)
			return
		}
		fmt.Fprintf(out, "%-6s %-36s %-16s %s\n", r.Request.Method, r.Request.URL.Path, cost, answer)
	}

	// Browse: the home screen, a category page after page, a product page;
	// one store read each.
	cats, err := client.OK(c.ListCategoriesWithResponse(ctx))
	if err != nil {
		return err
	}
	if len(cats.JSON200.Items) == 0 {
		return errors.New("the shop has no category")
	}
	show(cats.HTTPResponse, fmt.Sprintf("%d categories", len(cats.JSON200.Items)))
	category := cats.JSON200.Items[0]
	// client.CategoryProducts yields a category's products and hides its
	// pages; client.Pages, under it, lets this loop show each page's call.
	limit, pages := 20, 0
	var buy []client.ProductSummary
	for p, err := range client.Pages(ctx, func(ctx context.Context, continuation *string) ([]client.ProductSummary, *string, error) {
		page, err := client.OK(c.ListCategoryProductsWithResponse(ctx, category.ID,
			&client.ListCategoryProductsParams{Limit: &limit, Continuation: continuation}))
		if err != nil {
			return nil, nil, err
		}
		pages++
		show(page.HTTPResponse, fmt.Sprintf("page %d of %s: %d products", pages, category.Name, len(page.JSON200.Items)))
		return page.JSON200.Items, page.JSON200.Continuation, nil
	}) {
		if err != nil {
			return err
		}
		if p.Availability.Status != client.AvailabilityStatusInStock {
			continue
		}
		// Two products, one of them sold in variants when the category
		// has one (its summary lists the attribute values, "size=M").
		switch {
		case len(buy) < 2:
			buy = append(buy, p)
		case len(p.Attributes) > 0 && !slices.ContainsFunc(buy, hasVariants):
			buy[1] = p
		}
	}
	if len(buy) == 0 {
		return fmt.Errorf("nothing in stock in %s", category.Name)
	}
	product, err := client.OK(c.GetProductWithResponse(ctx, buy[0].ID))
	if err != nil {
		return err
	}
	show(product.HTTPResponse, fmt.Sprintf("%s, %s, %d reviews", product.JSON200.Name, money(product.JSON200.PriceCents), product.JSON200.ReviewStats.Count))

	// A problem is an error: client.Value returns the body of a success,
	// or the shop's problem as an *Error, with its type and its cost.
	const missing = "no-such-product"
	_, err = client.Value[client.Product](c.GetProductWithResponse(ctx, missing))
	var e *client.Error
	if !errors.As(err, &e) || e.Type != client.ProblemNotFound {
		return fmt.Errorf("product %s: %v, want a %s problem", missing, err, client.ProblemNotFound)
	}
	fmt.Fprintf(out, "%-6s %-36s %-16s %d %s: %s\n", http.MethodGet, "/v1/products/"+missing, e.Cost, e.Status, e.Title, e.Detail)

	// Sign in: dev mode signs a token for anyone.
	name, email := "Example Buyer", *user+"@example.com"
	tok, err := client.OK(c.DevTokenWithResponse(ctx, client.DevTokenRequest{UserID: *user, Name: &name, Email: &email}))
	if err != nil {
		return fmt.Errorf("dev token (is the shop in dev mode?): %w", err)
	}
	show(tok.HTTPResponse, "a token for "+*user)
	signedIn := client.Bearer(tok.JSON200.Token)

	// Fill the cart: each write reads the product for the copies the line
	// keeps (name, price). A product sold in variants is bought in one of
	// them, named by its SKU (?sku=): its page lists them, with their
	// attributes, prices and stock.
	for i, p := range buy {
		var params *client.PutCartItemParams
		name := p.Name
		if hasVariants(p) {
			page, err := client.OK(c.GetProductWithResponse(ctx, p.ID))
			if err != nil {
				return err
			}
			v, ok := inStock(page.JSON200.Variants)
			if !ok {
				return fmt.Errorf("%s: no variant in stock", p.Name)
			}
			show(page.HTTPResponse, fmt.Sprintf("%s, %d variants, %s in %s", p.Name, len(page.JSON200.Variants), money(v.PriceCents), attributes(v.Attributes)))
			params, name = &client.PutCartItemParams{Sku: &v.Sku}, p.Name+" ("+attributes(v.Attributes)+")"
		}
		r, err := client.OK(c.PutCartItemWithResponse(ctx, p.ID, params, client.CartItemRequest{Quantity: 2 - i}, signedIn))
		if err != nil {
			return err
		}
		show(r.HTTPResponse, fmt.Sprintf("%d × %s; cart: %d items, %s", 2-i, name, r.JSON200.ItemCount, money(r.JSON200.SubtotalCents)))
	}

	// Check out with a key of our own; send it again, as after a lost
	// answer: the same key gives back the same order, and pays once.
	key := client.NewIdempotencyKey()
	checkout := client.CheckoutRequest{PaymentMethod: "pm_card_visa", ShippingAddress: client.Address{
		Name: name, Line1: "1 Main St", City: "Springfield", PostalCode: "12345", Country: "US"}}
	first, err := client.OK(c.CheckoutWithResponse(ctx, &client.CheckoutParams{IdempotencyKey: key}, checkout, signedIn))
	if err != nil {
		return err
	}
	show(first.HTTPResponse, fmt.Sprintf("order %s, %s, %s", first.JSON201.ID, money(first.JSON201.TotalCents), first.JSON201.Status))
	again, err := client.OK(c.CheckoutWithResponse(ctx, &client.CheckoutParams{IdempotencyKey: key}, checkout, signedIn))
	if err != nil {
		return err
	}
	if again.JSON201.ID != first.JSON201.ID {
		return fmt.Errorf("the same key placed a second order: %s, then %s", first.JSON201.ID, again.JSON201.ID)
	}
	show(again.HTTPResponse, fmt.Sprintf("order %s again: the same key, the same order", again.JSON201.ID))
	return nil
}

// hasVariants reports whether a product is sold in variants: its summary
// lists the attribute values they come in.
func hasVariants(p client.ProductSummary) bool { return len(p.Attributes) > 0 }

// inStock is the first variant in stock.
func inStock(vs []client.Variant) (client.Variant, bool) {
	for _, v := range vs {
		if v.Availability.Status == client.AvailabilityStatusInStock {
			return v, true
		}
	}
	return client.Variant{}, false
}

// attributes shows a variant's attributes, "colour navy, size M".
func attributes(a client.VariantAttributes) string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(a)) {
		out = append(out, name+" "+a[name])
	}
	return strings.Join(out, ", ")
}

// money formats cents as dollars.
func money(cents int) string {
	return fmt.Sprintf("$%d.%02d", cents/100, cents%100)
}
