"""voxanon: voice anonymization and its VoicePrivacy-style evaluation."""

__version__ = "0.1.0"

import warnings as _warnings

# pyworld and resemblyzer import pkg_resources, whose deprecation warning would
# otherwise open every command's output.
_warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)

#: the public API (voxanon.api), imported on first use so that ``import voxanon`` and the CLI start fast
_API = frozenset({"Anonymizer", "AnonymizerInfo", "ParamInfo", "anonymize_conversation", "anonymize_dir",
                  "anonymize_waveform", "build_anonymizer", "evaluate_privacy", "evaluate_wer", "list_anonymizers"})


def __getattr__(name: str):
    if name in _API:
        from voxanon import api

        return getattr(api, name)
    raise AttributeError(f"module 'voxanon' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
