"""How facts are written into the generated documents, and how a reader finds them again.

Every fact is one sentence built from a template with a ``{v}`` slot (the value). The
statements are implicit in the upstream sense: the value appears in passing ("Took my Honda
Civic in for a service today"), never as "my vehicle is ...". The reference policy (the
oracle) knows these templates, as a careful human reader knows how people talk, and reads
values back out of the retrieved text with :func:`pattern`; it never sees the gold answer.

Values hold only ASCII letters, digits, spaces and hyphens, and every template has literal
text after ``{v}``, so a lazy match is exact.
"""

from __future__ import annotations

import re
from functools import cache

__all__ = ["BASIC", "CHANGE", "OTHER", "PREFERENCE", "PURCHASE_TITLE", "RELATION", "fill", "pattern"]

BASIC: dict[str, str] = {
    "school": "Walking past the old gates of {v} still makes me nostalgic",
    "age": "I honestly cannot believe I turned {v} this year",
    "nationality": "As a proud {v} I always cheer for the home team",
    "employer": "Another long week at {v} is finally over",
    "employment_status": "Being {v} these days has its ups and downs",
    "eye_color": "The optician said my {v} eye color is unusual",
    "hair_color": "My hairdresser keeps praising my {v} hair color",
    "country": "Life here in {v} suits me better every single year",
    "major": "My old {v} textbooks are still stacked in the attic",
    "city": "The farmers market in {v} was packed again this morning",
    "vehicle": "Took my {v} in for a service today",
    "occupation": "Long day at work, being a {v} is never boring",
    "birth_city": "My mum still points out the hospital in {v} where I was born",
    "birth_country": "Growing up as a little kid in {v} shaped who I am",
    "degree": "Framing my {v} diploma felt like closing a chapter",
    "previous_job": "Back when I worked as a {v} the hours were brutal",
    "pet": "Walked my {v} along the river before breakfast",
}
"""Attribute -> the sentence the person writes about it (first person)."""

PREFERENCE: dict[str, str] = {
    "cuisine": "Nothing beats a plate of {v} after a long day",
    "sport": "My knees ache after {v} practice but it is worth it",
    "drink": "I am sipping a {v} right now and it is perfect",
    "instrument": "Practised my {v} for an hour before dinner",
    "hobby": "Spent the whole evening on {v} again",
    "place": "I could wander around {v} for hours",
    "color": "Painted the hallway {v} and I adore it",
    "genre": "Had {v} on repeat all morning",
    "film": "Watched two {v} back to back last night",
    "writer": "Rereading {v} on the train again",
    "artist": "The {v} exhibition poster is still on my wall",
    "season": "In {v} I always feel most alive",
}
"""Preference category -> the sentence that shows the person likes an item."""

CHANGE = ", even though I used to prefer {old} until recently"
"""Appended to a preference sentence that replaces a former item (the outdated value, stated
plainly in an earlier session)."""

RELATION = "Honestly you are the best {v} a person could ask for"
"""The person to a contact: the contact is their ``{v}`` (friend, sister, colleague, ...)."""

OTHER: dict[str, str] = {
    "occupation": "My shift as a {v} ran late again today",
    "previous_job": "When I was still working as a {v} I never had weekends",
    "food": "I made {v} for dinner again and cannot get enough of it",
}
"""A contact about themselves, in a conversation with the person."""

PURCHASE_TITLE = "Starter kit for {v} beginners"
"""A purchase-basket title that shows a preference (instruments, sports, hobbies)."""


def fill(template: str, value: str, **extra: str) -> str:
    """The template with its slots filled."""
    return template.replace("{v}", value).format(**extra) if extra else template.replace("{v}", value)


@cache
def pattern(template: str) -> re.Pattern[str]:
    """A regex that finds the template in text and captures the value as group ``v`` (and
    ``old`` for :data:`CHANGE`); literal text matches as written."""
    parts = re.split(r"(\{v\}|\{old\})", template)
    out = []
    for part in parts:
        if part == "{v}":
            out.append(r"(?P<v>[A-Za-z0-9][A-Za-z0-9 \-]*?)")
        elif part == "{old}":
            out.append(r"(?P<old>[A-Za-z0-9][A-Za-z0-9 \-]*?)")
        else:
            out.append(re.escape(part))
    return re.compile("".join(out))
