"""TNS2xx: tensor copy idioms (run `tensorcopy check examples/`)."""
import torch
from torch import nn

model = nn.Linear(4, 2)

# TNS201: clone first records a CloneBackward node that detach() throws away.
history_weight = model.weight.clone().detach()

# TNS202: copy-constructing from a tensor warns and hides what happens.
target = torch.tensor(model.bias)
