// Command example calls the shop through its generated Go client
// (shop/api/client): it browses the categories, a category page and a
// product, fills a cart, checks out with an Idempotency-Key, sends the
// same checkout again to show that the key gives back the same order, and
// prints what each call cost the store.
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
	"net/http"
	"os"

	"shop/api/client"
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
	c, err := client.NewClientWithResponses(*base)
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

	// Browse: the home screen, a category page, a product page; one store
	// read each.
	cats, err := client.OK(c.ListCategoriesWithResponse(ctx))
	if err != nil {
		return err
	}
	if len(cats.JSON200.Items) == 0 {
		return errors.New("the shop has no category")
	}
	show(cats.HTTPResponse, fmt.Sprintf("%d categories", len(cats.JSON200.Items)))
	category := cats.JSON200.Items[0]
	limit := 10
	page, err := client.OK(c.ListCategoryProductsWithResponse(ctx, category.ID, &client.ListCategoryProductsParams{Limit: &limit}))
	if err != nil {
		return err
	}
	var buy []client.ProductSummary
	for _, p := range page.JSON200.Items {
		if p.Availability.Status == client.AvailabilityStatusInStock && len(buy) < 2 {
			buy = append(buy, p)
		}
	}
	if len(buy) == 0 {
		return fmt.Errorf("nothing in stock on the first page of %s", category.Name)
	}
	show(page.HTTPResponse, fmt.Sprintf("%d products of %s", len(page.JSON200.Items), category.Name))
	product, err := client.OK(c.GetProductWithResponse(ctx, buy[0].ID))
	if err != nil {
		return err
	}
	show(product.HTTPResponse, fmt.Sprintf("%s, %s, %d reviews", product.JSON200.Name, money(product.JSON200.PriceCents), product.JSON200.ReviewStats.Count))

	// Sign in: dev mode signs a token for anyone.
	name, email := "Example Buyer", *user+"@example.com"
	tok, err := client.OK(c.DevTokenWithResponse(ctx, client.DevTokenRequest{UserID: *user, Name: &name, Email: &email}))
	if err != nil {
		return fmt.Errorf("dev token (is the shop in dev mode?): %w", err)
	}
	show(tok.HTTPResponse, "a token for "+*user)
	signedIn := client.Bearer(tok.JSON200.Token)

	// Fill the cart: each write reads the product for the copies the line
	// keeps (name, price).
	for i, p := range buy {
		r, err := client.OK(c.PutCartItemWithResponse(ctx, p.ID, nil, client.CartItemRequest{Quantity: 2 - i}, signedIn))
		if err != nil {
			return err
		}
		show(r.HTTPResponse, fmt.Sprintf("%d × %s; cart: %d items, %s", 2-i, p.Name, r.JSON200.ItemCount, money(r.JSON200.SubtotalCents)))
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

// money formats cents as dollars.
func money(cents int) string {
	return fmt.Sprintf("$%d.%02d", cents/100, cents%100)
}
