"""The jobs voxanon runs end to end, each in its own package.

``runner`` anonymizes a corpus, ``benchmark`` runs the main job (systems x
evaluators), ``report`` renders results, ``corpus`` builds the offline corpus;
``perf`` times anonymizers and models and ``speaker_pool`` builds pseudo-speaker pools.
"""
