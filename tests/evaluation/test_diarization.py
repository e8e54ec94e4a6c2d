"""The diarizer on real recorded voices: two people taking turns, one person, silence."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.conversation import SR, two_person, voices
from voxanon.evaluation.diarization import DiarizerSettings, cluster, diarize, speech_regions
from voxanon.models.speaker import load_encoder


@pytest.fixture(scope="module")
def encoder():
    return load_encoder("ge2e")


def _owner_at(turns, t: float) -> str | None:
    return next((x.speaker for x in turns if x.start <= t < x.end), None)


def test_two_people_taking_turns_are_two_speakers_with_their_turns(encoder) -> None:
    wav, reference = two_person()
    turns = diarize(wav, SR, recording="conv", encoder=encoder)
    assert {t.speaker for t in turns} == {"spk0", "spk1"} and all(t.recording == "conv" for t in turns)
    assert turns == sorted(turns)
    # every reference turn's middle has the hypothesis speaker of its person, and the two people differ
    found = {who: {_owner_at(turns, ref.start + ref.duration * q) for ref in reference if ref.speaker == who
                   for q in (0.25, 0.5, 0.75)} for who in ("A", "B")}
    assert all(len(labels) == 1 for labels in found.values()), found
    assert found["A"] != found["B"]
    # turn changes where the reference has them, within 0.3 s (the voice activity trims each clip's own silence)
    starts = [t.start for k, t in enumerate(turns) if k == 0 or turns[k - 1].speaker != t.speaker]
    assert len(starts) == len(reference)
    assert max(abs(s - r.start) for s, r in zip(starts, reference)) < 0.3


def test_one_person_is_one_speaker_and_silence_is_no_speaker(encoder) -> None:
    first, _ = voices()
    pause = np.zeros(SR // 2, dtype=np.float32)
    wav = np.concatenate([x for clip in first for x in (clip, pause)])
    assert {t.speaker for t in diarize(wav, SR, recording="r", encoder=encoder)} == {"spk0"}
    assert diarize(np.zeros(3 * SR, dtype=np.float32), SR, recording="r", encoder=encoder) == []


def test_a_known_number_of_speakers_is_taken(encoder) -> None:
    wav, _ = two_person()
    assert len({t.speaker for t in diarize(wav, SR, recording="c", num_speakers=3, encoder=encoder)}) == 3
    assert {t.speaker for t in diarize(wav, SR, recording="c", num_speakers=1, encoder=encoder)} == {"spk0"}
    with pytest.raises(ValueError, match="at least 1"):
        diarize(wav, SR, recording="c", num_speakers=0, encoder=encoder)


def test_clustering_estimates_the_number_and_folds_tiny_clusters_in() -> None:
    rng = np.random.default_rng(0)
    centres = np.eye(8)[:3]
    points = np.concatenate([c + 0.05 * rng.standard_normal((10, 8)) for c in centres[:2]])
    stray = centres[2] + 0.05 * rng.standard_normal((1, 8))  # one window of a third direction: too few to be one
    labels = cluster(np.concatenate([points, stray]), settings=DiarizerSettings(threshold=0.35, min_cluster=3))
    assert len(set(labels[:20])) == 2 and len(set(labels[:10])) == 1 and len(set(labels)) == 2
    assert cluster(np.zeros((0, 8))).size == 0 and list(cluster(points[:1])) == [0]


def test_speech_regions_find_speech_between_silences() -> None:
    first, _ = voices()
    silence = np.zeros(SR, dtype=np.float32)
    wav = np.concatenate([silence, first[0], silence])
    regions = speech_regions(wav)
    assert regions and regions[0][0] >= 0.8 * SR and regions[-1][1] <= len(wav) - 0.8 * SR
    assert speech_regions(silence) == []
