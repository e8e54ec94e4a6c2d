"""voxanon: voice anonymization and its VoicePrivacy-style evaluation."""

__version__ = "0.1.0"

import warnings as _warnings

# pyworld and resemblyzer import pkg_resources, whose deprecation warning would
# otherwise open every command's output.
_warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
