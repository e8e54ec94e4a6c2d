"""The real-voice check of trained attackers: pair EERs on constructed scores, the check on generated speakers."""

import numpy as np
import pytest

from tests.helpers.speaker_corpus import make_corpus
from voxanon.data.kaldi import DataError
from voxanon.evaluation.real_voices import check_real_voices, cosine_pairs, pairs_eer

pytest.importorskip("resemblyzer")


def test_pairs_eer_on_constructed_scores():
    speakers = ["a", "a", "b", "b"]
    # pairs (i<j): (0,1) target, (2,3) target, four non-targets
    separated = np.array([[0, 0.9, 0.1, 0.2], [0, 0, 0.3, 0.1], [0, 0, 0, 0.8], [0, 0, 0, 0]], dtype=float)
    eer, n_target, n_nontarget = pairs_eer(separated, speakers)
    assert (eer, n_target, n_nontarget) == (0.0, 2, 4)
    # the lower triangle is never read: only pairs i < j count
    assert pairs_eer(separated + np.tril(np.full((4, 4), 5.0)), speakers)[0] == 0.0
    reversed_ = 1.0 - separated
    assert pairs_eer(np.triu(reversed_, 1), speakers)[0] == pytest.approx(100.0)
    # one target of two below every non-target: half the targets missed at the threshold where no non-target passes
    half = separated.copy()
    half[2, 3] = 0.05
    assert 25.0 <= pairs_eer(half, speakers)[0] <= 50.0


def test_pairs_eer_needs_targets_and_nontargets():
    with pytest.raises(DataError, match="two speakers"):
        pairs_eer(np.eye(3), ["a", "a", "a"])
    with pytest.raises(DataError, match="two speakers"):
        pairs_eer(np.eye(3), ["a", "b", "c"])


def test_cosine_pairs():
    x = np.array([[1.0, 0.0], [3.0, 0.0], [0.0, 2.0]])
    np.testing.assert_allclose(cosine_pairs(x), [[1, 1, 0], [1, 1, 0], [0, 0, 1]])


def test_check_on_generated_speakers(tmp_path):
    from voxanon.models.speaker import load_encoder

    data = make_corpus(tmp_path / "real", n_spk=4, n_utt=3, dur=1.0)
    ge2e = load_encoder("ge2e")
    check = check_real_voices(data, ge2e, ge2e, cache_dir=tmp_path / "cache")
    assert check.eer == check.pretrained_eer
    assert (check.speakers, check.utterances, check.target_pairs, check.nontarget_pairs) == (4, 12, 12, 54)
    assert check.data == str(tmp_path / "real")
    # a scorer that ignores the embeddings verifies nobody: chance
    flat = check_real_voices(data, ge2e, None, lambda e: np.zeros((len(e), len(e))), cache_dir=tmp_path / "cache")
    assert flat.pretrained_eer is None and flat.eer == pytest.approx(50.0, abs=0.01)
