"""Write a game's matched clips as a Kaldi data directory: 16 kHz 16-bit WAV files (as voxanon's other real
clips; the games' band stays 5.5 kHz), ``wav.scp``, ``utt2spk``, ``spk2utt``, ``spk2gender``, ``text``,
``utt2dur``, ``utt2f0`` and ``manifest.json``.

Safe to rerun: every file is written atomically and WAV files already written are reused. A clip that does
not decode is skipped and counted in the manifest, never stops the run. A character's gender is the game's
where the extractor knows it; otherwise it is *estimated* from pitch: the median over its clips of each clip's
median voiced F0 (female above :data:`voxanon.data.debian_clips.F0_FEMALE_HZ`), as for Debian's clips. The
games' voices are acted, often high: Drascula's men have medians from 86 to 198 Hz, so pitch is a weak guide.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from voxanon.atomic import write_text
from voxanon.audio.io import load_audio, resample, write_wav
from voxanon.data.debian_clips import F0_FEMALE_HZ
from voxanon.data.games.common import Extraction, licence
from voxanon.data.kaldi import DataDir, write_data_dir
from voxanon.errors import DataError
from voxanon.progress import Progress

SAMPLE_RATE = 16000
MANIFEST = "manifest.json"


def clip_f0(wav: np.ndarray, sr: int = SAMPLE_RATE) -> float:
    """A clip's median voiced F0 in Hz (WORLD's DIO), 0 where nothing is voiced."""
    import pyworld

    f0 = pyworld.dio(wav.astype(np.float64), sr)[0]
    voiced = f0[f0 > 0]
    return float(np.median(voiced)) if voiced.size else 0.0


def _previous_f0(out: Path) -> dict[str, str]:
    path = out / "utt2f0"
    if not path.is_file():
        return {}
    return dict(line.split(" ", 1) for line in path.read_text(encoding="utf-8").splitlines() if " " in line)


def write_game(extraction: Extraction, out: str | Path, *, quiet: bool = False) -> dict:
    """Write ``extraction``'s clips under ``out`` (a data directory, its ``wav/`` files and ``manifest.json``);
    returns the manifest."""
    out = Path(out).resolve()
    old_f0 = _previous_f0(out)
    data, f0, skipped = DataDir(), {}, {}
    progress = Progress(len(extraction.clips), f"{extraction.game} clips", quiet=quiet)
    for clip in extraction.clips:
        path = out / "wav" / clip.speaker / f"{clip.utt}.wav"
        try:
            if path.is_file() and clip.utt in old_f0:
                wav, _ = load_audio(path)
                f0[clip.utt] = float(old_f0[clip.utt])
            else:
                wav, sr = clip.read()
                if wav.size == 0 or not np.all(np.isfinite(wav)):
                    raise DataError(f"{clip.source}: no samples")
                wav = resample(wav, sr, SAMPLE_RATE)
                write_wav(path, wav, SAMPLE_RATE)
                f0[clip.utt] = clip_f0(wav)
        except (DataError, OSError) as exc:
            skipped[clip.source] = str(exc)
            progress.update()
            continue
        data.wav_scp[clip.utt] = str(path)
        data.utt2spk[clip.utt] = clip.speaker
        data.text[clip.utt] = clip.text
        data.utt2dur[clip.utt] = f"{len(wav) / SAMPLE_RATE:.3f}"
        progress.update()
    progress.close()
    if not data.wav_scp:
        raise DataError(f"{extraction.root}: none of {extraction.game}'s {len(extraction.clips)} clips decoded: "
                        f"unpack {extraction.package.name} again (tools/setup.sh)")
    characters = {}
    for spk, utts in data.spk2utt.items():
        median = float(np.median([f0[u] for u in utts if f0[u] > 0] or [0.0]))
        known = extraction.genders.get(spk)
        data.spk2gender[spk] = known or ("f" if median > F0_FEMALE_HZ else "m")
        characters[spk] = {"who": extraction.characters.get(spk, ""), "clips": len(utts),
                           "minutes": round(sum(float(data.utt2dur[u]) for u in utts) / 60, 2),
                           "median_f0_hz": round(median, 1), "gender": data.spk2gender[spk],
                           "gender_from": "game" if known else "pitch"}
    write_data_dir(data, out)
    write_text(out / "utt2f0", "".join(f"{u} {f0[u]:.1f}\n" for u in data.utt2spk))
    package = extraction.package
    manifest = {
        "game": extraction.game, "clips": len(data.wav_scp),
        "hours": round(sum(float(d) for d in data.utt2dur.values()) / 3600, 3),
        "sample_rate": SAMPLE_RATE, "band_hz": 11025 / 2,
        "gender_labels": f"the game's where known (gender_from: game), else estimated from pitch (gender_from: "
                         f"pitch): the median over a character's clips of each clip's median voiced F0 (female "
                         f"above {F0_FEMALE_HZ:g} Hz)",
        "characters": characters,
        "unmatched": dict(sorted(extraction.unmatched.items())),
        "skipped_undecodable": skipped,
        "package": {"name": package.name, "version": package.version, "sha256": package.sha256,
                    "distribution": "Debian bookworm main",
                    "copyright_file": f"/usr/share/doc/{package.name}/copyright",
                    "copyright": licence(extraction.root, package)},
    }
    previous = read_manifest(out)
    if previous and "speaker_check" in previous and previous.get("clips") == manifest["clips"]:
        manifest["speaker_check"] = previous["speaker_check"]
    write_manifest(out, manifest)
    return manifest


def read_manifest(out: str | Path) -> dict | None:
    """The manifest of a written game directory, or None where there is none."""
    path = Path(out) / MANIFEST
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON ({exc}): delete it and rerun 'voxanon data games'") from None


def write_manifest(out: str | Path, manifest: dict) -> None:
    """Write ``manifest.json`` atomically."""
    write_text(Path(out) / MANIFEST, json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")

