"""The corpus runner: anonymize a Kaldi data directory or a folder of audio, resumably, on local or Ray workers."""
