"""The HuBERT-feature quantiser that gives B4 its Bark semantic tokens.

Bark publishes no audio-to-semantic-token model; the 2024 kit uses a network
distilled for that (GitMylo/bark-voice-cloning, ``quantifier_hubert_base_ls960_14.pth``,
MIT): a 2-layer LSTM over HuBERT base's layer-9 features (768-d, 50 per second), optionally a
linear layer to 4096, then a linear layer to Bark's 10 000 semantic tokens; a
frame's token is the arg-max. Its checkpoint is a torch state dict (keys
``lstm.weight_ih_l0`` ... ``lstm.bias_hh_l1``, ``[intermediate.weight/bias]``,
``fc.weight``, ``fc.bias``), a zip to which the training script may append a
``<name>/.info`` JSON of its sizes; the sizes are read from the tensors' shapes
here, and checked against that JSON when it is there.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import torch
from torch import nn

from voxanon.errors import ModelError
from voxanon.models.checkpoint import check_state_keys, load_checkpoint
from voxanon.models.model_files import require_keys

#: HuBERT base's hidden layer the quantiser reads (``hidden_states[9]``, as the kit's ``CustomHubert``)
HUBERT_LAYER = 9
N_LSTM_LAYERS = 2


class HubertQuantizer(nn.Module):
    """LSTM (2 layers) -> [Linear to ``intermediate``] -> Linear to the semantic vocabulary; tokens by arg-max."""

    def __init__(self, input_size: int = 768, hidden_size: int = 1024, output_size: int = 10_000,
                 intermediate: int | None = None) -> None:
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, N_LSTM_LAYERS, batch_first=True)
        self.intermediate = nn.Linear(hidden_size, intermediate) if intermediate else None
        self.fc = nn.Linear(intermediate or hidden_size, output_size)
        self.input_size, self.output_size = input_size, output_size

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """Logits ``(T, vocabulary)`` of features ``(T, input_size)``."""
        x, _ = self.lstm(features[None])
        if self.intermediate is not None:
            x = self.intermediate(x)
        return self.fc(x)[0]

    @torch.inference_mode()
    def tokens(self, features: torch.Tensor) -> torch.Tensor:
        """Semantic tokens ``(T,)`` (int64) of features ``(T, input_size)``."""
        return self(features).argmax(-1)


def _info(path: Path) -> dict | None:
    """The ``.info`` JSON the training script appends to the checkpoint's zip, if any."""
    try:
        with zipfile.ZipFile(path) as archive:
            name = next((n for n in archive.namelist() if n.endswith("/.info")), None)
            return json.loads(archive.read(name).decode("utf-8")) if name else None
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def load_quantizer(path: str | Path) -> HubertQuantizer:
    """The quantiser of a checkpoint file; ModelError naming the file and the key at fault."""
    path = Path(path)
    what, expected = "quantiser checkpoint", "a HuBERT quantiser state dict (lstm.weight_ih_l0 ... fc.weight)"
    state = require_keys(load_checkpoint(path, what, ModelError, expected=expected), ("lstm.weight_ih_l0", "fc.weight"),
                         what, path, ModelError, expected=expected, todo="check the path, or write the file again")
    four_hidden, input_size = state["lstm.weight_ih_l0"].shape
    intermediate = state["intermediate.weight"].shape[0] if "intermediate.weight" in state else None
    model = HubertQuantizer(input_size, four_hidden // 4, state["fc.weight"].shape[0], intermediate)
    info = _info(path)
    if info is not None:
        declared = (info.get("input_size"), info.get("hidden_size"), info.get("output_size"), info.get("version"))
        found = (input_size, four_hidden // 4, model.output_size, 1 if intermediate else 0)
        if declared != found:
            raise ModelError(f"{path}: its .info declares (input, hidden, output, version) {declared}, its tensors "
                             f"are {found}")
    check_state_keys(state, {k: tuple(v.shape) for k, v in model.state_dict().items()}, f"{what} {path}", ModelError,
                     f"its tensors do not fit a {N_LSTM_LAYERS}-layer LSTM quantiser")
    model.load_state_dict(state)
    return model.eval()
