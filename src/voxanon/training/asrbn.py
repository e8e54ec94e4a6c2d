"""``voxanon train asrbn``: the acoustic model as VPC 2024 B5/B6 (vector-quantised ASR content + one-hot speakers).

The network of ``voxanon train acoustic`` with two options switched on: the (per-utterance normalised) content
frames are quantised to the nearest of ``codebook_size`` codewords and the speaker is an index into a learned
table of the training speakers (rows initialised with each speaker's mean speaker embedding, or kept from an
``--init`` model of the same speakers). The codewords are fitted once by k-means on the training content, or
taken with their input projection from a bottleneck learnt inside a CTC recogniser (``bottleneck``, a model of
``voxanon train bottleneck``: the VPC's design), or kept from an ``--init`` model with such learnt codes; either
way they stay fixed. One utterance of up to ``settings.max_valid`` speakers is held out for validation (clean
content). ``--init`` copies every weight whose name and shape match.
The loop, checkpoints, log and files are those of
:mod:`voxanon.training.acoustic`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from voxanon.errors import ConfigError, DataError, RunError
from voxanon.models.acoustic.inference import ModelSpecs
from voxanon.models.acoustic.model import AcousticConfig, AcousticNet
from voxanon.models.asr.bottleneck import Bottleneck, load_bottleneck
from voxanon.training.acoustic import (
    AcousticSettings,
    Batches,
    check_dims,
    data_summary,
    finish,
    fit,
    fit_codebook,
    load_init,
    resumed_net,
)
from voxanon.training.acoustic_features import (
    Extractor,
    UttFeatures,
    extract,
    list_utterances,
)
from voxanon.training.trainer import Run, TrainResult


def hold_out(todo: list[tuple[str, str, str]], n: int) -> tuple[list, list]:
    """Split ``(utt, speaker, entry)`` rows into (train, valid): the last utterance of up to ``n`` speakers with at
    least two, evenly spaced over the sorted speakers."""
    by_spk: dict[str, list[int]] = {}
    for i, (_, spk, _) in enumerate(todo):
        by_spk.setdefault(spk, []).append(i)
    many = sorted(s for s, idx in by_spk.items() if len(idx) > 1)
    chosen = [many[i] for i in np.unique(np.linspace(0, len(many) - 1, min(n, len(many))).round().astype(int))] \
        if many and n > 0 else []
    valid = {by_spk[s][-1] for s in chosen}
    return [r for i, r in enumerate(todo) if i not in valid], [todo[i] for i in sorted(valid)]


def speaker_rows(items: list[UttFeatures], speakers: list[str]) -> np.ndarray:
    """``(len(speakers), dim)`` unit-norm mean embedding of each speaker's utterances."""
    rows = np.stack([np.mean([it.embedding for it in items if it.speaker == s], axis=0) for s in speakers])
    return (rows / (np.linalg.norm(rows, axis=1, keepdims=True) + 1e-8)).astype(np.float32)


def copy_matching(net: AcousticNet, source: AcousticNet) -> list[str]:
    """Copy into ``net`` every tensor of ``source`` with the same name and shape; return the names not copied."""
    own, theirs = net.state_dict(), source.state_dict()
    same = {k: v.float() for k, v in theirs.items() if k in own and own[k].shape == v.shape}
    net.load_state_dict(same, strict=False)
    return sorted(set(own) - set(same))


def learnt_codes(source, bn: Bottleneck | None, codebook_size: int, content_dim: int) -> bool:
    """Whether the network keeps the quantiser of ``source`` (the ``--init`` model): it does when that holds codes
    learnt in a recogniser (a bottleneck projection) and no other bottleneck is given. ConfigError when those
    codes cannot be kept: another codebook size, or content of another width."""
    theirs = source.net.cfg if source is not None else None
    if theirs is None or bn is not None or not theirs.bottleneck_dim:
        return False
    if (theirs.codebook_size, theirs.content_dim) != (codebook_size, content_dim):
        raise ConfigError(f"the --init model's {theirs.codebook_size} codes were learnt on {theirs.content_dim}-d "
                          f"content; its quantiser is kept, so give --codebook {theirs.codebook_size} and its "
                          f"--content {source.content_spec}, or a --bottleneck")
    return True


def matching_bottleneck(path: str, extractor: Extractor) -> Bottleneck:
    """The model of ``voxanon train bottleneck`` at ``path``; ConfigError when it was trained on content of
    another encoder than the extractor's."""
    from voxanon.models.content import load_content_encoder

    bn = load_bottleneck(path)
    if load_content_encoder(bn.content).name != extractor.encoder.name:
        raise ConfigError(f"--bottleneck {path} was trained on {bn.content} content; give --content {bn.content}")
    return bn


def train_asrbn(data: list[str], out: str, settings: AcousticSettings = AcousticSettings(), *,
                codebook_size: int = 48, bottleneck: str | None = None, cfg: AcousticConfig = AcousticConfig(),
                specs: ModelSpecs = ModelSpecs(), device: str = "auto", init: str | None = None,
                threads: int = 0, cache_dir: str | None = None, command: str = "", quiet: bool = False
                ) -> TrainResult:
    """Train on the data directories ``data`` (resuming from ``out/checkpoint.pt`` when present) and write
    ``out/model.pt`` + ``model.json`` (the summary, with ``speakers``, the table's speaker names in index order).

    ``bottleneck`` (a model.pt of ``voxanon train bottleneck``) replaces the k-means codebook of
    ``codebook_size`` rows by its projection and codebook.
    """
    from voxanon.training.acoustic_features import default_cache_dir

    if codebook_size < 2:
        raise ConfigError(f"--codebook {codebook_size}: give at least 2 codewords (the VPC's B5/B6 use 48)")
    run = Run.start(out, settings, device, threads)
    if run.resumed is not None:
        net, specs = resumed_net(run)
        cfg = net.cfg
    extractor = Extractor(specs, cache_dir or default_cache_dir(), settings.seed)
    bn = matching_bottleneck(bottleneck, extractor) if bottleneck and run.resumed is None else None
    train_todo, valid_todo = hold_out(list_utterances(data), settings.max_valid)
    train_items, skipped, train_secs = extract(train_todo, extractor, settings.n_perturb, quiet=quiet)
    valid_items, valid_skipped, valid_secs = extract(valid_todo, extractor, 0, quiet=quiet)
    if not train_items:
        raise DataError(f"no usable training utterance in {', '.join(data)} ({len(skipped)} skipped)")
    speakers = sorted({it.speaker for it in train_items})
    not_copied, source = None, load_init(init) if init and run.resumed is None else None
    if run.resumed is not None:
        if speakers != run.resumed["speakers"]:
            raise RunError(f"{run.out}/checkpoint.pt was trained on other speakers than {', '.join(data)}; "
                           "give the same data directories or another --out")
    else:
        cfg = dataclasses.replace(cfg, content_dim=extractor.encoder.dim, speaker_dim=extractor.speaker.dim,
                                  codebook_size=codebook_size, n_speakers=len(speakers))
        keep_codes = learnt_codes(source, bn, codebook_size, extractor.encoder.dim)
        if source is not None:
            cfg = dataclasses.replace(source.net.cfg, content_dim=extractor.encoder.dim,
                                      speaker_dim=extractor.speaker.dim, codebook_size=codebook_size,
                                      bottleneck_dim=source.net.cfg.bottleneck_dim if keep_codes else 0,
                                      n_speakers=len(speakers))
        if bn is not None:
            cfg = dataclasses.replace(cfg, codebook_size=bn.size, bottleneck_dim=bn.dim)
        check_dims(cfg, extractor)
        net = AcousticNet(cfg)
        if source is not None:
            not_copied = copy_matching(net, source.net)
        if bn is not None:
            net.vq.set_codebook(bn.codebook)
            net.vq.set_projection(bn.weight, bn.bias)
        elif not keep_codes:
            net.vq.set_codebook(fit_codebook(train_items, codebook_size, cfg.content_norm, settings.seed))
        if source is None or source.meta.get("speakers") != speakers:      # else the init's learnt rows stay
            with torch.no_grad():
                net.speakers.weight.copy_(torch.from_numpy(speaker_rows(train_items, speakers)))
    index = {s: i for i, s in enumerate(speakers)}
    valid_items = [it for it in valid_items if it.speaker in index]
    batches = Batches(train_items, cfg, settings.segment_frames, np.random.default_rng(settings.seed),
                      speaker_ids=[index[it.speaker] for it in train_items])
    loop, trainer = fit(net, specs, batches, (valid_items, [index[it.speaker] for it in valid_items]), run, settings,
                        quiet, extra={"speakers": speakers})
    used = data_summary(data, None, train_items, valid_items, skipped + valid_skipped, batches.frames)
    used["valid"] = "one held-out utterance of each of the valid_utterances training speakers (clean content)"
    return finish(net, specs, run, trainer, {
        "config": dataclasses.asdict(cfg), "specs": dataclasses.asdict(specs), "settings": dataclasses.asdict(settings),
        "command": command, "seed": settings.seed, "device": run.device, "init": init, "bottleneck": bottleneck,
        "init_not_copied": not_copied, "speakers": speakers, "data": used,
        "feature_seconds": round(train_secs + valid_secs, 1), **loop})
