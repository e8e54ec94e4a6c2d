"""Gender fairness of privacy: per-gender EERs, their mean and mFDR."""

from dataclasses import dataclass


@dataclass(frozen=True)
class GenderFairness:
    """Per-gender EERs (percent), their mean and the mFDR (percent)."""

    eer_female: float
    eer_male: float
    mean: float
    mfdr: float


def gender_fairness(eer_female: float, eer_male: float) -> GenderFairness:
    """Mean EER over genders and the mean-normalised female/male difference.

    mFDR = 2 * |EER_f - EER_m| / (EER_f + EER_m) * 100, i.e. the absolute
    difference relative to the mean EER (0 = equal privacy; 200 = one gender
    fully protected and the other not at all); defined as 0 when both are 0.

    Parameters
    ----------
    eer_female, eer_male : float
        EERs (percent) on the female and male trial lists.
    """
    total = eer_female + eer_male
    mfdr = 0.0 if total == 0 else 200.0 * abs(eer_female - eer_male) / total
    return GenderFairness(eer_female=eer_female, eer_male=eer_male, mean=total / 2, mfdr=mfdr)
