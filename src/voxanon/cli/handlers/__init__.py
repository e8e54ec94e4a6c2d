"""Handler bodies of the command groups whose declarations would otherwise be too long to read.

``voxanon.cli.<group>`` declares the commands and points to these with
:func:`voxanon.cli.lazy`, so that building the parser imports none of them.
"""
