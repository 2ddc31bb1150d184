"""Whole programs held to real torch: small training scripts whose values cross functions,
methods and classes (a helper that returns a model's output, a trainer's methods, a function
that steps the module's optimizer), each run on torch.  For the NumPy rules, a program that runs
clean is not reported, and one whose `.numpy()` / NumPy call raises is reported at that line
(by default where the analysis is sure, else under `--strict`); TNS401 reports exactly the
in-place writes that raise the leaf error; TNS501/502 report a program exactly where its
snapshot changed under it."""

import traceback
import warnings

import pytest

from conftest import reported_lines

HEAD = "import torch\nimport torch.nn as nn\nimport numpy as np\nimport functools\n"
TNS1_PROGRAMS = [
    ("the PyTorch tutorial's positional encoding: a dropout and a buffer it fills", '''\
import math
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)
    def forward(self, x):
        x = x + self.pe[: x.size(0)]
        return self.dropout(x)
pos_enc = PositionalEncoding(8)
pos_enc.eval()
print(pos_enc(torch.zeros(5, 1, 8)).numpy())
'''),
    ('an embedding whose weight the constructor copies in and freezes (the classic GloVe layer)', '''\
class Glove(nn.Module):
    def __init__(self, vectors):
        super().__init__()
        self.emb = nn.Embedding(*vectors.shape)
        self.emb.weight.data.copy_(vectors)
        self.emb.weight.requires_grad = False
    def forward(self, ids):
        return self.emb(ids).mean(dim=1)
enc = Glove(torch.randn(20, 4))
print(enc(torch.tensor([[1, 2, 3]])).numpy())
'''),
    ('an embedding the constructor freezes with requires_grad_', '''\
class Glove(nn.Module):
    def __init__(self, vectors):
        super().__init__()
        self.emb = nn.Embedding(*vectors.shape)
        self.emb.requires_grad_(False)
    def forward(self, ids):
        return self.emb(ids).mean(dim=1)
enc = Glove(torch.randn(20, 4))
print(enc(torch.tensor([[1, 2, 3]])).numpy())
'''),
    ('a feature extractor whose constructor freezes its backbone in a loop', '''\
class FeatureExtractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
        for p in self.backbone.parameters():
            p.requires_grad = False
        self.pool = nn.Identity()
    def forward(self, x):
        return self.pool(self.backbone(x))
features = FeatureExtractor()(torch.randn(2, 4))
print(features.numpy())
'''),
    ('a linear layer whose weight and bias the constructor freezes one by one', '''\
class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.fc.weight.requires_grad = False
        self.fc.bias.requires_grad = False
    def forward(self, x):
        return self.fc(x)
print(Probe()(torch.randn(3, 4)).numpy())
'''),
    ('pretrained embeddings and a layer norm without affine parameters', '''\
class Glove(nn.Module):
    def __init__(self, vectors):
        super().__init__()
        self.emb = nn.Embedding.from_pretrained(vectors)
        self.norm = nn.LayerNorm(4, elementwise_affine=False)
        self.inorm = nn.InstanceNorm1d(4)
    def forward(self, ids):
        return self.norm(self.emb(ids)).mean(dim=1)
enc = Glove(torch.randn(20, 4))
print(enc(torch.tensor([[1, 2, 3]])).numpy())
'''),
    ('a Sequential of pretrained embeddings and an activation, and a ModuleList of pretrained tables', '''\
class MultiEmb(nn.Module):
    def __init__(self, tables):
        super().__init__()
        self.net = nn.Sequential(nn.Embedding.from_pretrained(tables[0]), nn.Tanh())
        self.embs = nn.ModuleList([nn.Embedding.from_pretrained(t) for t in tables])
    def forward(self, ids):
        return (self.net(ids) + sum(e(ids) for e in self.embs)).mean(dim=1)
enc = MultiEmb([torch.randn(20, 4), torch.randn(20, 4)])
print(enc(torch.tensor([[1, 2, 3]])).numpy())
'''),
    ("a rotary embedding's frequencies computed from the constructor's sizes into a buffer", '''\
class Rotary(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        half = dim // 2
        inv_freq = 1.0 / (base ** (torch.arange(0, half).float() / half))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.scale = nn.Parameter(torch.ones(1), requires_grad=False)
    def forward(self, t):
        return torch.outer(t, self.inv_freq) * self.scale
rope = Rotary(8)
print(rope(torch.arange(5).float()).numpy())
'''),
    ("a Gaussian smoothing kernel normalised by its sum into a buffer, passed to conv1d among other arguments", '''\
class GaussianSmoothing(nn.Module):
    def __init__(self, size=5, sigma=1.0):
        super().__init__()
        x = torch.arange(size, dtype=torch.float32) - size // 2
        k = torch.exp(-x ** 2 / (2 * sigma ** 2))
        self.register_buffer("kernel", (k / k.sum()).view(1, 1, -1))
    def forward(self, x):
        return nn.functional.conv1d(x, self.kernel, padding=self.kernel.shape[-1] // 2)
smooth = GaussianSmoothing()(torch.randn(1, 1, 16))
print(smooth[0, 0].numpy())
'''),
    ("a kernel buffer passed to conv1d among other arguments, beside a layer it sets in a tuple", '''\
class Smoothing(nn.Module):
    def __init__(self, size=5):
        super().__init__()
        k = torch.ones(size)
        self.register_buffer("kernel", (k / k.sum()).view(1, 1, -1))
        self.scale, self.proj = 2.0, nn.Linear(16, 16)
    def forward(self, x):
        return self.proj(nn.functional.conv1d(x, self.kernel, padding=2))
out = Smoothing()(torch.randn(1, 1, 16))
print(out[0, 0].numpy())
'''),
    ("a blur kernel buffer beside a padding the constructor computes from its size, the conv call split over lines", '''\
class GaussianBlur(nn.Module):
    def __init__(self, size=5, sigma=1.0):
        super().__init__()
        self.pad = size // 2
        x = torch.arange(size).float() - size // 2
        k = torch.exp(-x ** 2 / (2 * sigma ** 2))
        self.register_buffer("kernel", (k / k.sum()).view(1, 1, -1))
    def forward(self, x):
        return nn.functional.conv1d(x,
                                    self.kernel,
                                    padding=self.pad)
print(GaussianBlur()(torch.randn(1, 1, 16))[0, 0].numpy())
'''),
    ("a module whose padding the constructor computes from its size, and a layer", '''\
class Conv(nn.Module):
    def __init__(self, size=3):
        super().__init__()
        self.pad = size // 2
        self.conv = nn.Conv1d(1, 1, size)
    def forward(self, x):
        return self.conv(nn.functional.pad(x, (self.pad, self.pad)))
print(Conv()(torch.randn(1, 1, 16))[0, 0].numpy())
'''),
    ('a backbone the constructor freezes, then a head it adds', '''\
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.backbone.requires_grad_(False)
        self.head = nn.Linear(8, 2)
    def forward(self, x):
        return self.head(self.backbone(x))
print(Classifier()(torch.randn(3, 4)).numpy())
'''),
    ('a linear layer whose weight alone the constructor freezes (its bias trains)', '''\
class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.fc.weight.requires_grad = False
    def forward(self, x):
        return self.fc(x)
print(Probe()(torch.randn(3, 4)).numpy())
'''),
    ('an embedding frozen, then replaced by a new one', '''\
class Glove(nn.Module):
    def __init__(self, vectors):
        super().__init__()
        self.emb = nn.Embedding(*vectors.shape)
        self.emb.requires_grad_(False)
        self.emb = nn.Embedding(*vectors.shape)
    def forward(self, ids):
        return self.emb(ids).mean(dim=1)
print(Glove(torch.randn(20, 4))(torch.tensor([[1, 2, 3]])).numpy())
'''),
    ('a ModuleList of pretrained tables the constructor appends a new embedding to', '''\
class MultiEmb(nn.Module):
    def __init__(self, tables):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding.from_pretrained(t) for t in tables])
        self.embs.append(nn.Embedding(20, 4))
    def forward(self, ids):
        return sum(e(ids) for e in self.embs).mean(dim=1)
print(MultiEmb([torch.randn(20, 4)])(torch.tensor([[1, 2, 3]])).numpy())
'''),
    ('a buffer computed from a parameter the constructor makes', '''\
class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        w = nn.Parameter(torch.ones(4))
        table = torch.arange(4).float() * w
        self.register_buffer("table", table)
    def forward(self, t):
        return torch.outer(t, self.table)
print(Scaled()(torch.arange(3).float()).numpy())
'''),
    ('a Sequential of pretrained embeddings and a linear layer', '''\
class Glove(nn.Module):
    def __init__(self, vectors):
        super().__init__()
        self.net = nn.Sequential(nn.Embedding.from_pretrained(vectors), nn.Linear(4, 4))
    def forward(self, ids):
        return self.net(ids).mean(dim=1)
print(Glove(torch.randn(20, 4))(torch.tensor([[1, 2, 3]])).numpy())
'''),
    ('an embedding frozen only under a flag the call leaves false', '''\
class Glove(nn.Module):
    def __init__(self, vectors, freeze=True):
        super().__init__()
        self.emb = nn.Embedding(*vectors.shape)
        if freeze:
            self.emb.requires_grad_(False)
    def forward(self, ids):
        return self.emb(ids).mean(dim=1)
print(Glove(torch.randn(20, 4), freeze=False)(torch.tensor([[1, 2, 3]])).numpy())
'''),
    ('pretrained embeddings and a layer norm with its affine parameters', '''\
class Glove(nn.Module):
    def __init__(self, vectors):
        super().__init__()
        self.emb = nn.Embedding.from_pretrained(vectors)
        self.norm = nn.LayerNorm(4)
    def forward(self, ids):
        return self.norm(self.emb(ids)).mean(dim=1)
print(Glove(torch.randn(20, 4))(torch.tensor([[1, 2, 3]])).numpy())
'''),
    ('an embedding the constructor freezes and a method thaws', '''\
class Glove(nn.Module):
    def __init__(self, vectors):
        super().__init__()
        self.emb = nn.Embedding(*vectors.shape)
        self.emb.requires_grad_(False)
    def unfreeze(self):
        self.emb.requires_grad_(True)
    def forward(self, ids):
        return self.emb(ids).mean(dim=1)
enc = Glove(torch.randn(20, 4))
enc.unfreeze()
print(enc(torch.tensor([[1, 2, 3]])).numpy())
'''),
    ('a linear layer built frozen with requires_grad_(False), and one without bias whose weight is frozen', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4).requires_grad_(False)
        self.b = nn.Linear(4, 4, False)
        self.b.weight.requires_grad_(False)
    def forward(self, x):
        return self.b(self.a(x))
print(Net()(torch.randn(2, 4)).numpy())
'''),
    ('batch norm without affine parameters by position, and an instance norm', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4, 1e-5, 0.1, False)
        self.inorm = nn.InstanceNorm1d(4)
        self.emb = nn.Embedding.from_pretrained(torch.randn(10, 4))
    def forward(self, x):
        return self.bn(x)
print(Net()(torch.randn(2, 4)).numpy())
'''),
    ('rotary frequencies registered directly, written over two lines', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        base = 10000
        dim = 8
        self.register_buffer("inv_freq", 1.0 / (
            base ** (torch.arange(0, dim, 2).float().div(dim))
        ))
    def forward(self, x):
        return torch.outer(x[:, 0], self.inv_freq)
print(Net()(torch.randn(2, 4)).numpy())
'''),
    ('a Sequential of activations the constructor extends with a linear layer', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Tanh())
        self.norm = nn.LayerNorm(4, elementwise_affine=False)
        self.layers += nn.Sequential(nn.Linear(4, 4))
    def forward(self, x):
        return self.layers(x)
print(Net()(torch.randn(2, 4)).numpy())
'''),
    ('a ModuleList of activations the constructor appends to through a local', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Tanh()])
        self.norm = nn.LayerNorm(4, elementwise_affine=False)
        layers = self.layers
        layers.append(nn.Linear(4, 4))
    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
print(Net()(torch.randn(2, 4)).numpy())
'''),
    ('a layer frozen, then weight-normalised (new trainable parameters)', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.fc.requires_grad_(False)
        nn.utils.weight_norm(self.fc)
    def forward(self, x):
        return self.fc(x)
print(Net()(torch.randn(2, 4)).numpy())
'''),
    ('an instance norm with affine parameters by position', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.InstanceNorm1d(4, 1e-5, 0.1, True)
        self.emb = nn.Embedding.from_pretrained(torch.randn(10, 4))
    def forward(self, x):
        return self.norm(x.unsqueeze(-1).expand(2, 4, 3)).mean(-1)
print(Net()(torch.randn(2, 4)).numpy())
'''),
    ('a frozen module the script thaws through a flag in a function it applies', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.fc.requires_grad_(False)
    def forward(self, x):
        return self.fc(x)
ON = True
def thaw(m):
    for p in m.parameters(recurse=False):
        p.requires_grad = ON
net = Net()
net.apply(thaw)
print(net(torch.randn(2, 4)).numpy())
'''),
    ('a module of pretrained embeddings the script adds a layer to', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding.from_pretrained(torch.randn(10, 4))
    def forward(self, x):
        return sum(m(x) for m in self.children() if not isinstance(m, nn.Embedding))
net = Net()
net.add_module("fc", nn.Linear(4, 4))
print(net(torch.randn(2, 4)).numpy())
'''),
    ('a buffer made by a factory, then added to a parameter in place', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        w = nn.Parameter(torch.randn(4))
        inv = torch.zeros(4)
        inv += w
        self.register_buffer("inv", inv)
    def forward(self, x):
        return x * self.inv
print(Net()(torch.randn(2, 4)).numpy())
'''),
    ('a buffer made by a factory, then a parameter written into it', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        w = nn.Parameter(torch.randn(4))
        pe = torch.zeros(2, 4)
        pe[0] = w
        self.register_buffer("pe", pe)
    def forward(self, x):
        return x * self.pe[0]
print(Net()(torch.randn(2, 4)).numpy())
'''),
    ('rotary frequencies of a base bound with an annotation to a parameter', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        base: nn.Parameter = nn.Parameter(torch.tensor(10000.0))
        inv = 1.0 / (base ** (torch.arange(0, 4).float() / 4))
        self.register_buffer("inv", inv)
    def forward(self, x):
        return x * self.inv
print(Net()(torch.randn(2, 4)).numpy())
'''),
    ('a module of pretrained embeddings a script thaws from outside', '''\
class Glove(nn.Module):
    def __init__(self, vectors):
        super().__init__()
        self.emb = nn.Embedding.from_pretrained(vectors)
    def forward(self, ids):
        return self.emb(ids).mean(dim=1)
enc = Glove(torch.randn(20, 4))
enc.emb.weight.requires_grad = True
print(enc(torch.tensor([[1, 2, 3]])).numpy())
'''),
    ('a module whose only parameter is made frozen positionally, and a buffer and a dropout', '''\
class FixedScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.full((4,), 2.0), False)
        self.register_buffer("pe", torch.randn(10, 4))
        self.drop = nn.Dropout(0.1)
    def forward(self, x):
        return self.drop(x * self.scale + self.pe[: x.size(0)])
m = FixedScale()
print(m(torch.randn(2, 4)).numpy())
'''),
    ('a module of pretrained embeddings frozen=False positionally', '''\
class Glove(nn.Module):
    def __init__(self, vectors):
        super().__init__()
        self.emb = nn.Embedding.from_pretrained(vectors, False)
    def forward(self, ids):
        return self.emb(ids).mean(dim=1)
enc = Glove(torch.randn(20, 4))
print(enc(torch.tensor([[1, 2, 3]])).numpy())
'''),
    ('an attribute the constructor computes with a local model it freezes by a call', '''\
class Stats(nn.Module):
    def __init__(self, data):
        super().__init__()
        enc = nn.Linear(3, 3)
        enc.requires_grad_(False)
        self.value = enc(torch.as_tensor(data)).mean(0)
    def report(self):
        return self.value.numpy()
print(Stats([[1.0, 2.0, 3.0]]).report())
'''),
    ('an enable_grad method called under no_grad fills a list another method converts', '''\
class Lit(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.outs = []
    @torch.enable_grad()
    def eval_step(self, x):
        self.outs.append(self.fc(x).softmax(-1))
    def epoch_end(self):
        return torch.cat(self.outs).numpy()
lit = Lit()
with torch.no_grad():
    lit.eval_step(torch.randn(3, 4))
print(lit.epoch_end())
'''),
    ('a method called under no_grad keeps views of a parameter another method converts', '''\
class Lit(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.outs = []
    def eval_step(self, x):
        self.outs.append(self.fc.weight[0])
    def epoch_end(self):
        return torch.cat(self.outs).numpy()
lit = Lit()
with torch.no_grad():
    lit.eval_step(torch.randn(3, 4))
print(lit.epoch_end())
'''),
    ('a method called only under no_grad fills a list another method converts', '''\
class Lit(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.outs = []
    def validation_step(self, x):
        probs = self.fc(x).softmax(-1)
        self.outs.append(probs)
    def on_validation_epoch_end(self):
        return torch.cat(self.outs).numpy()
lit = Lit()
with torch.no_grad():
    lit.validation_step(torch.randn(3, 4))
print(lit.on_validation_epoch_end().shape)
'''),
    ('a method called with grad too fills a list another method converts', '''\
class Lit(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.outs = []
    def validation_step(self, x):
        probs = self.fc(x).softmax(-1)
        self.outs.append(probs)
    def on_validation_epoch_end(self):
        return torch.cat(self.outs).numpy()
lit = Lit()
with torch.no_grad():
    lit.validation_step(torch.randn(3, 4))
lit.validation_step(torch.randn(3, 4))
print(lit.on_validation_epoch_end().shape)
'''),
    ('a module whose only parameter is made not to require grad', '''\
class FixedScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.full((4,), 2.0), requires_grad=False)
    def forward(self, x):
        return x * self.scale
m = FixedScale()
print(m(torch.randn(2, 4)).numpy())
'''),
    ('a module of pretrained embeddings (frozen by from_pretrained) and new buffers', '''\
class PosEnc(nn.Module):
    def __init__(self, vectors):
        super().__init__()
        self.register_buffer("pe", torch.randn(10, 4))
        self.scale = nn.Parameter(torch.ones(4), requires_grad=False)  # fixed
        self.emb = nn.Embedding.from_pretrained(vectors, freeze=True)
    def forward(self, ids):
        return self.emb(ids) * self.scale + self.pe[: ids.shape[-1]]
m = PosEnc(torch.randn(20, 4))
print(m(torch.tensor([1, 2, 3])).numpy())
'''),
    ('a module of pretrained embeddings it fine-tunes (freeze=False)', '''\
class Glove(nn.Module):
    def __init__(self, vectors):
        super().__init__()
        self.emb = nn.Embedding.from_pretrained(vectors, freeze=False)
    def forward(self, ids):
        return self.emb(ids).mean(dim=1)
enc = Glove(torch.randn(20, 4))
print(enc(torch.tensor([[1, 2, 3]])).numpy())
'''),
    ('a module of pretrained embeddings that a method thaws', '''\
class Glove(nn.Module):
    def __init__(self, vectors):
        super().__init__()
        self.emb = nn.Embedding.from_pretrained(vectors)
    def unfreeze(self):
        self.emb.weight.requires_grad = True
    def forward(self, ids):
        return self.emb(ids).mean(dim=1)
enc = Glove(torch.randn(20, 4))
enc.unfreeze()
print(enc(torch.tensor([[1, 2, 3]])).numpy())
'''),
    ('a module with a frozen parameter and a layer', '''\
class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.full((4,), 2.0), requires_grad=False)
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return self.fc(x) * self.scale
m = Scaled()
print(m(torch.randn(2, 4)).numpy())
'''),
    ('a module of the file whose forward returns a NumPy array, reduced by NumPy', '''\
class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
    def forward(self, x):
        with torch.no_grad():
            return self.fc(x).numpy()
model = Embedder()
norms = np.max(model(torch.randn(6, 4)).std(1))
'''),
    ('a setup function of the file turns grad off for good', '''\
def setup_inference(seed=0):
    torch.manual_seed(seed)
    torch.set_grad_enabled(False)
setup_inference()
net = nn.Linear(4, 2)
print(net(torch.randn(2, 4)).numpy())
'''),
    ('a setup function of the file turns grad off, then a helper converts', '''\
def no_grad_global():
    torch.set_grad_enabled(False)
def predict(model, x):
    return model(x).numpy()
model = nn.Linear(4, 3)
no_grad_global()
arr = predict(model, torch.randn(2, 4))
'''),
    ('a setup function of the file turns grad off and returns the model', '''\
def setup_inference():
    model = nn.Linear(4, 3)
    torch.set_grad_enabled(False)
    return model
model = setup_inference()
print(model(torch.randn(2, 4)).numpy())
'''),
    ('a setup function of the file turns grad off, then on again', '''\
def setup(seed=0):
    torch.set_grad_enabled(False)
    torch.manual_seed(seed)
    torch.set_grad_enabled(True)
setup()
net = nn.Linear(4, 2)
print(net(torch.randn(2, 4)).numpy())
'''),
    ('a setup function of the file may return before it turns grad off', '''\
def setup(train=True):
    if train:
        return
    torch.set_grad_enabled(False)
setup()
net = nn.Linear(4, 2)
print(net(torch.randn(2, 4)).numpy())
'''),
    ('helper makes a detached copy of its argument that does not require grad and converts it', '''\
def as_array(x):
    x = x.detach().clone().requires_grad_(False)
    return x.numpy()
arr = as_array(nn.Linear(4, 2)(torch.randn(2, 4)))
'''),
    ('decorator of the file runs the function under no_grad in a try, restoring train mode after', '''\
net = nn.Linear(4, 2)
def evaluating(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        net.eval()
        try:
            with torch.no_grad():
                out = fn(*args, **kwargs)
        finally:
            net.train()
        return out
    return wrapper
@evaluating
def predict(x):
    return net(x).numpy()
print(predict(torch.randn(2, 4)))
'''),
    ('decorator of the file whose wrapper is itself decorated no_grad', '''\
net = nn.Linear(4, 2)
def evaluating(fn):
    @functools.wraps(fn)
    @torch.no_grad()
    def wrapper(*args, **kwargs):
        net.eval()
        out = fn(*args, **kwargs)
        net.train()
        return out
    return wrapper
@evaluating
def predict(x):
    return net(x).numpy()
print(predict(torch.randn(2, 4)))
'''),
    ('decorator of the file makes a thunk under no_grad and calls it after', '''\
net = nn.Linear(4, 2)
def evaluating(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with torch.no_grad():
            thunk = lambda: fn(*args, **kwargs)
        return thunk()
    return wrapper
@evaluating
def predict(x):
    return net(x).numpy()
print(predict(torch.randn(2, 4)))
'''),
    ('decorator of the file turns grad on again inside its no_grad block', '''\
net = nn.Linear(4, 2)
def evaluating(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with torch.no_grad():
            with torch.enable_grad():
                return fn(*args, **kwargs)
    return wrapper
@evaluating
def predict(x):
    return net(x).numpy()
print(predict(torch.randn(2, 4)))
'''),
    ('an output detached by an assignment expression in a test', '''\
model = nn.Linear(4, 1)
y = model(torch.randn(3, 4))
if (y := y.detach()) is not None:
    print(y.numpy())
z = model(torch.randn(3, 4))
while (z := z.detach()) is None:
    pass
print(z.numpy())
'''),
    ('an output bound by an assignment expression in a test, not detached', '''\
model = nn.Linear(4, 1)
if (y := model(torch.randn(3, 4))) is not None:
    print(y.numpy())
'''),
    ('an embedding made from pretrained vectors, frozen by default', '''\
emb = nn.Embedding.from_pretrained(torch.randn(10, 3))
print(emb(torch.tensor([1, 2, 3])).numpy())
bag = nn.EmbeddingBag.from_pretrained(torch.randn(10, 3), True)
print(bag(torch.tensor([[1, 2]])).numpy())
'''),
    ('an embedding made from pretrained vectors, not frozen', '''\
emb = nn.Embedding.from_pretrained(torch.randn(10, 3), freeze=False)
print(emb(torch.tensor([1, 2])).numpy())
'''),
    ('an embedding made from pretrained vectors, frozen by an unknown flag', '''\
def build(freeze):
    return nn.Embedding.from_pretrained(torch.randn(10, 3), freeze=freeze)
emb = build(True)
print(emb(torch.tensor([1, 2])).numpy())
'''),
    ('the parameters of a model as one vector', '''\
from torch.nn.utils import parameters_to_vector
model = nn.Linear(4, 2)
frozen = nn.Linear(4, 2).requires_grad_(False)
print(parameters_to_vector(frozen.parameters()).numpy())
print(parameters_to_vector(model.parameters()).numpy())
'''),
    ('an averaged model keeps a copy of the trainable model', '''\
from torch.optim.swa_utils import AveragedModel
model = nn.Linear(4, 2)
ema = AveragedModel(nn.Linear(4, 2).requires_grad_(False))
print(ema(torch.randn(2, 4)).numpy())
swa = AveragedModel(model)
print(swa(torch.randn(2, 4)).numpy())
'''),
    ('a Sequential of a frozen module and a layer without parameters', '''\
enc = nn.Linear(4, 4)
enc.requires_grad_(False)
net = nn.Sequential(enc, nn.ReLU())
print(net(torch.randn(2, 4)).numpy())
'''),
    ('a Sequential of a frozen module and a trainable one', '''\
enc = nn.Linear(4, 4)
enc.requires_grad_(False)
net = nn.Sequential(enc, nn.ReLU(), nn.Linear(4, 2))
print(net(torch.randn(2, 4)).numpy())
'''),
    ('a Sequential of layers without parameters', '''\
net = nn.Sequential(nn.ReLU(), nn.Tanh())
print(net(torch.randn(2, 4)).numpy())
print(net(torch.randn(2, 4, requires_grad=True)).numpy())
'''),
    ('a NumPy reduction of what a torch function makes of an unknown value', '''\
def f(pair):
    return np.mean(torch.abs(pair[0]))
f((torch.randn(3), 1))
'''),
    ('a generator made under no_grad and iterated with grad on', '''\
def iter_preds(model, xs):
    for x in xs:
        yield model(x).numpy()
with torch.no_grad():
    gen = iter_preds(nn.Linear(4, 2), [torch.randn(2, 4)])
for p in gen:
    pass
'''),
    ('a generator made and iterated under no_grad', '''\
def iter_preds(model, xs):
    for x in xs:
        yield model(x).numpy()
model = nn.Linear(4, 2)
with torch.no_grad():
    preds = list(iter_preds(model, [torch.randn(2, 4)]))
with torch.no_grad():
    for p in iter_preds(model, [torch.randn(2, 4)]):
        print(p)
'''),
    ('a field of a model output dict that the forward computes without grad', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        return {"logits": h, "pred": h.argmax(-1), "n": 3}
out = Net()(torch.randn(2, 4))
print(out["pred"].numpy(), out["n"])
'''),
    ('the field of a model output dict that requires grad', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        return {"logits": h, "pred": h.argmax(-1)}
out = Net()(torch.randn(2, 4))
print(out["pred"].numpy())
print(out["logits"].numpy())
'''),
    ('a detached field of a NamedTuple a model returns', '''\
from typing import NamedTuple
class Output(NamedTuple):
    logits: torch.Tensor
    feats: torch.Tensor
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        return Output(h, h.detach())
o = Net()(torch.randn(2, 4))
print(o.feats.numpy())
'''),
    ('a converter that detaches a tensor and asarrays anything else, given a layer output', '''\
def to_numpy(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x)
net = nn.Linear(2, 2)
print(to_numpy(net(torch.ones(2))))
'''),
    ('a module whose only state is buffers it makes', '''\
class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.zeros(2))
        self.register_buffer("std", torch.tensor([1.0, 2.0]))
    def forward(self, x):
        return (x - self.mean) / self.std
print(Norm()(torch.ones(2)).numpy())
'''),
    ('a module whose buffer is what it is handed', '''\
class Shift(nn.Module):
    def __init__(self, shift):
        super().__init__()
        self.register_buffer("shift", shift)
    def forward(self, x):
        return x - self.shift
print(Shift(torch.zeros(2, requires_grad=True))(torch.ones(2)).numpy())
'''),
    ('a module whose buffer requires grad', '''\
class Shift(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("shift", torch.zeros(2, requires_grad=True))
    def forward(self, x):
        return x - self.shift
print(Shift()(torch.ones(2)).numpy())
'''),
    ('a module whose constructor calls its own freezing method', '''\
class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.freeze()
    def freeze(self):
        self.eval()
        for p in self.parameters():
            p.requires_grad = False
    def forward(self, x):
        return self.fc(x)
print(Enc()(torch.ones(2)).numpy())
'''),
    ('a subclass adds a layer after its base constructor froze the rest', '''\
class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.freeze()
    def freeze(self):
        for p in self.parameters():
            p.requires_grad = False
    def forward(self, x):
        return self.fc(x)
class Tuned(Enc):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(2, 2)
    def forward(self, x):
        return self.head(self.fc(x))
print(Tuned()(torch.ones(2)).numpy())
'''),
    ('constructors of plain classes that freeze what they are handed', '''\
class Probe:
    def __init__(self, backbone):
        backbone.requires_grad_(False)
class LinearProbe:
    def __init__(self, backbone, dim):
        self.backbone = backbone
        self.head = nn.Linear(dim, 2)
        for p in self.backbone.parameters():
            p.requires_grad = False
net = nn.Linear(2, 2)
Probe(net)
print(net(torch.ones(2)).numpy())
backbone = nn.Linear(4, 3)
probe = LinearProbe(backbone, 3)
print(backbone(torch.randn(2, 4)).numpy())
'''),
    ('a constructor that freezes its own head, not the backbone it is handed', '''\
class LinearProbe:
    def __init__(self, backbone, dim):
        self.backbone = backbone
        self.head = nn.Linear(dim, 2)
        self.head.requires_grad_(False)
backbone = nn.Linear(4, 3)
probe = LinearProbe(backbone, 3)
print(backbone(torch.randn(2, 4)).numpy())
'''),
    ('a function that returns a no-grad context', '''\
def ctx():
    return torch.no_grad()
def inference_ctx():
    return torch.inference_mode()
net = nn.Linear(4, 2)
w = torch.ones(2, requires_grad=True)
with ctx():
    w.numpy()
with inference_ctx():
    out = net(torch.randn(2, 4))
print(out.numpy())
'''),
    ('a function that returns a grad-enabling context, inside no_grad', '''\
def train_ctx():
    return torch.enable_grad()
net = nn.Linear(4, 2)
with torch.no_grad():
    with train_ctx():
        out = net(torch.randn(2, 4))
print(out.numpy())
'''),
    ('a context that may enable grad or turn it off', '''\
def run(train):
    net = nn.Linear(4, 2)
    with torch.enable_grad() if train else torch.no_grad():
        out = net(torch.randn(2, 4))
    return out
print(run(False).numpy())
'''),
    ('a function decorated enable_grad called under no_grad', '''\
@torch.enable_grad()
def attack(model, x):
    x = x.clone().requires_grad_(True)
    return model(x).sum()
net = nn.Linear(2, 2)
with torch.no_grad():
    loss = attack(net, torch.ones(2))
print(loss.numpy())
'''),
    ('a function decorated enable_grad, its result detached', '''\
@torch.enable_grad()
def attack(model, x):
    x = x.clone().requires_grad_(True)
    return model(x).sum().detach()
net = nn.Linear(2, 2)
with torch.no_grad():
    loss = attack(net, torch.ones(2))
print(loss.numpy())
'''),
    ('a NamedTuple a model returns, unpacked and indexed', '''\
from typing import NamedTuple
class Output(NamedTuple):
    logits: torch.Tensor
    pred: torch.Tensor
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        return Output(h, h.argmax(-1))
net = Net()
logits, pred = net(torch.randn(2, 4))
print(pred.numpy(), logits.detach().numpy())
o = net(torch.randn(2, 4))
print(o[1].numpy(), o.pred.numpy(), o[0].detach().numpy())
'''),
    ('the field of a NamedTuple a model returns that requires grad', '''\
from typing import NamedTuple
class Output(NamedTuple):
    logits: torch.Tensor
    pred: torch.Tensor
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        return Output(h, h.argmax(-1))
o = Net()(torch.randn(2, 4))
print(o.pred.numpy())
print(o.logits.numpy())
'''),
    ('the position of a NamedTuple a model returns that requires grad', '''\
from typing import NamedTuple
class Output(NamedTuple):
    logits: torch.Tensor
    pred: torch.Tensor
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        return Output(h, h.argmax(-1))
logits, pred = Net()(torch.randn(2, 4))
print(pred.numpy())
print(logits.numpy())
'''),
    ('the indices of max, topk and sort in what a model returns', '''\
from typing import NamedTuple
class Output(NamedTuple):
    logits: torch.Tensor
    pred: torch.Tensor
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        return Output(h, h.max(1)[1])
class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        _, order = h.sort(dim=1)
        return h, torch.topk(h, 2)[1], order
print(Net()(torch.randn(2, 4)).pred.numpy())
_, top, order = Top()(torch.randn(2, 4))
print(top.numpy(), order.numpy())
'''),
    ('a logger method keeps what its calls pass, another converts it', '''\
class Logger:
    def __init__(self):
        self.last = None
    def log(self, v):
        self.last = v
    def dump(self):
        return self.last.numpy()
def main():
    net = nn.Linear(2, 1)
    logger = Logger()
    for _ in range(2):
        loss = net(torch.ones(1, 2)).sum()
        loss.backward()
        logger.log(loss)
    print(logger.dump())
main()
'''),
    ('a meter method appends what its calls pass, np.mean of the list', '''\
class Meter:
    def __init__(self):
        self.vals = []
    def update(self, v):
        self.vals.append(v)
    def avg(self):
        return np.mean(self.vals)
net = nn.Linear(2, 1)
meter = Meter()
for _ in range(2):
    loss = net(torch.ones(1, 2)).sum()
    meter.update(loss)
print(meter.avg())
'''),
    ('a logger method keeps what its calls pass, detached or under no_grad', '''\
class Logger:
    def __init__(self):
        self.vals = []
        self.last = None
    def log(self, v):
        self.last = v
        self.vals.append(v)
    def dump(self):
        return self.last.numpy(), np.mean(self.vals)
net = nn.Linear(2, 1)
logger = Logger()
loss = net(torch.ones(1, 2)).sum()
logger.log(loss.detach())
with torch.no_grad():
    logger.log(net(torch.ones(1, 2)).sum())
print(logger.dump())
'''),
    ('a constructor freezes what it is handed behind its flag', '''\
class Probe(nn.Module):
    def __init__(self, backbone, freeze=False):
        super().__init__()
        self.backbone = backbone
        if freeze:
            for p in self.backbone.parameters():
                p.requires_grad = False
class Holder:
    def __init__(self, net, freeze=True):
        self.net = net
        if freeze:
            self.net.requires_grad_(False)
a = nn.Linear(4, 4)
probe = Probe(a, freeze=True)
b = nn.Linear(4, 4)
Holder(b)
print(a(torch.ones(1, 4)).numpy(), b(torch.ones(1, 4)).numpy())
'''),
    ('a constructor freezes what it is handed behind its flag, left false', '''\
class Holder:
    def __init__(self, net, freeze=True):
        self.net = net
        if freeze:
            self.net.requires_grad_(False)
a = nn.Linear(4, 4)
Holder(a, False)
print(a(torch.ones(1, 4)).numpy())
'''),
    ('a model returns the values and indices of max, sort or topk whole', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        return h.max(1)
class Sorter(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        return self.fc(x).sort(dim=1)
v, i = Net()(torch.randn(2, 4))
s = Sorter()(torch.randn(2, 4))
print(i.numpy(), s.indices.numpy(), Net()(torch.randn(2, 4)).indices.numpy())
'''),
    ('the values of max a model returns whole', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        return h.max(1)
v, i = Net()(torch.randn(2, 4))
print(v.numpy())
'''),
    ('a kept parameter replaced before another method converts it', '''\
class Logger:
    def __init__(self):
        self.last = None
    def log(self, v):
        self.last = v
    def reset(self):
        self.last = torch.zeros(())
    def dump(self):
        return self.last.numpy()
class Meter:
    def __init__(self):
        self.vals = []
    def update(self, v):
        self.vals.append(v)
    def clear(self):
        self.vals = []
    def avg(self):
        return np.mean(self.vals)
net = nn.Linear(2, 1)
loss = net(torch.ones(1, 2)).sum()
logger, meter = Logger(), Meter()
logger.log(loss)
logger.reset()
meter.update(loss)
meter.clear()
print(logger.dump(), meter.avg())
'''),
    ('a kept parameter of two instances, or kept under a condition, or set from outside', '''\
class Logger:
    def __init__(self):
        self.last = torch.zeros(())
    def log(self, v):
        self.last = v
    def dump(self):
        return self.last.numpy()
class Guarded:
    def __init__(self):
        self.last = torch.zeros(())
    def log(self, v):
        if not v.requires_grad:
            self.last = v
    def dump(self):
        return self.last.numpy()
class Held:
    def __init__(self):
        self.value = None
    def keep(self, v):
        self.value = v
    def show(self):
        return self.value.numpy()
net = nn.Linear(2, 1)
loss = net(torch.ones(1, 2)).sum()
a, b = Logger(), Logger()
a.log(loss)
b.log(loss.detach())
g = Guarded()
g.log(loss)
h = Held()
h.keep(loss)
h.value = h.value.detach()
print(b.dump(), g.dump(), h.show())
'''),
    ('functions called after grad is switched off by a statement', '''\
net = nn.Linear(2, 2)
def evaluate():
    return net(torch.ones(2)).numpy()
def main():
    print(evaluate())
def predict():
    return net(torch.ones(2)).numpy()
torch.set_grad_enabled(False)
print(predict())
if __name__ == "__main__":
    main()
'''),
    ('a function called after grad is switched off and on again', '''\
net = nn.Linear(2, 2)
def evaluate():
    return net(torch.ones(2)).numpy()
torch.set_grad_enabled(False)
torch.set_grad_enabled(True)
print(evaluate())
'''),
    ('the indices of a pair a model returns by a negative index, in a tuple, or of kthvalue', '''\
class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        return self.fc(x).topk(2, dim=1)
class Both(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        return h, h.max(1)
class Kth(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        return torch.kthvalue(self.fc(x), 2, dim=1)
out = Top()(torch.randn(2, 4))
h, (v, i) = Both()(torch.randn(2, 4))
k = Kth()(torch.randn(2, 4))
print(out[-1].numpy(), i.numpy(), k.indices.numpy())
'''),
    ('functions called after grad is switched off by keyword', '''\
net = nn.Linear(2, 2)
def infer():
    return net(torch.ones(2)).numpy()
torch.set_grad_enabled(mode=False)
print(infer(), net(torch.ones(2)).numpy())
'''),
    ('a kept parameter converted by a subclass that detaches it', '''\
class Logger:
    def __init__(self):
        self.last = None
    def log(self, v):
        self.last = v
    def dump(self):
        return self.last.numpy()
class Safe(Logger):
    def dump(self):
        return self.last.detach().numpy()
net = nn.Linear(2, 1)
logger = Safe()
logger.log(net(torch.ones(1, 2)).sum())
print(logger.dump())
'''),
    ('context manager of the file turns grad off', '''\
import contextlib
@contextlib.contextmanager
def evaluating(model):
    model.eval()
    try:
        with torch.no_grad():
            yield model
    finally:
        model.train()
net = nn.Linear(4, 2)
with evaluating(net):
    out = net(torch.randn(1, 4))
print(out.numpy())
'''),
    ('context manager of the file yields with grad on', '''\
import contextlib
@contextlib.contextmanager
def evaluating(model):
    model.eval()
    yield model
    model.train()
net = nn.Linear(4, 2)
with evaluating(net):
    out = net(torch.randn(1, 4))
print(out.numpy())
'''),
    ('context manager class whose enter turns grad off', '''\
class NoGrad:
    def __enter__(self):
        self.prev = torch.is_grad_enabled()
        torch.set_grad_enabled(False)
    def __exit__(self, *exc):
        torch.set_grad_enabled(self.prev)
net = nn.Linear(4, 2)
with NoGrad():
    out = net(torch.randn(1, 4))
    print(out.numpy())
'''),
    ('builder freezes the weight only', '''\
def build():
    net = nn.Linear(3, 2)
    net.weight.requires_grad_(False)
    return net
net = build()
w = net.weight.numpy()
b = net.bias.numpy()
'''),
    ('builder freezes the weight by its flag', '''\
def build():
    net = nn.Linear(3, 2)
    net.weight.requires_grad = False
    return net
net = build()
w = net.weight.numpy()
'''),
    ('decorator of the file runs the function under no_grad', '''\
def inference(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with torch.no_grad():
            return fn(*args, **kwargs)
    return wrapper
net = nn.Linear(4, 2)
@inference
def predict(x):
    return net(x).numpy()
print(predict(torch.randn(2, 4)))
'''),
    ('decorator of the file sets eval mode, then runs the function under no_grad', '''\
def evaluation_mode(fn):
    @functools.wraps(fn)
    def wrapper(model, *args, **kwargs):
        was_training = model.training
        model.eval()
        with torch.no_grad():
            out = fn(model, *args, **kwargs)
        model.train(was_training)
        return out
    return wrapper
@evaluation_mode
def predict(model, x):
    return model(x).numpy()
print(predict(nn.Linear(4, 2), torch.randn(2, 4)))
'''),
    ('decorator of the file calls the function under no_grad and once more outside it', '''\
def twice(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with torch.no_grad():
            fn(*args, **kwargs)
        return fn(*args, **kwargs)
    return wrapper
net = nn.Linear(4, 2)
@twice
def predict(x):
    return net(x).numpy()
print(predict(torch.randn(2, 4)))
'''),
    ('decorator of the file passes the call on', '''\
def timed(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper
net = nn.Linear(4, 2)
@timed
def predict(x):
    return net(x).numpy()
print(predict(torch.randn(2, 4)))
'''),
    ('subclass inherits a no_grad forward', '''\
class FrozenBase(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    @torch.no_grad()
    def forward(self, x):
        return self.fc(x)
class Mid(FrozenBase):
    def extra(self):
        return 1
class Scorer(Mid):
    pass
print(Scorer()(torch.randn(3, 4)).numpy())
'''),
    ('subclass overrides a no_grad forward', '''\
class FrozenBase(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    @torch.no_grad()
    def forward(self, x):
        return self.fc(x)
class Live(FrozenBase):
    def forward(self, x):
        return self.fc(x)
print(Live()(torch.randn(3, 4)).numpy())
'''),
    ('helper returns model output', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
def predict(model, x):
    return model(x)
model = Net()
out = predict(model, torch.randn(4, 3))
arr = out.numpy()
'''),
    ('method returns submodule output', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
    def predict(self, x):
        return self(x)
arr = Net().predict(torch.randn(4, 3)).numpy()
'''),
    ('method under no_grad decorator', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
    @torch.no_grad()
    def predict(self, x):
        return self(x)
arr = Net().predict(torch.randn(4, 3)).numpy()
'''),
    ('inference_mode decorator', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
@torch.inference_mode()
def predict(m, x):
    return m(x)
arr = predict(Net(), torch.randn(4, 3)).numpy()
'''),
    ('eval() does not disable grad', '''\
model = nn.Linear(3, 2)
model.eval()
arr = model(torch.randn(4, 3)).numpy()
'''),
    ('frozen params loop', '''\
model = nn.Linear(3, 2)
for p in model.parameters():
    p.requires_grad = False
arr = model(torch.randn(4, 3)).numpy()
'''),
    ('frozen requires_grad_(False)', '''\
model = nn.Linear(3, 2).requires_grad_(False)
arr = model(torch.randn(4, 3)).numpy()
'''),
    ('attribute stored in __init__ from output', '''\
class Holder:
    def __init__(self, model, x):
        self.out = model(x)
    def arr(self):
        return self.out.numpy()
Holder(nn.Linear(3, 2), torch.randn(4, 3)).arr()
'''),
    ('dict of outputs', '''\
model = nn.Linear(3, 2)
out = {"logits": model(torch.randn(4, 3))}
arr = out["logits"].numpy()
'''),
    ('tuple return unpack', '''\
model = nn.Linear(3, 2)
def step(x):
    y = model(x)
    loss = y.pow(2).mean()
    return loss, y
loss, logits = step(torch.randn(4, 3))
arr = logits.numpy()
'''),
    ('tuple return unpack detached', '''\
model = nn.Linear(3, 2)
def step(x):
    y = model(x)
    loss = y.pow(2).mean()
    return loss, y.detach()
loss, logits = step(torch.randn(4, 3))
arr = logits.numpy()
'''),
    ('loss.item is fine, loss numpy is not', '''\
model = nn.Linear(3, 2)
loss = nn.functional.mse_loss(model(torch.randn(4, 3)), torch.zeros(4, 2))
arr = loss.numpy()
'''),
    ('criterion module', '''\
model = nn.Linear(3, 2)
criterion = nn.MSELoss()
loss = criterion(model(torch.randn(4, 3)), torch.zeros(4, 2))
arr = loss.numpy()
'''),
    ('set_grad_enabled(False) module-level', '''\
torch.set_grad_enabled(False)
model = nn.Linear(3, 2)
arr = model(torch.randn(4, 3)).numpy()
torch.set_grad_enabled(True)
'''),
    ('set_grad_enabled(False) context', '''\
model = nn.Linear(3, 2)
with torch.set_grad_enabled(False):
    arr = model(torch.randn(4, 3)).numpy()
'''),
    ('generator yields outputs', '''\
model = nn.Linear(3, 2)
def outputs(n):
    for _ in range(n):
        yield model(torch.randn(4, 3))
for o in outputs(2):
    arr = o.numpy()
'''),
    ('list comprehension outputs', '''\
model = nn.Linear(3, 2)
outs = [model(torch.randn(4, 3)) for _ in range(2)]
arr = np.array([o.numpy() for o in outs])
'''),
    ('partial', '''\
model = nn.Linear(3, 2)
run = functools.partial(model, torch.randn(4, 3))
arr = run().numpy()
'''),
    ('partial of a function', '''\
model = nn.Linear(3, 2)
def predict(m, x):
    return m(x)
run = functools.partial(predict, model)
arr = run(torch.randn(4, 3)).numpy()
'''),
    ('partial of a no_grad function', '''\
model = nn.Linear(3, 2)
@torch.no_grad()
def predict(m, x):
    return m(x)
run = functools.partial(predict, model)
arr = run(torch.randn(4, 3)).numpy()
'''),
    ('lambda', '''\
model = nn.Linear(3, 2)
f = lambda x: model(x)
arr = f(torch.randn(4, 3)).numpy()
'''),
    ('lambda detaches', '''\
model = nn.Linear(3, 2)
f = lambda x: model(x).detach()
arr = f(torch.randn(4, 3)).numpy()
'''),
    ('lambda of a local model in a function', '''\
model = nn.Linear(3, 2).requires_grad_(False)
def main():
    model = nn.Linear(3, 2)
    f = lambda x: model(x)
    return f(torch.randn(4, 3)).numpy()
main()
'''),
    ('lambda passed its model', '''\
run = lambda m, x: torch.sigmoid(m(x))
arr = run(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
'''),
    ('nested def sees the local frozen model, not the global', '''\
model = nn.Linear(3, 2)
def main():
    model = nn.Linear(3, 2).requires_grad_(False)
    def f(x):
        return model(x)
    return f(torch.randn(4, 3)).numpy()
main()
'''),
    ('nested def sees the local model, not the global frozen one', '''\
model = nn.Linear(3, 2).requires_grad_(False)
def main():
    model = nn.Linear(3, 2)
    def f(x):
        return model(x)
    return f(torch.randn(4, 3)).numpy()
main()
'''),
    ('nested def sees the local zeros, not the global output', '''\
out = nn.Linear(3, 2)(torch.randn(4, 3))
def main():
    out = torch.zeros(2)
    def f():
        return out
    return f().numpy()
main()
'''),
    ('nested def sees the local at the call, not after', '''\
def main():
    net = nn.Linear(3, 2)
    def f(x):
        return net(x)
    y = f(torch.randn(4, 3)).numpy()
    net = None
    return y
main()
'''),
    ('nested def sees the local detached at the call', '''\
def main():
    t = nn.Linear(3, 2)(torch.randn(4, 3))
    def f():
        return t
    t = t.detach()
    return f().numpy()
main()
'''),
    ('trainer moves its model to a device', '''\
class Trainer:
    def __init__(self, model, device):
        self.model = model.to(device)
    def predict(self, x):
        return self.model(x)
t = Trainer(nn.Linear(3, 2), "cpu")
arr = t.predict(torch.randn(4, 3)).numpy()
'''),
    ('inherited constructor moves the model', '''\
class Base:
    def __init__(self, model, device):
        self.model = model.to(device)
class Trainer(Base):
    def predict(self, x):
        return self.model(x)
t = Trainer(nn.Linear(3, 2), "cpu")
arr = t.predict(torch.randn(4, 3)).numpy()
'''),
    ('a conversion to long is no move', '''\
class Holder:
    def __init__(self, y):
        self.y = y.to(torch.long)
    def get(self):
        return self.y
w = torch.ones(3, requires_grad=True)
arr = Holder(w).get().numpy()
'''),
    ('dataclass holds a model', '''\
from dataclasses import dataclass
@dataclass
class Setup:
    model: nn.Module
    lr: float = 0.1
s = Setup(nn.Linear(3, 2))
arr = s.model(torch.randn(4, 3)).numpy()
'''),
    ('dataclass holds an output', '''\
from dataclasses import dataclass
@dataclass
class Out:
    logits: torch.Tensor
    loss: float = 0.0
o = Out(nn.Linear(3, 2)(torch.randn(4, 3)))
arr = o.logits.numpy()
'''),
    ('dataclass holds a detached output', '''\
from dataclasses import dataclass
@dataclass
class Out:
    logits: torch.Tensor
o = Out(logits=nn.Linear(3, 2)(torch.randn(4, 3)).detach())
arr = o.logits.numpy()
'''),
    ('dataclass second field by position', '''\
from dataclasses import dataclass, field
@dataclass
class Out:
    n: int
    logits: torch.Tensor = field(default=None)
o = Out(1, nn.Linear(3, 2)(torch.randn(4, 3)))
arr = o.logits.numpy()
'''),
    ('dataclass field its method detaches', '''\
from dataclasses import dataclass
@dataclass
class Out:
    logits: torch.Tensor
    def freeze(self):
        self.logits = self.logits.detach()
o = Out(nn.Linear(3, 2)(torch.randn(4, 3)))
o.freeze()
arr = o.logits.numpy()
'''),
    ('NamedTuple holds an output', '''\
from typing import NamedTuple
class Out(NamedTuple):
    logits: torch.Tensor
    n: int
o = Out(nn.Linear(3, 2)(torch.randn(4, 3)), 1)
arr = o.logits.numpy()
'''),
    ('property of a plain trainer returns its model', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    @property
    def head(self):
        return self.model
t = Trainer(nn.Linear(3, 2))
arr = t.head(torch.randn(4, 3)).numpy()
'''),
    ('lambda computing output called only under no_grad', '''\
model = nn.Linear(3, 2)
pred = lambda x: model(x).numpy()
with torch.no_grad():
    arr = pred(torch.randn(4, 3))
'''),
    ('lambda to_np called with an output', '''\
model = nn.Linear(3, 2)
to_np = lambda t: t.cpu().numpy()
arr = to_np(model(torch.randn(4, 3)))
'''),
    ('lambda to_np called with a detached output', '''\
model = nn.Linear(3, 2)
to_np = lambda t: t.cpu().numpy()
arr = to_np(model(torch.randn(4, 3)).detach())
'''),
    ('super().forward', '''\
class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
class Child(Base):
    def forward(self, x):
        return super().forward(x) * 2
arr = Child()(torch.randn(4, 3)).numpy()
'''),
    ('sequential of modules', '''\
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
arr = model(torch.randn(4, 3)).numpy()
'''),
    ('ModuleList iteration', '''\
layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(2)])
x = torch.randn(4, 3)
for layer in layers:
    x = layer(x)
arr = x.numpy()
'''),
    ('param itself numpy', '''\
model = nn.Linear(3, 2)
arr = model.weight.numpy()
'''),
    ('param data numpy ok', '''\
model = nn.Linear(3, 2)
arr = model.weight.data.numpy()
'''),
    ('parameters loop numpy', '''\
model = nn.Linear(3, 2)
for p in model.parameters():
    arr = p.numpy()
'''),
    ('named_parameters loop numpy', '''\
model = nn.Linear(3, 2)
for n, p in model.named_parameters():
    arr = p.numpy()
'''),
    ('state_dict values numpy ok', '''\
model = nn.Linear(3, 2)
for k, v in model.state_dict().items():
    arr = v.numpy()
'''),
    ('state_dict keep_vars', '''\
model = nn.Linear(3, 2)
for k, v in model.state_dict(keep_vars=True).items():
    arr = v.numpy()
'''),
    ('grad numpy ok', '''\
model = nn.Linear(3, 2)
model(torch.randn(4, 3)).sum().backward()
arr = model.weight.grad.numpy()
'''),
    ('tensor requires_grad=True user', '''\
w = torch.randn(3, requires_grad=True)
arr = (w * 2).numpy()
'''),
    ('detach later', '''\
model = nn.Linear(3, 2)
y = model(torch.randn(4, 3))
y = y.detach()
arr = y.numpy()
'''),
    ('branch detach', '''\
model = nn.Linear(3, 2)
y = model(torch.randn(4, 3))
if y.shape[0] > 10:
    y = y.detach()
arr = y.numpy()
'''),
    ('np.asarray output', '''\
model = nn.Linear(3, 2)
arr = np.asarray(model(torch.randn(4, 3)))
'''),
    ('np.array output', '''\
model = nn.Linear(3, 2)
arr = np.array(model(torch.randn(4, 3)))
'''),
    ('tolist is fine', '''\
model = nn.Linear(3, 2)
arr = np.array(model(torch.randn(4, 3)).tolist())
'''),
    ('class attr model called in other method', '''\
class Trainer:
    def __init__(self):
        self.model = nn.Linear(3, 2)
    def predict(self, x):
        return self.model(x)
    def report(self, x):
        return self.predict(x).numpy()
Trainer().report(torch.randn(4, 3))
'''),
    ('class attr model in other method under no_grad', '''\
class Trainer:
    def __init__(self):
        self.model = nn.Linear(3, 2)
    def predict(self, x):
        return self.model(x)
    def report(self, x):
        with torch.no_grad():
            return self.predict(x).numpy()
Trainer().report(torch.randn(4, 3))
'''),
    ('method called only under no_grad', '''\
class Trainer:
    def __init__(self):
        self.model = nn.Linear(3, 2)
    def predict(self, x):
        return self.model(x).numpy()
    def report(self, x):
        with torch.no_grad():
            return self.predict(x)
Trainer().report(torch.randn(4, 3))
'''),
    ('function param tensor from caller', '''\
model = nn.Linear(3, 2)
def to_np(t):
    return t.numpy()
to_np(model(torch.randn(4, 3)))
'''),
    ('function param tensor from caller detached', '''\
model = nn.Linear(3, 2)
def to_np(t):
    return t.numpy()
to_np(model(torch.randn(4, 3)).detach())
'''),
    ('eval loop typical', '''\
model = nn.Linear(3, 2)
preds = []
for _ in range(2):
    x = torch.randn(4, 3)
    preds.append(model(x))
arr = torch.cat(preds).numpy()
'''),
    ('eval loop typical under no grad', '''\
model = nn.Linear(3, 2)
preds = []
with torch.no_grad():
    for _ in range(2):
        preds.append(model(torch.randn(4, 3)))
arr = torch.cat(preds).numpy()
'''),
    ('functional call', '''\
model = nn.Linear(3, 2)
arr = torch.nn.functional.linear(torch.randn(4, 3), model.weight).numpy()
'''),
    ('embedding output', '''\
emb = nn.Embedding(10, 3)
arr = emb(torch.tensor([1, 2])).numpy()
'''),
    ('conv+pool output', '''\
conv = nn.Conv2d(1, 2, 3)
arr = nn.functional.max_pool2d(conv(torch.randn(1, 1, 5, 5)), 2).numpy()
'''),
    ('argmax of output ok', '''\
model = nn.Linear(3, 2)
arr = model(torch.randn(4, 3)).argmax(-1).numpy()
'''),
    ('softmax of output', '''\
model = nn.Linear(3, 2)
arr = torch.softmax(model(torch.randn(4, 3)), -1).numpy()
'''),
    ('sd subscript', '''\
model = nn.Linear(3, 2)
sd = model.state_dict()
arr = sd["weight"].numpy()
'''),
    ('direct subscript', '''\
model = nn.Linear(3, 2)
arr = model.state_dict()["bias"].numpy()
'''),
    ('values asarray', '''\
model = nn.Linear(3, 2)
arrs = [np.asarray(v) for v in model.state_dict().values()]
'''),
    ('dict comp', '''\
model = nn.Linear(3, 2)
arrs = {k: v.numpy() for k, v in model.state_dict().items()}
'''),
    ('custom class overrides state_dict', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def state_dict(self, *a, **k):
        return {"w": self.fc.weight}
arr = Net().state_dict()["w"].numpy()
'''),
    ('custom plain class', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
arr = Net().state_dict()["fc.weight"].numpy()
'''),
    ('store output into sd', '''\
model = nn.Linear(3, 2)
sd = model.state_dict()
sd["out"] = model(torch.randn(4, 3))
arr = sd["out"].numpy()
'''),
    ('get', '''\
model = nn.Linear(3, 2)
arr = model.state_dict().get("weight").numpy()
'''),
    ('keep_vars False explicit', '''\
model = nn.Linear(3, 2)
arr = model.state_dict(keep_vars=False)["weight"].numpy()
'''),
    ('sd then model cuda? (cpu here) then values', '''\
model = nn.Linear(3, 2)
sd = model.state_dict()
for k in sd:
    arr = sd[k].numpy()
'''),
    ('store output into sd read other key', '''\
model = nn.Linear(3, 2)
sd = model.state_dict()
sd["out"] = model(torch.randn(4, 3))
arr = sd["weight"].numpy()
'''),
    ('list store analog', '''\
model = nn.Linear(3, 2)
xs = [torch.zeros(2)]
xs.append(model(torch.randn(4, 3)))
arr = xs[0].numpy()
'''),
    ('list analog 2', '''\
model = nn.Linear(3, 2)
xs = [torch.zeros(2), model(torch.randn(4, 3))]
arr = xs[0].numpy()
'''),
    ('getitem by key mixed', '''\
class Out:
    def __init__(self, logits, labels):
        self.logits = logits
        self.labels = labels
    def __getitem__(self, k):
        if k == "logits":
            return self.logits
        return self.labels
m = nn.Linear(3, 2)
o = Out(m(torch.randn(4, 3)), torch.zeros(4))
arr = o["labels"].numpy()
'''),
    ('getitem returns output', '''\
class Cache:
    def __init__(self):
        self.m = nn.Linear(3, 2)
    def __getitem__(self, i):
        return self.m(torch.randn(4, 3))
arr = Cache()[0].numpy()
'''),
    ('dict of outputs mixed keys', '''\
model = nn.Linear(3, 2)
x = torch.randn(4, 3)
out = {"logits": model(x), "labels": torch.zeros(4)}
arr = out["labels"].numpy()
'''),
    ('dict of outputs mixed keys logits', '''\
model = nn.Linear(3, 2)
x = torch.randn(4, 3)
out = {"logits": model(x), "labels": torch.zeros(4), "loss": 0.5}
arr = out["logits"].numpy()
'''),
    ('function returns dict', '''\
model = nn.Linear(3, 2)
def step(x):
    y = model(x)
    return {"loss": y.pow(2).mean().item(), "pred": y}
res = step(torch.randn(4, 3))
arr = res["pred"].numpy()
'''),
    ('function returns dict detached', '''\
model = nn.Linear(3, 2)
def step(x):
    y = model(x)
    return {"loss": y.pow(2).mean().item(), "pred": y.detach()}
res = step(torch.randn(4, 3))
arr = res["pred"].numpy()
'''),
    ('dict store then read', '''\
model = nn.Linear(3, 2)
res = {}
res["pred"] = model(torch.randn(4, 3))
arr = res["pred"].numpy()
'''),
    ('dict store detached overwrite', '''\
model = nn.Linear(3, 2)
res = {"pred": model(torch.randn(4, 3))}
res["pred"] = res["pred"].detach()
arr = res["pred"].numpy()
'''),
    ('dict update detached', '''\
model = nn.Linear(3, 2)
res = {"pred": model(torch.randn(4, 3))}
res.update(pred=res["pred"].detach())
arr = res["pred"].numpy()
'''),
    ('dict comp of params', '''\
model = nn.Linear(3, 2)
ps = {n: p for n, p in model.named_parameters()}
arr = ps["weight"].numpy()
'''),
    ('dict comp detached', '''\
model = nn.Linear(3, 2)
ps = {n: p.detach() for n, p in model.named_parameters()}
arr = ps["weight"].numpy()
'''),
    ('dict passed to function', '''\
model = nn.Linear(3, 2)
def show(batch):
    return batch["pred"].numpy()
show({"pred": model(torch.randn(4, 3)), "y": torch.zeros(4)})
'''),
    ('dict passed to function no grad value', '''\
model = nn.Linear(3, 2)
def show(batch):
    return batch["y"].numpy()
show({"pred": model(torch.randn(4, 3)), "y": torch.zeros(4)})
'''),
    ('loop dict store', '''\
model = nn.Linear(3, 2)
res = {}
for k in ["a", "b"]:
    res[k] = model(torch.randn(4, 3))
arr = res["a"].numpy()
'''),
    ('double star merge', '''\
model = nn.Linear(3, 2)
base = {"y": torch.zeros(4)}
res = {**base, "pred": model(torch.randn(4, 3))}
arr = res["y"].numpy()
'''),
    ('get', '''\
model = nn.Linear(3, 2)
res = {"pred": model(torch.randn(4, 3))}
arr = res.get("pred").numpy()
'''),
    ('values loop', '''\
model = nn.Linear(3, 2)
res = {"pred": model(torch.randn(4, 3)), "y": torch.zeros(4)}
arrs = [v.numpy() for v in res.values()]
'''),
    ('dict passed to mutating function', '''\
model = nn.Linear(3, 2)
def detach_all(d):
    for k in d:
        d[k] = d[k].detach()
res = {"pred": model(torch.randn(4, 3))}
detach_all(res)
arr = res["pred"].numpy()
'''),
    ('property returns submodule', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 2)])
    @property
    def head(self):
        return self.layers[-1]
arr = Net().head(torch.randn(4, 3)).numpy()
'''),
    ('factory returns local', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
    @classmethod
    def build(cls):
        m = cls()
        return m
arr = Net.build()(torch.randn(4, 3)).numpy()
'''),
    ('function returns model', '''\
def make_model():
    model = nn.Sequential(nn.Linear(3, 2))
    return model
arr = make_model()(torch.randn(4, 3)).numpy()
'''),
    ('function returns model eval no_grad', '''\
def make_model():
    model = nn.Sequential(nn.Linear(3, 2))
    model.eval()
    return model
m = make_model()
with torch.no_grad():
    arr = m(torch.randn(4, 3)).numpy()
'''),
    ('property returns tensor output', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.x = torch.randn(4, 3)
    @property
    def out(self):
        return self.fc(self.x)
arr = Net().out.numpy()
'''),
    ('property returns parameter', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    @property
    def weight(self):
        return self.fc.weight
arr = Net().weight.numpy()
'''),
    ('property submodule of frozen net', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 2)])
    @property
    def head(self):
        return self.layers[-1]
net = Net().requires_grad_(False)
arr = net.head(torch.randn(4, 3)).numpy()
'''),
    ('property output detached', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.x = torch.randn(4, 3)
    @property
    def out(self):
        return self.fc(self.x).detach()
arr = Net().out.numpy()
'''),
    ('property of plain object', '''\
class Result:
    def __init__(self, logits):
        self._logits = logits
    @property
    def probs(self):
        return self._logits.softmax(-1)
m = nn.Linear(3, 2)
arr = Result(m(torch.randn(4, 3))).probs.numpy()
'''),
    ('get by key mixed', '''\
model = nn.Linear(3, 2)
res = {"pred": model(torch.randn(4, 3)), "y": torch.zeros(4)}
arr = res.get("y").numpy()
'''),
    ('dict in loop overwritten detached', '''\
model = nn.Linear(3, 2)
out = {}
for i in range(2):
    out["pred"] = model(torch.randn(4, 3))
    out["pred"] = out["pred"].detach()
arr = out["pred"].numpy()
'''),
    ('dict branch detach', '''\
model = nn.Linear(3, 2)
out = {"pred": model(torch.randn(4, 3))}
if out["pred"].shape[0] > 10:
    out = {"pred": out["pred"].detach()}
arr = out["pred"].numpy()
'''),
    ('dict comprehension detach values', '''\
model = nn.Linear(3, 2)
out = {"pred": model(torch.randn(4, 3))}
out = {k: v.detach() for k, v in out.items()}
arr = out["pred"].numpy()
'''),
    ('dict passed to method that detaches', '''\
model = nn.Linear(3, 2)
class Logger:
    def detach_all(self, d):
        for k in list(d):
            d[k] = d[k].detach()
log = Logger()
out = {"pred": model(torch.randn(4, 3))}
log.detach_all(out)
arr = out["pred"].numpy()
'''),
    ('nested dict', '''\
model = nn.Linear(3, 2)
out = {"a": {"pred": model(torch.randn(4, 3))}}
arr = out["a"]["pred"].numpy()
'''),
    ('nested dict detached inner', '''\
model = nn.Linear(3, 2)
out = {"a": {"pred": model(torch.randn(4, 3)).detach()}}
arr = out["a"]["pred"].numpy()
'''),
    ('dict under no_grad', '''\
model = nn.Linear(3, 2)
with torch.no_grad():
    out = {"pred": model(torch.randn(4, 3))}
arr = out["pred"].numpy()
'''),
    ('dict with item loss', '''\
model = nn.Linear(3, 2)
out = {"loss": model(torch.randn(4, 3)).sum()}
val = out["loss"].item()
arr = np.array([val])
'''),
    ('json-like config dict tensor', '''\
cfg = {"lr": 0.1, "w": torch.ones(3)}
arr = cfg["w"].numpy()
'''),
    ('dict key variable', '''\
model = nn.Linear(3, 2)
out = {"pred": model(torch.randn(4, 3)), "y": torch.zeros(4)}
k = "y"
arr = out[k].numpy()
'''),
    ('property cached', '''\
import functools as ft
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    @ft.cached_property
    def probe(self):
        return self.fc(torch.randn(4, 3)).detach()
arr = Net().probe.numpy()
'''),
    ('getitem of module class', '''\
class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3)])
    def __getitem__(self, i):
        return self.layers[i]
arr = Stack()[0].weight.detach().numpy()
'''),
    ('dict alias store', '''\
model = nn.Linear(3, 2)
out = {"pred": model(torch.randn(4, 3))}
alias = out
alias["pred"] = alias["pred"].detach()
arr = out["pred"].numpy()
'''),
    ('list alias append', '''\
model = nn.Linear(3, 2)
preds = []
alias = preds
alias.append(model(torch.randn(4, 3)))
arr = preds[0].numpy()
'''),
    ('dict alias update', '''\
model = nn.Linear(3, 2)
out = {"pred": model(torch.randn(4, 3))}
alias = out
alias.update(pred=out["pred"].detach())
arr = out["pred"].numpy()
'''),
    ('dict alias rebound then store', '''\
model = nn.Linear(3, 2)
out = {"pred": model(torch.randn(4, 3))}
alias = out
alias = {"pred": torch.zeros(2)}
alias["pred"] = torch.zeros(3)
arr = out["pred"].numpy()
'''),
    ('chained assignment', '''\
model = nn.Linear(3, 2)
a = b = {}
a["pred"] = model(torch.randn(4, 3))
arr = b["pred"].numpy()
'''),
    ('trainer freeze after construct, t.model(x)', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
m = nn.Linear(2, 2)
t = Trainer(m)
m.requires_grad_(False)
print(t.model(torch.ones(1, 2)).numpy())
'''),
    ('trainer freeze after construct, t.evaluate(x)', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
m = nn.Linear(2, 2)
t = Trainer(m)
m.requires_grad_(False)
print(t.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('trainer freeze param loop', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
m = nn.Linear(2, 2)
t = Trainer(m)
for p in m.parameters():
    p.requires_grad = False
print(t.model(torch.ones(1, 2)).numpy())
'''),
    ('trainer in function', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
def main():
    m = nn.Linear(2, 2)
    t = Trainer(m)
    m.requires_grad_(False)
    print(t.evaluate(torch.ones(1, 2)).numpy())
main()
'''),
    ('trainer not frozen raises', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
m = nn.Linear(2, 2)
t = Trainer(m)
print(t.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('two instances, frozen one used', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
a = nn.Linear(2, 2)
b = nn.Linear(2, 2)
b.requires_grad_(False)
ta = Trainer(a)
tb = Trainer(b)
print(tb.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('two instances, live one used', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
a = nn.Linear(2, 2)
b = nn.Linear(2, 2)
b.requires_grad_(False)
ta = Trainer(a)
tb = Trainer(b)
print(ta.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('reassigned attr after construction', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
a = nn.Linear(2, 2)
a.requires_grad_(False)
t = Trainer(a)
t.model = nn.Linear(2, 2)
print(t.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('keyword construction, helper method chain', '''\
class Trainer:
    def __init__(self, lr, model=None):
        self.lr = lr
        self.model = model
    def _fwd(self, x):
        return self.model(x)
    def evaluate(self, x):
        return self._fwd(x) * 2
m = nn.Linear(2, 2)
t = Trainer(0.1, model=m)
for p in m.parameters():
    p.requires_grad_(False)
print(t.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('inherited constructor', '''\
class Base:
    def __init__(self, model):
        self.model = model
class Trainer(Base):
    def evaluate(self, x):
        return self.model(x)
m = nn.Linear(2, 2)
t = Trainer(m)
m.requires_grad_(False)
print(t.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('module class wraps, frozen later', '''\
class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
    def forward(self, x):
        return self.inner(x)
    def predict(self, x):
        return self(x)
m = nn.Linear(2, 2)
w = Wrap(m)
m.requires_grad_(False)
print(w.predict(torch.ones(1, 2)).numpy())
'''),
    ('module class wraps, frozen later, direct call', '''\
class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
    def forward(self, x):
        return self.inner(x)
m = nn.Linear(2, 2)
w = Wrap(m)
m.requires_grad_(False)
print(w(torch.ones(1, 2)).numpy())
'''),
    ('thawed later raises', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
m = nn.Linear(2, 2)
m.requires_grad_(False)
t = Trainer(m)
m.requires_grad_(True)
print(t.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('moved attr', '''\
class Trainer:
    def __init__(self, model, device):
        self.model = model.to(device)
    def evaluate(self, x):
        return self.model(x)
m = nn.Linear(2, 2)
t = Trainer(m, "cpu")
m.requires_grad_(False)
print(t.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('method modifies attr elsewhere', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def unfreeze(self):
        self.model.requires_grad_(True)
    def evaluate(self, x):
        return self.model(x)
m = nn.Linear(2, 2)
t = Trainer(m)
m.requires_grad_(False)
t.unfreeze()
print(t.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('frozen in loop of instances', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
ts = []
for i in range(2):
    m = nn.Linear(2, 2)
    ts.append(Trainer(m))
    m.requires_grad_(False)
t = Trainer(nn.Linear(2, 2))
print(t.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('wrap frozen before', '''\
class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
    def forward(self, x):
        return self.inner(x)
m = nn.Linear(2, 2)
m.requires_grad_(False)
w = Wrap(m)
print(w(torch.ones(1, 2)).numpy())
'''),
    ('wrap frozen before two sites', '''\
class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
    def forward(self, x):
        return self.inner(x)
m = nn.Linear(2, 2)
m.requires_grad_(False)
w = Wrap(m)
w2 = Wrap(nn.Linear(2, 2))
print(w(torch.ones(1, 2)).numpy())
'''),
    ('wrap frozen before, with own layer', '''\
class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.head = nn.Linear(2, 2)
    def forward(self, x):
        return self.head(self.inner(x))
m = nn.Linear(2, 2)
m.requires_grad_(False)
w = Wrap(m)
print(w(torch.ones(1, 2)).numpy())
'''),
    ('factory two models, other frozen', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
def make():
    return nn.Linear(2, 2)
a = make()
b = make()
b.requires_grad_(False)
t = Trainer(a)
print(t.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('factory two models, other frozen, after', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
def make():
    return nn.Linear(2, 2)
a = make()
b = make()
t = Trainer(a)
b.requires_grad_(False)
print(t.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('loop built, other frozen', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
ts = []
ms = []
for i in range(2):
    m = nn.Linear(2, 2)
    ms.append(m)
    ts.append(Trainer(m))
ms[1].requires_grad_(False)
print(ts[0].evaluate(torch.ones(1, 2)).numpy())
'''),
    ('same literal model twice', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
ts = {}
for name in ["a", "b"]:
    m = nn.Linear(2, 2)
    ts[name] = Trainer(m)
    if name == "b":
        m.requires_grad_(False)
t = ts["a"]
print(t.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('copy deepcopy frozen', '''\
import copy
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
a = nn.Linear(2, 2)
b = copy.deepcopy(a)
t = Trainer(a)
b.requires_grad_(False)
print(t.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('Wrap of two factories', '''\
class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
    def forward(self, x):
        return self.inner(x)
def make():
    return nn.Linear(2, 2)
a = make()
b = make()
w = Wrap(a)
b.requires_grad_(False)
print(w(torch.ones(1, 2)).numpy())
'''),
    ('trainer freeze method then predict', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def freeze(self):
        self.model.requires_grad_(False)
    def predict(self, x):
        return self.model(x)
t = Trainer(nn.Linear(2, 2))
t.freeze()
print(t.predict(torch.ones(1, 2)).numpy())
'''),
    ('submodule frozen, whole model called raises', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(2, 2)
        self.head = nn.Linear(2, 2)
    def forward(self, x):
        return self.head(self.backbone(x))
net = Net()
net.backbone.requires_grad_(False)
print(net(torch.ones(1, 2)).numpy())
'''),
    ('submodule frozen, submodule called', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(2, 2)
        self.head = nn.Linear(2, 2)
    def forward(self, x):
        return self.head(self.backbone(x))
net = Net()
net.backbone.requires_grad_(False)
print(net.backbone(torch.ones(1, 2)).numpy())
'''),
    ('instance method freezes then forward in method', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x):
        return self.fc(x)
    def embed(self, x):
        return self(x).numpy()
net = Net()
for p in net.parameters():
    p.requires_grad = False
print(net.embed(torch.ones(1, 2)))
'''),
    ('predict helper detaches inside', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x):
        return self.fc(x)
def predict(m, x):
    return m(x).detach()
print(predict(Net(), torch.ones(1, 2)).numpy())
'''),
    ('list of models, one frozen', '''\
models = [nn.Linear(2, 2), nn.Linear(2, 2)]
models[0].requires_grad_(False)
print(models[1](torch.ones(1, 2)).numpy())
'''),
    ('frozen via eval+no_grad context manager variable', '''\
m = nn.Linear(2, 2)
ctx = torch.no_grad()
with ctx:
    y = m(torch.ones(1, 2))
print(y.numpy())
'''),
    ('set_grad_enabled var false', '''\
m = nn.Linear(2, 2)
train = False
with torch.set_grad_enabled(train):
    y = m(torch.ones(1, 2))
print(y.numpy())
'''),
    ('output stored on self in no_grad then numpy elsewhere', '''\
class Runner:
    def __init__(self, model):
        self.model = model
        self.last = None
    def step(self, x):
        with torch.no_grad():
            self.last = self.model(x)
    def report(self):
        return self.last.numpy()
r = Runner(nn.Linear(2, 2))
r.step(torch.ones(1, 2))
print(r.report())
'''),
    ('output stored on self with grad then numpy elsewhere', '''\
class Runner:
    def __init__(self, model):
        self.model = model
        self.last = None
    def step(self, x):
        self.last = self.model(x)
    def report(self):
        return self.last.numpy()
r = Runner(nn.Linear(2, 2))
r.step(torch.ones(1, 2))
print(r.report())
'''),
    ('generator expression numpy list', '''\
m = nn.Linear(2, 2)
outs = [m(torch.ones(1, 2)) for _ in range(2)]
print([o.numpy() for o in outs])
'''),
    ('np.array of list of detached outputs', '''\
m = nn.Linear(2, 2)
outs = [m(torch.ones(1, 2)).detach() for _ in range(2)]
print(np.array([o.numpy() for o in outs]))
'''),
    ('np.stack of model outputs raises', '''\
m = nn.Linear(2, 2)
outs = [m(torch.ones(1, 2)) for _ in range(2)]
print(np.stack(outs))
'''),
    ('method called on frozen and live instances raises', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x):
        return self.fc(x)
    def embed(self, x):
        return self(x).numpy()
a = Net()
b = Net()
a.requires_grad_(False)
print(a.embed(torch.ones(1, 2)))
print(b.embed(torch.ones(1, 2)))
'''),
    ('method only self, frozen instance', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.x = torch.ones(1, 2)
    def forward(self, x):
        return self.fc(x)
    def embed(self):
        return self(self.x).numpy()
a = Net()
a.requires_grad_(False)
print(a.embed())
'''),
    ('method called in function on frozen param model', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x):
        return self.fc(x)
    def embed(self, x):
        return self(x).numpy()
def main():
    net = Net()
    net.eval()
    net.requires_grad_(False)
    return net.embed(torch.ones(1, 2))
print(main())
'''),
    ('frozen net, submodule attr called', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x):
        return self.fc(x)
net = Net()
net.requires_grad_(False)
print(net.fc(torch.ones(1, 2)).numpy())
'''),
    ('frozen net, head thawed, head called raises', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.head = nn.Linear(2, 2)
    def forward(self, x):
        return self.head(self.fc(x))
net = Net()
net.requires_grad_(False)
net.head.requires_grad_(True)
print(net.head(torch.ones(1, 2)).numpy())
'''),
    ('dict of models, encoder frozen used', '''\
models = {"enc": nn.Linear(2, 2), "dec": nn.Linear(2, 2)}
models["enc"].requires_grad_(False)
print(models["enc"](torch.ones(1, 2)).numpy())
'''),
    ('dict of models, encoder frozen, decoder used raises', '''\
models = {"enc": nn.Linear(2, 2), "dec": nn.Linear(2, 2)}
models["enc"].requires_grad_(False)
print(models["dec"](torch.ones(1, 2)).numpy())
'''),
    ('dict of models, encoder eval only raises', '''\
models = {"enc": nn.Linear(2, 2), "dec": nn.Linear(2, 2)}
models["enc"].eval()
print(models["enc"](torch.ones(1, 2)).numpy())
'''),
    ('dict built by keys, frozen', '''\
models = {}
models["enc"] = nn.Linear(2, 2)
models["enc"].requires_grad_(False)
print(models["enc"](torch.ones(1, 2)).numpy())
'''),
    ('set_grad_enabled var true raises', '''\
m = nn.Linear(2, 2)
train = True
with torch.set_grad_enabled(train):
    y = m(torch.ones(1, 2))
print(y.numpy())
'''),
    ('set_grad_enabled var false', '''\
m = nn.Linear(2, 2)
train = False
with torch.set_grad_enabled(train):
    y = m(torch.ones(1, 2))
print(y.numpy())
'''),
    ('set_grad_enabled in function, module flag true raises', '''\
TRAIN = True
m = nn.Linear(2, 2)
def run(x):
    with torch.set_grad_enabled(TRAIN):
        return m(x).numpy()
print(run(torch.ones(1, 2)))
'''),
    ('set_grad_enabled in function, local flag reassigned in loop', '''\
m = nn.Linear(2, 2)
def run(x):
    outs = []
    for phase in ["val", "train"]:
        is_train = phase == "train"
        with torch.set_grad_enabled(is_train):
            outs.append(m(x))
    return outs
print([o.detach().numpy() for o in run(torch.ones(1, 2))])
'''),
    ('statement form set_grad_enabled var true raises', '''\
m = nn.Linear(2, 2)
flag = True
torch.set_grad_enabled(flag)
print(m(torch.ones(1, 2)).numpy())
'''),
    ('param flag false default unknown', '''\
m = nn.Linear(2, 2)
def run(x, train=False):
    with torch.set_grad_enabled(train):
        return m(x).numpy()
print(run(torch.ones(1, 2)))
'''),
    ('in-file factory frozen flag true, also called false', '''\
def build(frozen=False):
    t = nn.Linear(2, 2)
    if frozen:
        t.requires_grad_(False)
    return t
student = build()
teacher = build(frozen=True)
print(teacher(torch.ones(1, 2)).numpy())
'''),
    ('in-file factory frozen flag false raises', '''\
def build(frozen=False):
    t = nn.Linear(2, 2)
    if frozen:
        t.requires_grad_(False)
    return t
student = build()
teacher = build(frozen=True)
print(student(torch.ones(1, 2)).numpy())
'''),
    ('in-file factory positional flag true only call', '''\
def build(frozen=False):
    t = nn.Linear(2, 2)
    if frozen:
        t.requires_grad_(False)
    return t
teacher = build(True)
print(teacher(torch.ones(1, 2)).numpy())
'''),
    ('conditional freeze after trainer, cond false raises', '''\
import random
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
m = nn.Linear(2, 2)
t = Trainer(m)
if random.random() > 2:
    m.requires_grad_(False)
print(t.evaluate(torch.ones(1, 2)).numpy())
'''),
    ('module-level trainer, freeze in main', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
m = nn.Linear(2, 2)
t = Trainer(m)
def main():
    m.requires_grad_(False)
    return t.evaluate(torch.ones(1, 2)).numpy()
print(main())
'''),
    ('module-level trainer, no freeze in main raises', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
m = nn.Linear(2, 2)
t = Trainer(m)
def main():
    m.eval()
    return t.evaluate(torch.ones(1, 2)).numpy()
print(main())
'''),
    ('only layer frozen via attribute', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.scale = 2.0
    def forward(self, x):
        return self.fc(x) * self.scale
a = Net()
a.fc.requires_grad_(False)
print(a(torch.ones(1, 2)).numpy())
'''),
    ('one of two layers frozen raises', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.head = nn.Linear(2, 2)
    def forward(self, x):
        return self.head(self.fc(x))
a = Net()
a.fc.requires_grad_(False)
print(a(torch.ones(1, 2)).numpy())
'''),
    ('both layers frozen by loops', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.head = nn.Linear(2, 2)
    def forward(self, x):
        return self.head(self.fc(x))
a = Net()
for p in a.fc.parameters():
    p.requires_grad = False
a.head.requires_grad_(False)
print(a(torch.ones(1, 2)).numpy())
'''),
    ('layer frozen but raw parameter attr raises', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.w = nn.Parameter(torch.ones(2))
    def forward(self, x):
        return self.fc(x) * self.w
a = Net()
a.fc.requires_grad_(False)
print(a(torch.ones(1, 2)).numpy())
'''),
    ('layer frozen, a layer set in another method raises', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.extra = None
    def add_head(self):
        self.extra = nn.Linear(2, 2)
    def forward(self, x):
        y = self.fc(x)
        return self.extra(y) if self.extra is not None else y
a = Net()
a.add_head()
a.fc.requires_grad_(False)
print(a(torch.ones(1, 2)).numpy())
'''),
    ("freeze helper of the file, then the teacher's output", '''\
def freeze(model):
    for p in model.parameters():
        p.requires_grad = False
    return model
teacher = nn.Linear(2, 2)
freeze(teacher)
print(teacher(torch.ones(1, 2)).numpy())
'''),
    ('set_requires_grad helper of the file, D frozen', '''\
def set_requires_grad(nets, requires_grad=False):
    if not isinstance(nets, list):
        nets = [nets]
    for net in nets:
        if net is not None:
            for param in net.parameters():
                param.requires_grad = requires_grad
D = nn.Linear(2, 1)
set_requires_grad(D, False)
print(D(torch.ones(1, 2)).numpy())
'''),
    ('freeze helper of the file by requires_grad_', '''\
def freeze(model):
    model.requires_grad_(False)
teacher = nn.Linear(2, 2)
freeze(teacher)
print(teacher(torch.ones(1, 2)).numpy())
'''),
    ('set_requires_grad helper, frozen then thawed', '''\
def set_requires_grad(nets, requires_grad=False):
    if not isinstance(nets, list):
        nets = [nets]
    for net in nets:
        for param in net.parameters():
            param.requires_grad = requires_grad
D = nn.Linear(2, 1)
set_requires_grad(D, False)
set_requires_grad(D, True)
print(D(torch.ones(1, 2)).numpy())
'''),
    ('unfreeze helper of the file', '''\
def unfreeze(model):
    for p in model.parameters():
        p.requires_grad = True
m = nn.Linear(2, 2)
unfreeze(m)
print(m(torch.ones(1, 2)).numpy())
'''),
    ('helper named for grad that freezes nothing', '''\
def log_grad_norm(model):
    return sum(p.numel() for p in model.parameters())
m = nn.Linear(2, 2)
log_grad_norm(m)
print(m(torch.ones(1, 2)).numpy())
'''),
    ('helper sets requires_grad of its other argument', '''\
def prepare(model, x):
    x.requires_grad_(True)
    return x
m = nn.Linear(2, 2)
x = torch.ones(1, 2)
prepare(m, x)
print(m(x).numpy())
'''),
    ('helper freezes its second argument only', '''\
def freeze_second(a, b):
    b.requires_grad_(False)
m1 = nn.Linear(2, 2)
m2 = nn.Linear(2, 2)
freeze_second(m1, m2)
print(m2(torch.ones(1, 2)).numpy())
print(m1(torch.ones(1, 2)).numpy())
'''),
    ('freeze helper given a list of models', '''\
def freeze(models):
    for m in models:
        m.requires_grad_(False)
a = nn.Linear(2, 2)
b = nn.Linear(2, 2)
freeze([a, b])
print(a(torch.ones(1, 2)).numpy(), b(torch.ones(1, 2)).numpy())
'''),
    ('freeze helper, then requires_grad_(True)', '''\
def freeze(model):
    model.requires_grad_(False)
m = nn.Linear(2, 2)
freeze(m)
m.requires_grad_(True)
print(m(torch.ones(1, 2)).numpy())
'''),
    ('trainer handed the model, then the freeze helper', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x).numpy()
def freeze(model):
    for p in model.parameters():
        p.requires_grad = False
m = nn.Linear(2, 2)
t = Trainer(m)
freeze(m)
t.evaluate(torch.ones(1, 2))
'''),
    ('freeze helper of the file, its result kept', '''\
def freeze(model):
    for p in model.parameters():
        p.requires_grad = False
    return model
teacher = freeze(nn.Linear(2, 2))
print(teacher(torch.ones(1, 2)).numpy())
'''),
    ('toggle_grad helper of the file, D frozen', '''\
def toggle_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad_(flag)
D = nn.Linear(2, 1)
toggle_grad(D, False)
print(D(torch.ones(1, 2)).numpy())
'''),
    ('set_requires_grad(model, bool) helper, D frozen', '''\
def set_requires_grad(model, bool):
    for p in model.parameters():
        p.requires_grad = bool
D = nn.Linear(2, 1)
set_requires_grad(D, False)
print(D(torch.ones(1, 2)).numpy())
'''),
    ('freeze helper of the file, model of a function', '''\
def freeze(model):
    model.requires_grad_(False)
def main():
    t = nn.Linear(2, 2)
    freeze(t)
    return t(torch.ones(1, 2)).numpy()
main()
'''),
    ('freeze helper of the file on an attribute in the constructor', '''\
def freeze(model):
    model.requires_grad_(False)
class Distill:
    def __init__(self):
        self.teacher = nn.Linear(2, 2)
        freeze(self.teacher)
    def run(self, x):
        return self.teacher(x).numpy()
Distill().run(torch.ones(1, 2))
'''),
    ('freeze_backbone helper freezes a part only', '''\
import copy
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(2, 2)
        self.head = nn.Linear(2, 2)
    def forward(self, x):
        return self.head(self.backbone(x))
def freeze_backbone(model):
    for p in model.backbone.parameters():
        p.requires_grad = False
net = Net()
freeze_backbone(net)
print(net(torch.ones(1, 2)).numpy())
'''),
    ('freeze_bn helper sets batch norm to eval', '''\
def freeze_bn(model):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.eval()
net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
freeze_bn(net)
print(net(torch.ones(2, 2)).numpy())
'''),
    ('static method called on the class returns model output', '''\
class Util:
    @staticmethod
    def run(m, x):
        return m(x)
arr = Util.run(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
'''),
    ('static method called on an instance returns model output', '''\
class Util:
    @staticmethod
    def run(m, x):
        return m(x)
u = Util()
arr = u.run(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
'''),
    ('static method detaches what it returns', '''\
class Util:
    @staticmethod
    def run(m, x):
        return m(x).detach()
arr = Util.run(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
'''),
    ('static method passed a frozen model', '''\
class Util:
    @staticmethod
    def run(m, x):
        return m(x)
net = nn.Linear(3, 2).requires_grad_(False)
arr = Util.run(net, torch.randn(4, 3)).numpy()
'''),
    ('class method applies its argument', '''\
class Util:
    scale = 2.0
    @classmethod
    def run(cls, m, x):
        return m(x) * cls.scale
arr = Util.run(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
'''),
    ('plain method called on the class with an instance', '''\
class Util:
    def run(self, m, x):
        return m(x).detach()
arr = Util.run(Util(), nn.Linear(3, 2), torch.randn(4, 3)).numpy()
'''),
]

TNS2_PROGRAMS = [
    ('a loss whose weights a subclass sets to a list', '''\
import torch.nn.functional as F
class WeightedCE(nn.Module):
    def __init__(self, class_counts):
        super().__init__()
        counts = torch.as_tensor(class_counts, dtype=torch.float32)
        self.weights = counts.sum() / (len(counts) * counts)
    def forward(self, logits, target):
        w = torch.tensor(self.weights, dtype=logits.dtype)
        return F.cross_entropy(logits, target, weight=w)
class UniformCE(WeightedCE):
    def __init__(self, class_counts):
        super().__init__(class_counts)
        self.weights = [1.0] * len(class_counts)
loss = UniformCE([3, 5, 2])(torch.randn(4, 3, requires_grad=True), torch.tensor([0, 1, 2, 1]))
'''),
    ('a loss whose weights the constructor computes from a local tensor', '''\
import torch.nn.functional as F
class WeightedCE(nn.Module):
    def __init__(self, class_counts):
        super().__init__()
        counts = torch.as_tensor(class_counts, dtype=torch.float32)
        self.weights = counts.sum() / (len(counts) * counts)
    def forward(self, logits, target):
        w = logits.new_tensor(self.weights)
        return F.cross_entropy(logits, target, weight=w)
crit = WeightedCE([3, 5, 2])
loss = crit(torch.randn(4, 3, requires_grad=True), torch.tensor([0, 1, 2, 1]))
'''),
    ('a stack of what a collate function does not know', '''\
def collate(batch):
    xs = torch.stack([b[0] for b in batch])
    return torch.tensor(xs)
collate([(torch.randn(3), 1)])
'''),
    ('a stack of floats', '''\
def collate(batch):
    return torch.tensor([b[1] for b in batch])
collate([(torch.randn(3), 1.0)])
'''),
    ('torch.tensor of a param passed a tensor', '''\
def to_t(x):
    return torch.tensor(x)
to_t(torch.randn(3))
'''),
    ('torch.tensor of a param passed a list', '''\
def to_t(x):
    return torch.tensor(x)
to_t([1.0, 2.0])
'''),
    ('torch.tensor of a method return', '''\
class M:
    def get(self):
        return torch.randn(3)
y = torch.tensor(M().get())
'''),
    ('new_tensor of output attr', '''\
class Holder:
    def __init__(self):
        self.v = torch.randn(3)
h = Holder()
y = torch.zeros(1).new_tensor(h.v)
'''),
    ('torch.tensor list of tensors', '''\
xs = [torch.tensor(1.0), torch.tensor(2.0)]
y = torch.tensor(xs)
'''),
    ('torch.tensor of numpy', '''\
y = torch.tensor(torch.randn(3).numpy())
'''),
    ('torch.tensor of item list', '''\
xs = [torch.tensor(1.0).item(), 2.0]
y = torch.tensor(xs)
'''),
    ('torch.tensor of dataset getitem tensor', '''\
class DS(torch.utils.data.Dataset):
    def __init__(self):
        self.data = torch.randn(4, 3)
    def __getitem__(self, i):
        return self.data[i]
    def __len__(self):
        return 4
y = torch.tensor(DS()[0])
'''),
]

# FGM (adversarial training on the embeddings, as NLP competitions write it): its attack adds the
# perturbation to the parameter in place, outside no_grad.
_FGM = '''\
class FGM:
    def __init__(self, model, emb_name="emb"):
        self.model = model
        self.emb_name = emb_name
        self.backup = {}
    def attack(self, epsilon=1.0):
        for name, param in self.model.named_parameters():
            if param.requires_grad and self.emb_name in name:
                self.backup[name] = param.data.clone()
                norm = torch.norm(param.grad)
                if norm != 0:
                    param.add_(epsilon * param.grad / norm)
    def restore(self):
        for name, param in self.model.named_parameters():
            if name in self.backup:
                param.data = self.backup[name]
        self.backup = {}
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.fc = nn.Linear(4, 2)
    def forward(self, ids):
        return self.fc(self.emb(ids).mean(1))
model = Net()
fgm = FGM(model)
model(torch.randint(0, 10, (3, 5))).sum().backward()
fgm.attack()
model(torch.randint(0, 10, (3, 5))).sum().backward()
fgm.restore()
'''

_DCGAN_INIT = '''\
def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        m.weight.normal_(0.0, 0.02)
netD = nn.Sequential(nn.Conv2d(3, 4, 3), nn.LeakyReLU(0.2))
'''

TNS4_PROGRAMS = [
    ("FGM's adversarial attack on the embedding's weight, that reads requires_grad in its loop", _FGM),
    ("FGM's adversarial attack through .data, as written in practice", _FGM.replace("param.add_(", "param.data.add_(")),
    ('a trainer steps its model by hand in one method and zeroes its gradients in another', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def sgd(self):
        for p in self.model.parameters():
            p.sub_(0.1 * p.grad)
    def fit(self, x):
        self.model.zero_grad()
        self.model(x).pow(2).mean().backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.sgd()
Trainer(nn.Linear(4, 2)).fit(torch.randn(3, 4))
'''),
    ('a trainer steps its model by hand, another method freezes it first', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def sgd(self):
        for p in self.model.parameters():
            p.sub_(0.1 * p.grad if p.grad is not None else p)
    def freeze(self):
        self.model.requires_grad_(False)
    def fit(self, x):
        self.freeze()
        self.sgd()
Trainer(nn.Linear(4, 2)).fit(torch.randn(3, 4))
'''),
    ('init helper applied under no_grad', '''\
def init_weights(m):
    if isinstance(m, nn.Linear):
        m.weight.normal_(0.0, 0.02)
net = nn.Sequential(nn.Linear(3, 2))
with torch.no_grad():
    net.apply(init_weights)
'''),
    ('init helper applied with grad on', '''\
def init_weights(m):
    if isinstance(m, nn.Linear):
        m.weight.normal_(0.0, 0.02)
net = nn.Sequential(nn.Linear(3, 2))
net.apply(init_weights)
'''),
    # DCGAN's initialiser, which tells layers by their class's name: `m` is a module only by
    # the `apply` that hands it each submodule.
    ('DCGAN initialiser by class name applied with grad on', _DCGAN_INIT + 'netD.apply(weights_init)\n'),
    ('DCGAN initialiser by class name applied under no_grad',
     _DCGAN_INIT + 'with torch.no_grad():\n    netD.apply(weights_init)\n'),
    ('DCGAN initialiser by class name applied to a frozen network',
     _DCGAN_INIT + 'netD.requires_grad_(False)\nnetD.apply(weights_init)\n'),
    ('DCGAN initialiser by class name applied by an apply of its own that turns grad off',
     _DCGAN_INIT.replace('netD = nn.Sequential(', '''class Net(nn.Sequential):
    def apply(self, fn):
        with torch.no_grad():
            return super().apply(fn)
netD = Net(''') + 'netD.apply(weights_init)\n'),
    ('DCGAN initialiser by class name through .data',
     _DCGAN_INIT.replace('m.weight.normal_', 'm.weight.data.normal_') + 'netD.apply(weights_init)\n'),
    ('init helper applied under no_grad, then with grad on', '''\
def init_weights(m):
    if isinstance(m, nn.Linear):
        m.weight.normal_(0.0, 0.02)
net = nn.Sequential(nn.Linear(3, 2))
with torch.no_grad():
    net.apply(init_weights)
net.apply(init_weights)
'''),
    ('init method applied under no_grad in the constructor', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        with torch.no_grad():
            self.apply(self._init_weights)
    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            m.weight.normal_(0.0, 0.02)
            m.bias.zero_()
net = Net()
'''),
    ('init method applied in the constructor', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.apply(self._init_weights)
    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            m.weight.normal_(0.0, 0.02)
net = Net()
'''),
    ('init helper in-place on param', '''\
def init_weights(m):
    m.weight.normal_()
init_weights(nn.Linear(3, 2))
'''),
    ('init helper under no_grad', '''\
@torch.no_grad()
def init_weights(m):
    m.weight.normal_()
init_weights(nn.Linear(3, 2))
'''),
    ('nn.init is fine', '''\
m = nn.Linear(3, 2)
nn.init.zeros_(m.weight)
'''),
    ('apply with in-place init', '''\
def init(m):
    if isinstance(m, nn.Linear):
        m.weight.fill_(0.0)
nn.Sequential(nn.Linear(3, 2)).apply(init)
'''),
    ('apply with .data init', '''\
def init(m):
    if isinstance(m, nn.Linear):
        m.weight.data.fill_(0.0)
nn.Sequential(nn.Linear(3, 2)).apply(init)
'''),
    ('method in-place on own param', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))
    def reset(self):
        self.w.zero_()
Net().reset()
'''),
    ('method in-place on own param in no_grad', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))
    def reset(self):
        with torch.no_grad():
            self.w.zero_()
Net().reset()
'''),
    ('manual SGD without no_grad', '''\
w = torch.randn(3, requires_grad=True)
(w * 2).sum().backward()
w -= 0.1 * w.grad
'''),
    ('manual SGD with no_grad', '''\
w = torch.randn(3, requires_grad=True)
(w * 2).sum().backward()
with torch.no_grad():
    w -= 0.1 * w.grad
'''),
    ('manual SGD via data', '''\
w = torch.randn(3, requires_grad=True)
(w * 2).sum().backward()
w.data -= 0.1 * w.grad
'''),
    ('params loop update', '''\
model = nn.Linear(3, 2)
model(torch.randn(4, 3)).sum().backward()
for p in model.parameters():
    p -= 0.1 * p.grad
'''),
    ('params loop add_ no_grad', '''\
model = nn.Linear(3, 2)
model(torch.randn(4, 3)).sum().backward()
with torch.no_grad():
    for p in model.parameters():
        p.add_(p.grad, alpha=-0.1)
'''),
    ('param clamp_ in helper', '''\
model = nn.Linear(3, 2)
def clip(m):
    for p in m.parameters():
        p.clamp_(-0.01, 0.01)
clip(model)
'''),
    ('param clamp_ data in helper', '''\
model = nn.Linear(3, 2)
def clip(m):
    for p in m.parameters():
        p.data.clamp_(-0.01, 0.01)
clip(model)
'''),
    ('leaf index assign', '''\
w = torch.zeros(3, requires_grad=True)
w[0] = 1.0
'''),
    ('leaf index assign no grad leaf', '''\
w = torch.zeros(3)
w[0] = 1.0
'''),
    ('copy_ into param', '''\
m = nn.Linear(3, 2)
m.weight.copy_(torch.zeros(2, 3))
'''),
    ('copy_ into param via state dict load ok', '''\
m = nn.Linear(3, 2)
m.load_state_dict({"weight": torch.zeros(2, 3), "bias": torch.zeros(2)})
'''),
    ('EMA update no no_grad', '''\
m = nn.Linear(3, 2)
ema = nn.Linear(3, 2)
for pe, p in zip(ema.parameters(), m.parameters()):
    pe.mul_(0.9).add_(p, alpha=0.1)
'''),
    ('EMA update with no_grad', '''\
m = nn.Linear(3, 2)
ema = nn.Linear(3, 2)
with torch.no_grad():
    for pe, p in zip(ema.parameters(), m.parameters()):
        pe.mul_(0.9).add_(p, alpha=0.1)
'''),
    ('EMA on frozen ema', '''\
m = nn.Linear(3, 2)
ema = nn.Linear(3, 2).requires_grad_(False)
for pe, p in zip(ema.parameters(), m.parameters()):
    pe.mul_(0.9).add_(p.detach(), alpha=0.1)
'''),
    ('embedding weight row assign', '''\
emb = nn.Embedding(5, 3)
emb.weight[0] = 0.0
'''),
    ('embedding weight row assign no_grad', '''\
emb = nn.Embedding(5, 3)
with torch.no_grad():
    emb.weight[0] = 0.0
'''),
    ('bias fill in __init__', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.fc.bias.fill_(0.0)
Net()
'''),
    ('bias fill in __init__ data', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.fc.bias.data.fill_(0.0)
Net()
'''),
    ('unsqueeze_ on param', '''\
m = nn.Linear(3, 2)
m.bias.unsqueeze_(0)
'''),
    ('requires_grad tensor created then in-place in function', '''\
def make():
    return torch.zeros(3, requires_grad=True)
t = make()
t.add_(1)
'''),
    ('non-leaf in-place ok', '''\
w = torch.zeros(3, requires_grad=True)
y = w * 2
y.add_(1)
'''),
    ('dict of leaves in-place', '''\
params = {"w": torch.zeros(3, requires_grad=True), "b": torch.zeros(1, requires_grad=True)}
params["w"].add_(1)
'''),
    ('dict of leaves in-place no_grad', '''\
params = {"w": torch.zeros(3, requires_grad=True)}
with torch.no_grad():
    params["w"].add_(1)
'''),
    ('dict of leaves index write', '''\
params = {"w": torch.zeros(3, requires_grad=True)}
params["w"][0] = 1.0
'''),
    ('dict of plain tensors in-place', '''\
bufs = {"w": torch.zeros(3)}
bufs["w"].add_(1)
'''),
    ('named params dict comp sgd', '''\
model = nn.Linear(3, 2)
ps = dict(model.named_parameters())
model(torch.randn(4, 3)).sum().backward()
for n, p in ps.items():
    p -= 0.1 * p.grad
'''),
    ('named params dict comp', '''\
model = nn.Linear(3, 2)
ps = {n: p for n, p in model.named_parameters()}
ps["weight"].zero_()
'''),
    ('reset method on frozen instance', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def reset(self):
        self.fc.weight.fill_(0.5)
n = Net()
n.requires_grad_(False)
n.reset()
'''),
    ('reset method on live instance raises', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def reset(self):
        self.fc.weight.fill_(0.5)
n = Net()
n.reset()
'''),
    ('trainer reset after freeze of handed model', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def reset(self):
        self.model.weight.fill_(0.5)
m = nn.Linear(2, 2)
t = Trainer(m)
m.requires_grad_(False)
t.reset()
'''),
    ('trainer reset without freeze raises', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def reset(self):
        self.model.weight.fill_(0.5)
m = nn.Linear(2, 2)
t = Trainer(m)
t.reset()
'''),
    ('trainer reset of frozen handed before', '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def reset(self):
        self.model.weight.fill_(0.5)
m = nn.Linear(2, 2)
m.requires_grad_(False)
t = Trainer(m)
t.reset()
'''),
    ('wrap module reset weight of frozen inner', '''\
class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
    def reset(self):
        for p in self.inner.parameters():
            p.zero_()
m = nn.Linear(2, 2)
w = Wrap(m)
m.requires_grad_(False)
w.reset()
'''),
    ('hand-written optimizer keeps list(params), step without no_grad', '''\
class MySGD:
    def __init__(self, params, lr):
        self.params = list(params)
        self.lr = lr
    def step(self):
        for p in self.params:
            p -= self.lr * p.grad
net = nn.Linear(3, 2)
opt = MySGD(net.parameters(), 0.1)
net(torch.randn(4, 3)).sum().backward()
opt.step()
'''),
    ('hand-written optimizer, step under no_grad', '''\
class MySGD:
    def __init__(self, params, lr):
        self.params = list(params)
        self.lr = lr
    @torch.no_grad()
    def step(self):
        for p in self.params:
            p -= self.lr * p.grad
net = nn.Linear(3, 2)
opt = MySGD(net.parameters(), 0.1)
net(torch.randn(4, 3)).sum().backward()
opt.step()
'''),
    ('hand-written optimizer, with no_grad in step', '''\
class MySGD:
    def __init__(self, params, lr):
        self.params = list(params)
        self.lr = lr
    def step(self):
        with torch.no_grad():
            for p in self.params:
                p.add_(p.grad, alpha=-self.lr)
net = nn.Linear(3, 2)
opt = MySGD(net.parameters(), 0.1)
net(torch.randn(4, 3)).sum().backward()
opt.step()
'''),
    ('hand-written optimizer keeps the parameters iterator', '''\
class MySGD:
    def __init__(self, params):
        self.params = params
    def step(self):
        for p in self.params:
            p.add_(p.grad, alpha=-0.1)
net = nn.Linear(3, 2)
opt = MySGD(net.parameters())
net(torch.randn(4, 3)).sum().backward()
opt.step()
'''),
    ('hand-written optimizer given a list of parameters', '''\
class MySGD:
    def __init__(self, params):
        self.params = params
    def step(self):
        for p in self.params:
            p.sub_(0.1 * p.grad)
w = nn.Parameter(torch.randn(3))
b = nn.Parameter(torch.zeros(3))
opt = MySGD([w, b])
(w * 2 + b).sum().backward()
opt.step()
'''),
    ('hand-written optimizer given a frozen model', '''\
class MySGD:
    def __init__(self, params):
        self.params = list(params)
    def step(self):
        for p in self.params:
            p.mul_(0.5)
net = nn.Linear(3, 2).requires_grad_(False)
MySGD(net.parameters()).step()
'''),
    ('hand-written optimizer writes through .data', '''\
class MySGD:
    def __init__(self, params):
        self.params = list(params)
    def step(self):
        for p in self.params:
            p.data.add_(p.grad, alpha=-0.1)
net = nn.Linear(3, 2)
opt = MySGD(net.parameters())
net(torch.randn(4, 3)).sum().backward()
opt.step()
'''),
]

# An EWC anchor of the parameters (views or copies: `anchor`) whose penalty training reads.
_EWC = '''\
class EWC:
    def __init__(self, model):
        self.params = {{n: {anchor}}}
        self.ref = {{n: p.clone() for n, p in self.params.items()}}
    def penalty(self, model):
        return sum(((p - self.params[n]) ** 2).sum() for n, p in model.named_parameters())
model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
ewc = EWC(model)
for _ in range(3):
    opt.zero_grad()
    (model(torch.randn(8, 4)).pow(2).mean() + ewc.penalty(model)).backward()
    opt.step()
assert torch.equal(ewc.params["weight"], ewc.ref["weight"]), "changed"
'''

# A module that holds another as `module` (as DistributedDataParallel does).
_WRAPPER = '''\
class Wrapper(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module
    def forward(self, x):
        return self.module(x)
'''

# Karpathy's update-to-data ratios, of the parameters that are matrices.
_RATIOS = '''\
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
params = [p for p in model.parameters() if p.dim() > 1]
opt = torch.optim.SGD(model.parameters(), lr=0.1)
ratios = []
for _ in range(2):
    opt.zero_grad()
    model(torch.randn(8, 4)).pow(2).mean().backward()
    old = [{old} for p in params]
    opt.step()
    ratios.append([((p.data - o).std() / p.data.std()).item() for p, o in zip(params, old)])
assert any(r != 0.0 for row in ratios for r in row){check}
'''

TNS5_PROGRAMS = [
    ("a view of the first layer of a Sequential whose optimizer steps only the last layer", '''\
net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
opt = torch.optim.SGD(net[2].parameters(), lr=0.1)
init_w = net[0].weight.detach()
for _ in range(2):
    opt.zero_grad()
    net(torch.randn(8, 3)).pow(2).mean().backward()
    opt.step()
assert torch.equal(net[0].weight, init_w)
'''),
    ("a view of a layer of a Sequential replaced by a new layer before the steps", '''\
net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
old_w = net[0].weight.detach()
ref = old_w.clone()
net[0] = nn.Linear(3, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    net(torch.randn(8, 3)).pow(2).mean().backward()
    opt.step()
assert torch.equal(old_w, ref)
'''),
    ("a NumPy view of the last layer of a Sequential by a negative index, kept each step", '''\
net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
snaps = []
for _ in range(2):
    opt.zero_grad()
    net(torch.randn(8, 3)).pow(2).mean().backward()
    opt.step()
    with torch.no_grad():
        snaps.append(net[-1].weight.numpy())
assert not (snaps[0] == snaps[-1]).all(), "changed"
'''),
    ("update-to-data ratios from views of a filtered list of the model's parameters, taken before the step",
     _RATIOS.format(old="p.data", check=', "changed"')),
    ("update-to-data ratios from copies of a filtered list of the model's parameters",
     _RATIOS.format(old="p.data.clone()", check="")),
    ("a best state of the module a wrapper holds, by torchvision's model_without_ddp, trained through the wrapper",
     _WRAPPER + '''\
model = Wrapper(nn.Linear(4, 2))
model_without_ddp = model.module if hasattr(model, "module") else model
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best_state = None
for epoch in range(3):
    opt.zero_grad()
    model(torch.randn(8, 4)).pow(2).mean().backward()
    opt.step()
    if best_state is None:
        best_state = model_without_ddp.state_dict()
        best_ref = {k: v.clone() for k, v in best_state.items()}
assert torch.equal(best_state["weight"], best_ref["weight"]), "changed"
'''),
    ("a state of the module a wrapper holds, by another name, saved before the next step", _WRAPPER + '''\
model = Wrapper(nn.Linear(4, 2))
net = model.module if hasattr(model, "module") else model
opt = torch.optim.SGD(model.parameters(), lr=0.1)
saved = []
for epoch in range(3):
    opt.zero_grad()
    model(torch.randn(8, 4)).pow(2).mean().backward()
    opt.step()
    state = net.state_dict()
    saved.append(state["weight"].sum().item())
assert saved[0] != saved[-1]
'''),
    ("a best state taken through another name of the model, trained through the first", '''\
model = nn.Linear(4, 2)
m = model
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best = m.state_dict()
ref = {k: v.clone() for k, v in best.items()}
opt.zero_grad()
model(torch.randn(8, 4)).pow(2).mean().backward()
opt.step()
assert torch.equal(best["weight"], ref["weight"]), "changed"
'''),
    ("an EWC anchor that keeps .data views of the model's parameters: its penalty reads what training moved",
     _EWC.format(anchor="p.data for n, p in model.named_parameters() if p.requires_grad")),
    ("an EWC anchor that keeps clones of the model's parameters",
     _EWC.format(anchor="p.data.clone() for n, p in model.named_parameters()")),
    ("a pruner that keeps .data views of the parameters to write its masks through them", '''\
class Pruner:
    def __init__(self, model):
        self.weights = [p.detach() for p in model.parameters()]
    def prune(self):
        for w in self.weights:
            w.mul_((w.abs() > 0.05).float())
model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
pruner = Pruner(model)
for _ in range(3):
    opt.zero_grad()
    model(torch.randn(8, 4)).pow(2).mean().backward()
    opt.step()
    pruner.prune()
print((model.weight == 0).sum())
'''),
    ("an anchor of .data views read only before the first step", '''\
class Anchor:
    def __init__(self, model):
        self.params = {n: p.data for n, p in model.named_parameters()}
    def norm(self):
        return sum(v.norm() for v in self.params.values())
model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
anchor = Anchor(model)
print(anchor.norm())
for _ in range(3):
    opt.zero_grad()
    model(torch.randn(8, 4)).pow(2).mean().backward()
    opt.step()
'''),
    ("a parameter's .cpu() on the CPU is the parameter itself: the starting weights move with training", '''\
model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
w0 = model.weight.cpu()
b0 = model.bias.to("cpu")
for _ in range(3):
    opt.zero_grad(); model(torch.randn(8, 4)).pow(2).mean().backward(); opt.step()
assert not torch.equal(w0, model.weight) and not torch.equal(b0, model.bias), "changed"
'''),
    ("a parameter's .cpu().clone() is a copy", '''\
model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
w0 = model.weight.cpu().clone()
for _ in range(3):
    opt.zero_grad(); model(torch.randn(8, 4)).pow(2).mean().backward(); opt.step()
assert not torch.equal(w0, model.weight), "changed"
'''),
    ("a parameter's .cpu() where the model may be on an accelerator is left alone", '''\
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Linear(4, 2).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
w0 = model.weight.cpu()
for _ in range(3):
    opt.zero_grad(); model(torch.randn(8, 4, device=device)).pow(2).mean().backward(); opt.step()
print(w0.sum())
'''),
    ('a helper of the file sets requires_grad to a flag the script holds in a variable (the snapshot is kept)', '''\
def set_trainable(m, flag):
    for p in m.parameters():
        p.requires_grad = flag
encoder, head = nn.Linear(4, 4), nn.Linear(4, 2)
train_encoder = False
set_trainable(encoder, train_encoder)
init = encoder.state_dict()
w0 = encoder.weight.detach().clone()
opt = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
for _ in range(3):
    opt.zero_grad(); head(encoder(torch.randn(8, 4))).sum().backward(); opt.step()
assert torch.equal(init["weight"], w0), "changed"
'''),
    ('a helper of the file freezes the encoder, a snapshot, then the helper thaws it again', '''\
def set_trainable(m, flag):
    for p in m.parameters():
        p.requires_grad = flag
encoder, head = nn.Linear(4, 4), nn.Linear(4, 2)
set_trainable(encoder, False)
init = encoder.state_dict()
w0 = encoder.weight.detach().clone()
set_trainable(encoder, True)
opt = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
for _ in range(3):
    opt.zero_grad(); head(encoder(torch.randn(8, 4))).sum().backward(); opt.step()
assert torch.equal(init["weight"], w0), "changed"
'''),
    ('a validation total handed to an LR scheduler and printed keeps every graph', '''\
import torch.nn.functional as F
def validate(model, loader):
    total = 0.0
    for x, y in loader:
        total += F.cross_entropy(model(x), y)
    return total / len(loader)
model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1)
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]
for epoch in range(2):
    val_loss = validate(model, loader)
    scheduler.step(val_loss)
    print(f"epoch {epoch} val {val_loss:.4f}")
    assert val_loss.grad_fn is None, "total keeps graph"
'''),
    ('a helper of the file sets requires_grad to the flag it is passed: False freezes the encoder', '''\
def set_trainable(m, flag):
    m.requires_grad_(flag)
encoder = nn.Linear(4, 4)
head = nn.Linear(4, 2)
set_trainable(encoder, False)
init = encoder.state_dict()
w0 = encoder.weight.detach().clone()
opt = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    head(encoder(torch.randn(8, 4))).pow(2).mean().backward()
    opt.step()
assert torch.equal(init["weight"], w0), "changed"
'''),
    ('a helper of the file sets requires_grad to the flag it is passed: True trains the encoder', '''\
def set_trainable(m, flag):
    for p in m.parameters():
        p.requires_grad = flag
encoder = nn.Linear(4, 4)
head = nn.Linear(4, 2)
set_trainable(encoder, flag=True)
init = encoder.state_dict()
w0 = encoder.weight.detach().clone()
opt = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    head(encoder(torch.randn(8, 4))).pow(2).mean().backward()
    opt.step()
assert torch.equal(init["weight"], w0), "changed"
'''),
    ('a helper of the file whose flag defaults to False freezes the encoder', '''\
def set_trainable(m, flag=False):
    for p in m.parameters():
        p.requires_grad = flag
encoder = nn.Linear(4, 4)
head = nn.Linear(4, 2)
set_trainable(encoder)
init = encoder.state_dict()
w0 = encoder.weight.detach().clone()
opt = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    head(encoder(torch.randn(8, 4))).pow(2).mean().backward()
    opt.step()
assert torch.equal(init["weight"], w0), "changed"
'''),
    ('a keeper takes a snapshot after each epoch, saved before the next', '''\
class Keeper:
    def step(self, model):
        self.state = model.state_dict()
model = nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
keeper = Keeper()
for epoch in range(3):
    opt.zero_grad(); model(torch.randn(4, 2)).sum().backward(); opt.step()
    keeper.step(model)
    assert torch.equal(keeper.state["weight"], model.weight.detach()), "kept"
'''),
    ('a keeper takes a snapshot when the loss improves, used after later epochs', '''\
class Keeper:
    def __init__(self):
        self.best = float("inf")
    def step(self, loss, model):
        if loss < self.best:
            self.best = loss
            self.state = model.state_dict()
model = nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
keeper = Keeper()
w0 = None
for epoch in range(3):
    opt.zero_grad(); model(torch.randn(4, 2)).sum().backward(); opt.step()
    keeper.step(1.0 / (epoch + 1) if epoch == 0 else 5.0, model)
    if w0 is None:
        w0 = model.weight.detach().clone()
assert torch.equal(keeper.state["weight"], w0), "snapshot changed"
'''),
    ('snapshot of a teacher, a distillation step handed an optimizer of a list that grows to hold it', '''\
def distill(student, teacher, opt):
    opt.zero_grad(); (student(torch.ones(1, 2)) + teacher(torch.ones(1, 2))).pow(2).sum().backward(); opt.step()
teacher, student = nn.Linear(2, 1), nn.Linear(2, 1)
params = list(student.parameters())
params += list(teacher.parameters())
opt = torch.optim.SGD(params, lr=0.1)
w0 = teacher.weight.detach().clone()
teacher_state = teacher.state_dict()
distill(student, teacher, opt)
assert torch.equal(teacher_state["weight"], w0), "snapshot changed"
'''),
    ('a trainer keeps the model it is handed and an optimizer of its parameters', '''\
class Trainer:
    def __init__(self, net):
        self.model = net
        self.optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    def fit(self, x):
        prev = self.model.weight.data
        w0 = self.model.weight.detach().clone()
        self.optimizer.zero_grad(); self.model(x).pow(2).mean().backward(); self.optimizer.step()
        assert torch.equal(prev, w0), "snapshot changed"
Trainer(nn.Linear(2, 1)).fit(torch.randn(8, 2))
'''),
    ('a trainer keeps the model it is handed and an optimizer of another one', '''\
class Trainer:
    def __init__(self, net, head):
        self.model = net
        self.head = head
        self.optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    def fit(self, x):
        prev = self.model.weight.data
        w0 = self.model.weight.detach().clone()
        self.optimizer.zero_grad(); self.head(self.model(x)).pow(2).mean().backward(); self.optimizer.step()
        assert torch.equal(prev, w0), "kept"
Trainer(nn.Linear(2, 2), nn.Linear(2, 1)).fit(torch.randn(8, 2))
'''),
    ('snapshots of a teacher, a distillation step handed an optimizer of the student', '''\
def distill(student, teacher, opt):
    with torch.no_grad():
        t = teacher(torch.ones(1, 2))
    running = 0.0
    opt.zero_grad(); loss = (student(torch.ones(1, 2)) - t).pow(2).sum(); loss.backward(); opt.step()
    running += loss.item()
    return running
teacher, student = nn.Linear(2, 1), nn.Linear(2, 1)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
w0 = teacher.weight.detach().clone()
teacher_state = teacher.state_dict()
t_ref = teacher.weight.detach()
distill(student, teacher, opt)
assert torch.equal(teacher_state["weight"], w0) and torch.equal(t_ref, w0)
'''),
    ('snapshot of a backbone, an epoch handed an optimizer of the head', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone, self.head = nn.Linear(2, 2), nn.Linear(2, 1)
    def forward(self, x):
        return self.head(self.backbone(x))
def train_one_epoch(model, opt):
    opt.zero_grad(); model(torch.randn(4, 2)).sum().backward(); opt.step()
model = Net()
opt = torch.optim.SGD(model.head.parameters(), lr=0.1)
w0 = model.backbone.weight.detach().clone()
backbone_state = model.backbone.state_dict()
train_one_epoch(model, opt)
assert torch.equal(backbone_state["weight"], w0)
'''),
    ('snapshot of some entries by a helper, then a step', '''\
def backbone_state(m):
    return {k: v for k, v in m.state_dict().items() if not k.startswith("bias")}
model = nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
w0 = model.weight.detach().clone()
init = backbone_state(model)
opt.zero_grad(); model(torch.ones(1, 2)).sum().backward(); opt.step()
assert torch.equal(init["weight"], w0), "snapshot changed"
'''),
    ('snapshot, then weights swapped in by a helper that loads them', '''\
def evaluate_with(model, state):
    model.load_state_dict(state)
    return model(torch.ones(1, 2)).item()
model = nn.Linear(2, 1)
avg_state = {k: v * 0.5 for k, v in model.state_dict().items()}
w0 = model.weight.detach().clone()
orig_state = model.state_dict()
evaluate_with(model, avg_state)
model.load_state_dict(orig_state)
assert torch.equal(model.weight, w0), "snapshot changed"
'''),
    ('snapshot, then a helper that swaps other weights in and its own copy back', '''\
import copy
def evaluate_with(model, state):
    backup = copy.deepcopy(model.state_dict())
    model.load_state_dict(state)
    out = model(torch.ones(1, 2)).item()
    model.load_state_dict(backup)
    return out
model = nn.Linear(2, 1)
avg_state = {k: v * 0.5 for k, v in model.state_dict().items()}
w0 = model.weight.detach().clone()
init = model.state_dict()
evaluate_with(model, avg_state)
assert torch.equal(init["weight"], w0)
'''),
    ('snapshot of some entries loaded back by a helper, not strictly', '''\
def weights_of(m):
    return {k: v for k, v in m.state_dict().items() if not k.startswith("bias")}
def restore(model, state):
    model.load_state_dict(state, strict=False)
model = nn.Linear(2, 1)
w0 = model.weight.detach().clone()
init = weights_of(model)
restore(model, init)
assert torch.equal(init["weight"], w0)
'''),
    ('snapshot loaded back by a helper', '''\
def restore(model, state):
    model.load_state_dict(state)
model = nn.Linear(2, 1)
w0 = model.weight.detach().clone()
orig_state = model.state_dict()
restore(model, orig_state)
assert torch.equal(orig_state["weight"], w0)
'''),
    ('snapshot of a frozen backbone, an epoch handed an optimizer of what requires grad', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone, self.head = nn.Linear(2, 2), nn.Linear(2, 1)
    def forward(self, x):
        return self.head(self.backbone(x))
def train_one_epoch(model, opt):
    opt.zero_grad(); model(torch.randn(4, 2)).sum().backward(); opt.step()
model = Net()
model.backbone.requires_grad_(False)
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
w0 = model.backbone.weight.detach().clone()
backbone_state = model.backbone.state_dict()
train_one_epoch(model, opt)
assert torch.equal(backbone_state["weight"], w0)
'''),
    ('snapshot of a frozen backbone, an epoch that thaws the model', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone, self.head = nn.Linear(2, 2), nn.Linear(2, 1)
    def forward(self, x):
        return self.head(self.backbone(x))
def train_one_epoch(model, opt):
    model.requires_grad_(True)
    opt.zero_grad(); model(torch.randn(4, 2)).sum().backward(); opt.step()
model = Net()
model.backbone.requires_grad_(False)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
w0 = model.backbone.weight.detach().clone()
backbone_state = model.backbone.state_dict()
train_one_epoch(model, opt)
assert torch.equal(backbone_state["weight"], w0), "snapshot changed"
'''),
    ('snapshot of a head, an epoch handed an optimizer of the head', '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone, self.head = nn.Linear(2, 2), nn.Linear(2, 1)
    def forward(self, x):
        return self.head(self.backbone(x))
def train_one_epoch(model, opt):
    opt.zero_grad(); model(torch.randn(4, 2)).sum().backward(); opt.step()
model = Net()
opt = torch.optim.SGD(model.head.parameters(), lr=0.1)
h0 = model.head.weight.detach().clone()
head_state = model.head.state_dict()
train_one_epoch(model, opt)
assert torch.equal(head_state["weight"], h0), "snapshot changed"
'''),
    ('snapshot of a teacher, a distillation step that also copies the student into it', '''\
def distill(student, teacher, opt):
    opt.zero_grad(); student(torch.ones(1, 2)).sum().backward(); opt.step()
    teacher.load_state_dict(student.state_dict())
teacher, student = nn.Linear(2, 1), nn.Linear(2, 1)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
w0 = teacher.weight.detach().clone()
teacher_state = teacher.state_dict()
distill(student, teacher, opt)
assert torch.equal(teacher_state["weight"], w0), "snapshot changed"
'''),
    ('best state_dict snapshot aliasing', '''\
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best = model.state_dict()
for _ in range(2):
    opt.zero_grad(); model(torch.randn(4, 3)).sum().backward(); opt.step()
assert not torch.equal(best["weight"], model.state_dict()["weight"]), "snapshot changed"
'''),
    ('best state_dict deepcopy', '''\
import copy
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best = copy.deepcopy(model.state_dict())
for _ in range(2):
    opt.zero_grad(); model(torch.randn(4, 3)).sum().backward(); opt.step()
assert not torch.equal(best["weight"], model.state_dict()["weight"]), "snapshot changed"
'''),
    ('loss total', '''\
model = nn.Linear(3, 2)
total = 0
for _ in range(3):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    loss.backward()
    total += loss
assert not total.requires_grad, "total keeps graph"
'''),
    ('loss total of an evaluation after a setup that turns grad off', '''\
model = nn.Linear(4, 1)
def setup_eval():
    model.eval()
    torch.set_grad_enabled(False)
def evaluate(batches):
    total = 0
    for x in batches:
        total += model(x).pow(2).mean()
    return total / len(batches)
setup_eval()
history = []
for epoch in range(2):
    history.append(evaluate([torch.randn(8, 4) for _ in range(3)]))
print([float(h) for h in history])
assert not history[0].requires_grad
'''),
    ('loss totals stored in a tensor made for them', '''\
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
epoch_losses = torch.zeros(3)
for i in range(3):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    epoch_losses[i] = loss
print("mean", epoch_losses.mean().item())
assert not epoch_losses.requires_grad, "total keeps graph"
'''),
    ('loss totals stored in a tensor made for them, detached', '''\
model = nn.Linear(3, 2)
epoch_losses = torch.zeros(3)
for i in range(3):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    loss.backward()
    epoch_losses[i] = loss.detach()
assert not epoch_losses.requires_grad
'''),
    ('loss totals stored in a tensor made for them, then back-propagated', '''\
model = nn.Linear(3, 2)
losses = torch.empty(3)
for i in range(3):
    losses[i] = model(torch.randn(4, 3)).pow(2).mean()
losses.mean().backward()
'''),
    ('epoch loss total appended to a history list', '''\
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
def train_epoch():
    epoch_loss = 0.0
    for _ in range(3):
        opt.zero_grad()
        loss = model(torch.randn(4, 3)).pow(2).mean()
        loss.backward()
        opt.step()
        epoch_loss += loss
    return epoch_loss / 3
history = []
for epoch in range(2):
    history.append(train_epoch())
print("best", min(history))
assert not history[0].requires_grad, "total keeps graph"
'''),
    ('epoch loss totals appended to a list, then back-propagated', '''\
model = nn.Linear(3, 2)
def epoch():
    total = 0.0
    for _ in range(3):
        total += model(torch.randn(4, 3)).pow(2).mean()
    return total
history = []
for _ in range(2):
    history.append(epoch())
torch.stack(history).sum().backward()
'''),
    ('loss total item', '''\
model = nn.Linear(3, 2)
total = 0
for _ in range(3):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    loss.backward()
    total += loss.item()
assert not torch.is_tensor(total) or not total.requires_grad, "total keeps graph"
'''),
    ('loss total via helper', '''\
model = nn.Linear(3, 2)
def compute(x):
    return model(x).pow(2).mean()
total = 0
for _ in range(3):
    loss = compute(torch.randn(4, 3))
    loss.backward()
    total += loss
assert not total.requires_grad, "total keeps graph"
'''),
    ('detached weights snapshot numpy', '''\
w = nn.Parameter(torch.ones(3))
snap = w.detach().numpy()
with torch.no_grad():
    w.add_(1)
assert snap[0] == 1.0, "snapshot changed"
'''),
    ('detached weights snapshot clone ok', '''\
w = nn.Parameter(torch.ones(3))
snap = w.detach().clone()
with torch.no_grad():
    w.add_(1)
assert snap[0] == 1.0, "snapshot changed"
'''),
    ('data snapshot via optimizer', '''\
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
old = model.weight.data
opt.zero_grad(); model(torch.randn(4, 3)).sum().backward(); opt.step()
assert not torch.equal(old, model.weight), "snapshot changed"
'''),
    ('trainer fit with train_epoch method', '''\
class T:
    def __init__(self):
        self.model = nn.Linear(3, 2)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
    def train_epoch(self):
        self.opt.zero_grad(); self.model(torch.randn(4, 3)).sum().backward(); self.opt.step()
    def fit(self):
        best_state = None
        for epoch in range(3):
            self.train_epoch()
            if epoch == 0:
                best_state = self.model.state_dict()
        assert not torch.equal(best_state["weight"], self.model.state_dict()["weight"]), "snapshot changed"
T().fit()
'''),
    ('trainer fit attribute snapshot', '''\
class T:
    def __init__(self):
        self.model = nn.Linear(3, 2)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
    def train_epoch(self):
        self.opt.zero_grad(); self.model(torch.randn(4, 3)).sum().backward(); self.opt.step()
    def fit(self):
        for epoch in range(3):
            self.train_epoch()
            if epoch == 0:
                self.best_state = self.model.state_dict()
        assert not torch.equal(self.best_state["weight"], self.model.state_dict()["weight"]), "snapshot changed"
T().fit()
'''),
    ('function fit with train function', '''\
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
def train_epoch():
    opt.zero_grad(); model(torch.randn(4, 3)).sum().backward(); opt.step()
best = None
for epoch in range(3):
    train_epoch()
    if epoch == 0:
        best = model.state_dict()
assert not torch.equal(best["weight"], model.state_dict()["weight"]), "snapshot changed"
'''),
    ('function fit passing model and opt', '''\
def train_epoch(model, opt):
    opt.zero_grad(); model(torch.randn(4, 3)).sum().backward(); opt.step()
def fit():
    model = nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    best = None
    for epoch in range(3):
        train_epoch(model, opt)
        if epoch == 0:
            best = model.state_dict()
    assert not torch.equal(best["weight"], model.state_dict()["weight"]), "snapshot changed"
fit()
'''),
    ('best_model_wts dict comprehension clone ok', '''\
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best = {k: v.clone() for k, v in model.state_dict().items()}
opt.zero_grad(); model(torch.randn(4, 3)).sum().backward(); opt.step()
assert torch.equal(best["weight"], best["weight"])
'''),
    ('TNS502 with global-stepping function', '''\
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
def train_epoch():
    opt.zero_grad(); model(torch.randn(4, 3)).sum().backward(); opt.step()
w0 = model.weight.detach()
train_epoch()
assert not torch.equal(w0, model.weight), "snapshot changed"
'''),
    ('function steps its own local optimizer on other model', '''\
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
def train_other():
    other = nn.Linear(3, 2)
    opt = torch.optim.SGD(other.parameters(), lr=0.1)
    opt.zero_grad(); other(torch.randn(4, 3)).sum().backward(); opt.step()
best = model.state_dict()
train_other()
assert torch.equal(best["weight"], model.weight)
'''),
    ('caller shadows model', '''\
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
def train_epoch():
    opt.zero_grad(); model(torch.randn(4, 3)).sum().backward(); opt.step()
def fit():
    model = nn.Linear(3, 2)
    best = model.state_dict()
    train_epoch()
    assert torch.equal(best["weight"], model.weight)
fit()
'''),
    ('caller in main uses global', '''\
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
def train_epoch():
    opt.zero_grad(); model(torch.randn(4, 3)).sum().backward(); opt.step()
def main():
    best = model.state_dict()
    train_epoch()
    assert not torch.equal(best["weight"], model.weight), "snapshot changed"
main()
'''),
    ('validate method keeps snapshot, fit restores', '''\
class T:
    def __init__(self):
        self.model = nn.Linear(3, 2)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.best = float("inf")
        self.best_state = None
    def train_epoch(self):
        self.opt.zero_grad(); self.model(torch.randn(4, 3)).sum().backward(); self.opt.step()
    def validate(self, epoch):
        loss = float(epoch == 0)
        if epoch == 0:
            self.best_state = self.model.state_dict()
    def fit(self):
        for epoch in range(3):
            self.train_epoch()
            self.validate(epoch)
        w_last = self.model.weight.detach().clone()
        self.model.load_state_dict(self.best_state)
        assert not torch.equal(self.model.weight, w_last), "snapshot changed"
T().fit()
'''),
    ('snapshot in method', '''\
class T:
    def __init__(self):
        self.model = nn.Linear(3, 2)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
    def save_best(self):
        self.best = self.model.state_dict()
    def step(self):
        self.opt.zero_grad(); self.model(torch.randn(4, 3)).sum().backward(); self.opt.step()
t = T(); t.save_best(); t.step()
assert not torch.equal(t.best["weight"], t.model.state_dict()["weight"]), "snapshot changed"
'''),
]

# Raising programs that default mode leaves to --strict: what they convert is one value of a
# dict (or a list) that also holds others and was stored by a key not known as one of its own
# (`sd["out"] = ...` in a state dict), or a value returned through `functools.partial` of a
# function (what the partial holds is not bound to its parameters), or one of the state dict of
# `keep_vars=True` (its values are the parameters, and the buffers, which do not require grad),
# or a value of a dict a function is handed (what its calls pass for a dict is not followed key
# by key), or what a method of an instance changes in place in a module its constructor was
# handed (`t.unfreeze()`: the attribute is not followed once a method changes it).
STRICT_ONLY = {"partial of a function", "state_dict keep_vars", "store output into sd", "dict passed to function",
               "method modifies attr elsewhere"}

# Programs that run clean but that --strict reports as "may": a method's result whose device
# depends on where the instance is (it may have been moved since), the output of a frozen model
# (a layer may have been thawed since), a public function's parameter (another module may pass
# anything), and one value of a list or a dict that also holds values that require grad (or of
# what a class's `__getitem__` returns, which for another key requires grad), a value of a dict
# after `update()`, after `**other`, or after a call statement that hands it to a function, or
# read by a key in a variable.
STRICT_MAY = {'a blur kernel buffer beside a padding the constructor computes from its size, the conv call split over lines', 'a Gaussian smoothing kernel normalised by its sum into a buffer, passed to conv1d among other arguments', 'a linear layer built frozen with requires_grad_(False), and one without bias whose weight is frozen', 'batch norm without affine parameters by position, and an instance norm', 'an embedding whose weight the constructor copies in and freezes (the classic GloVe layer)', 'an embedding the constructor freezes with requires_grad_', 'a feature extractor whose constructor freezes its backbone in a loop', 'a linear layer whose weight and bias the constructor freezes one by one', 'pretrained embeddings and a layer norm without affine parameters', 'a Sequential of pretrained embeddings and an activation, and a ModuleList of pretrained tables', "a rotary embedding's frequencies computed from the constructor's sizes into a buffer", "the PyTorch tutorial's positional encoding: a dropout and a buffer it fills", "an attribute the constructor computes with a local model it freezes by a call", "a module whose only parameter is made frozen positionally, and a buffer and a dropout", "a module of pretrained embeddings (frozen by from_pretrained) and new buffers", "a module whose only parameter is made not to require grad", "a setup function of the file turns grad off, then a helper converts", "helper makes a detached copy of its argument that does not require grad and converts it", "a module whose constructor calls its own freezing method", "decorator of the file runs the function under no_grad in a try, restoring train mode after", "decorator of the file whose wrapper is itself decorated no_grad", "an embedding made from pretrained vectors, frozen by an unknown flag", "an embedding made from pretrained vectors, frozen by default", "decorator of the file sets eval mode, then runs the function under no_grad", "constructors of plain classes that freeze what they are handed", "a converter that detaches a tensor and asarrays anything else, given a layer output", "a Sequential of a frozen module and a layer without parameters", "a generator made and iterated under no_grad", "method under no_grad decorator", "decorator of the file runs the function under no_grad", "static method passed a frozen model",
              "plain method called on the class with an instance", "partial of a no_grad function", "lambda to_np called with a detached output",
              "lambda computing output called only under no_grad", "dataclass field its method detaches", "a conversion to long is no move", "nested def sees the local frozen model, not the global", "class attr model in other method under no_grad",
              "method called only under no_grad", "frozen params loop", "frozen requires_grad_(False)",
              "function param tensor from caller detached", "store output into sd read other key",
              "list store analog", "list analog 2", "getitem by key mixed",
              "dict update detached", "dict passed to function no grad value", "double star merge",
              "dict passed to mutating function", "property submodule of frozen net",
              "dict passed to method that detaches", "dict key variable", "dict alias update",
              "trainer freeze after construct, t.model(x)", "trainer freeze after construct, t.evaluate(x)",
              "trainer freeze param loop", "trainer in function", "two instances, frozen one used",
              "keyword construction, helper method chain", "inherited constructor",
              "module class wraps, frozen later", "module class wraps, frozen later, direct call", "moved attr",
              "wrap frozen before", "wrap frozen before two sites", "trainer freeze method then predict",
              "submodule frozen, submodule called", "instance method freezes then forward in method",
              "output stored on self in no_grad then numpy elsewhere", "method only self, frozen instance",
              "method called in function on frozen param model", "frozen net, submodule attr called",
              "dict of models, encoder frozen used", "dict built by keys, frozen",
              "param flag false default unknown", "in-file factory frozen flag true, also called false",
              "in-file factory positional flag true only call", "module-level trainer, freeze in main",
              "only layer frozen via attribute", "both layers frozen by loops",
              "freeze helper of the file, then the teacher's output", "set_requires_grad helper of the file, D frozen",
              "freeze helper of the file by requires_grad_", "freeze helper given a list of models",
              "trainer handed the model, then the freeze helper", "freeze helper of the file, its result kept",
              "toggle_grad helper of the file, D frozen", "set_requires_grad(model, bool) helper, D frozen",
              "freeze helper of the file, model of a function",
              "freeze helper of the file on an attribute in the constructor",
              "a logger method keeps what its calls pass, detached or under no_grad",
              "a constructor freezes what it is handed behind its flag",
              # (an attribute a method keeps from its parameter: what it holds when converted
              # is a question of order)
              "a kept parameter replaced before another method converts it",
              "a kept parameter of two instances, or kept under a condition, or set from outside",
              "a kept parameter converted by a subclass that detaches it"}


def _run(torch, code: str):
    """(the line of `code` whose call raised, the exception), or (None, None) where it ran."""
    env = {"__name__": "__main__"}
    try:
        # (A program that switches grad off, `torch.set_grad_enabled(False)`, switches it off for
        # the process: the next program starts as a fresh one would.)
        with warnings.catch_warnings(), torch.enable_grad():
            warnings.simplefilter("ignore")
            exec(compile(code, "<program>", "exec"), env)
    except Exception as e:  # noqa: BLE001 - the program's own failure is the verdict
        lines = [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == "<program>"]
        return lines[-1], e
    return None, None


def test_numpy_rules_report_the_programs_that_raise():
    torch = pytest.importorskip("torch")
    wrong = []
    for title, body in TNS1_PROGRAMS:
        code = HEAD + body
        line, error = _run(torch, code)
        default, strict = reported_lines(code, "TNS1"), reported_lines(code, "TNS1", strict=True)
        if line is None:
            if default:
                wrong.append((title, "runs clean, reported", sorted(default)))
            elif bool(strict) != (title in STRICT_MAY):
                wrong.append((title, "runs clean", "strict: may" if strict else "strict: silent"))
            continue
        # (TNS105's: a NumPy reduction calls the tensor's method with NumPy's keywords.)
        assert isinstance(error, (RuntimeError, TypeError)) and any(
            s in str(error).lower() for s in ("numpy", "unexpected keyword argument", "must be int, not nonetype",
                                              "invalid combination of arguments")), (title, error)
        if line not in strict:
            wrong.append((title, f"raises at line {line}, not reported in strict mode", sorted(strict)))
        elif (line in default) == (title in STRICT_ONLY):
            wrong.append((title, f"raises at line {line}", "default" if line in default else "strict only"))
        if default - {line}:
            wrong.append((title, "reported where nothing raises", sorted(default - {line})))
    assert wrong == []


def test_tns401_reports_the_writes_that_raise():
    torch = pytest.importorskip("torch")
    wrong = []
    for title, body in TNS4_PROGRAMS:
        code = HEAD + body
        line, error = _run(torch, code)
        assert line is None or "leaf Variable" in str(error), (title, error)
        for strict in (False, True):
            found = reported_lines(code, "TNS401", strict)
            if found != ({line} if line is not None else set()):
                wrong.append((title, strict, line, sorted(found)))
    assert wrong == []


def test_snapshot_rules_report_the_snapshots_that_change():
    torch = pytest.importorskip("torch")
    wrong = []
    for title, body in TNS5_PROGRAMS:
        code = HEAD + body
        line, error = _run(torch, code)
        changed = line is not None and isinstance(error, AssertionError)
        assert line is None or changed, (title, error)
        codes = "TNS503" if "total" in title else ("TNS501", "TNS502")
        found = set().union(*(reported_lines(code, c) for c in ((codes,) if isinstance(codes, str) else codes)))
        # (Reported where the snapshot or the total is taken, before the line that shows it.)
        if bool(found) != changed or any(f > line for f in found if changed):
            wrong.append((title, "changed" if changed else "kept", sorted(found)))
    assert wrong == []


def test_tns202_reports_the_copies_torch_warns_of():
    torch = pytest.importorskip("torch")
    wrong = []
    for title, body in TNS2_PROGRAMS:
        code = HEAD + "import warnings\nwarnings.simplefilter('error')\n" + body
        line, error = _run(torch, code)
        assert line is None or "To copy construct from a tensor" in str(error), (title, error)
        for strict in (False, True):
            found = reported_lines(code, "TNS202", strict)
            if found != ({line} if line is not None else set()):
                wrong.append((title, strict, line, sorted(found)))
    assert wrong == []
