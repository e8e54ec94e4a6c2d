"""voxanon: voice anonymization and its VoicePrivacy-style evaluation."""

__version__ = "0.1.0"
