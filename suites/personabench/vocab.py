"""Word lists of the generated PersonaBench worlds (all invented or generic; nothing taken from
the released data). Values hold only ASCII letters, digits, spaces and hyphens, so every
template stays unambiguous in compact JSON and in the rendered context."""

FIRST = ("Ada", "Bram", "Celia", "Dorian", "Edda", "Felix", "Greta", "Hollis", "Ines", "Jonas",
         "Kira", "Lionel", "Mara", "Niko", "Odile", "Pavel", "Quinn", "Rosa", "Silas", "Tamsin",
         "Ulric", "Vera", "Wendell", "Xenia", "Yusuf", "Zora", "Anselm", "Brigid", "Cosmo", "Delphine",
         "Emeric", "Fenna", "Gideon", "Hester", "Ivo", "Juno", "Kasimir", "Leda", "Matthias", "Nell")
LAST = ("Abernathy", "Brightwater", "Castellan", "Dunmore", "Eastwick", "Fairlie", "Galloway",
        "Hartigan", "Ironside", "Jessop", "Kettering", "Lindqvist", "Marchetti", "Northcott",
        "Okonkwo", "Pemberton", "Quarrie", "Rainsford", "Strand", "Thackeray", "Underhill",
        "Vasquez", "Whitlock", "Yardley", "Zeller", "Ashdown", "Birkett", "Crowther")
PERSONA = ("A marine biologist who restores kelp forests", "A night-shift nurse who writes short fiction",
           "A furniture maker who teaches weekend classes", "A transit planner obsessed with old maps",
           "A pastry chef saving up for her own bakery", "A retired pilot who volunteers at a museum",
           "A data journalist covering city budgets", "A beekeeper who sells honey at markets",
           "A high-school physics teacher and amateur astronomer", "A translator of Nordic crime novels",
           "A landscape architect designing rain gardens", "A sound engineer for a small theatre")
UNIVERSITIES = ("Harrowgate University", "Linden Institute of Technology", "Saint Aldric College",
                "Westmarch University", "Calloway State University", "Brennan Polytechnic",
                "Ostrava Academy of Arts", "Kingsbridge University")
SCHOOL_TYPE = {"University": "University", "College": "College", "Polytechnic": "Polytechnic",
               "Institute": "Institute", "Academy": "Academy"}
MAJORS = ("Marine Biology", "Economics", "Mechanical Engineering", "Art History", "Linguistics",
          "Urban Planning", "Nursing", "Astrophysics", "Journalism", "Architecture")
DEGREES = ("Bachelor of Arts", "Bachelor of Science", "Master of Science", "Master of Arts", "PhD")
JOBS = ("marine biologist", "nurse", "furniture maker", "transit planner", "pastry chef", "pilot",
        "data journalist", "beekeeper", "physics teacher", "translator", "landscape architect",
        "sound engineer", "pharmacist", "carpenter", "veterinarian", "librarian", "electrician")
EMPLOYERS = ("Tidewater Research Station", "Mercy Vale Hospital", "Oakline Workshop",
             "Metro Transit Authority", "Copperleaf Bakery", "Skyharbor Airlines", "Northgate Herald",
             "Greenfold Farms", "Riverside High School", "Lantern Press", "Verdant Studio",
             "Gallery Theatre Company")
CITIES = ("Portwell", "Ashbury", "Kestrel Bay", "Millbrook", "Stonehaven", "Elmsford", "Cardington",
          "Hollow Creek", "Brightmoor", "Fenwick")
COUNTRIES = ("Canada", "Ireland", "Norway", "New Zealand", "Portugal", "Chile", "Japan", "Kenya")
NATIONALITY = {"Canada": "Canadian", "Ireland": "Irish", "Norway": "Norwegian", "New Zealand": "New Zealander",
               "Portugal": "Portuguese", "Chile": "Chilean", "Japan": "Japanese", "Kenya": "Kenyan"}
VEHICLES = ("Subaru Outback", "Honda Civic", "Volvo wagon", "cargo bike", "Vespa scooter", "Ford pickup",
            "Nissan Leaf", "touring motorcycle")
EYES = ("green", "hazel", "grey", "brown", "amber")
HAIR = ("auburn", "jet black", "sandy blond", "silver", "chestnut")
PETS = (("dog", ("Biscuit", "Pepper", "Juniper", "Maple")), ("cat", ("Mochi", "Saffron", "Pickle")),
        ("rabbit", ("Clover", "Thistle")), ("parrot", ("Captain", "Kiwi")), ("tortoise", ("Boulder", "Sage")))
RELATIONS_FAMILY = ("sister", "brother", "cousin")
RELATIONS_OTHER = ("friend", "colleague", "neighbor", "client")
PREFERENCES = {
    # category: (question paraphrases, items, hard?)
    "cuisine": (("Which cuisines do I enjoy the most?", "What kinds of food do I love eating?"),
                ("ramen", "paella", "pho", "tacos al pastor", "dim sum", "moussaka", "pierogi",
                 "jollof rice", "bibimbap", "ceviche", "shakshuka", "risotto")),
    "sport": (("Which sports do I play?", "What sports activities do I take part in?"),
              ("bouldering", "rowing", "badminton", "trail running", "water polo", "fencing",
               "ultimate frisbee", "squash", "curling", "kayaking")),
    "drink": (("What drinks do I like?", "What are my favorite drinks?"),
              ("oolong tea", "cold brew", "kombucha", "ginger beer", "hot cider", "yerba mate",
               "lemonade", "rooibos", "cortado", "horchata")),
    "instrument": (("Which musical instruments fascinate me?", "What instruments do I love playing?"),
                   ("cello", "banjo", "ukulele", "harmonica", "accordion", "mandolin", "oboe",
                    "trumpet", "marimba", "bagpipes")),
    "hobby": (("What are my hobbies?", "Which hobbies do I like to pursue?"),
              ("birdwatching", "pottery", "chess", "knitting", "origami", "calligraphy",
               "woodcarving", "geocaching", "beekeeping", "stargazing")),
    "place": (("What places do I enjoy visiting?", "Which places make me happy?"),
              ("botanical gardens", "lighthouses", "flea markets", "hot springs", "old libraries",
               "night markets", "sea cliffs", "vineyards", "planetariums", "river islands")),
    "color": (("What are my favorite colors?", "Which colors do I like best?"),
              ("teal", "mustard yellow", "plum", "coral", "olive", "indigo", "terracotta",
               "lavender", "crimson", "sage green")),
    "genre": (("What music genres do I listen to?", "Which music genres do I enjoy?"),
              ("bluegrass", "bossa nova", "synthwave", "afrobeat", "sea shanties", "baroque",
               "trip hop", "zydeco", "shoegaze", "flamenco")),
    "film": (("What kinds of films do I like?", "Which film genres do I enjoy?"),
             ("heist films", "film noir", "space operas", "nature documentaries", "courtroom dramas",
              "silent comedies", "animated musicals")),
    "writer": (("Who are my favorite writers?", "Which authors do I love reading?"),
               ("Tove Jansson", "Italo Calvino", "Wislawa Szymborska", "Chinua Achebe", "Ursula Le Guin",
                "Jorge Luis Borges", "Clarice Lispector")),
    "artist": (("Which artists do I admire?", "Who are my favorite painters?"),
               ("Hilma af Klint", "Katsushika Hokusai", "Frida Kahlo", "Paul Klee", "Agnes Martin",
                "Joaquin Sorolla")),
    "season": (("What time of year do I prefer?", "Which season do I like best?"),
               ("autumn", "spring", "winter", "summer")),
}
HARD_PREFERENCES = ("cuisine", "sport", "drink", "instrument", "hobby", "place", "color", "genre", "season")
EASY_PREFERENCES = ("film", "writer", "artist")
SINGLE_PREFERENCES = ("season",)
"""Hard preferences whose answer is one item (upstream: 41 of 212 hard answers are single items)."""
PURCHASABLE = ("instrument", "sport", "hobby")
"""Preferences that may also show up in a purchase basket."""
OTHER_FOODS = ("lasagna", "falafel", "dumplings", "gumbo", "poutine", "goulash", "empanadas", "laksa",
               "pad thai", "pavlova")
PERSONALITY = (("Curious", "Uninterested"), ("Patient", "Impatient"), ("Organised", "Disorganised"),
               ("Generous", "Selfish"), ("Calm", "Anxious"))
FILLER_TOPICS = ("the weather this weekend", "a podcast episode", "the new bus timetable",
                 "a leaky kitchen tap", "a birthday card for a coworker", "the price of train tickets",
                 "a crossword clue", "moving some furniture", "a documentary about bridges",
                 "a parking ticket", "the neighbourhood newsletter", "a power cut last night",
                 "repainting the fence", "a lost umbrella", "the local election", "a broken phone screen")
FILLER_LINES = (
    "Did you end up sorting out {topic}?",
    "I keep meaning to ask you about {topic}.",
    "Honestly {topic} took up most of my afternoon.",
    "Not much news here, mostly {topic}.",
    "Ha, that reminds me of {topic}.",
    "Let me know what you think about {topic} when you get a chance.",
    "I read something odd about {topic} this morning.",
    "We should talk about {topic} over coffee sometime.",
)
AI_FILLER = (
    "Can you help me plan around {topic}?",
    "Here are a few things to consider about {topic}: timing, cost and who else is involved.",
    "Thanks, that helps. One more question about {topic}.",
    "Of course. A simple checklist usually makes {topic} easier to handle.",
)
PRODUCTS = (("Stainless steel water bottle", "Keeps drinks cold for a full day.", "Brookfield",
             ["Kitchen", "Drinkware"]),
            ("Wireless phone charger", "Charges most phones through a case.", "Voltline", ["Electronics"]),
            ("Cotton bath towels set", "Four soft towels in neutral grey.", "Homestead", ["Home", "Bath"]),
            ("LED desk lamp", "Dimmable lamp with a warm light setting.", "Lumenry", ["Home", "Lighting"]),
            ("Reusable grocery bags", "Pack of six foldable bags.", "Greenway", ["Household"]),
            ("Notebook three pack", "Ruled A5 notebooks with soft covers.", "Papertrail", ["Office Supplies"]),
            ("Umbrella compact", "Windproof travel umbrella.", "Stormguard", ["Accessories"]))
