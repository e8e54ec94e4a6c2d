"""B4, the VPC 2024 neural-audio-codec language-model baseline, from its published weights.

``weights`` finds the parts (no torch); ``prompts`` reads the pseudo-speaker voice prompts; ``quantizer`` is the
HuBERT-to-semantic-token network; ``bark`` drives Bark's coarse and fine models and EnCodec; ``model`` joins them.
The anonymizer is :class:`voxanon.anonymizers.nac.B4`.
"""
