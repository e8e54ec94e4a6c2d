"""SECA on the PII test set: NER precision/recall, entities removed, WER outside the edits, boundary DNSMOS.

Usage: python experiments/bench_seca.py PII_ROOT OUT [--edits infill,infill@f3va,tts,silence,noise,beep] [--limit N]

PII_ROOT is the output of ``voxanon data pii`` (``data/pii`` with ``entities.jsonl``). For every edit mode
it anonymizes the set with ``seca`` through the corpus runner (one process, torch on one thread) into
OUT/<edit> (``infill@BACKBONE``: infill with that backbone, e.g. ``f3va`` or ``acoustic:default``), then
measures, with Whisper tiny.en (the recogniser SECA itself uses):

- NER, span level, on Whisper's transcript of the originals: reference entities are carried onto Whisper's
  words by a word alignment (difflib); a prediction is a hit when its word range is the reference's
  (``exact``) or overlaps it (``overlap``); ``typed`` also needs the type. Also NER on the reference text
  itself (cased) and the gazetteer alone on the VPC upper-case transcript;
- removed: of the reference entities Whisper recognises in the original (their words in order in its
  transcript), the fraction whose words are no longer found in order in the transcript of the output
  (``any word``: not one of its words is left anywhere);
- WER outside the edits: the reference without its entities against the output's recognised words
  whose middle lies outside every edited region; the same on the original audio for comparison;
- boundary quality: DNSMOS (P.835 OVRL) of a window of 0.5 s either side of each edit, output against
  the same window of the original, and of the whole utterance; the discontinuity at each edit's two edges:
  the mean absolute change (dB) of the 80 Whisper log-mel bands between the frames ``EDGE`` s before and
  after the edge, in the output and at the same place in the original;
- replacement heard: the fraction of edits whose replacement words Whisper recognises, in order, in the output.

Writes OUT/results.json and prints a table.
"""

from __future__ import annotations

import argparse
import difflib
import json
import time
from pathlib import Path

import numpy as np
import torch

from voxanon.anonymizers.b3 import spoken
from voxanon.anonymizers.registry import build
from voxanon.anonymizers.seca import EDITS, entity_word_ranges
from voxanon.audio.io import load_audio
from voxanon.data.kaldi import read_data_dir
from voxanon.data.pii import word_spans
from voxanon.data.sentences import normalize_transcript
from voxanon.evaluation.quality import dnsmos
from voxanon.jobs.runner.anonymize import anonymize_corpus
from voxanon.metrics import wer
from voxanon.models.asr import load_asr
from voxanon.models.ner import load_ner

WINDOW = 0.5
#: seconds either side of an edit's edge between which the spectral jump is measured (spans the cross-fade)
EDGE = 0.03


def edge_jumps(wav: np.ndarray, sr: int, edges: list[float]) -> list[float]:
    """Mean absolute change (dB) of the 80 Whisper log-mel bands between ``EDGE`` s before and after each edge."""
    from voxanon.audio.io import resample
    from voxanon.models.content.whisper import LogMel

    mel = 10 * LogMel().log10_power(torch.from_numpy(resample(wav, sr, 16000).astype(np.float32))[None])[0].numpy()
    jumps = []
    for edge in edges:
        a, b = int(round((edge - EDGE) * 100)), int(round((edge + EDGE) * 100))
        if a >= 0 and b < mel.shape[1]:
            jumps.append(float(np.abs(mel[:, b] - mel[:, a]).mean()))
    return jumps


def tokens(words) -> list[list[str]]:
    """Normalised tokens of each recognised word."""
    return [normalize_transcript(w.word).split() for w in words]


def carry(ref: list[str], words) -> list[int | None]:
    """For each reference word, the index of the recognised word it aligns with (None: none)."""
    flat, owner = [], []
    for i, t in enumerate(tokens(words)):
        flat += t
        owner += [i] * len(t)
    out: list[int | None] = [None] * len(ref)
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ref, flat, autojunk=False).get_opcodes():
        if op in ("equal", "replace") and j2 > j1:
            for k in range(i1, i2):
                out[k] = owner[min(j1 + (k - i1) * (j2 - j1) // max(i2 - i1, 1), j2 - 1)]
    return out


def prf(pred: list[tuple], gold: list[tuple], match) -> tuple[int, int, int]:
    """(hits among predictions, predictions, references found) under ``match``."""
    hits = sum(any(match(p, g) for g in gold) for p in pred)
    found = sum(any(match(p, g) for p in pred) for g in gold)
    return hits, len(pred), found


def contains(seq: list[str], sub: list[str]) -> bool:
    return any(seq[i:i + len(sub)] == sub for i in range(len(seq) - len(sub) + 1)) if sub else False


MATCHES = {
    "exact": lambda p, g: p[:2] == g[:2], "exact_typed": lambda p, g: p == g,
    "overlap": lambda p, g: p[0] < g[1] and g[0] < p[1],
}


def ner_scores(items: list[tuple[list, list]]) -> dict:
    """Precision and recall (%) per match rule over (predicted, reference) span lists."""
    out = {}
    for name, match in MATCHES.items():
        h = n = f = g = 0
        for pred, gold in items:
            a, b, c = prf(pred, gold, match)
            h, n, f, g = h + a, n + b, f + c, g + len(gold)
        out[name] = {"precision": round(100 * h / max(n, 1), 1), "recall": round(100 * f / max(g, 1), 1)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pii_root")
    ap.add_argument("out")
    ap.add_argument("--edits", default=",".join(EDITS), help="edit modes, comma-separated (empty: NER only)")
    ap.add_argument("--limit", type=int, default=0, help="first N utterances only (0: all)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    data_path = Path(args.pii_root) / "data" / "pii"
    data = read_data_dir(data_path)
    truth = {j["utt"]: j for j in map(json.loads, (data_path / "entities.jsonl").read_text().splitlines())}
    utts = data.utts[: args.limit or None]
    if args.limit:
        data_path = Path(args.out) / "subset"
        from voxanon.data.kaldi import write_data_dir

        write_data_dir(data.subset(utts), data_path)
    asr = load_asr("whisper-tiny", threads=1)
    originals = {u: load_audio(data.wav_scp[u]) for u in utts}
    orig_words = {u: spoken(asr.transcribe_with_timings([w], sr)[0]) for u, (w, sr) in originals.items()}
    refs = {u: data.text[u].split() for u in utts}
    gold, gold_asr = {}, {}
    for u in utts:
        gold[u] = [(e["words"][0], e["words"][1], e["type"]) for e in truth[u]["entities"]]
        m = carry(refs[u], orig_words[u])
        gold_asr[u] = [(min(k), max(k) + 1, t) for a, b, t in gold[u]
                       if (k := [m[i] for i in range(a, b) if m[i] is not None])]
    results: dict = {"utterances": len(utts), "ner": {}, "edits": {}}
    for spec in ("auto", "spacy", "gazetteer"):
        ner = load_ner(spec)
        on_asr = [([r for r in entity_word_ranges(orig_words[u], ner.find(" ".join(w.word for w in orig_words[u])))],
                   gold_asr[u]) for u in utts]
        results["ner"][f"{ner.name} on Whisper transcript"] = ner_scores(on_asr)
        upper = [(_char_to_words(data.text[u], ner.find(data.text[u])), gold[u]) for u in utts]
        results["ner"][f"{ner.name} on VPC upper-case reference"] = ner_scores(upper)
        cased = [(_char_to_words(truth[u]["text"], ner.find(truth[u]["text"])), gold[u]) for u in utts]
        results["ner"][f"{ner.name} on cased reference text"] = ner_scores(cased)
    edits = [e for e in args.edits.split(",") if e]
    orig_dnsmos = {u: dnsmos(w, sr)["ovrl"] for u, (w, sr) in originals.items()} if edits else {}
    for edit in edits:
        out_dir = Path(args.out) / edit.replace(":", "_")
        mode, _, backbone = edit.partition("@")
        params = {"edit": mode, "threads": 1, **({"backbone": backbone} if backbone else {})}
        start = time.monotonic()
        summary = anonymize_corpus(data_path, out_dir, build("seca", params), jobs=1, quiet=True)
        wall = time.monotonic() - start
        recognised = removed = removed_any = 0
        refs_out, hyps_out, hyps_orig, win_out, win_orig, whole = {}, {}, {}, [], [], []
        jump_out, jump_orig, heard_new, n_edits = [], [], 0, 0
        for u in utts:
            wav, sr = load_audio(out_dir / "wav" / f"{u}.wav")
            report = json.loads((out_dir / "wav" / f"{u}.json").read_text())
            words = spoken(asr.transcribe_with_timings([wav], sr)[0])
            heard = [t for ts in tokens(words) for t in ts]
            heard_orig = [t for ts in tokens(orig_words[u]) for t in ts]
            for a, b, _ in gold[u]:
                entity = refs[u][a:b]
                if contains(heard_orig, entity):
                    recognised += 1
                    removed += not contains(heard, entity)
                    removed_any += not any(t in heard for t in entity)
            regions = [(e["start"], e["end"]) for e in report["edits"]]
            for e in report["edits"]:
                n_edits += 1
                heard_new += contains(heard, normalize_transcript(e["replacement"]).split())
            edges = [t for region in regions for t in region]
            jump_out += edge_jumps(wav, sr, edges)
            jump_orig += edge_jumps(originals[u][0], originals[u][1], edges)
            outside = lambda ws: " ".join(  # noqa: E731
                w.word for w in ws if not any(s <= (w.start + w.end) / 2 <= e for s, e in regions))
            inside = {i for a, b, _ in gold[u] for i in range(a, b)}
            refs_out[u] = " ".join(w for i, w in enumerate(refs[u]) if i not in inside)
            hyps_out[u], hyps_orig[u] = outside(words), outside(orig_words[u])
            original = originals[u][0]
            for s, e in regions:
                a, b = max(0, int((s - WINDOW) * sr)), min(len(wav), int((e + WINDOW) * sr))
                win_out.append(dnsmos(wav[a:b], sr)["ovrl"])
                win_orig.append(dnsmos(original[a:b], sr)["ovrl"])
            whole.append(dnsmos(wav, sr)["ovrl"] - orig_dnsmos[u])
        results["edits"][edit] = {
            "failed": summary.failed, "wall_s": round(wall, 1), "rtf": round(summary.rtf or 0, 2),
            "edits": sum(len(json.loads((out_dir / "wav" / f"{u}.json").read_text())["edits"]) for u in utts),
            "entities_recognised_in_original": recognised,
            "removed_pct": round(100 * removed / max(recognised, 1), 1),
            "removed_every_word_pct": round(100 * removed_any / max(recognised, 1), 1),
            "wer_outside_output": round(wer(refs_out, hyps_out).wer, 2),
            "wer_outside_original": round(wer(refs_out, hyps_orig).wer, 2),
            "dnsmos_edit_windows_output": round(float(np.mean(win_out)), 3) if win_out else None,
            "dnsmos_edit_windows_original": round(float(np.mean(win_orig)), 3) if win_orig else None,
            "dnsmos_whole_delta": round(float(np.mean(whole)), 3),
            "edge_jump_db_output": round(float(np.mean(jump_out)), 2) if jump_out else None,
            "edge_jump_db_original": round(float(np.mean(jump_orig)), 2) if jump_orig else None,
            "replacement_heard_pct": round(100 * heard_new / max(n_edits, 1), 1),
        }
        print(edit, json.dumps(results["edits"][edit]), flush=True)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results["ner"], indent=1))


def _char_to_words(text: str, entities) -> list[tuple[int, int, str]]:
    """Entities of ``text`` (character spans) as word ranges of its normalised transcript."""
    spans = word_spans(text, entities)
    return [(w["words"][0], w["words"][1], w["type"]) for w in spans if w["words"][1] > w["words"][0]]


if __name__ == "__main__":
    main()
