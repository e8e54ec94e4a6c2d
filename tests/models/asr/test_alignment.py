"""Forced phone alignment with pocketsphinx and frame-level phone labels."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.audio import LIBRIVOX
from voxanon.audio.io import load_audio, resample
from voxanon.models.asr.alignment import PHONES, SIL, PhoneAligner, frame_labels
from voxanon.models.asr.base import AsrError

UTT = "sense_and_sensibility_01_austen_64kb-0880"


@pytest.fixture(scope="module")
def aligner() -> PhoneAligner:
    return PhoneAligner()


def _clip() -> tuple[np.ndarray, int, str]:
    texts = dict(line.split(" ", 1) for line in (LIBRIVOX / "text").read_text().splitlines())
    wav, sr = load_audio(LIBRIVOX / f"{UTT}.flac")
    return wav, sr, texts[UTT]


def _pronunciation(aligner: PhoneAligner, text: str) -> list[str]:
    """The dictionary's first pronunciation of every word, joined."""
    return [p for w in text.lower().split() for p in aligner.decoder.lookup_word(w).split()]


def _consonants(phones: list[str]) -> list[str]:
    vowels = {"AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY", "UH", "UW"}
    return [p for p in phones if p not in vowels]


def test_the_phones_of_real_speech_follow_the_transcript_in_time(aligner):
    wav, sr, text = _clip()                                  # "he was not an ill disposed young man"
    segments = aligner.align(wav, sr, text)
    spoken = [PHONES[p] for p, _, _ in segments if p != SIL]
    # the words' phones in order (pocketsphinx may pick another listed pronunciation of a word: compare the
    # consonants, which the variants of these words share)
    assert _consonants(spoken) == _consonants(_pronunciation(aligner, text))
    starts, ends = np.array([s for _, s, _ in segments]), np.array([e for _, _, e in segments])
    assert np.all(ends > starts) and np.allclose(starts[1:], ends[:-1])            # back to back, in order
    assert starts[0] == 0 and abs(ends[-1] - len(wav) / sr) < 0.05                 # over the whole clip
    # a different rate of the same speech: the same phones
    again = aligner.align(resample(wav, sr, 22050), 22050, text)
    assert [p for p, _, _ in again if p != SIL] == [p for p, _, _ in segments if p != SIL]


def test_an_alignment_does_not_depend_on_what_was_aligned_before(aligner):
    wav, sr, text = _clip()
    first = aligner.align(wav, sr, text)
    other = LIBRIVOX / "sense_and_sensibility_01_austen_64kb-0890.flac"
    aligner.align(*load_audio(other), "unless to be rather cold hearted and rather selfish is to be ill disposed")
    assert aligner.align(wav, sr, text) == first == PhoneAligner().align(wav, sr, text)


def test_words_outside_the_dictionary_and_empty_transcripts_are_refused(aligner):
    wav, sr, _ = _clip()
    with pytest.raises(AsrError, match=r"not in the pronunciation dictionary: \['xqzzy'\]"):
        aligner.align(wav, sr, "he was xqzzy")
    with pytest.raises(AsrError, match="no word"):
        aligner.align(wav, sr, " ?! ")
    # written forms are put into the words as spoken first
    assert aligner.words("It's 10, Mr. Lee.") == ["it's", "ten", "mister", "lee"]


def test_frame_labels_take_the_phone_at_each_frame_centre():
    segments = [(SIL, 0.0, 0.1), (PHONES.index("HH"), 0.1, 0.3), (PHONES.index("IY"), 0.3, 0.4)]
    labels = frame_labels(segments, 6, 10.0)                  # centres 0.05, 0.15, ... 0.55 s
    assert labels.tolist() == [SIL, PHONES.index("HH"), PHONES.index("HH"), PHONES.index("IY"),
                               SIL, SIL]                      # past the last segment: silence
    assert frame_labels([], 3, 10.0).tolist() == [SIL] * 3
    gap = frame_labels([(PHONES.index("S"), 0.2, 0.3)], 4, 10.0)
    assert gap.tolist() == [SIL, SIL, PHONES.index("S"), SIL] and gap.dtype == np.int64


def test_fast_speech_that_finds_no_path_at_100_frames_a_second_is_aligned_at_a_higher_rate(aligner):
    from voxanon.audio.io import to_pcm16
    from voxanon.models.asr.alignment import align_pcm

    wav, sr, text = _clip()
    fast = resample(wav, int(sr * 1.8), sr)                   # the same speech 1.8 times as fast
    words = " ".join(aligner.words(text))
    with pytest.raises(RuntimeError):                         # no path at the model's own frame rate
        align_pcm(aligner.decoder, to_pcm16(fast).tobytes(), words)
    segments = aligner.align(fast, sr, text)
    normal = aligner.align(wav, sr, text)
    # the same consonants (vowels may take another listed pronunciation), in time with the faster speech
    assert _consonants([PHONES[p] for p, _, _ in segments if p != SIL]) == \
        _consonants([PHONES[p] for p, _, _ in normal if p != SIL])
    assert abs(segments[-1][2] - len(fast) / sr) < 0.05
    centres = np.array([(s + e) / 2 for p, s, e in segments if p != SIL])
    assert np.all(np.diff(centres) > 0)
