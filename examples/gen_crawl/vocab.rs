//! Word lists the generator draws from. All lower-case ASCII letters and
//! digits only, so no entry ever needs percent-encoding or case folding.

/// Labels that make up registrable domain names and path segments.
pub const WORDS: &[&str] = &[
    "acme", "alpha", "amber", "anchor", "apple", "archive", "arrow", "atlas", "aurora", "autumn",
    "badger", "baker", "bamboo", "banner", "basin", "beacon", "bear", "berry", "birch", "bison",
    "blaze", "bloom", "blue", "board", "bolt", "book", "boulder", "branch", "brave", "breeze",
    "brick", "bridge", "bright", "brook", "buffalo", "cabin", "cactus", "camel", "canyon",
    "capital", "cargo", "carbon", "castle", "cedar", "central", "chart", "cherry", "circle",
    "citrus", "city", "cliff", "cloud", "clover", "coast", "cobalt", "comet", "copper", "coral",
    "corner", "cotton", "craft", "crane", "creek", "crest", "crown", "crystal", "daily", "dawn",
    "delta", "desert", "diamond", "digital", "dragon", "dream", "drift", "eagle", "earth", "east",
    "echo", "edge", "elm", "ember", "empire", "falcon", "farm", "feather", "fern", "field", "fire",
    "flash", "fleet", "flower", "forest", "forge", "fox", "frontier", "frost", "galaxy", "garden",
    "gate", "giant", "glacier", "global", "gold", "granite", "green", "grove", "harbor", "harvest",
    "hawk", "heart", "hill", "horizon", "hub", "iron", "island", "ivory", "jade", "jungle", "kite",
    "lake", "lantern", "leaf", "legend", "light", "lime", "lion", "lotus", "lunar", "maple",
    "marble", "market", "meadow", "media", "metro", "mint", "mirror", "mountain", "nature", "nest",
    "network", "noble", "north", "nova", "oak", "ocean", "olive", "omega", "orbit", "orchid",
    "owl", "pacific", "palm", "panda", "paper", "peak", "pearl", "pebble", "pepper", "phoenix",
    "pilot", "pine", "pixel", "planet", "plaza", "point", "polar", "prairie", "prime", "pulse",
    "quartz", "quest", "rain", "rapid", "raven", "red", "reef", "ridge", "river", "rock", "rose",
    "ruby", "sage", "sail", "salt", "sand", "sapphire", "scout", "shadow", "shell", "shore",
    "sierra", "silver", "sky", "slate", "smart", "snow", "solar", "south", "spark", "spring",
    "spruce", "star", "steel", "stone", "storm", "stream", "summit", "sun", "swift", "tiger",
    "timber", "torch", "tower", "trail", "tree", "tribe", "tropic", "tulip", "union", "urban",
    "valley", "vector", "velvet", "venture", "vista", "wave", "west", "willow", "wind", "wolf",
    "wood", "world", "zen", "zenith", "zone",
];

/// Top-level domains with relative weights (com dominates, as in crawls).
pub const TLDS: &[(&str, u32)] = &[
    ("com", 520),
    ("org", 80),
    ("net", 70),
    ("de", 40),
    ("co.uk", 30),
    ("io", 25),
    ("ru", 25),
    ("fr", 20),
    ("jp", 18),
    ("info", 15),
    ("nl", 12),
    ("com.br", 12),
    ("it", 12),
    ("pl", 10),
    ("es", 10),
    ("ca", 10),
    ("com.au", 9),
    ("edu", 8),
    ("gov", 5),
    ("in", 8),
    ("co", 6),
    ("dev", 4),
    ("app", 4),
    ("tv", 3),
    ("me", 4),
    ("us", 4),
    ("ch", 4),
    ("se", 4),
];

/// Host prefixes; the empty string means the bare registrable domain.
pub const SUBDOMAINS: &[(&str, u32)] = &[
    ("", 220),
    ("www.", 400),
    ("m.", 30),
    ("blog.", 25),
    ("shop.", 20),
    ("api.", 15),
    ("cdn.", 15),
    ("news.", 15),
    ("en.", 15),
    ("de.", 8),
    ("static.", 12),
    ("img.", 10),
    ("docs.", 10),
    ("forum.", 10),
    ("support.", 8),
    ("mail.", 5),
    ("app.", 8),
    ("dev.", 4),
    ("media.", 8),
    ("store.", 8),
    ("www2.", 3),
    ("eu.west.", 2),
    ("assets.cdn.", 3),
];

/// First path segments of section-like paths.
pub const SECTIONS: &[&str] = &[
    "news",
    "blog",
    "article",
    "articles",
    "products",
    "product",
    "category",
    "tag",
    "tags",
    "wiki",
    "docs",
    "help",
    "about",
    "search",
    "user",
    "users",
    "forum",
    "topic",
    "threads",
    "en",
    "de",
    "fr",
    "en-us",
    "static",
    "assets",
    "images",
    "img",
    "media",
    "download",
    "downloads",
    "video",
    "videos",
    "shop",
    "store",
    "p",
    "c",
    "item",
    "items",
    "post",
    "posts",
    "events",
    "sports",
    "world",
    "tech",
    "business",
    "archive",
    "page",
    "pages",
    "files",
];

/// Locale prefixes of localized sites.
pub const LOCALES: &[&str] = &[
    "en", "de", "fr", "es", "en-us", "en-gb", "ja", "pt-br", "it", "nl",
];

/// File extensions of leaf segments.
pub const EXTENSIONS: &[&str] = &[
    ".html", ".html", ".html", ".htm", ".php", ".php", ".aspx", ".jsp", ".jpg", ".png", ".pdf",
    ".css", ".js", ".xml", ".gif",
];

/// Query keys; `utm_*` keys come with their own values.
pub const QUERY_KEYS: &[&str] = &[
    "id", "page", "q", "sort", "lang", "ref", "s", "cat", "p", "tab", "view", "type", "limit",
    "offset", "start", "filter", "order", "sid", "item", "pid", "uid", "format", "v", "year",
    "month", "size", "color", "mode",
];

/// `utm_*` parameter names.
pub const UTM_KEYS: &[&str] = &[
    "utm_source",
    "utm_medium",
    "utm_campaign",
    "utm_content",
    "utm_term",
];

/// Values typical of `utm_*` parameters.
pub const UTM_VALUES: &[&str] = &[
    "google",
    "newsletter",
    "twitter",
    "facebook",
    "email",
    "cpc",
    "social",
    "rss",
    "feed",
    "banner",
    "spring_sale",
    "homepage",
    "partner",
    "organic",
];

/// Fragment names.
pub const FRAGMENTS: &[&str] = &[
    "top",
    "content",
    "comments",
    "main",
    "section-2",
    "overview",
    "history",
    "references",
    "footer",
    "reviews",
    "page=2",
    "!/home",
    "install",
    "usage",
];

/// Percent-encoded triplets that are required (never of an unreserved
/// character) and written with upper-case hex, as a normalizer leaves them.
pub const NEEDED_ESCAPES: &[&str] = &[
    "%20",
    "%2F",
    "%C3%A9",
    "%C3%BC",
    "%E2%80%93",
    "%2C",
    "%3A",
    "%5B",
    "%5D",
    "%C3%B6",
    "%40",
    "%26",
    "%3D",
    "%E6%97%A5",
    "%27",
];

/// IPv6 host literals in RFC 5952 form (lower case, shortest).
pub const IPV6_HOSTS: &[&str] = &[
    "[2001:db8::1]",
    "[2001:db8::8a2e:370:7334]",
    "[2001:db8:85a3::8a2e:370:7334]",
    "[::1]",
    "[fe80::1ff:fe23:4567:890a]",
    "[2001:db8:0:1:1:1:1:1]",
    "[2001:db8::c0a8:101]",
    "[2a00:1450:4001:82b::200e]",
    "[2606:4700::6810:84e5]",
];

/// Non-default ports (never 21, 80 or 443, so no scheme drops them).
pub const PORTS: &[&str] = &[
    "8080", "8443", "8000", "3000", "8888", "9090", "81", "8081", "5000",
];
