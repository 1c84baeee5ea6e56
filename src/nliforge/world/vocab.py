"""Small fixed vocabularies the phenomena draw from.

Lists are kept disjoint where a clash would change a label (e.g. the descriptions used to
lengthen a hypothesis never mention animals, adjectives with antonyms or the towns of the
direction puzzles).
"""

from __future__ import annotations

FEMALE_NAMES = ("Maria", "Anna", "Sofia", "Emma", "Laura", "Julia", "Nina", "Clara", "Olivia",
                "Grace", "Alice", "Helen", "Irene", "Rosa")
MALE_NAMES = ("Tom", "David", "Peter", "James", "Daniel", "Lucas", "Mark", "Omar", "Victor",
              "Samuel", "Henry", "Oscar", "Felix", "Hugo")
NAMES = FEMALE_NAMES + MALE_NAMES

PROFESSIONS = ("lawyer", "doctor", "judge", "teacher", "banker", "artist", "senator", "author",
               "actor", "manager", "scientist", "tourist", "secretary", "athlete", "president",
               "dancer", "professor", "journalist")

# (past, base, past participle)
TRANSITIVE = (("saw", "see", "seen"), ("helped", "help", "helped"), ("called", "call", "called"),
              ("thanked", "thank", "thanked"), ("admired", "admire", "admired"),
              ("avoided", "avoid", "avoided"), ("recognized", "recognize", "recognized"),
              ("contacted", "contact", "contacted"), ("paid", "pay", "paid"),
              ("visited", "visit", "visited"), ("supported", "support", "supported"),
              ("introduced", "introduce", "introduced"), ("met", "meet", "met"))
# (past, base)
INTRANSITIVE = (("danced", "dance"), ("slept", "sleep"), ("laughed", "laugh"), ("waited", "wait"),
                ("left", "leave"), ("arrived", "arrive"), ("shouted", "shout"), ("smiled", "smile"),
                ("ran", "run"), ("sang", "sing"), ("cried", "cry"), ("resigned", "resign"),
                ("stumbled", "stumble"), ("applauded", "applaud"))

# Contrary adjective pairs: "X is A" entails "X is not B", but "X is not A" does not give "X is B".
ANTONYMS = (("tall", "short"), ("happy", "sad"), ("rich", "poor"), ("young", "old"),
            ("strong", "weak"), ("polite", "rude"), ("calm", "nervous"), ("early", "late"),
            ("hungry", "full"), ("noisy", "quiet"), ("busy", "idle"), ("healthy", "sick"))
# Comparative pairs: "X is A-er than Y" iff "Y is B-er than X".
COMPARATIVES = (("taller", "shorter"), ("older", "younger"), ("richer", "poorer"),
                ("faster", "slower"), ("stronger", "weaker"), ("heavier", "lighter"),
                ("louder", "quieter"), ("busier", "calmer"))

# (hyponym, plural, hypernym, hypernym plural)
HYPONYMS = (("dog", "dogs", "mammal", "mammals"), ("cat", "cats", "mammal", "mammals"),
            ("horse", "horses", "mammal", "mammals"), ("rabbit", "rabbits", "mammal", "mammals"),
            ("eagle", "eagles", "bird", "birds"), ("parrot", "parrots", "bird", "birds"),
            ("owl", "owls", "bird", "birds"), ("pigeon", "pigeons", "bird", "birds"),
            ("shark", "sharks", "fish", "fish"), ("salmon", "salmon", "fish", "fish"),
            ("snake", "snakes", "reptile", "reptiles"), ("lizard", "lizards", "reptile", "reptiles"),
            ("truck", "trucks", "vehicle", "vehicles"), ("bus", "buses", "vehicle", "vehicles"),
            ("tractor", "tractors", "vehicle", "vehicles"),
            ("violin", "violins", "instrument", "instruments"),
            ("guitar", "guitars", "instrument", "instruments"),
            ("trumpet", "trumpets", "instrument", "instruments"),
            ("hammer", "hammers", "tool", "tools"), ("wrench", "wrenches", "tool", "tools"))
SEEING_VERBS = (("saw", "see"), ("photographed", "photograph"), ("drew", "draw"), ("found", "find"))

# People in groups, for quantifiers and percentages.
GROUPS = ("students", "guests", "players", "tourists", "workers", "children", "nurses",
          "soldiers", "passengers", "visitors", "volunteers", "members")
# (positive, negated positive, complement): complementary within the group.
COMPLEMENTS = (("passed the exam", "did not pass the exam", "failed the exam"),
               ("stayed", "did not stay", "left early"),
               ("accepted the offer", "did not accept the offer", "rejected the offer"),
               ("were present", "were not present", "were absent"),
               ("agreed", "did not agree", "disagreed"),
               ("voted", "did not vote", "abstained"))
PERCENTS = (10, 20, 25, 30, 40, 60, 70, 75, 80, 90)

COUNT_NOUNS = ("books", "coins", "apples", "pencils", "tickets", "cards", "shirts", "keys")
NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
                8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}

# Invented towns, so no direction fact clashes with real geography.
TOWNS = ("Alden", "Brixham", "Carvel", "Dunmore", "Elmstead", "Fairholt", "Glenrock", "Hollis",
         "Ivydale", "Juniper", "Kestrel", "Lonsdale", "Marlow", "Northam")
DIRECTIONS = (("north", "south"), ("east", "west"))

FACTIVE = ("knows", "realized", "noticed", "discovered", "remembers")
NONFACTIVE = ("believes", "thinks", "suspects", "claims", "hopes", "assumes")
SURE_ADVERBS = ("Clearly", "Certainly", "Obviously", "Undoubtedly")
UNSURE_ADVERBS = ("Perhaps", "Maybe", "Possibly", "Supposedly")

# Label-preserving elaborations attached to a person or a town that both sentences mention.
PERSON_DESCRIPTIONS = ("who lives in Boston", "who grew up in Dublin", "who works at the bank",
                       "who plays the piano", "who studies chemistry", "who runs a small shop",
                       "who speaks three languages", "who writes poems", "who lives in Lisbon")
PERSON_NEG_DESCRIPTIONS = ("who never smokes", "who never swims", "who does not drive",
                           "who never cooks", "who is not married", "who does not eat meat")
TOWN_DESCRIPTIONS = ("which has a harbor", "which has a big market", "which lies on a river")
TOWN_NEG_DESCRIPTIONS = ("which has no airport", "which has no train station", "which is not large")
# Hypothesis-only or both-sides prefixes that assert the sentence they introduce.
FRAMES = ("It is true that", "It is a fact that", "It is certainly the case that",
          "As a matter of fact,", "It is definitely true that")
SHORT_FRAMES = ("Indeed,", "In fact,", "Truly,")

# Meaning-preserving substitutions used to break full word overlap.
SYNONYMS = {
    "lawyer": "attorney", "doctor": "physician", "author": "writer", "professor": "lecturer",
    "journalist": "reporter", "manager": "supervisor", "tourist": "traveler",
    "helped": "assisted", "called": "phoned", "avoided": "evaded",
    "supported": "backed", "contacted": "reached",
    "happy": "glad", "sad": "unhappy", "rich": "wealthy", "sick": "ill", "quiet": "silent",
    "rude": "impolite", "nervous": "anxious", "strong": "powerful",
    "left": "departed", "shouted": "yelled", "resigned": "quit",
    "students": "pupils", "children": "kids", "exam": "test",
    "faster": "quicker", "richer": "wealthier",
}
