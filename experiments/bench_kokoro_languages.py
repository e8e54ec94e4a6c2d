"""Kokoro-82M speaking its non-English languages: each voice pack reads sentences of its own language, Whisper base
transcribes them in that language.

Usage: python experiments/bench_kokoro_languages.py [--sentences 10] [--languages es,fr,...] [--out results.json]

Text: Spanish, French and Italian use Asterisk's sentence prompts of that language (the first ``--sentences``
prompts of 5 to 20 words; the Spanish ones are written without accents, as the package ships them); Brazilian
Portuguese, Hindi, Japanese and Chinese use the short everyday sentences written for this benchmark below
(:data:`OWN_SENTENCES`). English (``af_heart``, ``bm_george``) is the reference row.

Every voice pack of a language (first letter of its name, :data:`voxanon.models.tts.kokoro_g2p.PACK_LANGUAGES`)
reads every sentence at rate 1.0 with one onnxruntime thread; ``whisper-base:<language>`` (``whisper-base:en`` for
English) transcribes the 16 kHz audio. Per language and voice: the error rate (WER, or CER for Japanese and
Chinese; the ``basic`` normalisation, ``spoken`` for English; Hindi: the CER of the consonants that Whisper's
Devanagari and Urdu-script transcripts share, :func:`voxanon.metrics.text.normalize_hindustani`), the synthesis
real-time factor (process CPU seconds per second of audio), and the phoneme symbols the model lacks (dropped).
Needs ``tools/setup.sh`` (Kokoro, its voices and the ``kokoro-languages`` extra, Whisper base, the Asterisk prompt
packages) and the espeak-ng program.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter
from pathlib import Path

from voxanon.audio.io import resample
from voxanon.data.debian_clips import prompt_clips
from voxanon.metrics import wer
from voxanon.metrics.text import default_normalization, error_unit
from voxanon.models.asr import load_asr
from voxanon.models.tts import kokoro
from voxanon.models.tts.kokoro_g2p import pack_language

LANGUAGES = ("en", "es", "fr", "it", "pt-br", "hi", "ja", "zh")
ENGLISH = ("The birch canoe slid on the smooth planks.", "Glue the sheet to the dark blue background.",
           "It's easy to tell the depth of a well.", "These days a chicken leg is a rare dish.",
           "Rice is often served in round bowls.", "The juice of lemons makes fine punch.",
           "The box was thrown beside the parked truck.", "The hogs were fed chopped corn and garbage.",
           "Four hours of steady work faced us.", "A large size in stockings is hard to sell.")
#: sentences written for this benchmark where no recorded prompts of the language are installed
OWN_SENTENCES = {
    "pt-br": ("O menino comeu uma maçã vermelha.", "Hoje o céu está azul e o sol brilha.",
              "Minha irmã trabalha em um hospital.", "Nós vamos viajar para o Rio amanhã.",
              "Por favor, feche a porta da cozinha.", "O livro está em cima da mesa.",
              "Ele gosta de tomar café com leite.", "A cidade fica perto do mar.",
              "Você pode me ajudar com esta caixa?", "Os pássaros cantam de manhã cedo."),
    "hi": ("मैं हर दिन सुबह चाय पीता हूँ।", "आज मौसम बहुत अच्छा है।", "बच्चे पार्क में खेल रहे हैं।",
           "मेरा घर स्कूल के पास है।", "कृपया दरवाज़ा बंद कर दीजिए।", "वह किताब मेज़ पर रखी है।",
           "हम कल दिल्ली जाएँगे।", "मुझे हिंदी गाने पसंद हैं।", "मेरी माँ खाना बना रही है।",
           "क्या आप मेरी मदद कर सकते हैं?"),
    "ja": ("今日はとても良い天気です。", "私は毎朝コーヒーを飲みます。", "駅までどのくらいかかりますか。",
           "子供たちが公園で遊んでいます。", "この本はとても面白いです。", "明日は東京に行く予定です。",
           "窓を開けてもいいですか。", "母は台所で料理をしています。", "日本語を勉強しています。",
           "電車が少し遅れています。"),
    "zh": ("今天天气很好。", "我每天早上喝一杯茶。", "孩子们在公园里玩。", "请把门关上。", "这本书非常有意思。",
           "我们明天去北京。", "他在医院工作。", "我喜欢吃米饭和蔬菜。", "火车站离这里不远。", "你可以帮我一下吗？"),
}


def sentences(language: str, n: int) -> list[str]:
    """``n`` sentences of one language (see the module docstring for their source)."""
    if language == "en":
        return list(ENGLISH[:n])
    if language in OWN_SENTENCES:
        return list(OWN_SENTENCES[language][:n])
    texts = [c.text for c in prompt_clips(language=language)
             if 5 <= len(c.text.split()) <= 20 and not re.search(r"\w\?\w|\w\?\s*\w", c.text)]
    if not texts:
        raise SystemExit(f"no Asterisk prompts in {language}: run tools/setup.sh (it installs them)")
    return texts[:n]


def scoring(language: str) -> tuple[str, str]:
    """(normalisation, unit) of a language's error rate. Whisper base writes Hindi speech in Urdu's script, so
    Hindi is scored on the consonants both scripts share (``hindustani``), per character."""
    if language == "hi":
        return "hindustani", "char"
    return default_normalization(language), error_unit(language)


def voices(language: str) -> list[str]:
    """The installed packs made for ``language`` (two reference voices for English)."""
    if language == "en":
        return ["af_heart", "bm_george"]
    return [v for v in kokoro.available_voices() if pack_language(v) == language]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=10, help="sentences per language (default 10)")
    ap.add_argument("--languages", default=",".join(LANGUAGES), help="comma-separated (default: all)")
    ap.add_argument("--out", type=Path, help="write the rows as JSON here")
    args = ap.parse_args()

    rows = []
    for language in args.languages.split(","):
        texts = sentences(language, args.sentences)
        asr = load_asr(f"whisper-base:{language.split('-')[0]}", threads=1)
        for voice in voices(language):
            tts = kokoro.KokoroTts(voice, threads=1, language=language)
            tts.synthesize(texts[0])  # warm-up: the session and the G2P load once
            wavs, cpu, dropped = [], 0.0, Counter()
            for text in texts:
                start = time.process_time()
                wav, sr = tts.synthesize(text)
                cpu += time.process_time() - start
                dropped += tts.dropped
                wavs.append(resample(wav, sr, 16000))
            seconds = sum(len(w) for w in wavs) / 16000
            hyps = asr.transcribe(wavs, 16000)
            result = wer(texts, hyps, *scoring(language))
            rows.append({"language": language, "voice": voice, "sentences": len(texts), "audio_s": round(seconds, 1),
                         "measure": result.error_rate_name, "reference_units": result.n_reference_words,
                         "error_rate": round(result.wer, 2), "synthesis_cpu_rtf": round(cpu / seconds, 3),
                         "dropped_symbols": dict(dropped.most_common()),
                         "examples": [{"text": t, "asr": h} for t, h in list(zip(texts, hyps))[:2]]})
            r = rows[-1]
            print(f"{language:<7}{voice:<15}{r['sentences']:>4}{r['audio_s']:>8}{r['measure']:>5}"
                  f"{r['error_rate']:>8.2f}{r['synthesis_cpu_rtf']:>8.3f}  {''.join(dropped) or '-'}", flush=True)

    print(f"\n{'language':<9}{'voices':>7}{'rate %':>8}  (mean over voices; min-max)")
    for language in dict.fromkeys(r["language"] for r in rows):
        mine = [r["error_rate"] for r in rows if r["language"] == language]
        print(f"{language:<9}{len(mine):>7}{sum(mine) / len(mine):>8.2f}  ({min(mine):.2f}-{max(mine):.2f})")
    if args.out:
        args.out.write_text(json.dumps({"threads": 1, "rows": rows}, ensure_ascii=False, indent=2) + "\n")


if __name__ == "__main__":
    main()
