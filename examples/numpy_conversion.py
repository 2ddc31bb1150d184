"""TNS1xx: converting tensors to NumPy (run `tensorcopy check examples/`).

A small training and evaluation script with the NumPy conversions that fail at run time:
TNS101 (`.numpy()` on a tensor that requires grad), TNS102 (`.numpy()` on an accelerator
tensor), TNS103 (NumPy functions applied to a tensor that requires grad) and TNS104 (NumPy
functions applied to an accelerator tensor).
`tensorcopy fix examples/numpy_conversion.py` rewrites them to `t.detach().cpu().numpy()`
(and `np.exp(t.cpu())`).
"""
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3)).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = TensorDataset(torch.randn(64, 8), torch.randint(0, 3, (64,)))
train_loader = DataLoader(data, batch_size=16, shuffle=True)
val_loader = DataLoader(data, batch_size=16)

for epoch in range(2):
    model.train()
    step_losses = []
    for x, y in train_loader:
        x, y = x.to(device), y.to(device)
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step_losses.append(loss)  # keeps every step's graph alive, too
    # TNS103: np.mean converts each loss tensor through .numpy(): RuntimeError.
    print(f"epoch {epoch}: loss {np.mean(step_losses):.3f}")

    # model.eval() does not turn grad off.
    model.eval()
    all_probs, all_labels = [], []
    for x, y in val_loader:
        logits = model(x.to(device))
        # TNS101 + TNS102: requires grad, and may be on the GPU.
        all_probs.append(logits.softmax(dim=1).numpy())
        # Labels come from the DataLoader: no grad, already on the CPU.
        all_labels.append(y.numpy())
    # TNS101: `.cpu()` alone does not detach.
    last = logits.cpu().numpy()
    accuracy = (np.concatenate(all_probs).argmax(axis=1) == np.concatenate(all_labels)).mean()

with torch.no_grad():
    # Fine: computed without grad, moved to the host before converting.
    preds = model(torch.randn(4, 8, device=device)).argmax(dim=1).cpu().numpy()
    # TNS104: NumPy converts through .numpy(), which refuses GPU tensors, grad mode or not.
    scores = np.exp(model(torch.randn(4, 8, device=device)))
