"""The conversation corpus's layout (``voxanon data conversations``) and its reader.

Under the corpus folder: ``data/conversations`` (``wav.scp``: one multi-speaker
recording a line; ``reference.rttm``: who spoke when; ``reference.stm``: each
turn's words) and ``data/enrolls`` (held-out single-speaker utterances of every
conversation speaker, with ``utt2spk`` and ``spk2gender``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from voxanon.data.kaldi import DataDir, read_data_dir
from voxanon.data.rttm import Turn
from voxanon.data.stm import Segment, read_stm
from voxanon.errors import DataError

CONVERSATIONS, ENROLLS = "conversations", "enrolls"
RTTM, STM = "reference.rttm", "reference.stm"
DESCRIPTION = "conversations.json"


@dataclass(frozen=True)
class ConversationCorpus:
    """Recordings, their reference turns with words, and the speakers' enrollment utterances."""

    root: Path
    recordings: DataDir
    reference: dict[str, list[Segment]]
    enroll: DataDir

    @property
    def turns(self) -> dict[str, list[Turn]]:
        """The reference as RTTM turns by recording."""
        return {rec: [s.turn for s in segs] for rec, segs in self.reference.items()}


def read_conversation_corpus(root: str | os.PathLike) -> ConversationCorpus:
    """Read a conversation corpus; DataError naming the file when a recording, turn or speaker is missing."""
    root = Path(root)
    recordings = read_data_dir(root / "data" / CONVERSATIONS)
    reference = read_stm(root / "data" / CONVERSATIONS / STM)
    enroll = read_data_dir(root / "data" / ENROLLS)
    stm = root / "data" / CONVERSATIONS / STM
    for rec in recordings.wav_scp:
        if rec not in reference:
            raise DataError(f"{stm}: recording {rec!r} of wav.scp has no turns")
    for rec, segs in reference.items():
        if rec not in recordings.wav_scp:
            raise DataError(f"{stm}: recording {rec!r} is not in {recordings.path}/wav.scp")
        for s in segs:
            if s.speaker not in enroll.spk2gender:
                raise DataError(f"{stm}: speaker {s.speaker!r} of {rec} has no enrollment (and gender) in "
                                f"{enroll.path}")
    return ConversationCorpus(root, recordings, reference, enroll)
