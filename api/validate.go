package api

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"unicode"

	"github.com/go-playground/validator/v10"

	"github.com/reference-shop/shop/domain"
)

// validate checks the struct's `validate` tags; each failure names its
// field as a JSON pointer built from the json tag names.
var validate = func() func(any) error {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		return name
	})
	for tag, fn := range map[string]func(string) bool{
		"shopid":        validID,
		"line":          func(s string) bool { return cleanText(s, false) },
		"text":          func(s string) bool { return cleanText(s, true) },
		"notblank":      notBlank,
		"paymentmethod": paymentMethodToken.MatchString,
		// Any status, even one no order can move to: the machine answers
		// that with a 409 naming both statuses, not a 400.
		"orderstatus": domain.ValidStatus,
		"eventtype":   domain.ValidEventType,
	} {
		if err := v.RegisterValidation(tag, func(fl validator.FieldLevel) bool {
			return fn(fl.Field().String())
		}); err != nil {
			panic(err)
		}
	}
	return func(s any) error {
		err := v.Struct(s)
		if err == nil {
			return nil
		}
		var ve validator.ValidationErrors
		if !errors.As(err, &ve) {
			return domain.Errorf(domain.EINVALID, "the body is not valid")
		}
		fields := make([]domain.FieldError, 0, len(ve))
		for _, fe := range ve {
			fields = append(fields, domain.FieldError{Pointer: pointerOf(fe.Namespace()), Detail: detailOf(fe)})
		}
		return &domain.Error{Code: domain.EINVALID, Message: "the body has invalid fields", Fields: fields}
	}
}()

// paymentMethodToken is a payment-method token as Stripe makes them
// ("pm_card_visa", "pm_1Q0PsIJvEtkwdCNY..."): never a card number.
var paymentMethodToken = regexp.MustCompile(`^pm_[A-Za-z0-9_]{1,120}$`)

// pointerOf turns "checkoutRequest.shippingAddress.city" into
// "/shippingAddress/city" and "x.items[2]" into "/items/2".
func pointerOf(namespace string) string {
	_, rest, _ := strings.Cut(namespace, ".")
	rest = strings.NewReplacer("[", ".", "]", "").Replace(rest)
	return "/" + strings.ReplaceAll(rest, ".", "/")
}

func detailOf(fe validator.FieldError) string {
	switch fe.Tag() {
	case "paymentmethod":
		return "must be a payment-method token (pm_ and up to 120 letters, digits or _), never a card number"
	case "required":
		return "is required"
	case "min", "gte":
		if fe.Kind() == reflect.Slice {
			return fmt.Sprintf("must hold at least %s items", fe.Param())
		}
		if fe.Kind() == reflect.String {
			return fmt.Sprintf("must be at least %s characters", fe.Param())
		}
		return "must be at least " + fe.Param()
	case "max", "lte":
		if fe.Kind() == reflect.Slice {
			return fmt.Sprintf("must hold at most %s items", fe.Param())
		}
		if fe.Kind() == reflect.String {
			return fmt.Sprintf("must be at most %s characters", fe.Param())
		}
		return "must be at most " + fe.Param()
	case "oneof":
		return "must be one of: " + fe.Param()
	case "email":
		return "must be an email address"
	case "url", "http_url":
		return "must be an http(s) URL"
	case "iso3166_1_alpha2":
		return "must be an ISO 3166-1 alpha-2 country code, e.g. DE"
	case "iso4217":
		return "must be an ISO 4217 currency code, e.g. EUR"
	case "ne":
		return "must not be " + fe.Param()
	case "shopid":
		return "must be 1-128 characters of A-Z a-z 0-9 . _ - @"
	case "line":
		return "must be one line of text: no control characters, bidirectional overrides or invalid UTF-8"
	case "text":
		return "must be text: no control characters other than tab and line breaks, no bidirectional overrides or invalid UTF-8"
	case "notblank":
		return "must not be blank"
	case "unique":
		return "must not hold a value twice"
	case "eventtype":
		return "must be an event type: " + strings.Join(domain.EventTypes, ", ")
	case "orderstatus":
		return "must be an order status: placed, shipped, delivered or cancelled"
	}
	return "is not valid (" + fe.Tag() + ")"
}

// cleanText reports whether s is text fit to store and show again: valid
// UTF-8 without C0 or C1 control characters (multiline keeps tab, line
// feed and carriage return) and without the bidirectional embeddings,
// overrides and isolates that make a name display as something it is not.
// encoding/json has already turned invalid UTF-8 and lone surrogates into
// U+FFFD, so that is refused too: in a stored field it only ever means
// broken input.
func cleanText(s string, multiline bool) bool {
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			if !multiline {
				return false
			}
		case r < 0x20, r >= 0x7f && r <= 0x9f:
			return false
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return false
		case r == unicode.ReplacementChar:
			return false
		}
	}
	return true
}

// notBlank refuses a value of white space only, which would pass
// `required` and show as nothing.
func notBlank(s string) bool {
	return strings.TrimFunc(s, unicode.IsSpace) != ""
}

// MaxShopIDLength is the shop's own bound on ids, far below Cosmos's
// 1,023 bytes, so that ids stay readable in URLs and partition keys.
const MaxShopIDLength = 128

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]*$`)

// validID applies the shop's id rule on top of Cosmos's (domain.ValidateID).
func validID(id string) bool {
	return domain.ValidateID("id", id) == nil && len(id) <= MaxShopIDLength && idPattern.MatchString(id)
}

// checkID validates an id from the path or a claim; what names it.
func checkID(what, id string) error {
	if !validID(id) {
		return domain.Errorf(domain.EINVALID, "%s must be 1-%d characters of A-Z a-z 0-9 . _ - @, starting with a letter or digit", what, MaxShopIDLength)
	}
	return nil
}

// checkProductID also refuses the reserved id of the categories index,
// which shares the products container.
func checkProductID(id string) error {
	if id == domain.CategoriesID {
		return domain.Errorf(domain.EINVALID, "productId %q is reserved", id)
	}
	return checkID("productId", id)
}
