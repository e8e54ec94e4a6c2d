"""A second system evaluated with the same cache re-embeds, re-transcribes and re-classifies only the audio that
changed.

The embedding, hypothesis and emotion-prediction caches are keyed by audio content and model (not by path or
suffix), so a second anonymization's run reuses the original sets' embeddings, transcripts and predicted
emotions, and any of its own sets whose audio is byte-identical to the first system's.
"""

import hashlib
import shutil
from pathlib import Path

import soundfile as sf

import voxanon.models.asr as asr_module
import voxanon.models.speaker as speaker_module
from tests.helpers.vpc_tree import SUFFIX, write_vpc_tree
from voxanon.jobs.vpc import run_vpc
from voxanon.models.ser.vpc2024 import Vpc2024Ser

OTHER = "_other"
CHANGED = "libri_dev_trials_f"


def _counting(monkeypatch, module, loader: str, method: str, calls: list[int]) -> None:
    """Wrap ``module.loader`` so that every model it returns adds the number of waveforms of each ``method`` call."""
    original = getattr(module, loader)

    def load(*args, **kwargs):
        model = original(*args, **kwargs)
        if getattr(model, "_counted", False):  # a loader may hand back the model it loaded before
            return model
        model._counted = True
        inner = getattr(model, method)

        def counted(wavs, sr, *rest, **kw):
            calls.append(len(wavs))
            return inner(wavs, sr, *rest, **kw)

        setattr(model, method, counted)
        return model

    monkeypatch.setattr(module, loader, load)


def _second_system(data: Path) -> int:
    """Copy every ``<set>_mini`` to ``<set>_other``, halving the audio of one set; returns that set's utterances."""
    changed = 0
    for folder in sorted(data.glob(f"*{SUFFIX}")):
        name = folder.name[:-len(SUFFIX)]
        target = data / (name + OTHER)
        shutil.copytree(folder, target)
        lines = []
        for line in (target / "wav.scp").read_text().splitlines():
            utt, path = line.split(maxsplit=1)
            new = target / "wav" / Path(path).name
            if name == CHANGED:
                wav, sr = sf.read(new, dtype="float32")
                sf.write(new, wav * 0.5, sr, subtype="PCM_16")
                changed += 1
            lines.append(f"{utt} {new}\n")
        (target / "wav.scp").write_text("".join(lines))
    return changed


def test_second_system_recomputes_only_changed_audio(tmp_path, monkeypatch):
    data, exp = write_vpc_tree(tmp_path, "2024")
    embedded: list[int] = []
    decoded: list[int] = []
    _counting(monkeypatch, speaker_module, "load_encoder", "embed", embedded)
    _counting(monkeypatch, asr_module, "load_asr", "transcribe", decoded)
    classified: list[int] = []
    predict = Vpc2024Ser.predict
    monkeypatch.setattr(Vpc2024Ser, "predict", lambda self, wavs, *a, **k: classified.append(len(wavs)) or predict(
        self, wavs, *a, **k))
    cache = tmp_path / "cache"
    kwargs = dict(exp=exp, asv=f"speechbrain:{exp / 'asv_orig' / 'embedding_model.ckpt'}", asv_anon=None,
                  asr=f"vpc2024:{exp / 'asr'}", ser=exp / "ser", cache_dir=cache, n_boot=10, quiet=True)
    first = run_vpc(data, tmp_path / "out1", suffix=SUFFIX, **kwargs)
    libri = [d for d in data.iterdir() if d.name.startswith("libri_") and not d.name.endswith((SUFFIX, OTHER))]
    n_utts = {d.name: len((d / "wav.scp").read_text().splitlines()) for d in libri}
    trial_utts = sum(n for name, n in n_utts.items() if "_trials_" in name)
    # the first system embeds every original and anonymized utterance once (retrained attacker of _mini included)
    assert sum(embedded) >= 2 * sum(n_utts.values())
    assert sum(decoded) == 2 * trial_utts
    # every distinct IEMOCAP audio (originals and _mini; this tree's dev and test audio coincide) classified once
    distinct = {hashlib.sha256(f.read_bytes()).hexdigest() for f in data.glob("IEMOCAP_*/wav/*.wav")}
    assert sum(classified) == len(distinct) > 0

    changed = _second_system(data)
    embedded.clear()
    decoded.clear()
    classified.clear()
    second = run_vpc(data, tmp_path / "out2", suffix=OTHER, **kwargs)
    assert sum(embedded) == changed == n_utts[CHANGED]
    assert sum(decoded) == changed
    assert sum(classified) == 0                                  # the IEMOCAP audio is the first system's
    assert [r["uar"] for r in second["ser"]] == [r["uar"] for r in first["ser"]]
    def original(rows):  # the OO rows: no anonymized audio in them
        return [(r["split"], r["gender"], r["eer"]) for r in rows if (r["enrollment"], r["trial"]) == ("original", "original")]
    assert original(second["asv"]) == original(first["asv"])

    embedded.clear()
    decoded.clear()
    run_vpc(data, tmp_path / "out3", suffix=OTHER, **kwargs)
    assert sum(embedded) == sum(decoded) == sum(classified) == 0
