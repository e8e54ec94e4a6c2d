"""Privacy and utility metrics of the VoicePrivacy Challenge (pure numpy/scipy).

All error rates, recalls, identification and isolation rates and their
intervals are in percent (0-100), as the VPC reports them; Cllr, ZEBRA's
expected disclosure and the similarity rank disclosure are in bits.
"""

from voxanon.metrics.beyond_eer import BeyondEERResult, beyond_eer
from voxanon.metrics.bootstrap import (
    ConfidenceInterval,
    eer_ci,
    uar_ci,
    wer_ci,
    wer_ratio_ci,
)
from voxanon.metrics.calibration import (
    LinearCalibration,
    PAVCalibration,
    logistic_calibrate,
    pav_calibrate,
)
from voxanon.metrics.cllr import cllr, min_cllr
from voxanon.metrics.curves import ScoreHistograms, det_curve, score_histograms
from voxanon.metrics.eer import EERResult, compute_eer
from voxanon.metrics.fairness import GenderFairness, gender_fairness
from voxanon.metrics.identification import rank1_linkability
from voxanon.metrics.linkability import linkability
from voxanon.metrics.operating_points import tpr_at_fpr
from voxanon.metrics.rank_disclosure import RankDisclosure, rank_disclosure
from voxanon.metrics.ranking import (
    SystemResult,
    pareto_front,
    performance_matrix,
    privacy_category,
    rank_systems,
    relative_changes,
)
from voxanon.metrics.rocch import rocch, rocch_eer
from voxanon.metrics.score_matrix import ScoreMatrix, ScoreMatrixError, held_out_split
from voxanon.metrics.singling_out import SinglingOut, isolation_thresholds, singling_out
from voxanon.metrics.speaker_eer import SpeakerEERSpread, speaker_eer_spread
from voxanon.metrics.text import normalize_vpc
from voxanon.metrics.uar import FoldSummary, UARResult, mean_over_folds, uar
from voxanon.metrics.wer import UtteranceErrors, WERResult, wer
from voxanon.metrics.zebra import ZebraResult, zebra

__all__ = [
    "BeyondEERResult",
    "ConfidenceInterval",
    "EERResult",
    "FoldSummary",
    "GenderFairness",
    "LinearCalibration",
    "PAVCalibration",
    "RankDisclosure",
    "ScoreHistograms",
    "ScoreMatrix",
    "ScoreMatrixError",
    "SinglingOut",
    "SpeakerEERSpread",
    "SystemResult",
    "UARResult",
    "UtteranceErrors",
    "WERResult",
    "ZebraResult",
    "beyond_eer",
    "cllr",
    "compute_eer",
    "det_curve",
    "eer_ci",
    "gender_fairness",
    "held_out_split",
    "isolation_thresholds",
    "linkability",
    "logistic_calibrate",
    "mean_over_folds",
    "min_cllr",
    "normalize_vpc",
    "pareto_front",
    "pav_calibrate",
    "performance_matrix",
    "privacy_category",
    "rank1_linkability",
    "rank_disclosure",
    "rank_systems",
    "relative_changes",
    "rocch",
    "rocch_eer",
    "score_histograms",
    "singling_out",
    "speaker_eer_spread",
    "tpr_at_fpr",
    "uar",
    "uar_ci",
    "wer",
    "wer_ci",
    "wer_ratio_ci",
    "zebra",
]
