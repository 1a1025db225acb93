package sample

// The word lists of the sample catalog. Each category sells a few kinds of
// product, and each kind is named and described from its own lists, so a
// product's copy fits it: "Portable Speaker Graphite" never promises
// memory-foam cushions, and a card game never comes in 1000 pieces.

// sampleKind is one kind of product a category sells.
type sampleKind struct {
	// A product's name is one of before, the noun, then one of after.
	before []string
	noun   string
	after  []string
	// sentences describe this kind only; a description takes two.
	sentences []string
}

// sampleVariants is how a kind of product is sold in variants: one
// attribute whose values each have their own price (the first value's is
// the product's drawn price, each other's that price times its factor,
// ending in .99 like every price), and possibly colours.
type sampleVariants struct {
	attribute string
	values    []string
	factors   []float64
	// colours, if any: about half of the products of the kind come in
	// two of them, every value in each (a size × colour grid).
	colours []string
}

// sampleVariantKinds are the kinds sold in variants, by noun; every other
// kind is sold as one implicit variant. Clothing comes in sizes (and
// colours), whole beans by weight, the bigger bag cheaper by the gram;
// ground coffee is one bag, so the workshop's `p-0001` and `p-0147` stay
// products without variants.
var sampleVariantKinds = map[string]sampleVariants{
	"Rain Jacket":       {attribute: "size", values: []string{"S", "M", "L", "XL"}, factors: []float64{1, 1, 1, 1}, colours: []string{"Navy", "Olive", "Red", "Black", "Yellow"}},
	"Whole Bean Coffee": {attribute: "weight", values: []string{"250 g", "1 kg"}, factors: []float64{1, 3.4}},
	"Espresso Roast":    {attribute: "weight", values: []string{"250 g", "1 kg"}, factors: []float64{1, 3.4}},
}

// sampleCategory is one category of the sample shop and how to name,
// describe and price its products.
type sampleCategory struct {
	id, name string
	kinds    []sampleKind
	// sentences fit every product of the category; a description ends
	// with one.
	sentences []string
	// minDollars..maxDollars bounds the price; cents end in .99 or .49.
	minDollars, maxDollars int
}

var (
	coffeeOrigins = []string{"Ethiopian Yirgacheffe", "Colombian Supremo", "Sumatra Mandheling", "Kenya AA",
		"Guatemala Antigua", "Costa Rica Tarrazú", "Brazil Cerrado"}
	audioColours = []string{"Black", "White", "Graphite", "Sand", "Midnight Blue"}
)

// sampleCategories lists every category Load can create, most familiar
// first: Options.Categories takes a prefix.
var sampleCategories = []sampleCategory{
	{
		id: "coffee-tea", name: "Coffee & Tea",
		kinds: []sampleKind{
			{coffeeOrigins, "Whole Bean Coffee", []string{"Light Roast", "Medium Roast", "Dark Roast"}, []string{
				"Roasted in small batches and packed within a day of roasting.",
				"Notes of stone fruit, dark chocolate and a clean, sweet finish.",
				"Grind just before brewing for pour-over, a French press or cold brew.",
			}},
			{coffeeOrigins, "Ground Coffee", []string{"250 g", "500 g"}, []string{
				"Ground medium-fine for filter machines and pour-over.",
				"The resealable bag with a one-way valve keeps it fresh for weeks.",
				"Roasted in small batches and packed within a day of roasting.",
			}},
			{[]string{"Dark", "Italian-Style", "Single-Origin"}, "Espresso Roast", []string{"Classico", "Forte"}, []string{
				"Pulls a syrupy shot with a thick, hazelnut-coloured crema.",
				"Holds its own under milk in a flat white or a cappuccino.",
			}},
			{[]string{"Darjeeling First Flush", "Japanese Sencha", "Assam Breakfast", "Earl Grey", "Yunnan Golden", "Jasmine Pearl"},
				"Loose Leaf Tea", []string{"50 g", "100 g", "250 g"}, []string{
					"Whole leaves unfurl in the pot and give two or three good infusions.",
					"Packed in a light-proof tin that keeps the leaves fresh.",
					"Steep for two to four minutes, to taste.",
				}},
			{[]string{"Earl Grey", "Rooibos Vanilla", "Assam Breakfast", "Peppermint"}, "Tea Bags", []string{"20 Bags", "50 Bags", "100 Bags"}, []string{
				"Plastic-free bags filled with whole-leaf tea, not dust.",
				"Each bag is sealed in its own paper envelope.",
			}},
		},
		sentences: []string{
			"Sourced directly from growers we have worked with for years.",
			"Fairly traded and shipped in recyclable packaging.",
		},
		minDollars: 6, maxDollars: 48,
	},
	{
		id: "kitchen", name: "Kitchen",
		kinds: []sampleKind{
			{[]string{"Cast Iron", "Carbon Steel", "Stainless Steel", "Nonstick"}, "Skillet", []string{"20 cm", "26 cm", "30 cm"}, []string{
				"Heats evenly and goes from stovetop to oven without a second thought.",
				"Sears a steak as well as it fries an egg.",
				"Works on gas, electric and induction hobs.",
			}},
			{[]string{"Enameled", "Cast Iron"}, "Dutch Oven", []string{"3.8 L", "5.2 L", "6.7 L"}, []string{
				"The heavy lid locks in moisture for slow braises and crusty bread.",
				"Goes from hob to oven to table.",
				"Works on gas, electric and induction hobs.",
			}},
			{[]string{"Carbon Steel", "Stainless Steel", "Damascus"}, "Chef's Knife", []string{"18 cm", "21 cm", "24 cm"}, []string{
				"Holds a keen edge through months of daily chopping.",
				"The balanced handle sits comfortably in the hand.",
				"Hand wash and dry it to keep the edge keen.",
			}},
			{[]string{"Bamboo", "Walnut", "Olive Wood"}, "Cutting Board", []string{"Small", "Large"}, []string{
				"Gentle on knife edges and easy to clean.",
				"A juice groove catches the drips when carving.",
				"Oil it now and then and it will last for decades.",
			}},
			{[]string{"Stainless Steel", "Ceramic", "Glass"}, "Mixing Bowl Set", []string{"Set of 3", "Set of 5"}, []string{
				"The bowls nest inside one another to save cupboard space.",
				"Non-slip bases keep them steady while you whisk.",
			}},
		},
		sentences: []string{
			"Made to last decades of daily cooking, not a season.",
			"A kitchen workhorse that professional cooks and home cooks both reach for.",
		},
		minDollars: 12, maxDollars: 220,
	},
	{
		id: "books", name: "Books",
		kinds: []sampleKind{
			{[]string{"The Art of", "Learning", "The Little Book of"}, "Sourdough", bookEditions, []string{
				"From a first starter to an open-crumbed loaf, step by step.",
				"Bakers' notes on flour, hydration and timing fill the margins.",
			}},
			{[]string{"A Field Guide to", "Notes on"}, "Mountain Birds", bookEditions, []string{
				"Hundreds of species, each with a range map and drawings from life.",
				"Slim enough for a jacket pocket on the trail.",
			}},
			{[]string{"Notes on", "Learning", "A History of"}, "Distributed Systems", bookEditions, []string{
				"Explains consensus, replication and partitions with clear diagrams.",
				"Each chapter ends with exercises and worked answers.",
			}},
			{[]string{"A Field Guide to", "The Little Book of"}, "Night Skies", bookEditions, []string{
				"Star charts for every season, in both hemispheres.",
				"Shows how much more a pair of binoculars reveals than you might expect.",
			}},
			{[]string{"The Art of", "The Little Book of", "Learning"}, "Fermentation", bookEditions, []string{
				"Recipes for kimchi, kombucha, miso and more.",
				"Explains the science without ever losing sight of the flavour.",
			}},
			{[]string{"Learning", "The Art of", "Everyday"}, "Woodworking", bookEditions, []string{
				"Projects from a simple stool to a dovetailed chest.",
				"Clear photographs show every joint from two angles.",
			}},
		},
		sentences: []string{
			"Written with warmth and a rare clarity, it rewards a slow read.",
			"A book readers press into friends' hands.",
			"Includes an index and suggestions for further reading.",
		},
		minDollars: 9, maxDollars: 45,
	},
	{
		id: "outdoor", name: "Outdoor",
		kinds: []sampleKind{
			{[]string{"Ultralight", "All-Season", "Alpine"}, "Tent", []string{"1-Person", "2-Person", "3-Person"}, []string{
				"Pitches in under five minutes, even in the dark.",
				"Taped seams and a fly that reaches the ground keep the weather out.",
				"Two doors and two porches, so nobody climbs over anyone.",
			}},
			{[]string{"Ultralight", "Insulated", "Down"}, "Sleeping Bag", []string{"Regular", "Long"}, []string{
				"Comfortable down to −5 °C.",
				"Packs down to the size of a loaf of bread.",
				"A full-length zip opens it into a quilt on warm nights.",
			}},
			{[]string{"Waterproof", "Trail", "Packable"}, "Daypack", []string{"18 L", "24 L", "35 L"}, []string{
				"A ventilated back panel keeps you cool on the climb.",
				"Hip-belt pockets keep snacks and a phone within reach.",
				"A sleeve inside takes a 2-litre water reservoir.",
			}},
			{[]string{"Rechargeable", "Trail", "Waterproof"}, "Headlamp", []string{"300 lm", "400 lm", "600 lm"}, []string{
				"A red-light mode spares your night vision and your companions'.",
				"Charges over USB-C and lasts a weekend on one charge.",
				"Light enough to forget it is on your head.",
			}},
			{[]string{"Waterproof", "Packable", "Alpine"}, "Rain Jacket", []string{"Classic", "Lite", "Pro", "Trek"}, []string{
				"Taped seams and a stiffened hood keep out sideways rain.",
				"Underarm zips let the heat out on the climb.",
				"Packs into its own pocket.",
			}},
		},
		sentences: []string{
			"Tested on multi-day treks in wind, rain and snow.",
			"Built for the trail, comfortable enough for the campsite.",
			"Comes with a lifetime repair service.",
		},
		minDollars: 15, maxDollars: 480,
	},
	{
		id: "audio", name: "Audio",
		kinds: []sampleKind{
			{[]string{"Wireless", "Noise-Cancelling", "Studio", "Over-Ear"}, "Headphones", audioColours, []string{
				"Memory-foam cushions make long listening sessions comfortable.",
				"Up to 30 hours of playback on a single charge.",
				"Noise cancelling quiets trains, planes and open offices.",
			}},
			{[]string{"Wireless", "Noise-Cancelling", "Sport"}, "Earbuds", audioColours, []string{
				"Three sizes of tips for a secure, comfortable fit.",
				"The charging case holds three more full charges.",
				"Sweat- and splash-resistant for runs and workouts.",
			}},
			{[]string{"Portable", "Wireless", "Waterproof", "Bookshelf"}, "Speaker", audioColours, []string{
				"Fills a room with warm, balanced sound.",
				"Pair two of them for stereo.",
				"Sits happily on a shelf, a desk or a kitchen counter.",
			}},
			{[]string{"Hi-Fi", "Belt-Drive", "Direct-Drive"}, "Turntable", audioColours, []string{
				"A built-in phono preamp plugs straight into powered speakers.",
				"The aluminium platter spins true at 33 and 45 rpm.",
				"Comes with a cartridge fitted, aligned and ready to play.",
			}},
			{[]string{"Compact", "Dolby Atmos", "Wireless"}, "Soundbar", audioColours, []string{
				"Makes dialogue clear even at low volume.",
				"Connects to the TV with a single HDMI cable.",
				"Slim enough to sit under the screen without blocking it.",
			}},
		},
		sentences: []string{
			"Balanced, detailed sound with a tight, controlled low end.",
			"Covered by a two-year warranty.",
		},
		minDollars: 25, maxDollars: 650,
	},
	{
		id: "home-office", name: "Home Office",
		kinds: []sampleKind{
			{[]string{"Ergonomic", "Mesh", "Adjustable"}, "Desk Chair", []string{"Black", "Grey"}, []string{
				"Designed with physiotherapists for long days at the desk.",
				"Lumbar support, armrests and seat depth all adjust.",
				"Breathable mesh keeps you cool through the afternoon.",
			}},
			{[]string{"Gas-Spring", "Single", "Dual"}, "Monitor Arm", []string{"Black", "White"}, []string{
				"Holds screens up to 32 inches and 9 kg.",
				"Frees the desk and puts the screen at eye height.",
			}},
			{[]string{"Minimalist", "Walnut", "Adjustable"}, "Desk Lamp", []string{"Oak", "Black", "White"}, []string{
				"Warm-to-cool light and five brightness levels.",
				"Flicker-free LED light that is easy on the eyes.",
			}},
			{[]string{"Compact", "Wireless", "Full-Size"}, "Mechanical Keyboard", []string{"(Tactile Switches)", "(Linear Switches)"}, []string{
				"Hot-swappable switches in a solid aluminium case.",
				"Connects over Bluetooth to three devices, or by USB-C cable.",
			}},
			{[]string{"Electric", "Walnut", "Compact"}, "Standing Desk", []string{"120 cm", "140 cm", "160 cm"}, []string{
				"Rises from sitting to standing height in under ten seconds.",
				"Four memory presets remember your favourite heights.",
				"Assembles in under thirty minutes with the included tools.",
			}},
		},
		sentences: []string{
			"Clean lines that look at home in a study or a studio.",
			"Backed by a five-year warranty.",
		},
		minDollars: 10, maxDollars: 700,
	},
	{
		id: "toys-games", name: "Toys & Games",
		kinds: []sampleKind{
			{[]string{"Cooperative", "Strategy", "Family"}, "Board Game", []string{"Ages 8+", "Ages 10+", "Ages 12+"}, []string{
				"Easy to learn in ten minutes, hard to put down for an evening.",
				"Plays well with two and shines with four or more.",
				"Everything packs back into a sturdy box with a fitted insert.",
			}},
			{[]string{"Landscape", "Vintage Map", "Botanical"}, "Jigsaw Puzzle", []string{"500 Pieces", "1000 Pieces"}, []string{
				"Thick, snugly fitting pieces, no two alike.",
				"A poster of the finished picture comes in the box.",
			}},
			{[]string{"Cooperative", "Family", "Travel"}, "Card Game", []string{"Ages 7+", "Ages 10+"}, []string{
				"Fits in a pocket and plays in twenty minutes.",
				"Quick to teach at the table, with the rules on a single card.",
			}},
			{[]string{"Wooden", "Magnetic", "Classic"}, "Building Blocks", []string{"50 Pieces", "100 Pieces"}, []string{
				"Sized for small hands, with rounded edges and corners.",
				"Comes in a canvas bag that doubles as a play mat.",
			}},
			{[]string{"Wooden", "Travel", "Classic"}, "Chess Set", []string{"Folding Board", "Tournament Size"}, []string{
				"Weighted pieces that feel good in the hand.",
				"Every piece has its own place in the box.",
			}},
			{[]string{"Wooden", "Classic"}, "Train Set", []string{"Starter Set", "Deluxe Edition"}, []string{
				"Track pieces fit together every way round.",
				"Works with the wooden track of most other makers.",
			}},
		},
		sentences: []string{
			"A favourite for rainy afternoons and family holidays.",
			"Tested to European toy safety standards.",
		},
		minDollars: 8, maxDollars: 120,
	},
	{
		id: "garden", name: "Garden",
		kinds: []sampleKind{
			{[]string{"Heirloom", "Organic"}, "Tomato Seeds", []string{"Cherry Mix", "Beefsteak", "Plum"}, []string{
				"Open-pollinated and grown without synthetic pesticides.",
				"Sow indoors in spring and plant out after the last frost.",
				"Enough seed for two seasons.",
			}},
			{[]string{"Ergonomic", "Bypass", "Professional"}, "Pruning Shears", []string{"Small", "Medium"}, []string{
				"Sharp, precise and comfortable even after an afternoon of pruning.",
				"Cuts green stems up to 2 cm cleanly.",
			}},
			{[]string{"Cedar", "Galvanized"}, "Raised Bed", []string{"120 cm", "180 cm"}, []string{
				"Drains freely so roots never sit in water.",
				"Assembles without tools in a quarter of an hour.",
			}},
			{[]string{"Galvanized", "Indoor", "Ergonomic"}, "Watering Can", []string{"2 L", "5 L", "8 L"}, []string{
				"A long spout reaches the back of the border.",
				"The removable rose gives seedlings a gentle shower.",
			}},
			{[]string{"Terracotta", "Glazed", "Cedar"}, "Planter", []string{"Small", "Medium", "Large"}, []string{
				"A drainage hole and a saucer keep the roots healthy.",
				"Frost-proof, so it can stay outside all winter.",
			}},
			{[]string{"Expandable", "Kink-Free"}, "Garden Hose", []string{"15 m", "25 m"}, []string{
				"Stays supple in the cold and never kinks.",
				"Brass fittings that will not crack.",
			}},
		},
		sentences: []string{
			"A sensible choice for balconies, patios and allotments alike.",
			"Ships in plastic-free packaging.",
		},
		minDollars: 4, maxDollars: 260,
	},
	{
		id: "pets", name: "Pets",
		kinds: []sampleKind{
			{[]string{"Orthopedic", "Washable"}, "Dog Bed", []string{"Small", "Medium", "Large"}, []string{
				"Memory foam supports older joints.",
				"The cover unzips and goes straight into the washing machine.",
			}},
			{[]string{"Sisal", "Tall", "Compact"}, "Cat Tree", []string{"90 cm", "150 cm"}, []string{
				"Sisal posts save the sofa from sharpening claws.",
				"A hideaway and two perches for climbing and napping.",
			}},
			{[]string{"Reflective", "Leather", "Adjustable"}, "Dog Lead", []string{"1.2 m", "2 m"}, []string{
				"Stitching that shows up in headlights.",
				"A padded handle is kind to hands on long walks.",
			}},
			{[]string{"Interactive", "Slow"}, "Puzzle Feeder", []string{"Level 1", "Level 2", "Level 3"}, []string{
				"Turns mealtime into a game and slows down fast eaters.",
				"Dishwasher safe.",
			}},
			{[]string{"Grain-Free", "Salmon", "Chicken"}, "Cat Food", []string{"2 kg", "6 kg"}, []string{
				"Loved by picky eaters.",
				"High in protein, with no artificial colours.",
			}},
			{[]string{"Durable", "Rubber", "Rope"}, "Chew Toy", []string{"Small", "Large"}, []string{
				"Sturdy enough for enthusiastic chewers.",
				"Keeps curious pets busy for hours.",
			}},
		},
		sentences: []string{
			"Chosen with vets and tested by our own pets.",
		},
		minDollars: 5, maxDollars: 180,
	},
	{
		id: "sports-fitness", name: "Sports & Fitness",
		kinds: []sampleKind{
			{[]string{"Non-Slip", "Cork", "Travel"}, "Yoga Mat", []string{"4 mm", "6 mm"}, []string{
				"Grips well even during hot, sweaty sessions.",
				"Cushions the knees without feeling unstable.",
			}},
			{[]string{"Cast Iron", "Competition", "Vinyl"}, "Kettlebell", []string{"8 kg", "12 kg", "16 kg"}, []string{
				"A wide handle takes both hands for swings.",
				"A flat base keeps it steady on the floor.",
			}},
			{[]string{"Hex", "Neoprene", "Rubber"}, "Dumbbell Pair", []string{"2 × 5 kg", "2 × 10 kg"}, []string{
				"Knurled handles give a secure grip.",
				"Flat-sided heads stop them rolling away.",
			}},
			{[]string{"Fabric", "Latex-Free", "Loop"}, "Resistance Bands", []string{"Set of 3", "Set of 5"}, []string{
				"Resistance from gentle warm-ups to heavy squats.",
				"Packs into a pouch for training on the road.",
			}},
			{[]string{"Speed", "Weighted", "Adjustable"}, "Jump Rope", []string{"2.8 m", "3 m"}, []string{
				"Ball-bearing handles keep the rope turning smoothly.",
				"Adjusts to any height in a minute.",
			}},
			{[]string{"High-Density", "Textured"}, "Foam Roller", []string{"30 cm", "45 cm"}, []string{
				"Eases tight calves and quads after a run.",
				"Firm enough to work, soft enough to relax on.",
			}},
		},
		sentences: []string{
			"Compact enough for a small flat, tough enough for a gym.",
			"Comes with a printed guide of beginner and advanced routines.",
		},
		minDollars: 9, maxDollars: 300,
	},
	{
		id: "bath-body", name: "Bath & Body",
		kinds: []sampleKind{
			{bathScents, "Hand Soap", []string{"250 ml", "500 ml", "Refill Pack"}, []string{
				"Cleans gently without drying the hands.",
				"Gentle enough to use many times a day.",
			}},
			{bathScents, "Body Wash", []string{"250 ml", "500 ml"}, []string{
				"A rich lather from a small squeeze.",
				"Leaves skin soft, never tight.",
			}},
			{bathScents, "Bath Salts", []string{"500 g", "1 kg"}, []string{
				"Magnesium-rich salts that soothe tired muscles.",
				"Two handfuls make a long, slow bath.",
			}},
			{bathScents, "Shampoo Bar", []string{"80 g", "120 g"}, []string{
				"Lasts as long as three bottles of liquid shampoo.",
				"No bottle at all: it travels in a tin.",
			}},
			{bathScents, "Candle", []string{"Small", "Large"}, []string{
				"Burns cleanly for up to 40 hours.",
				"A cotton wick in a reusable glass jar.",
			}},
		},
		sentences: []string{
			"Made in small batches with plant-based ingredients.",
			"Never tested on animals.",
		},
		minDollars: 5, maxDollars: 60,
	},
	{
		id: "stationery-art", name: "Stationery & Art",
		kinds: []sampleKind{
			{[]string{"Dotted", "Lined", "Recycled", "Pocket"}, "Notebook", []string{"A5", "A6"}, []string{
				"Lies flat when open, thanks to a stitched binding.",
				"Smooth paper that takes ink without bleeding through.",
			}},
			{[]string{"Steel-Nib", "Demonstrator", "Classic"}, "Fountain Pen", []string{"Fine", "Medium"}, []string{
				"Fills from cartridges, or from a bottle with the included converter.",
				"A smooth nib that writes from the first stroke.",
			}},
			{[]string{"Watercolour", "Mixed-Media", "Archival"}, "Sketchbook", []string{"A5", "A4"}, []string{
				"Heavy paper that takes washes without buckling.",
				"A stitched spine opens flat across a double page.",
			}},
			{[]string{"Watercolour", "Gouache"}, "Paint Set", []string{"12 Colours", "24 Colours"}, []string{
				"Pigments are lightfast and richly saturated.",
				"A water brush in the lid paints anywhere.",
			}},
			{[]string{"Graphite", "Coloured"}, "Pencil Set", []string{"12 Pieces", "24 Pieces"}, []string{
				"Leads that sharpen to a fine point without breaking.",
				"Blends smoothly, layer over layer.",
			}},
			{[]string{"Weekly", "Daily", "Pocket"}, "Planner", []string{"2027"}, []string{
				"A week on two pages, with room for notes.",
				"A ribbon marker and a pocket inside the back cover.",
			}},
		},
		sentences: []string{
			"A pleasure to use, every single day.",
			"Made from responsibly sourced materials.",
		},
		minDollars: 3, maxDollars: 90,
	},
}

var (
	bookEditions = []string{"(Hardcover)", "(Paperback)", "(Illustrated Edition)", "(Second Edition)"}
	bathScents   = []string{"Lavender", "Sea Salt", "Cedarwood", "Unscented", "Citrus", "Oat & Honey"}
)

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
