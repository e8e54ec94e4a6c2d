"""The kits' data/ folder: edition detection, the trial pairs each edition scores, anonymized copies."""

import shutil

import pytest

from tests.helpers.vpc_tree import SUFFIX, write_data
from voxanon.data.vpc_kit import find_kit_layout
from voxanon.errors import ConfigError, DataError


@pytest.fixture(scope="module")
def data_2026(tmp_path_factory):
    root = tmp_path_factory.mktemp("kit") / "data"
    write_data(root, "2026")
    return root


def test_2026_detected_and_only_mixed_lists_scored(data_2026):
    layout = find_kit_layout(data_2026, suffix=SUFFIX)
    assert layout.edition == "2026"
    assert [(p.split, p.enrolls, p.trials, p.gender) for p in layout.pairs] == [
        ("dev", "libri_dev_enrolls", "libri_dev_trials_mixed", "mixed"),
        ("test", "libri_test_enrolls", "libri_test_trials_mixed", "mixed")]
    assert layout.iemocap == ("dev", "test") and layout.train
    assert layout.path("libri_dev_enrolls", True) == data_2026 / "libri_dev_enrolls_mini"


def test_2024_protocol_on_the_same_tree_scores_the_gender_lists(data_2026):
    layout = find_kit_layout(data_2026, "2024")
    assert [p.trials for p in layout.pairs] == ["libri_dev_trials_f", "libri_dev_trials_m",
                                                "libri_test_trials_f", "libri_test_trials_m"]
    assert [p.gender for p in layout.pairs] == ["f", "m", "f", "m"]
    with pytest.raises(ConfigError, match="no anonymized data suffix"):
        layout.path("libri_dev_enrolls", True)


def test_2024_tree_detected(tmp_path):
    write_data(tmp_path, "2024", suffix="")
    assert find_kit_layout(tmp_path).edition == "2024"


def test_missing_anonymized_copy_is_named(data_2026, tmp_path):
    copy = tmp_path / "data"
    shutil.copytree(data_2026, copy, symlinks=True)
    shutil.rmtree(copy / "libri_test_trials_mixed_mini")
    with pytest.raises(DataError, match=r"libri_test_trials_mixed_mini missing .*suffix '_mini'"):
        find_kit_layout(copy, suffix=SUFFIX)


def test_no_kit_sets(tmp_path):
    with pytest.raises(DataError, match="no 2024 enrollment/trial sets .*libri_test_trials_f"):
        find_kit_layout(tmp_path)
    with pytest.raises(ConfigError, match="unknown VPC edition '2025'"):
        find_kit_layout(tmp_path, "2025")
