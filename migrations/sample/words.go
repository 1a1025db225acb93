package sample

// The word lists of the sample catalog. Each category builds product names
// from its own lists, so a category page reads like a real shop's:
// "Ethiopian Yirgacheffe Whole Bean 1 kg", "Cast Iron Skillet 26 cm".

// sampleCategory is one category of the sample shop and how to name,
// describe and price its products.
type sampleCategory struct {
	id, name string
	// A product's name is one word from each list, joined by spaces.
	parts [][]string
	// sentences describe a product of this category; a description takes
	// a few of them.
	sentences []string
	// minDollars..maxDollars bounds the price; cents end in .99 or .49.
	minDollars, maxDollars int
}

// sampleCategories lists every category Load can create, most familiar
// first: Options.Categories takes a prefix.
var sampleCategories = []sampleCategory{
	{
		id: "coffee-tea", name: "Coffee & Tea",
		parts: [][]string{
			{"Ethiopian Yirgacheffe", "Colombian Supremo", "Sumatra Mandheling", "Kenya AA", "Guatemala Antigua",
				"Costa Rica Tarrazú", "Brazil Cerrado", "Darjeeling First Flush", "Japanese Sencha", "Assam Breakfast",
				"Earl Grey", "Rooibos Vanilla", "Yunnan Golden", "Jasmine Pearl"},
			{"Whole Bean", "Ground", "Espresso Roast", "Light Roast", "Decaf", "Loose Leaf", "Tea Bags"},
			{"250 g", "500 g", "1 kg", "100 g", "2 kg"},
		},
		sentences: []string{
			"Roasted in small batches and packed within a day of roasting.",
			"Notes of stone fruit, dark chocolate and a clean, sweet finish.",
			"Sourced directly from a cooperative we have worked with for years.",
			"Brews beautifully as pour-over, in a French press or as cold brew.",
			"The resealable bag with a one-way valve keeps it fresh for weeks.",
			"Steep at 80 °C for two to three minutes for a bright, floral cup.",
		},
		minDollars: 6, maxDollars: 48,
	},
	{
		id: "kitchen", name: "Kitchen",
		parts: [][]string{
			{"Cast Iron", "Stainless Steel", "Nonstick", "Enameled", "Carbon Steel", "Bamboo", "Ceramic", "Copper", "Tri-Ply"},
			{"Skillet", "Dutch Oven", "Chef's Knife", "Cutting Board", "Saucepan", "Mixing Bowl Set", "Baking Sheet", "Wok", "Utensil Set", "Colander"},
			{"20 cm", "26 cm", "30 cm", "Small", "Large", "Set of 3"},
		},
		sentences: []string{
			"Heats evenly and goes from stovetop to oven without a second thought.",
			"Dishwasher safe, though a quick hand wash keeps it looking new.",
			"The handle stays cool and sits comfortably in the hand.",
			"Made to last decades of daily cooking, not a season.",
			"Works on gas, electric and induction hobs.",
			"A kitchen workhorse that professional cooks and home cooks both reach for.",
		},
		minDollars: 12, maxDollars: 220,
	},
	{
		id: "books", name: "Books",
		parts: [][]string{
			{"The Art of", "A Field Guide to", "Notes on", "The Quiet Book of", "Learning", "The Little Book of", "A History of", "Everyday"},
			{"Sourdough", "Mountain Birds", "Distributed Systems", "Slow Travel", "Urban Gardening", "Tides", "Woodworking", "Go Programming", "Night Skies", "Fermentation"},
			{"(Hardcover)", "(Paperback)", "(Illustrated Edition)", "(Second Edition)"},
		},
		sentences: []string{
			"Written with warmth and a rare clarity, it rewards a slow read.",
			"Richly illustrated, with practical advice on nearly every page.",
			"A book readers press into friends' hands.",
			"Includes an index, a glossary and suggestions for further reading.",
			"Equally good read cover to cover or dipped into on a Sunday morning.",
		},
		minDollars: 9, maxDollars: 45,
	},
	{
		id: "outdoor", name: "Outdoor",
		parts: [][]string{
			{"Ultralight", "Waterproof", "Insulated", "Packable", "Trail", "Alpine", "All-Season"},
			{"Tent", "Sleeping Bag", "Daypack", "Headlamp", "Trekking Poles", "Camp Stove", "Rain Jacket", "Water Filter", "Hammock"},
			{"2-Person", "24 L", "35 L", "400 lm", "Regular", "Long"},
		},
		sentences: []string{
			"Tested on multi-day treks in wind, rain and snow.",
			"Packs down small and weighs less than you expect.",
			"Seams are taped and zips are storm-flapped to keep the weather out.",
			"Comes with a stuff sack and a repair kit.",
			"Built for the trail, comfortable enough for the campsite.",
		},
		minDollars: 15, maxDollars: 480,
	},
	{
		id: "audio", name: "Audio",
		parts: [][]string{
			{"Wireless", "Noise-Cancelling", "Studio", "Portable", "Over-Ear", "In-Ear", "Hi-Fi"},
			{"Headphones", "Earbuds", "Speaker", "Turntable", "Soundbar", "Headphone Amp", "Microphone"},
			{"Black", "White", "Graphite", "Sand", "Midnight Blue"},
		},
		sentences: []string{
			"Balanced, detailed sound with a tight, controlled low end.",
			"Up to 30 hours of playback on a single charge.",
			"Pairs in seconds and remembers up to eight devices.",
			"Memory-foam cushions make long listening sessions comfortable.",
			"Ships with a braided USB-C cable and a travel case.",
		},
		minDollars: 25, maxDollars: 650,
	},
	{
		id: "home-office", name: "Home Office",
		parts: [][]string{
			{"Ergonomic", "Adjustable", "Walnut", "Minimalist", "Mesh", "Standing", "Compact"},
			{"Desk Chair", "Monitor Arm", "Desk Lamp", "Mechanical Keyboard", "Desk Mat", "Cable Tray", "Standing Desk", "Notebook", "Laptop Stand"},
			{"Oak", "Black", "Grey", "White", "A5", "140 cm"},
		},
		sentences: []string{
			"Designed with physiotherapists for long days at the desk.",
			"Assembles in under fifteen minutes with the included tools.",
			"Clean lines that look at home in a study or a studio.",
			"Backed by a five-year warranty.",
			"Keeps cables tidy and the desk surface clear.",
		},
		minDollars: 10, maxDollars: 700,
	},
	{
		id: "toys-games", name: "Toys & Games",
		parts: [][]string{
			{"Wooden", "Cooperative", "Strategy", "Family", "Magnetic", "Classic", "Travel"},
			{"Board Game", "Jigsaw Puzzle", "Building Blocks", "Card Game", "Train Set", "Chess Set", "Marble Run"},
			{"Ages 3+", "Ages 8+", "Ages 12+", "1000 Pieces", "500 Pieces", "Deluxe Edition"},
		},
		sentences: []string{
			"Easy to learn in ten minutes, hard to put down for an evening.",
			"Made from sustainably sourced materials with non-toxic paints.",
			"Plays well with two and shines with four or more.",
			"Everything packs back into a sturdy box with a fitted insert.",
			"A favourite for rainy afternoons and family holidays.",
		},
		minDollars: 8, maxDollars: 120,
	},
	{
		id: "garden", name: "Garden",
		parts: [][]string{
			{"Heirloom", "Organic", "Galvanized", "Ergonomic", "Self-Watering", "Cedar", "Terracotta"},
			{"Tomato Seeds", "Pruning Shears", "Raised Bed", "Watering Can", "Planter", "Trowel", "Compost Bin", "Garden Hose"},
			{"Small", "Medium", "Large", "8 L", "25 m", "120 cm"},
		},
		sentences: []string{
			"Built to weather years outdoors without rusting or cracking.",
			"Open-pollinated and grown without synthetic pesticides.",
			"Sharp, precise and comfortable even after an afternoon of pruning.",
			"Drains freely so roots never sit in water.",
			"A sensible choice for balconies, patios and allotments alike.",
		},
		minDollars: 4, maxDollars: 260,
	},
	{
		id: "pets", name: "Pets",
		parts: [][]string{
			{"Orthopedic", "Grain-Free", "Reflective", "Interactive", "Washable", "Stainless"},
			{"Dog Bed", "Cat Tree", "Dog Lead", "Puzzle Feeder", "Cat Food", "Water Fountain", "Chew Toy"},
			{"Small", "Medium", "Large", "2 kg", "6 kg"},
		},
		sentences: []string{
			"Vet-recommended and loved by picky eaters.",
			"The cover unzips and goes straight into the washing machine.",
			"Keeps curious pets busy for hours.",
			"Sturdy enough for enthusiastic chewers.",
		},
		minDollars: 5, maxDollars: 180,
	},
	{
		id: "sports-fitness", name: "Sports & Fitness",
		parts: [][]string{
			{"Adjustable", "Non-Slip", "Foldable", "Premium", "Lightweight", "Pro"},
			{"Yoga Mat", "Kettlebell", "Dumbbell Pair", "Resistance Bands", "Jump Rope", "Foam Roller", "Pull-Up Bar"},
			{"4 kg", "8 kg", "12 kg", "6 mm", "Set of 5"},
		},
		sentences: []string{
			"Grips well even during hot, sweaty sessions.",
			"Compact enough for a small flat, tough enough for a gym.",
			"Comes with a printed guide of beginner and advanced routines.",
			"A small investment that earns its place in a daily routine.",
		},
		minDollars: 9, maxDollars: 300,
	},
	{
		id: "bath-body", name: "Bath & Body",
		parts: [][]string{
			{"Lavender", "Sea Salt", "Cedarwood", "Unscented", "Citrus", "Oat & Honey"},
			{"Hand Soap", "Body Wash", "Bath Salts", "Shampoo Bar", "Body Lotion", "Candle"},
			{"250 ml", "500 ml", "100 g", "Refill Pack"},
		},
		sentences: []string{
			"Gentle on sensitive skin and free of parabens.",
			"Made in small batches with plant-based ingredients.",
			"The refill pack cuts plastic use by three quarters.",
			"A subtle scent that lingers without overwhelming.",
		},
		minDollars: 5, maxDollars: 60,
	},
	{
		id: "stationery-art", name: "Stationery & Art",
		parts: [][]string{
			{"Dotted", "Watercolour", "Fountain", "Recycled", "Archival", "Pocket"},
			{"Notebook", "Pen", "Sketchbook", "Paint Set", "Pencil Set", "Planner"},
			{"A5", "A4", "Fine", "Medium", "24 Colours", "2027"},
		},
		sentences: []string{
			"Thick, smooth paper that takes ink without bleeding through.",
			"Lies flat when open, thanks to a stitched binding.",
			"Pigments are lightfast and richly saturated.",
			"A pleasure to write with, every single day.",
		},
		minDollars: 3, maxDollars: 90,
	},
}

// Sample reviewers: first and last names make a pool of distinct users.
var (
	sampleFirstNames = []string{"Ada", "Ben", "Chloé", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas",
		"Kemi", "Liam", "Maya", "Nikhil", "Olga", "Pablo", "Quinn", "Rosa", "Sam", "Tariq", "Uma", "Viktor", "Wen", "Yara", "Zoe"}
	sampleLastInitials = []string{"A.", "B.", "C.", "D.", "E.", "F.", "G.", "H.", "K.", "L.", "M.", "N.", "O.", "P.", "R.", "S.", "T.", "W."}
)

// Review titles and bodies by rating (index 0 = 1 star).
var (
	sampleTitles = [5][]string{
		{"Would not buy again", "Broke within a week", "Very disappointed", "Not as described"},
		{"Disappointing", "Expected more", "Had to return it", "Meh"},
		{"Does the job", "Okay for the price", "Mixed feelings", "Average"},
		{"Very good", "Solid choice", "Happy with it", "Nearly perfect", "Good value"},
		{"Excellent", "Exactly what I hoped for", "Love it", "Worth every cent", "Best purchase this year"},
	}
	sampleBodies = [5][]string{
		{"It stopped working after a few days.", "The quality is far below what the photos suggest.", "Customer service was slow to answer."},
		{"It works, but it feels cheaper than I expected.", "Smaller than it looked online.", "Not bad, not good; I returned it."},
		{"It does what it says and nothing more.", "Fine for occasional use.", "Delivery was quick, the product is so-so."},
		{"Well made and arrived quickly.", "I use it almost every day now.", "One small niggle, otherwise great."},
		{"Beautifully made and a joy to use.", "I bought a second one as a gift.", "Exceeded my expectations in every way."},
	}
)
