"""Real transcribed speech from the freeware adventure games Debian packages (acted voices, 11,025 Hz):
one module per game (:mod:`.drascula`, :mod:`.queen`), each reading the game's files itself, and what they share
(:mod:`.common`, :mod:`.write`)."""

from __future__ import annotations

from voxanon.data.games import drascula, queen

#: game name -> its module (each has PACKAGE and extract(cache))
GAMES = {"drascula": drascula, "queen": queen}
