package domain

// Schema versioning. Every document carries the schemaVersion of the
// build that last wrote it (Meta.SchemaVersion). A build reads every
// version it has ever written and writes only its own:
//
//   - Read: Upgrade brings a document of an older version up to
//     SchemaVersion in memory. The store is not written: a document is
//     upgraded lazily, stored as upgraded the next time something changes
//     it (store/repo's Decode calls Upgrade, every write encodes what it
//     read), and `shop migrate --backfill` rewrites the rest through this
//     same function, in the background.
//   - Write: a document of a NEWER version than SchemaVersion is never
//     written back (Writable): this build would drop the fields it does
//     not know. The write is refused as unavailable, so a request answers
//     503 and a feed worker retries, until an instance of the newer build
//     takes the work.
//
// Versions:
//
//	1  the shop before variants.
//	2  products may carry variants (Product.Variants); cart and order
//	   lines, stock documents and reservations name a variant (SKU);
//	   product copies carry the price range and the attribute array.
//
// A version-1 document is a version-2 document without variants: every
// field version 2 added is empty for it, and empty means "the product's
// one implicit variant". So upgrading one changes nothing but its
// version, and a later version whose upgrade moves or renames a field
// adds its case to Upgrade: the step from each version to the next,
// applied in turn.
const SchemaVersion = 2

// versioned is what every document shares through its Meta.
type versioned interface {
	meta() *Meta
}

func (m *Meta) meta() *Meta { return m }

// Upgrade brings doc (a pointer to a document) up to SchemaVersion in
// memory, step by step, and reports whether anything changed. A document
// already at SchemaVersion, or newer, is left as it is: applied twice it
// changes nothing the second time.
func Upgrade(doc any) bool {
	d, ok := doc.(versioned)
	if !ok {
		return false
	}
	m := d.meta()
	if m.SchemaVersion >= SchemaVersion {
		return false
	}
	for m.SchemaVersion < SchemaVersion {
		switch m.SchemaVersion {
		case 0, 1:
			// 1 → 2: nothing to move. Variants, SKUs, attributes and
			// price ranges are absent from a version-1 document, and
			// absent is what version 2 writes for a product sold as one
			// implicit variant (variants.go).
			m.SchemaVersion = 2
		}
	}
	return true
}

// Writable refuses to write doc if a newer build wrote it: decoded into
// this build's types, it has lost every field this build does not know,
// and writing it would downgrade it. EUNAVAILABLE: the write succeeds
// once a newer instance makes it (a rolling deploy ends).
func Writable(doc any) error {
	d, ok := doc.(interface{ schema() int })
	if !ok || d.schema() <= SchemaVersion {
		return nil
	}
	return Errorf(EUNAVAILABLE, "a document of schema version %d, newer than this build's %d: this instance must not write it (upgrade it)", d.schema(), SchemaVersion)
}

func (m Meta) schema() int { return m.SchemaVersion }
