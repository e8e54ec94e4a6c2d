"""Conditional flow matching on speaker embeddings (the F3-VA speaker anonymizer's model).

- :mod:`.model`: the MLP velocity field ``v(x, t)`` with a sinusoidal time embedding,
  and :class:`EmbeddingFlow` (the field plus the data standardisation, numpy in and out);
- :mod:`.solvers`: fixed-step Euler, midpoint and RK4 integrators;
- :mod:`.checkpoint`: the checkpoint format (the CFM training recipe is :mod:`voxanon.training.flow`).
"""

from voxanon.models.flow.checkpoint import FlowError, load_flow, save_flow
from voxanon.models.flow.model import EmbeddingFlow, VelocityField
from voxanon.models.flow.solvers import SOLVERS, integrate

__all__ = ["SOLVERS", "EmbeddingFlow", "FlowError", "VelocityField", "integrate", "load_flow", "save_flow"]
