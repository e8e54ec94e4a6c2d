"""speechbrain model folders read without speechbrain (which needs torchaudio, absent here).

A speechbrain pretrained-model folder holds a ``hyperparams.yaml`` (HyperPyYAML:
``!new:``/``!name:``/``!ref`` tags that build speechbrain objects) and the
files its ``pretrainer`` loads (``<loadable>.ckpt``: torch state dicts, a
sentencepiece model, a label-encoder text file). This package reads those
files with PyYAML, torch and transformers and rebuilds the pieces the VPC 2024
evaluation models use:

:mod:`~voxanon.models.speechbrain.hparams`
    the YAML with its tags kept as :class:`~voxanon.models.speechbrain.hparams.Node`
    objects, references resolved, the checkpoint folder and loadable files found
    the way speechbrain finds them.
:mod:`~voxanon.models.speechbrain.wav2vec2`
    speechbrain's Hugging Face wav2vec2 lobe (``model.*`` state dict, input and
    output layer norms).
:mod:`~voxanon.models.speechbrain.layers`
    ``Linear``, ``BatchNorm1d``, ``VanillaNN``/``Sequential`` DNNs and
    ``Softmax`` with speechbrain's parameter names.
:mod:`~voxanon.models.speechbrain.labels`
    speechbrain's ``CategoricalEncoder`` text files (``'neu' => 0``).
"""
