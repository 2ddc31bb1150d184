"""TNS4xx: in-place writes autograd forbids or cannot see (run `tensorcopy check examples/`)."""
import torch
from torch import nn

model = nn.Linear(4, 2)
x, y = torch.randn(8, 4), torch.randn(8, 2)
loss = nn.functional.mse_loss(model(x), y)
loss.backward()

# TNS401: a manual SGD step outside torch.no_grad(): the parameter is a leaf that requires grad.
for p in model.parameters():
    p -= 0.1 * p.grad

# TNS401: weight surgery; model.eval() does not turn grad off.
model.eval()
model.weight[:, 0] = 0.0

# TNS402: the detached "copy" shares storage with `a`, which `a ** 2` saved for backward.
a = torch.ones(5, requires_grad=True)
b = a ** 2
c = a.detach()
c.zero_()
b.sum().backward()

# TNS403: `.data` hides the write from autograd: no error, a wrong gradient.
w = torch.ones(3, requires_grad=True)
out = w.log()
w.data.mul_(2)
out.sum().backward()
