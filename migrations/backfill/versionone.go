package backfill

import "encoding/json"

// version2Fields are the fields schema version 2 added (domain/schema.go),
// at whatever depth: a product's variants, a line's or a stock's SKU and
// attributes, a copy's price range and attribute array.
var version2Fields = []string{"variants", "sku", "attributes", "priceMaxCents"}

// VersionOne is the stored document doc (JSON, or any value that encodes
// as one) as the shop before variants would have stored it: schemaVersion
// 1 and none of the fields version 2 added. What the backfill's tests and
// the cost lab seed a store with, so that a version-1 store is made by one
// rule.
func VersionOne(doc any) ([]byte, error) {
	b, ok := doc.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(doc); err != nil {
			return nil, err
		}
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	dropVersion2(m)
	m["schemaVersion"] = 1
	return json.Marshal(m)
}

func dropVersion2(v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, f := range version2Fields {
			delete(x, f)
		}
		for _, y := range x {
			dropVersion2(y)
		}
	case []any:
		for _, y := range x {
			dropVersion2(y)
		}
	}
}
