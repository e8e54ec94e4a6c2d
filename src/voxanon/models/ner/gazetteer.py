"""Rule and gazetteer NER: the shipped entity lists, honorifics and organisation words.

Works on any casing, so on upper-case VPC transcripts too. Rules, in order:

- the longest run of words that is a listed location, organisation or miscellaneous name;
- a given name, with the surname after it when listed (or, in cased text, capitalised); an honorific
  (Mister, Doctor, ...) and the name after it, listed or (in cased text) capitalised;
- a word before an organisation word (``University``, ``Hospital``, ...) makes an organisation with it.

Listed names that are also common words (``Mark``, ``Reading``, ``Turkey``) count only in cased text,
capitalised and not first in the sentence.
"""

from __future__ import annotations

import re

from voxanon.data.entity_lists import entity_lists
from voxanon.models.ner.base import Entity, Ner

HONORIFICS = frozenset("mr mrs ms miss mister missus doctor dr professor sir madam".split())
ORG_WORDS = frozenset("university hospital clinic council bank college party orchestra company".split())
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_SENTENCE_END = re.compile(r"[.!?]\s*$")
MAX_NAME_WORDS = 4


def is_cased(text: str) -> bool:
    """True when ``text`` has both cases (Whisper's output), False when it is all upper or all lower."""
    letters = [c for c in text if c.isalpha()]
    return any(c.isupper() for c in letters) and any(c.islower() for c in letters)


class GazetteerNer(Ner):
    """Shipped lists + rules (see the module docstring)."""

    name = "gazetteer-voxanon-1"

    def __init__(self) -> None:
        lists = entity_lists()
        self.names = {tuple(n.lower().split()): t for t in ("LOC", "ORG", "MISC") for n in lists.by_type[t]}
        self.given = {n.lower() for n in lists.given_names}
        self.surnames = {n.lower() for n in lists.surnames}
        self.ambiguous = lists.ambiguous

    def find(self, text: str) -> list[Entity]:
        words = [(m.start(), m.end() - 2 * m.group().lower().endswith("'s"), m.group().lower().removesuffix("'s"))
                 for m in _WORD.finditer(text)]
        cased = is_cased(text)

        def capital(i: int) -> bool:
            return cased and text[words[i][0]].isupper()

        def usable(i: int, n: int = 1) -> bool:
            """Words i..i+n-1 may be a listed name: unambiguous, or capitalised mid-sentence in cased text."""
            key = " ".join(w for _, _, w in words[i:i + n])
            if key not in self.ambiguous:
                return True
            first = i == 0 or bool(_SENTENCE_END.search(text[:words[i][0]]))
            return capital(i) and not first

        out: list[Entity] = []
        i = 0
        while i < len(words):
            titled = i > 0 and words[i - 1][2] in HONORIFICS
            found = self._match(words, i, usable, capital, titled)
            if found is None:
                i += 1
                continue
            n, kind = found
            if i + n < len(words) and words[i + n][2] in ORG_WORDS:  # "Leeds University", "Mayo Clinic"
                n, kind = n + 1, "ORG"
            out.append(Entity(words[i][0], words[i + n - 1][1], kind, words[i][2] not in self.ambiguous))
            i += n
        return out

    def _match(self, words, i, usable, capital, titled: bool) -> tuple[int, str] | None:
        """(number of words, type) of the entity starting at word ``i`` (``titled``: after an honorific), or None."""
        w = words[i][2]
        for n in range(min(MAX_NAME_WORDS, len(words) - i), 0, -1):
            kind = self.names.get(tuple(x for _, _, x in words[i:i + n]))
            if kind and usable(i, n):
                return n, kind
        if (w in self.given and usable(i)) or (titled and (w in self.given or w in self.surnames or capital(i))):
            n = 1
            while i + n < len(words) and n < 3 and (words[i + n][2] in self.surnames or capital(i + n)) \
                    and words[i + n][2] not in ORG_WORDS:
                n += 1
            return n, "PER"
        if i + 1 < len(words) and words[i + 1][2] in ORG_WORDS and capital(i):
            return 1, "ORG"
        return None
