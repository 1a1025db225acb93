package store

import "testing"

// Feed range bounds compare as strings, "" the lowest; a Max of "FF" (or
// "") is the end of the space, above any bound, including 8-digit ones
// past "FF" in string order such as the embedded store's "FF000000".
func TestFeedRangeRelations(t *testing.T) {
	whole := FeedRange{Min: "", Max: "FF"}
	left := FeedRange{Min: "", Max: "80000000"}
	right := FeedRange{Min: "80000000", Max: "FF"}
	top := FeedRange{Min: "FF000000", Max: "FF"}
	tests := []struct {
		name               string
		a, b               FeedRange
		overlaps, contains bool
		intersect          FeedRange
	}{
		{"whole and its left half", whole, left, true, true, left},
		{"whole and its right half", whole, right, true, true, right},
		{"a half and the whole", left, whole, true, false, left},
		{"the two halves", left, right, false, false, FeedRange{}},
		{"a range past FF in string order", right, top, true, true, top},
		{"an end given as empty", FeedRange{Min: "80000000", Max: ""}, top, true, true, top},
		{"a range and itself", right, right, true, true, right},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Overlaps(tt.b); got != tt.overlaps {
				t.Errorf("%s.Overlaps(%s) = %v, want %v", tt.a, tt.b, got, tt.overlaps)
			}
			if got := tt.b.Overlaps(tt.a); got != tt.overlaps {
				t.Errorf("%s.Overlaps(%s) = %v, want %v", tt.b, tt.a, got, tt.overlaps)
			}
			if got := tt.a.Contains(tt.b); got != tt.contains {
				t.Errorf("%s.Contains(%s) = %v, want %v", tt.a, tt.b, got, tt.contains)
			}
			if tt.overlaps {
				if got := tt.a.Intersect(tt.b); got != tt.intersect {
					t.Errorf("%s.Intersect(%s) = %s, want %s", tt.a, tt.b, got, tt.intersect)
				}
			}
		})
	}
}
