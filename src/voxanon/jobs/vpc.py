"""``voxanon evaluate vpc``: one edition's VPC protocol on a kit ``data/`` folder, with voxanon's and the kit's results.

Writes ``OUT/vpc_results.json`` (every row with its model, data and voxanon's
verification metrics) and ``OUT/results_summary.txt`` in the form of the kits'
``results/result_for_rank_*`` (``results_orig`` then, when a retrained attacker
is given or found, ``results_anon``). For 2026 it can first fine-tune that attacker
(:func:`finetune_kit_asv`), as the kit's ``eval_post`` does.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

from voxanon.atomic import write_text
from voxanon.data.layout import TRAIN_360
from voxanon.data.vpc_kit import KitLayout, find_kit_layout
from voxanon.errors import ConfigError, DataError, ModelError

#: the kits' pretrained ASV folder under ``exp/`` and the spec kind that loads it, by edition
KIT_ASV = {"2024": ("asv_orig", "speechbrain"), "2026": ("asv_ssl", "ecapa_ssl")}
EMBEDDING_MODEL = "embedding_model.ckpt"


def speechbrain_checkpoint(folder: Path) -> Path:
    """``embedding_model.ckpt`` in ``folder`` or in its latest ``CKPT*`` folder (as the kits' ``scan_checkpoint``)."""
    if (folder / EMBEDDING_MODEL).is_file():
        return folder / EMBEDDING_MODEL
    found = sorted(folder.glob(f"CKPT*/{EMBEDDING_MODEL}"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise ModelError(f"{folder}: no {EMBEDDING_MODEL} (directly or in a CKPT* folder); download the kit's "
                         "models (01_download_data_model.sh) or give --asv SPEC")
    return found[-1]


def kit_asv_spec(folder: Path, edition: str) -> str:
    """The encoder spec of a kit ASV folder (``exp/asv_orig``, ``exp/asv_ssl``, ``exp/asv_anon<suffix>``)."""
    kind = KIT_ASV[edition][1]
    return f"{kind}:{folder}" if kind == "ecapa_ssl" else f"{kind}:{speechbrain_checkpoint(folder)}"


def finetune_kit_asv(layout: KitLayout, pretrained: str, out: str | os.PathLike, cfg=None, *,
                     device: str = "cpu", quiet: bool = False):
    """The 2026 semi-informed attacker: the pretrained ``ecapa_ssl`` fine-tuned on ``train-clean-360<suffix>``.

    ``pretrained`` is the kit's ``exp/asv_ssl`` (a path or an ``ecapa_ssl:PATH`` spec); ``cfg`` a
    :class:`~voxanon.training.ecapa_ssl.EcapaSslSettings` (default: the kit's settings);
    ``out`` gets the kit's ``CKPT+<epoch>`` layout and resumes an interrupted run. Returns the
    :class:`~voxanon.training.trainer.TrainResult`.
    """
    from voxanon.data.kaldi import read_data_dir
    from voxanon.training.ecapa_ssl import EcapaSslSettings, train_ecapa_ssl

    if layout.edition != "2026":
        raise ConfigError(f"fine-tuning the ecapa_ssl attacker is the 2026 protocol, not {layout.edition}'s "
                          "(train the 2024 attacker with 'voxanon train attacker --recipe vpc')")
    train = layout.path(TRAIN_360, anonymized=True)
    if not (train / "wav.scp").is_file():
        raise DataError(f"{train}: no anonymized training set (no wav.scp); anonymize {layout.root / TRAIN_360} "
                        f"with suffix {layout.suffix!r} first (voxanon anonymize ... --suffix {layout.suffix})")
    return train_ecapa_ssl(read_data_dir(train), out, cfg or EcapaSslSettings(), pretrained=_ecapa_ssl_path(pretrained),
                           device=device, quiet=quiet)


def _ecapa_ssl_path(spec: str) -> str:
    """The model path of an ``ecapa_ssl:PATH`` spec (a bare path is taken as one)."""
    kind, sep, path = spec.partition(":")
    if not sep:
        return spec
    if kind != "ecapa_ssl":
        raise ConfigError(f"fine-tuning starts from and writes the kit's ecapa_ssl model; {spec!r} is a {kind} spec")
    return path


def run_vpc(data: str | os.PathLike, out: str | os.PathLike, *, edition: str | None = None, suffix: str = "",
            exp: str | os.PathLike = "exp", asv: str | None = None, asv_anon: str | None = None,
            asr: str | None = None, ser: str | os.PathLike | None = None, device: str = "cpu",
            cache_dir: str | os.PathLike | None = None, n_boot: int = 1000, quiet: bool = False,
            finetune=None, now: datetime | None = None) -> dict:
    """Run the protocol and write the results; returns voxanon's results (the JSON's content).

    ``asv`` defaults to the kit's pretrained model under ``exp`` (:data:`KIT_ASV`);
    ``asv_anon`` to ``exp/asv_anon<suffix>`` when that folder exists (else no
    ``ASV_eval^anon`` block); ASR (``asr``: a ``load_asr`` spec, e.g.
    ``vpc2024:exp/asr``) and SER (``ser``: the kit's ``exp/ser``) run only when given.
    With ``finetune`` (a :class:`~voxanon.training.ecapa_ssl.EcapaSslSettings`, 2026 only) the
    pretrained ``asv`` is first fine-tuned into ``asv_anon`` (a folder; default
    ``exp/asv_anon<suffix>``), which is then the retrained attacker.
    """
    from voxanon.evaluation.results import to_dict
    from voxanon.evaluation.vpc import asr_rows, asv_rows, ranking_eer, ser_rows
    from voxanon.jobs.report.vpc_summary import results_anon, results_orig
    from voxanon.models.speaker import load_encoder

    layout = find_kit_layout(data, edition, suffix)
    exp, out = Path(exp), Path(out)
    cache = Path(cache_dir) if cache_dir else out / "cache"
    asv = asv or kit_asv_spec(exp / KIT_ASV[layout.edition][0], layout.edition)
    anon_dir = exp / f"asv_anon{suffix}"
    training = None
    if finetune is not None:
        target = _ecapa_ssl_path(asv_anon) if asv_anon else anon_dir
        result = finetune_kit_asv(layout, asv, target, finetune, device=device, quiet=quiet)
        training = {"out_dir": str(result.out), **result.summary, "history": result.history}
        asv_anon = f"ecapa_ssl:{target}"
    if asv_anon is None and suffix and anon_dir.is_dir():
        asv_anon = kit_asv_spec(anon_dir, layout.edition)
    scenarios = ("oo", "oa", "aa") if suffix else ("oo",)
    rows = asv_rows(layout, load_encoder(asv, device=device), scenarios=scenarios, cache_dir=cache / "embeddings",
                    n_boot=n_boot, quiet=quiet)
    anon_rows = []
    if asv_anon:
        anon_rows = asv_rows(layout, load_encoder(asv_anon, device=device), scenarios=("aa",),
                             cache_dir=cache / "embeddings", n_boot=n_boot, quiet=quiet)
    wers, sers = [], []
    if asr:
        from voxanon.models.asr import load_asr

        wers, _ = asr_rows(layout, load_asr(asr, device=device), cache / "asr", quiet=quiet)
    if ser:
        if not layout.iemocap:
            raise ModelError(f"{layout.root}: --ser given but no IEMOCAP_dev / IEMOCAP_test set found")
        from voxanon.models.ser.vpc2024 import load_vpc2024_ser_folds

        sers = ser_rows(layout, load_vpc2024_ser_folds(ser, device=device), cache_dir=cache / "ser")
    summary = results_orig(edition=layout.edition, suffix=suffix, asv=rows, asr=wers, ser=sers, now=now)
    if anon_rows:
        summary += "\n" + results_anon(anon_rows, now=now)
    results = {
        "edition": layout.edition, "data": str(layout.root), "suffix": suffix,
        "pairs": [asdict(p) for p in layout.pairs], "iemocap": list(layout.iemocap), "train-clean-360": layout.train,
        "models": {"asv": asv, "asv_anon": asv_anon, "asr": asr, "ser": str(ser) if ser else None},
        "asv_anon_training": training,
        "ranking_eer": {"pretrained": ranking_eer(rows), "retrained": ranking_eer(anon_rows)},
        "asv": to_dict(rows), "asv_anon": to_dict(anon_rows), "asr": to_dict(wers), "ser": to_dict(sers),
    }
    write_text(out / "vpc_results.json", json.dumps(results, indent=1) + "\n")
    write_text(out / "results_summary.txt", summary)
    return results
