"""TNS5xx: copies that are not copies (run `tensorcopy check examples/`)."""
import numpy as np
import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(4)]

best_loss, best_state = float("inf"), None
history = []
for epoch in range(5):
    total_loss = 0
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        # TNS503: the running total keeps every batch's autograd graph; it is only printed.
        total_loss += loss
    print(f"epoch {epoch}: {total_loss.item() / len(loader):.4f}")
    # TNS502: a view of the weights, not a copy: the history holds the last weights 5 times.
    history.append(model.weight.detach().numpy())
    if total_loss.item() < best_loss:
        best_loss = total_loss.item()
        # TNS501: state_dict() returns the live parameters: the "best" weights are the last ones.
        best_state = model.state_dict()

model.load_state_dict(best_state)
np.save("weights.npy", np.stack(history))
