"""Word pools for the synthetic HERB world (all invented for this suite)."""

from __future__ import annotations

FIRST_NAMES = (
    "Aarav", "Beatriz", "Callum", "Dalia", "Emeka", "Farah", "Gideon", "Hana", "Idris", "Juno",
    "Kenji", "Leona", "Mateo", "Nadia", "Oskar", "Priya", "Quentin", "Rania", "Soren", "Tamsin",
    "Ugo", "Vera", "Wendell", "Xiomara", "Yusuf", "Zora", "Anika", "Bastian", "Celine", "Dmitri",
    "Elif", "Fabian", "Greta", "Hugo", "Ines", "Jasper", "Kiran", "Lucia", "Marek", "Noor",
    "Olin", "Paloma", "Rafael", "Saanvi", "Tobias", "Ulla", "Viktor", "Wren", "Yara", "Zane",
)  # fmt: skip
LAST_NAMES = (
    "Achebe", "Brandt", "Castellanos", "Dufresne", "Ekwueme", "Fairbanks", "Galloway", "Haddad",
    "Iwasaki", "Jovanovic", "Kowalczyk", "Lindqvist", "Mbeki", "Nakamura", "Okafor", "Petrov",
    "Quiroga", "Rasmussen", "Sandoval", "Takahashi", "Underhill", "Varga", "Whitlock", "Xu",
    "Yilmaz", "Zielinski", "Albright", "Bianchi", "Chandra", "Delacroix", "Eriksen", "Ferreira",
    "Gallagher", "Holloway", "Ibarra", "Jankowski", "Kaur", "Lombardi", "Moreau", "Novak",
    "Ortega", "Pacheco", "Renner", "Sato", "Thorne", "Ueda", "Valdez", "Winslow", "Yamada",
    "Zeller",
)  # fmt: skip
PRODUCT_STEMS = (
    "Atlas", "Beacon", "Cinder", "Drift", "Ember", "Fathom", "Glint", "Harbor", "Ion", "Juniper",
    "Kestrel", "Lumen", "Mosaic", "Nimbus", "Orbit", "Prism", "Quill", "Ripple", "Summit",
    "Tundra", "Umber", "Vertex", "Willow", "Yarrow", "Zephyr", "Anvil", "Bramble", "Cobble",
    "Dune", "Echo", "Flint", "Garnet", "Hollow", "Inlet", "Jasper", "Keel", "Lantern", "Meadow",
    "Nectar", "Onyx", "Pebble", "Quarry", "Rook", "Sable", "Thistle", "Vale", "Wick", "Yonder",
    "Zenith", "Alder",
)  # fmt: skip
COMPANY_HEADS = (
    "Brightwater", "Cobalt", "Granite", "Silverline", "Redwood", "Northgate", "Bluepeak",
    "Ironbridge", "Clearfield", "Sunmesa", "Harborview", "Pinecrest", "Stonegate", "Westmoor",
    "Goldleaf", "Ashford", "Riverbend", "Oakhurst", "Lakeshore", "Highland", "Fairhaven",
    "Crestview", "Maplewood", "Eastbrook", "Copperline", "Tidewater", "Foxglove", "Larkspur",
    "Marrowind", "Quaystone",
)  # fmt: skip
COMPANY_TAILS = (
    "Analytics", "Health", "Logistics", "Foods", "Energy", "Capital", "Retail", "Media", "Labs",
    "Manufacturing", "Insurance", "Telecom", "Biotech", "Freight", "Hospitality", "Realty",
    "Outfitters", "Systems", "Pharma", "Airways",
)  # fmt: skip
COMPETITORS = (
    "Altavo", "Brivana", "Corlith", "Dexaro", "Elvento", "Fyndra", "Gravix", "Helioro",
    "Istrella", "Jorvane", "Kalvio", "Lumira", "Mondrel", "Nexora", "Orvella", "Pandrix",
    "Quorvia", "Rivento", "Solvane", "Tavrik", "Ulvera", "Vexlo", "Wendro", "Zantor",
)  # fmt: skip
FEATURES = (
    "smart alerts", "bulk import", "audit trail", "offline mode", "usage dashboard",
    "single sign on", "anomaly detection", "renewal forecasting", "approval workflows",
    "custom fields", "role based permissions", "mobile check in", "data export API",
    "territory mapping", "email digests", "calendar sync", "guided onboarding",
    "live collaboration", "pipeline scoring", "invoice matching", "SLA timers",
    "knowledge suggestions", "voice notes", "geofencing", "batch scheduling", "template library",
    "sandbox environments", "webhook triggers", "multi currency support", "consent tracking",
)  # fmt: skip
METRICS = {
    "p95 latency": ("150 ms", "200 ms", "250 ms", "300 ms", "400 ms", "500 ms"),
    "uptime": ("99.5%", "99.9%", "99.95%", "99.99%"),
    "sync interval": ("1 minute", "5 minutes", "10 minutes", "15 minutes", "30 minutes"),
    "batch size": ("1,000 records", "5,000 records", "10,000 records", "25,000 records"),
    "adoption rate": ("20% of active users", "30% of active users", "45% of active users"),
    "error rate": ("0.5%", "0.1%", "0.05%", "0.01%"),
}
SEGMENTS = (
    "mid market retail", "regional healthcare", "public sector", "higher education",
    "independent insurers", "logistics carriers", "consumer banking", "specialty manufacturing",
    "hospitality groups", "nonprofit organizations", "telecom operators", "energy utilities",
)  # fmt: skip
SIZES = (
    "$1.2 billion", "$850 million", "$2.4 billion", "$430 million", "$3.1 billion",
    "$610 million", "$1.7 billion", "$940 million",
)  # fmt: skip
BUGS = (
    "duplicate notifications", "timezone drift in reports", "CSV export truncation",
    "stale dashboard cache", "login loop on mobile", "missing audit entries",
    "slow search on large accounts", "currency rounding errors", "calendar double booking",
    "webhook retry storm", "broken pagination in lists", "attachment upload failures",
    "incorrect permission inheritance", "memory leak in the sync worker",
    "session timeout during imports",
)  # fmt: skip
CAUSES = (
    "a race condition between two schedulers", "an off by one error in the pagination cursor",
    "a cache key that ignored the tenant id", "timestamps stored without a timezone",
    "an unbounded retry loop", "a missing database index",
    "an integer overflow in the batch counter", "a stale feature flag",
    "a permissions check that skipped inherited roles", "a connection pool that was never drained",
)  # fmt: skip
FIXES = (
    "adding a distributed lock", "correcting the cursor arithmetic",
    "including the tenant id in the cache key", "storing all timestamps in UTC",
    "capping retries with exponential backoff", "adding a composite index",
    "switching the counter to a 64 bit integer", "removing the stale flag",
    "resolving roles through the full hierarchy", "closing connections after each job",
)  # fmt: skip
REQUESTS = (
    "a read only auditor role", "quarterly usage reports", "bulk user provisioning",
    "a Spanish language interface", "export to Parquet files", "an on premise deployment option",
    "granular notification settings", "two factor login for contractors",
    "a sandbox for training staff", "SAML group mapping",
)  # fmt: skip
COMPONENTS = {
    "event pipeline": ("Apache Kafka", "RabbitMQ", "Apache Pulsar"),
    "search index": ("Elasticsearch", "OpenSearch", "Typesense"),
    "job scheduler": ("Temporal", "Apache Airflow", "Celery"),
    "cache layer": ("Redis", "Memcached", "Hazelcast"),
    "primary datastore": ("PostgreSQL", "CockroachDB", "MySQL"),
    "notification service": ("Amazon SNS", "Firebase Cloud Messaging", "Pusher"),
    "API gateway": ("Envoy", "Kong", "NGINX"),
    "analytics warehouse": ("ClickHouse", "Snowflake", "BigQuery"),
}
REASONS = (
    "it keeps ordering guarantees per tenant", "the team already operates it in production",
    "it supports multi region replication", "it had the lowest cost in the load test",
    "it handles the expected write volume", "it integrates with the existing monitoring stack",
)  # fmt: skip
CLAIMS = (
    "it ships the capability only in its enterprise tier", "it relies on nightly batch jobs",
    "it exposes the capability through a public API", "it bundles it with an analytics add on",
    "it limits the capability to admin users", "it lets customers tune it per workspace",
)  # fmt: skip
DOMAINS = (
    "helps field service teams schedule technicians", "helps finance teams reconcile invoices",
    "helps sales managers coach their reps", "helps support teams triage tickets",
    "helps HR teams run onboarding", "helps marketers plan campaigns",
    "helps procurement teams compare suppliers", "helps clinics manage appointments",
    "helps account teams track renewals", "helps operations teams monitor fleets",
    "helps legal teams review contracts", "helps retailers forecast stock",
)  # fmt: skip
LOCATIONS = ("San Francisco", "Austin", "Toronto", "Dublin", "Singapore", "Bangalore", "Sydney")
FILLER = (
    "Morning all, pairing with {name} on {feature} today.",
    "Reminder: the weekly demo moves to 3pm.",
    "Updated the {feature} mockups, feedback welcome.",
    "QA pass on {feature} is at {n}% complete.",
    "Who owns the {feature} release notes?",
    "Customer success says the {feature} demos are going well.",
    "I'll be out tomorrow, {name} is covering on-call.",
    "Dashboards look healthy after last night's deploy.",
    "Let's keep {feature} scope tight for this milestone.",
    "Added test cases for {feature} edge cases.",
    "Can someone sanity check the {feature} copy before Friday?",
    "Retro notes are in the team folder.",
    "Thanks {name} for unblocking the staging environment!",
    "Heads up: staging will be down for maintenance tonight.",
    "The {feature} spike took longer than planned, about {n} hours.",
)  # fmt: skip
