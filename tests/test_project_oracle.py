"""Whole projects held to real torch: small programs split over files (a model class, a helper, a
trainer, a package that re-exports), whose values cross from one file to another, each run on
torch (CPU).  The rules check every file of the project with the project's summaries, as the CLI
does: a program that runs clean is not reported by default (nor, except those listed, in strict
mode); one that raises is reported by default (except those listed) at a line of the traceback
in the project (where the value is used, or the call that hands it to the function where it
raises), and nowhere else."""

import os
import runpy
import sys
import traceback
import warnings

import pytest

from flake8_tensorcopy.analysis.project import Project
from flake8_tensorcopy.engine import lint_text, select_rules
from flake8_tensorcopy.rules.base import Options

HEAD = "import torch\nimport torch.nn as nn\nimport numpy as np\n"
# The first line of a module that gets no HEAD (it imports no torch: a helper that only calls
# methods of what it is handed).
PLAIN = "# (imports nothing)\n"

PROGRAMS = [
    # A Keras-style max-norm constraint of a torch-free module, its write behind an `if`, applied
    # after each step outside no_grad: raises at the first call.
    ('TNS401', 'max-norm constraint of a torch-free module renormalises the parameters it is handed', {
        'constraints.py': PLAIN + '''\
def apply_max_norm(model, max_norm=3.0):
    for name, param in model.named_parameters():
        if "weight" in name and param.dim() > 1:
            param.renorm_(2, 0, max_norm)
''',
        'main.py': '''\
from constraints import apply_max_norm
model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.5)
opt.zero_grad()
model(torch.randn(4, 6)).sum().backward()
opt.step()
with torch.no_grad():
    apply_max_norm(model, 1.0)
apply_max_norm(model, 1.0)
'''}),
    # DCGAN's initialiser of another module, which tells layers by their class's name, handed to
    # `apply`: raises where grad is on and the network is not frozen.
    ('TNS401', 'initialiser of another module handed to apply', {
        'nets.py': PLAIN + '''\
def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        m.weight.normal_(0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        m.weight.normal_(1.0, 0.02)
        m.bias.fill_(0)
''',
        'main.py': '''\
from nets import weights_init
netG = nn.Sequential(nn.ConvTranspose2d(4, 3, 3), nn.BatchNorm2d(3))
with torch.no_grad():
    netG.apply(weights_init)
netD = nn.Sequential(nn.Conv2d(3, 4, 3))
netD.requires_grad_(False)
netD.apply(weights_init)
netG.apply(weights_init)
'''}),
    # A Lightning-style module's validation_step fills a list that on_validation_epoch_end
    # converts; the script of another module calls it only under no_grad.
    ('TNS1', 'validation outputs kept by a method another module calls only under no_grad', {
        'lit.py': '''\
class Lit(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Linear(4, 2)
        self.val_probs, self.val_targets = [], []
    def validation_step(self, batch, batch_idx):
        x, y = batch
        probs = self.model(x).softmax(-1)
        self.val_probs.append(probs)
        self.val_targets.append(y)
    def on_validation_epoch_end(self):
        probs = torch.cat(self.val_probs).numpy()
        targets = torch.cat(self.val_targets).numpy()
        self.val_probs.clear()
        self.val_targets.clear()
        return (probs.argmax(1) == targets).mean()
''',
        'main.py': '''\
from lit import Lit
lit = Lit()
lit.eval()
with torch.no_grad():
    for i in range(2):
        lit.validation_step((torch.randn(8, 4), torch.randint(0, 2, (8,))), i)
print(lit.on_validation_epoch_end())
'''}),
    # A dataset of another module that converts what its constructor is given: raises at the
    # call that hands it a model output; not for a detached one, nor under no_grad, nor for a
    # class whose constructor keeps it as it is.
    ('TNS1', 'dataset of another module converts what its constructor is given', {
        'data.py': '''\
import numpy as np
class FeatureSet:
    def __init__(self, feats, labels=None):
        self.feats = feats.numpy()
        self.labels = labels
    def __len__(self):
        return len(self.feats)
class Holder:
    def __init__(self, feats):
        self.feats = feats
    def array(self):
        return np.zeros(3)
''',
        'main.py': '''\
from data import FeatureSet, Holder
model = nn.Linear(4, 3)
x = torch.randn(8, 4)
print(len(FeatureSet(model(x).detach())))
with torch.no_grad():
    print(len(FeatureSet(model(x))))
print(Holder(model(x)).array())
train_set = FeatureSet(model(x), labels=torch.zeros(8))
'''}),
    # The same through a constructor a class inherits from a base of its module, the module
    # imported whole, converting with NumPy; not a class of two bases whose first one inherits
    # the constructor that runs (`Root.__init__`, which keeps what it is given).
    ('TNS1', 'constructor inherited from a base of another module converts with NumPy', {
        'data.py': '''\
import numpy as np
class ArraySet:
    def __init__(self, feats):
        self.feats = np.asarray(feats)
class LabeledSet(ArraySet):
    def label(self):
        return 0
class Root:
    def __init__(self, feats):
        self.feats = feats
class Store(Root):
    def label(self):
        return 1
class Both(Store, ArraySet):
    pass
''',
        'main.py': '''\
import data as D
model = nn.Linear(4, 3)
kept = D.Both(model(torch.randn(8, 4)))
ds = D.LabeledSet(model(torch.randn(8, 4)))
'''}),
    # A function of another module that hands what it is given to a function of its own module
    # that converts it (`return ece(torch.softmax(logits, 1), y)`), or the alias it imports a
    # converter of a third module by: raises at the conversion; not where it detaches first.
    ('TNS1', 'function of another module hands its argument to a converter of its own module', {
        'metrics.py': '''\
def ece(probs, targets):
    return float(abs(probs.numpy().max(1) - targets.numpy()).mean())
def from_logits(logits, targets):
    return ece(torch.softmax(logits, dim=1), targets)
def from_logits_detached(logits, targets):
    return ece(torch.softmax(logits, dim=1).detach(), targets)
''',
        'main.py': '''\
from metrics import from_logits, from_logits_detached
net = nn.Linear(3, 2)
print(from_logits_detached(net(torch.randn(4, 3)), torch.zeros(4)))
print(from_logits(net(torch.randn(4, 3)), torch.zeros(4)))
'''}),
    # (main.py checked first: what the relay's walk asks does not rest on evaluate.py being
    # checked before.)
    ('TNS1', 'relay of another module calls a converter by an alias', {
        'main.py': '''\
from evaluate import run
print(run(nn.Linear(3, 2), torch.randn(4, 3)))
''',
        'evaluate.py': '''\
from convert import to_np as _to_np
def run(model, x):
    return _to_np(model(x))
''',
        'convert.py': '''\
def to_np(t):
    return t.numpy()
'''}),
    # A module of a namespace package (no `__init__.py`) imported as a name of its package
    # (`from . import convert`), whose function converts what it is given: raises there.
    ('TNS1', 'converter of a namespace package imported as a name of its package', {
        'tools/convert.py': '''\
def to_numpy(t):
    return t.cpu().numpy()
''',
        'tools/engine.py': '''\
import torch
from . import convert
def predict(model, x):
    return convert.to_numpy(torch.sigmoid(model(x)))
''',
        'main.py': '''\
from tools.engine import predict
print(predict(nn.Linear(5, 1), torch.randn(8, 5)).shape)
'''}),
    ('TNS1', 'plotting helper of another module given a model output', {
        'viz.py': '''\
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
def plot_predictions(x, y):
    fig, ax = plt.subplots()
    ax.plot(x, y)
    plt.close(fig)
''',
        'main.py': '''\
from viz import plot_predictions
model = nn.Linear(4, 1)
x = torch.randn(20, 4)
with torch.no_grad():
    plot_predictions(x[:, 0], model(x)[:, 0])
plot_predictions(x[:, 0], model(x)[:, 0].detach())
plot_predictions(x[:, 0], model(x)[:, 0])
'''}),
    # A saliency helper makes a leaf of a detached copy of what it is given (whatever that is in
    # its own module) and converts the leaf: it raises whoever calls it, under no_grad too.
    ('TNS1', 'saliency helper of another module converts the leaf it makes of its argument', {
        'saliency.py': '''\
@torch.enable_grad()
def input_gradients(model, x):
    x = x.detach().clone().requires_grad_(True)
    model(x).sum().backward()
    return x.grad.numpy(), x.numpy()
''',
        'main.py': '''\
from saliency import input_gradients
net = nn.Linear(4, 2)
with torch.no_grad():
    g, inp = input_gradients(net, torch.randn(2, 4))
'''}),
    ('TNS1', 'setup function of another module turns grad off for good', {
        'env_setup.py': '''\
def setup_inference(seed=0):
    torch.manual_seed(seed)
    torch.set_grad_enabled(False)
''',
        'main.py': '''\
import env_setup
from env_setup import setup_inference
setup_inference()
net = nn.Linear(4, 2)
print(net(torch.randn(2, 4)).numpy())
torch.set_grad_enabled(True)
env_setup.setup_inference()
print(net(torch.randn(2, 4)).numpy())
'''}),
    # A module of another file whose forward returns a NumPy array: `.mean(0)` and `.reshape()`
    # of what it returns are NumPy's, and NumPy's reductions of them run.
    ('TNS1', 'module of another module whose forward returns a NumPy array, reduced by NumPy', {
        'models.py': '''\
class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    @torch.no_grad()
    def forward(self, x):
        return self.fc(x).softmax(-1).numpy()
''',
        'main.py': '''\
from models import Scorer
model = Scorer()
x = torch.randn(5, 4)
conf = np.max(model(x).mean(0))
best = np.max(model(x).reshape(-1))
'''}),
    ('TNS1', 'helper of another module star-imported by a script that defines no function', {
        'utils.py': '''\
def to_numpy(t):
    return t.cpu().numpy()
''',
        'main.py': '''\
from utils import *
model = nn.Linear(4, 2)
preds = to_numpy(model(torch.randn(8, 4)))
'''}),
    ('TNS1', 'keepers of another module whose converting method runs with grad off', {
        'nogradkeep.py': '''\
class Logger:
    def __init__(self):
        self.last = None
    def log(self, v):
        self.last = v
    def dump(self):
        return self.last.numpy()
class Meter:
    def __init__(self):
        self.vals = []
    def update(self, v):
        self.vals.append(v)
    def avg(self):
        return np.mean(self.vals)
''',
        'main.py': '''\
from nogradkeep import Logger, Meter
net = nn.Linear(2, 1)
loss = net(torch.ones(1, 2)).sum()
logger, meter = Logger(), Meter()
logger.log(loss)
meter.update(loss)
with torch.no_grad():
    print(logger.dump())
torch.set_grad_enabled(False)
print(meter.avg())
'''}),
    ('TNS1', 'keepers of another module whose attribute another method resets, or the file sets', {
        'resetting.py': '''\
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
        self.vals.clear()
    def avg(self):
        return np.mean(self.vals)
class Plain:
    def __init__(self):
        self.last = None
    def log(self, v):
        self.last = v
    def dump(self):
        return self.last.numpy()
''',
        'main.py': '''\
from resetting import Logger, Meter, Plain
net = nn.Linear(2, 1)
loss = net(torch.ones(1, 2)).sum()
logger, meter, plain = Logger(), Meter(), Plain()
logger.log(loss)
logger.reset()
meter.update(loss)
meter.clear()
plain.log(loss)
plain.last = plain.last.detach()
print(logger.dump(), meter.avg(), plain.dump())
'''}),
    ('TNS1', 'models of another module return the values and indices of max and topk whole', {
        'topmodels.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        return h.max(1)
class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        return self.fc(x).topk(2, dim=1)
''',
        'main.py': '''\
from topmodels import Net, Top
out = Net()(torch.randn(2, 4))
print(out.indices.numpy())
v, i = Top()(torch.randn(2, 4))
print(i.numpy())
print(v.numpy())
'''}),
    ('TNS1', 'constructor of another module freezes what it is handed behind its flag, left false', {
        'probing.py': '''\
class Probe(nn.Module):
    def __init__(self, backbone, freeze=False):
        super().__init__()
        self.backbone = backbone
        if freeze:
            for p in self.backbone.parameters():
                p.requires_grad = False
def wrap(net, freeze=True):
    if freeze:
        net.requires_grad_(False)
    return net
''',
        'main.py': '''\
from probing import Probe, wrap
a = nn.Linear(4, 4)
wrap(a, freeze=False)
b = nn.Linear(4, 4)
Probe(b)
print(b(torch.ones(1, 4)).numpy() if a(torch.ones(1, 4)).requires_grad else None)
'''}),
    ('TNS1', 'constructor of another module freezes what it is handed behind its flag', {
        'probing.py': '''\
class Probe(nn.Module):
    def __init__(self, backbone, freeze=False):
        super().__init__()
        self.backbone = backbone
        if freeze:
            self.backbone.requires_grad_(False)
def wrap(net, freeze=True):
    if freeze:
        net.requires_grad_(False)
    return net
''',
        'main.py': '''\
from probing import Probe, wrap
a = nn.Linear(4, 4)
probe = Probe(a, freeze=True)
b = nn.Linear(4, 4)
wrap(b)
print(a(torch.ones(1, 4)).numpy(), b(torch.ones(1, 4)).numpy())
'''}),
    ('TNS1', 'constructor calls the freezing method it inherits from a base of another module', {
        'frozen_base.py': '''\
class Frozen(nn.Module):
    def freeze(self):
        for p in self.parameters():
            p.requires_grad_(False)
''',
        'main.py': '''\
from frozen_base import Frozen
class Enc(Frozen):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)
        self.freeze()
    def forward(self, x):
        return self.lin(x)
print(Enc()(torch.randn(2, 3)).numpy())
'''}),
    ('TNS1', 'attack helper of another module decorated enable_grad, called under no_grad', {
        'attacks.py': '''\
@torch.enable_grad()
def attack(net, x):
    return net(x.clone().requires_grad_(True)).sum()
''',
        'main.py': '''\
from attacks import attack
net = nn.Linear(3, 2)
with torch.no_grad():
    out = attack(net, torch.randn(4, 3))
print(out.numpy())
'''}),
    ('TNS1', 'EMA of another module keeps a deep copy of the model', {
        'ema.py': '''\
from copy import deepcopy
class EMA:
    def __init__(self, model):
        self.module = deepcopy(model)
''',
        'main.py': '''\
from ema import EMA
net = nn.Linear(2, 2)
ema = EMA(net)
net.requires_grad_(False)
print(ema.module(torch.ones(2)).numpy())
'''}),
    ('TNS1', 'EMA of another module keeps a deep copy of a frozen model', {
        'ema.py': '''\
from copy import deepcopy
class EMA:
    def __init__(self, model):
        self.module = deepcopy(model)
''',
        'main.py': '''\
from ema import EMA
net = nn.Linear(2, 2).requires_grad_(False)
print(EMA(net).module(torch.ones(2)).numpy())
'''}),
    # (The meta device stands for an accelerator: `.numpy()` raises the same TypeError.)
    ('TNS1', 'converter of another module given a tensor on an accelerator', {
        'utils.py': '''\
def to_numpy(t):
    return t.detach().numpy()
''',
        'main.py': '''\
from utils import to_numpy
print(to_numpy(torch.ones(2)))
x = torch.ones(2, device="meta")
with torch.no_grad():
    print(to_numpy(x * 2))
'''}),
    # (A package's `__init__.py` is written without the imports: a module that does not import
    # torch, whose method's parameter only the call shows is a tensor.)
    ('TNS1', 'predictor of another module keeps the model it is handed in eval mode', {
        'predictor/__init__.py': '''\
class Predictor:
    def __init__(self, model):
        self.model = model.eval()
    def predict(self, x):
        return self.model(x).numpy()
''',
        'main.py': '''\
from predictor import Predictor
Predictor(nn.Linear(2, 2)).predict(torch.ones(2))
'''}),
    ('TNS1', 'logger of another module converts the tensor a method call passes', {
        'logs.py': '''\
class Logger:
    def log(self, t, scale=1):
        return t.numpy() * scale
''',
        'main.py': '''\
from logs import Logger
lg = Logger()
w = torch.ones(2, requires_grad=True)
lg.log(w.detach())
lg.log(w * 2)
'''}),
    ('TNS1', 'logger of another module that detaches what a method call passes', {
        'logs.py': '''\
class Logger:
    def log(self, t):
        return t.detach().numpy()
''',
        'main.py': '''\
from logs import Logger
print(Logger().log(torch.ones(2, requires_grad=True)))
'''}),
    # Look-alikes of a method of another module's class that keeps what it is passed, which another
    # of its methods converts (the MARKED entries): what it keeps is detached, a float, made under
    # no_grad, converted detached, kept behind a flag or rebound first, never converted, or
    # replaced by what a later call under no_grad passes before it is converted.
    ('TNS1', 'logger of another module keeps what method calls pass: detached, no_grad, never dumped', {
        'logkeep.py': '''\
class Logger:
    def __init__(self):
        self.last = None
    def log(self, v):
        self.last = v
    def dump(self):
        return self.last.numpy()
class SafeLogger:
    def __init__(self):
        self.last = None
    def log(self, v):
        self.last = v
    def dump(self):
        return self.last.detach().numpy()
class FlagLogger:
    def __init__(self):
        self.last = torch.zeros(())
    def log(self, v, keep=False):
        if keep:
            self.last = v
    def dump(self):
        return self.last.numpy()
class DetachingLogger:
    def __init__(self):
        self.last = None
    def log(self, v):
        v = v.detach()
        self.last = v
    def dump(self):
        return self.last.numpy()
''',
        'main.py': '''\
from logkeep import Logger, SafeLogger, FlagLogger, DetachingLogger
net = nn.Linear(2, 1)
loss = net(torch.ones(1, 2)).sum()
a = Logger()
a.log(loss.detach())
print(a.dump())
b = SafeLogger()
b.log(loss)
print(b.dump())
c = Logger()
with torch.no_grad():
    c.log(net(torch.ones(1, 2)).sum())
print(c.dump())
d = Logger()
d.log(loss)
e = Logger()
e.log(loss.detach())
print(e.dump())
f = FlagLogger()
f.log(loss)
print(f.dump())
g = DetachingLogger()
g.log(loss)
print(g.dump())
h = Logger()
h.log(loss)
with torch.no_grad():
    h.log(net(torch.ones(1, 2)).sum())
print(h.dump())
'''}),
    ('TNS1', 'meter of another module appends what method calls pass: items, detached, never averaged', {
        'meterkeep.py': '''\
class Meter:
    def __init__(self):
        self.vals = []
    def update(self, v):
        self.vals.append(v)
    def avg(self):
        return np.mean(self.vals)
''',
        'main.py': '''\
from meterkeep import Meter
net = nn.Linear(2, 1)
items, detached, never = Meter(), Meter(), Meter()
for _ in range(2):
    loss = net(torch.ones(1, 2)).sum()
    items.update(loss.item())
    detached.update(loss.detach())
    never.update(loss)
print(items.avg(), detached.avg())
'''}),
    ('TNS1', 'converter inherited from a base class of another module', {
        'base.py': '''\
class BaseRunner:
    def to_numpy(self, t):
        return t.cpu().numpy()
''',
        'main.py': '''\
from base import BaseRunner
class Runner(BaseRunner):
    def __init__(self):
        self.model = nn.Linear(4, 2)
    def run(self, x):
        return self.to_numpy(self.model(x))
print(Runner().run(torch.randn(2, 4)))
'''}),
    ('TNS1', 'constructors of another module that freeze what they are handed or themselves', {
        'freezers.py': '''\
class Probe:
    def __init__(self, backbone):
        backbone.requires_grad_(False)
class LinearProbe:
    def __init__(self, backbone, dim):
        self.backbone = backbone
        self.head = nn.Linear(dim, 2)
        self.backbone.requires_grad_(False)
class Frozen(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 8)
        self.freeze()
    def freeze(self):
        for param in self.parameters():
            param.requires_grad = False
    def forward(self, x):
        return self.proj(x)
''',
        'main.py': '''\
from freezers import Probe, LinearProbe, Frozen
net = nn.Linear(2, 2)
Probe(net)
print(net(torch.ones(2)).numpy())
backbone = nn.Linear(4, 3)
probe = LinearProbe(backbone, 3)
print(backbone(torch.randn(2, 4)).numpy())
print(Frozen()(torch.randn(2, 4)).numpy())
'''}),
    ('TNS1', 'constructors of another module that freeze what they are handed by keyword or in a chain', {
        'freezers.py': '''\
class Probe:
    def __init__(self, net):
        net.requires_grad_(False)
class Keeper:
    def __init__(self, net):
        self.net = net.eval().requires_grad_(False)
''',
        'main.py': '''\
from freezers import Probe, Keeper
net = nn.Linear(3, 2)
Probe(net=net)
print(net(torch.randn(4, 3)).numpy())
other = nn.Linear(3, 2)
k = Keeper(other)
print(other(torch.randn(4, 3)).numpy())
'''}),
    ('TNS1', 'constructor of another module that freezes its own head, not the backbone', {
        'freezers.py': '''\
class LinearProbe:
    def __init__(self, backbone, dim):
        self.backbone = backbone
        self.head = nn.Linear(dim, 2)
        self.head.requires_grad_(False)
''',
        'main.py': '''\
from freezers import LinearProbe
backbone = nn.Linear(4, 3)
probe = LinearProbe(backbone, 3)
print(backbone(torch.randn(2, 4)).numpy())
'''}),
    ('TNS1', 'modules of another module without parameters: only a forward, a kept literal, new buffers', {
        'layers.py': '''\
class Double(nn.Module):
    def forward(self, x):
        return x * 2
class Scale(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor
    def forward(self, x):
        return x * self.factor
class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.zeros(2))
    def forward(self, x):
        return x - self.mean
''',
        'main.py': '''\
from layers import Double, Scale, Norm
print(Double()(torch.ones(2)).numpy(), Scale(2.0)(torch.ones(2)).numpy(), Norm()(torch.ones(2)).numpy())
'''}),
    ('TNS1', 'module of another module that keeps what it is handed, handed a tensor that requires grad', {
        'layers.py': '''\
class Scale(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor
    def forward(self, x):
        return x * self.factor
''',
        'main.py': '''\
from layers import Scale
print(Scale(2.0)(torch.ones(2)).numpy())
print(Scale(torch.ones(2, requires_grad=True))(torch.ones(2)).numpy())
'''}),
    ('TNS1', 'converter of another module that detaches a tensor and asarrays anything else', {
        'utils.py': '''\
def to_numpy(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    if isinstance(x, dict):
        return {k: to_numpy(v) for k, v in x.items()}
    return np.asarray(x)
''',
        'main.py': '''\
from utils import to_numpy
net = nn.Linear(2, 2)
print(to_numpy(net(torch.ones(2))), to_numpy({"out": net(torch.ones(2))}))
'''}),
    ('TNS1', 'NamedTuple output of a model of another module, a field computed without grad', {
        'model.py': '''\
from typing import NamedTuple
class Out(NamedTuple):
    logits: torch.Tensor
    pred: torch.Tensor
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        return Out(h, h.argmax(-1))
''',
        'main.py': '''\
from model import Net
out = Net()(torch.randn(2, 4))
print(out.pred.numpy())
'''}),
    ('TNS1', 'NamedTuple output of a model of another module, unpacked and indexed', {
        'model.py': '''\
from typing import NamedTuple
class Out(NamedTuple):
    logits: torch.Tensor
    pred: torch.Tensor
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        return Out(pred=h.argmax(-1), logits=h)
''',
        'main.py': '''\
from model import Net
net = Net()
logits, pred = net(torch.randn(2, 4))
print(pred.numpy(), net(torch.randn(2, 4))[1].numpy(), logits.detach().numpy())
'''}),
    ('TNS1', 'NamedTuple output of a model of another module, the field that requires grad', {
        'model.py': '''\
from typing import NamedTuple
class Out(NamedTuple):
    logits: torch.Tensor
    pred: torch.Tensor
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        return Out(h, h.argmax(-1))
''',
        'main.py': '''\
from model import Net
out = Net()(torch.randn(2, 4))
print(out.logits.numpy())
'''}),
    ('TNS1', 'dataclass output of a model of another module, a detached field', {
        'model.py': '''\
from dataclasses import dataclass
@dataclass
class Out:
    logits: torch.Tensor
    feats: torch.Tensor
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        h = self.fc(x)
        return Out(logits=h, feats=h.detach())
''',
        'main.py': '''\
from model import Net
out = Net()(torch.randn(2, 4))
print(np.asarray(out.feats))
'''}),
    ('TNS401', 'hand-written optimizer re-exported by a package', {
        'pkg/__init__.py': '''\
from .optim import MySGD
''',
        'pkg/optim.py': '''\
class MySGD:
    def __init__(self, params, lr=0.1):
        self.params = list(params)
        self.lr = lr
    def step(self):
        for p in self.params:
            p.add_(p.grad, alpha=-self.lr)
''',
        'main.py': '''\
from pkg import MySGD
net = nn.Linear(3, 2)
opt = MySGD(net.parameters())
net(torch.ones(1, 3)).sum().backward()
opt.step()
'''}),
    ('TNS1', 'evaluator re-exported by a package converts its model output', {
        'pkg/__init__.py': '''\
from .ev import Evaluator
''',
        'pkg/ev.py': '''\
class Evaluator:
    def __init__(self, model):
        self.model = model
    def scores(self, x):
        return np.asarray(self.model(x))
''',
        'main.py': '''\
from pkg import Evaluator
print(Evaluator(nn.Linear(3, 2)).scores(torch.ones(1, 3)))
'''}),
    ('TNS1', 'context manager of another module turns grad off', {
        'utils.py': '''\
import contextlib
@contextlib.contextmanager
def evaluating():
    with torch.no_grad():
        yield
''',
        'main.py': '''\
from utils import evaluating
net = nn.Linear(4, 2)
with evaluating():
    out = net(torch.randn(1, 4))
print(out.numpy())
'''}),
    ('TNS4', 'manual update in a context manager of another module', {
        'utils.py': '''\
import contextlib
@contextlib.contextmanager
def no_tracking():
    with torch.inference_mode():
        yield
''',
        'main.py': '''\
import utils
net = nn.Linear(4, 2)
net(torch.randn(8, 4)).pow(2).mean().backward()
with utils.no_tracking():
    for p in net.parameters():
        p -= 0.1 * p.grad
'''}),
    ('TNS1', 'weight frozen by a builder of another module', {
        'models.py': '''\
def build():
    net = nn.Linear(3, 2)
    net.weight.requires_grad = False
    return net
''',
        'main.py': '''\
from models import build
net = build()
w = net.weight.numpy()
b = net.bias.numpy()
'''}),
    ('TNS1', 'weight of a module-level layer frozen in another module', {
        'models.py': '''\
net = nn.Linear(3, 2)
net.weight.requires_grad_(False)
''',
        'main.py': '''\
from models import net
w = net.weight.numpy()
'''}),
    ('TNS1', 'dict of models of another module, its values called', {
        'models.py': '''\
HEADS = {"cls": nn.Linear(4, 3), "reg": nn.Linear(4, 1)}
''',
        'main.py': '''\
from models import HEADS
for name, head in HEADS.items():
    print(name, head(torch.randn(2, 4)).shape)
for head in HEADS.values():
    print(head(torch.randn(2, 4)).numpy())
'''}),
    ('TNS1', 'decorator of another module runs the function under no_grad', {
        'utils.py': '''\
import functools
def inference(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with torch.no_grad():
            return fn(*args, **kwargs)
    return wrapper
''',
        'main.py': '''\
from utils import inference
net = nn.Linear(4, 2)
@inference
def predict(x):
    return net(x).numpy()
print(predict(torch.randn(2, 4)))
'''}),
    ('TNS1', 'decorator of another module sets eval mode, then runs the function under no_grad', {
        'utils.py': '''\
import functools
def evaluation_mode(fn):
    @functools.wraps(fn)
    def wrapper(model, *args, **kwargs):
        model.eval()
        with torch.no_grad():
            return fn(model, *args, **kwargs)
    return wrapper
''',
        'main.py': '''\
from utils import evaluation_mode
@evaluation_mode
def predict(model, x):
    return model(x).numpy()
print(predict(nn.Linear(4, 2), torch.randn(2, 4)))
'''}),
    ('TNS401', 'leaf attribute of a class of another module written in place', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.temperature = nn.Parameter(torch.ones(1))
    def forward(self, x):
        return x / self.temperature
''',
        'main.py': '''\
from models import Net
net = Net()
net.temperature.fill_(0.05)
'''}),
    ('TNS401', 'leaf attribute of a class of another module written under no_grad', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.temperature = nn.Parameter(torch.ones(1))
''',
        'main.py': '''\
import models
net = models.Net()
with torch.no_grad():
    net.temperature[0] = 1
'''}),
    ('TNS401', 'subclass writes a leaf attribute its base of another module makes', {
        'base.py': '''\
class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(2))
''',
        'models.py': '''\
from base import Base
class Net(Base):
    def reset(self):
        self.gamma.fill_(1.0)
    def forward(self, x):
        return x * self.gamma
''',
        'main.py': '''\
from models import Net
net = Net()
net.reset()
'''}),
    ('TNS401', 'weight clipping helper of a module that imports no torch, handed a module', {
        'utils.py': PLAIN + '''\
def clip_weights(net, c):
    for p in net.parameters():
        p.clamp_(-c, c)
''',
        'main.py': '''\
from utils import clip_weights
netD = nn.Linear(4, 1)
clip_weights(netD, 0.01)
'''}),
    ('TNS401', 'weight clipping helper of a module that imports no torch, under no_grad or frozen', {
        'utils.py': PLAIN + '''\
def clip_weights(net, c):
    for p in net.parameters():
        p.clamp_(-c, c)
''',
        'main.py': '''\
from utils import clip_weights
netD = nn.Linear(4, 1)
with torch.no_grad():
    clip_weights(netD, 0.01)
clip_weights(nn.Linear(4, 1).requires_grad_(False), 0.01)
'''}),
    ('TNS401', 'weight clipping class of a module that imports no torch, handed a module', {
        'utils.py': PLAIN + '''\
class Clipper:
    def __init__(self, net, c=0.01):
        self.net = net
        self.c = c
    def clip(self):
        for p in self.net.parameters():
            p.clamp_(-self.c, self.c)
''',
        'main.py': '''\
from utils import Clipper
netD = nn.Linear(4, 1)
Clipper(netD).clip()
'''}),
    ('TNS401', 'weight clipping class of a module that imports no torch, under no_grad or frozen', {
        'utils.py': PLAIN + '''\
class Clipper:
    def __init__(self, net, c=0.01):
        self.net = net
        self.c = c
    def clip(self):
        for p in self.net.parameters():
            p.clamp_(-self.c, self.c)
''',
        'main.py': '''\
from utils import Clipper
netD = nn.Linear(4, 1)
with torch.no_grad():
    Clipper(netD).clip()
Clipper(nn.Linear(4, 1).requires_grad_(False)).clip()
'''}),
    ('TNS401', 'Optimizer subclass of another module whose step writes outside no_grad', {
        'optim.py': '''\
class PlainSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group["lr"])
''',
        'main.py': '''\
from optim import PlainSGD
model = nn.Linear(4, 1)
opt = PlainSGD(model.parameters(), 0.1)
model(torch.randn(8, 4)).sum().backward()
opt.step()
'''}),
    ('TNS401', 'Optimizer subclass of another module: a no_grad step, a frozen model, a step under no_grad', {
        'optim.py': '''\
from torch.optim import Optimizer
class NoGradSGD(Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))
    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group["lr"])
class PlainSGD(Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                p.add_(torch.ones_like(p), alpha=-group["lr"])
''',
        'main.py': '''\
from optim import NoGradSGD, PlainSGD
model = nn.Linear(4, 1)
opt = NoGradSGD(model.parameters(), 0.1)
model(torch.randn(8, 4)).sum().backward()
opt.step()
frozen = nn.Linear(4, 1).requires_grad_(False)
PlainSGD(frozen.parameters()).step()
with torch.no_grad():
    PlainSGD(model.parameters()).step()
'''}),
    ('TNS401', 'Optimizer subclass in the file whose step writes outside no_grad', {
        'main.py': '''\
class PlainSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                p.add_(p.grad, alpha=-group["lr"])
model = nn.Linear(4, 1)
opt = PlainSGD(model.parameters(), 0.1)
model(torch.randn(8, 4)).sum().backward()
opt.step()
'''}),
    ('TNS401', 'init helper of another module applied by a no_grad method', {
        'utils.py': '''\
def init_weights(m):
    if isinstance(m, nn.Linear):
        m.weight.normal_(0.0, 0.02)
''',
        'models.py': '''\
from utils import init_weights
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.reset_parameters()
    @torch.no_grad()
    def reset_parameters(self):
        self.apply(init_weights)
    def forward(self, x):
        return self.fc(x)
''',
        'main.py': '''\
from models import Net
net = Net()
'''}),
    ('TNS401', 'init helper of another module applied with grad on', {
        'utils.py': '''\
def init_weights(m):
    if isinstance(m, nn.Linear):
        m.weight.normal_(0.0, 0.02)
''',
        'main.py': '''\
from utils import init_weights
net = nn.Sequential(nn.Linear(3, 2))
net.apply(init_weights)
'''}),
    ('TNS1', 'subclass of another module inherits a no_grad forward', {
        'base.py': '''\
class FrozenBase(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    @torch.no_grad()
    def forward(self, x):
        return self.fc(x)
''',
        'scorer.py': '''\
from base import FrozenBase
class Scorer(FrozenBase):
    pass
''',
        'main.py': '''\
from scorer import Scorer
s = Scorer()
print(s(torch.randn(3, 4)).numpy())
'''}),
    ('TNS1', 'subclass of another module overrides a no_grad forward', {
        'base.py': '''\
class FrozenBase(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    @torch.no_grad()
    def forward(self, x):
        return self.fc(x)
''',
        'main.py': '''\
from base import FrozenBase
class Live(FrozenBase):
    def forward(self, x):
        return self.fc(x)
print(Live()(torch.randn(3, 4)).numpy())
'''}),
    ('TNS1', 'model class in other file, output numpy', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
''',
        'main.py': '''\
from models import Net
net = Net()
arr = net(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'no_grad helper in other file', {
        'utils.py': '''\
@torch.no_grad()
def predict(model, x):
    return model(x)
''',
        'main.py': '''\
from utils import predict
arr = predict(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'grad helper in other file', {
        'utils.py': '''\
def predict(model, x):
    return model(x)
''',
        'main.py': '''\
from utils import predict
arr = predict(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'to_numpy helper detaches', {
        'utils.py': '''\
def to_numpy(t):
    return t.detach().cpu().numpy()
''',
        'main.py': '''\
from utils import to_numpy
arr = to_numpy(nn.Linear(3, 2)(torch.randn(4, 3)))
''',
    }),
    ('TNS1', 'to_numpy helper without detach, raising inside helper', {
        'utils.py': '''\
def to_numpy(t):
    return t.cpu().numpy()
''',
        'main.py': '''\
from utils import to_numpy
arr = to_numpy(nn.Linear(3, 2)(torch.randn(4, 3)))
''',
    }),
    ('TNS1', 'package re-export via __init__', {
        'pkg/__init__.py': '''\
from .models import Net
''',
        'pkg/models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
''',
        'main.py': '''\
from pkg import Net
arr = Net()(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'base class in other file', {
        'base.py': '''\
class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
''',
        'models.py': '''\
from base import Base
class Net(Base):
    pass
''',
        'main.py': '''\
from models import Net
arr = Net()(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'frozen model built in other file', {
        'build.py': '''\
def build():
    m = nn.Linear(3, 2)
    m.requires_grad_(False)
    return m
''',
        'main.py': '''\
from build import build
arr = build()(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'model built in other file, not frozen', {
        'build.py': '''\
def build():
    m = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    return m
''',
        'main.py': '''\
from build import build
arr = build()(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'module-level model in other file', {
        'models.py': '''\
model = nn.Linear(3, 2)
''',
        'main.py': '''\
from models import model
arr = model(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'module-level model in other file frozen via loop', {
        'models.py': '''\
model = nn.Linear(3, 2)
for p in model.parameters():
    p.requires_grad = False
''',
        'main.py': '''\
from models import model
arr = model(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'import module as alias', {
        'pkg/__init__.py': '''\

''',
        'pkg/utils.py': '''\
def predict(model, x):
    return model(x)
''',
        'main.py': '''\
import pkg.utils as U
arr = U.predict(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'class with no_grad predict method in other file', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
    @torch.no_grad()
    def predict(self, x):
        return self(x)
''',
        'main.py': '''\
from models import Net
arr = Net().predict(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'class predict method with grad in other file', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
    def predict(self, x):
        return torch.softmax(self(x), -1)
''',
        'main.py': '''\
from models import Net
arr = Net().predict(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'function returns dict in other file', {
        'utils.py': '''\
def run(model, x):
    return {"logits": model(x), "n": x.shape[0]}
''',
        'main.py': '''\
from utils import run
out = run(nn.Linear(3, 2), torch.randn(4, 3))
arr = out["logits"].numpy()
''',
    }),
    ('TNS1', 'function returns dict detached in other file', {
        'utils.py': '''\
def run(model, x):
    return {"logits": model(x).detach(), "n": x.shape[0]}
''',
        'main.py': '''\
from utils import run
out = run(nn.Linear(3, 2), torch.randn(4, 3))
arr = out["logits"].numpy()
''',
    }),
    ('TNS1', 'star import', {
        'utils.py': '''\
def predict(model, x):
    return model(x)
''',
        'main.py': '''\
from utils import *
arr = predict(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'relative import inside package, main in package', {
        'pkg/__init__.py': '''\

''',
        'pkg/models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
''',
        'pkg/run.py': '''\
from .models import Net
def go():
    return Net()(torch.randn(4, 3)).numpy()
''',
        'main.py': '''\
from pkg.run import go
go()
''',
    }),
    ('TNS1', "property of other module's class returns submodule", {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    @property
    def head(self):
        return self.fc
''',
        'main.py': '''\
from models import Net
arr = Net().head(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', "property of other module's class returns detached", {
        'models.py': '''\
class Holder:
    def __init__(self, t):
        self._t = t
    @property
    def value(self):
        return self._t.detach()
''',
        'main.py': '''\
from models import Holder
h = Holder(nn.Linear(3, 2)(torch.randn(4, 3)))
arr = h.value.numpy()
''',
    }),
    ('TNS1', 'trainer class in other file evaluate', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
''',
        'main.py': '''\
from trainer import Trainer
t = Trainer(nn.Linear(3, 2))
arr = t.evaluate(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'trainer class in other file evaluate under no_grad', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        with torch.no_grad():
            return self.model(x)
''',
        'main.py': '''\
from trainer import Trainer
t = Trainer(nn.Linear(3, 2))
arr = t.evaluate(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'loss helper other file', {
        'losses.py': '''\
def compute_loss(model, x):
    return model(x).pow(2).mean()
''',
        'main.py': '''\
from losses import compute_loss
loss = compute_loss(nn.Linear(3, 2), torch.randn(4, 3))
arr = np.array(loss)
''',
    }),
    ('TNS1', 'dataset from other file getitem plain tensor', {
        'data.py': '''\
class DS:
    def __init__(self):
        self.x = torch.randn(10, 3)
    def __getitem__(self, i):
        return self.x[i]
    def __len__(self):
        return 10
''',
        'main.py': '''\
from data import DS
arr = DS()[0].numpy()
''',
    }),
    ('TNS1', 'parameter of model from other module numpy', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
''',
        'main.py': '''\
from models import Net
arr = Net().fc.weight.numpy()
''',
    }),
    ('TNS1', 'embedding of other module class, weight data ok', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 2)
''',
        'main.py': '''\
from models import Net
arr = Net().emb.weight.data.numpy()
''',
    }),
    ('TNS1', 'helper called from other file with tensor param, helper raises', {
        'viz.py': '''\
def plot(t):
    return np.asarray(t)
''',
        'main.py': '''\
from viz import plot
m = nn.Linear(3, 2)
plot(m(torch.randn(4, 3)))
''',
    }),
    ('TNS1', 'helper called from other file with detached param', {
        'viz.py': '''\
def plot(t):
    return np.asarray(t)
''',
        'main.py': '''\
from viz import plot
m = nn.Linear(3, 2)
plot(m(torch.randn(4, 3)).detach())
''',
    }),
    ('TNS1', 'lambda in other module', {
        'utils.py': '''\
predict = lambda m, x: m(x)
''',
        'main.py': '''\
from utils import predict
arr = predict(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'generator of outputs in other module', {
        'utils.py': '''\
def batches(model, n):
    for _ in range(n):
        yield model(torch.randn(4, 3))
''',
        'main.py': '''\
from utils import batches
for out in batches(nn.Linear(3, 2), 2):
    arr = out.numpy()
''',
    }),
    ('TNS1', 'star re-export through package init', {
        'pkg/__init__.py': '''\
from .utils import *
''',
        'pkg/utils.py': '''\
def predict(model, x):
    return model(x)
''',
        'main.py': '''\
from pkg import predict
arr = predict(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'star import brings numpy alias', {
        'utils.py': '''\
import numpy
def predict(model, x):
    return model(x)
''',
        'main.py': '''\
from utils import *
out = predict(nn.Linear(3, 2), torch.randn(4, 3))
arr = numpy.asarray(out)
''',
    }),
    ('TNS1', 'star import of a no_grad helper', {
        'utils.py': '''\
@torch.no_grad()
def predict(model, x):
    return model(x)
''',
        'main.py': '''\
from utils import *
arr = predict(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'star import, name rebound after', {
        'utils.py': '''\
def predict(model, x):
    return model(x)
''',
        'main.py': '''\
from utils import *
def predict(model, x):
    return model(x).detach()
arr = predict(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'trainer property in other file gives model output', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model, x):
        self.model = model
        self.x = x
    @property
    def output(self):
        return self.model(self.x)
''',
        'main.py': '''\
from trainer import Trainer
t = Trainer(nn.Linear(3, 2), torch.randn(4, 3))
arr = t.output.numpy()
''',
    }),
    ('TNS1', 'trainer in other file, model replaced by a frozen one', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
''',
        'main.py': '''\
from trainer import Trainer
t = Trainer(nn.Linear(3, 2))
t.model = nn.Linear(3, 2).requires_grad_(False)
arr = t.evaluate(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'trainer in other file given a detached input', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return x * 2
''',
        'main.py': '''\
from trainer import Trainer
t = Trainer(nn.Linear(3, 2))
arr = t.evaluate(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'trainer in other file passed grad input', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def scale(self, x):
        return x * 2
''',
        'main.py': '''\
from trainer import Trainer
t = Trainer(nn.Linear(3, 2))
w = torch.ones(3, requires_grad=True)
arr = t.scale(w).numpy()
''',
    }),
    ('TNS4', 'init helper in other file writes param in place', {
        'init_utils.py': '''\
def init_weights(m):
    m.weight.fill_(0.5)
''',
        'main.py': '''\
from init_utils import init_weights
net = nn.Linear(3, 2)
init_weights(net)
''',
    }),
    ('TNS4', 'weight loader of a torch-free module copies into each named parameter', {
        'loading.py': '''\
# (imports nothing)
def load_pretrained(model, state):
    for name, param in model.named_parameters():
        if name in state and state[name].shape == param.shape:
            param.copy_(state[name])
''',
        'main.py': '''\
from loading import load_pretrained
src, net = nn.Linear(3, 2), nn.Linear(3, 2)
load_pretrained(net, {k: v.clone() for k, v in src.state_dict().items()})
''',
    }),
    ('TNS4', 'weight loader of a torch-free module copies into the parameters zipped with their sources', {
        'loading.py': '''\
# (imports nothing)
def load_pretrained(model, state):
    for (param, src) in zip(model.parameters(), state.values()):
        param.copy_(src)
''',
        'main.py': '''\
from loading import load_pretrained
src, net = nn.Linear(3, 2), nn.Linear(3, 2)
load_pretrained(net, src.state_dict())
''',
    }),
    ('TNS4', 'init helper in other file under no_grad', {
        'init_utils.py': '''\
@torch.no_grad()
def init_weights(m):
    m.weight.fill_(0.5)
''',
        'main.py': '''\
from init_utils import init_weights
net = nn.Linear(3, 2)
init_weights(net)
''',
    }),
    ('TNS4', 'apply with helper from other file', {
        'init_utils.py': '''\
def init_weights(m):
    if isinstance(m, nn.Linear):
        m.bias.zero_()
''',
        'main.py': '''\
from init_utils import init_weights
net = nn.Sequential(nn.Linear(3, 2))
net.apply(init_weights)
''',
    }),
    ('TNS4', 'model class from other file, param in place in main', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
''',
        'main.py': '''\
from models import Net
net = Net()
net.fc.weight.mul_(2)
''',
    }),
    ('TNS4', 'model class from other file, .data in place ok', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
''',
        'main.py': '''\
from models import Net
net = Net()
net.fc.weight.data.mul_(2)
''',
    }),
    ('TNS4', 'manual sgd helper in other file', {
        'optim_utils.py': '''\
def sgd_step(params, lr):
    for p in params:
        p -= lr * p.grad
''',
        'main.py': '''\
from optim_utils import sgd_step
net = nn.Linear(3, 2)
net(torch.randn(4, 3)).sum().backward()
sgd_step(net.parameters(), 0.1)
''',
    }),
    ('TNS4', 'manual sgd helper in other file no_grad', {
        'optim_utils.py': '''\
def sgd_step(params, lr):
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
''',
        'main.py': '''\
from optim_utils import sgd_step
net = nn.Linear(3, 2)
net(torch.randn(4, 3)).sum().backward()
sgd_step(net.parameters(), 0.1)
''',
    }),
    ('TNS4', 'method of other module class writes own param', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def reset(self):
        self.fc.weight.zero_()
''',
        'main.py': '''\
from models import Net
Net().reset()
''',
    }),
    ('TNS4', 'trainer in other file writes model param through attribute', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def clip(self):
        for p in self.model.parameters():
            p.clamp_(-1, 1)
''',
        'main.py': '''\
from trainer import Trainer
Trainer(nn.Linear(3, 2)).clip()
''',
    }),
    ('TNS4', 'EMA helper in other file', {
        'ema.py': '''\
def ema_update(ema, model, decay=0.9):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)
''',
        'main.py': '''\
from ema import ema_update
m = nn.Linear(3, 2)
e = nn.Linear(3, 2)
ema_update(e, m)
''',
    }),
    ('TNS4', 'leaf tensor from other module function', {
        'make.py': '''\
def make_weight():
    return torch.zeros(3, requires_grad=True)
''',
        'main.py': '''\
from make import make_weight
w = make_weight()
w.add_(1)
''',
    }),
    ('TNS1', 'helper only called under no_grad from other file', {
        'utils.py': '''\
def predict_np(model, x):
    return model(x).numpy()
''',
        'main.py': '''\
from utils import predict_np
with torch.no_grad():
    arr = predict_np(nn.Linear(3, 2), torch.randn(4, 3))
''',
    }),
    ('TNS1', 'helper called with grad from other file', {
        'utils.py': '''\
def predict_np(model, x):
    return model(x).numpy()
''',
        'main.py': '''\
from utils import predict_np
arr = predict_np(nn.Linear(3, 2), torch.randn(4, 3))
''',
    }),
    ('TNS1', 'helper param tensor detached by caller in other file', {
        'utils.py': '''\
def show(t):
    return t.numpy()
''',
        'main.py': '''\
from utils import show
out = nn.Linear(3, 2)(torch.randn(4, 3))
show(out.detach())
''',
    }),
    ('TNS1', 'method called with grad from other file', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
    def predict_np(self, x):
        return self(x).numpy()
''',
        'main.py': '''\
from models import Net
Net().predict_np(torch.randn(4, 3))
''',
    }),
    ('TNS1', 'registry factory in other file', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, 2)
    def forward(self, x):
        return self.fc(x)
MODELS = {"net": Net}
def build_model(name, d):
    return MODELS[name](d)
''',
        'main.py': '''\
from models import build_model
model = build_model("net", 3)
arr = model(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'trainer builds model via factory from other file', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
def build_model():
    return Net()
''',
        'trainer.py': '''\
from models import build_model
class Trainer:
    def __init__(self):
        self.model = build_model()
    def predict(self, x):
        return self.model(x)
''',
        'main.py': '''\
from trainer import Trainer
arr = Trainer().predict(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'evaluate in other file collects preds list', {
        'engine.py': '''\
def evaluate(model, xs):
    preds = []
    for x in xs:
        preds.append(model(x))
    return torch.cat(preds)
''',
        'main.py': '''\
from engine import evaluate
out = evaluate(nn.Linear(3, 2), [torch.randn(4, 3)])
arr = out.numpy()
''',
    }),
    ('TNS1', 'evaluate in other file under no_grad collects preds', {
        'engine.py': '''\
@torch.no_grad()
def evaluate(model, xs):
    preds = []
    for x in xs:
        preds.append(model(x))
    return torch.cat(preds)
''',
        'main.py': '''\
from engine import evaluate
out = evaluate(nn.Linear(3, 2), [torch.randn(4, 3)])
arr = out.numpy()
''',
    }),
    ('TNS1', 'base predict in other file, subclass forward argmax', {
        'base.py': '''\
class Base(nn.Module):
    def predict(self, x):
        return self(x)
''',
        'main.py': '''\
from base import Base
class Net(Base):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x).argmax(-1)
arr = Net().predict(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'base predict in other file, subclass forward grad', {
        'base.py': '''\
class Base(nn.Module):
    def predict(self, x):
        return self(x)
''',
        'main.py': '''\
from base import Base
class Net(Base):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
arr = Net().predict(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'trainer moves model to device in other file', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model, device):
        self.model = model.to(device)
        self.device = device
    def predict(self, x):
        return self.model(x.to(self.device))
''',
        'main.py': '''\
from trainer import Trainer
t = Trainer(nn.Linear(3, 2), "cpu")
arr = t.predict(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'trainer predict detaches cpu numpy in other file', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def predict(self, x):
        return self.model(x).detach().cpu().numpy()
''',
        'main.py': '''\
from trainer import Trainer
t = Trainer(nn.Linear(3, 2))
arr = np.asarray(t.predict(torch.randn(4, 3)))
''',
    }),
    ('TNS1', 'trainer predict numpy without detach in other file', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def predict(self, x):
        return self.model(x).cpu().numpy()
''',
        'main.py': '''\
from trainer import Trainer
t = Trainer(nn.Linear(3, 2))
arr = t.predict(torch.randn(4, 3))
''',
    }),
    ('TNS1', 'subclass in main of other module model, forward from base', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
''',
        'main.py': '''\
from models import Net
class Big(Net):
    pass
arr = Big()(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'classmethod factory of other module class', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, 2)
    def forward(self, x):
        return self.fc(x)
    @classmethod
    def from_config(cls, cfg):
        return cls(cfg["d"])
''',
        'main.py': '''\
from models import Net
arr = Net.from_config({"d": 3})(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'model output tuple from other module class', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        h = self.fc(x)
        return h, h.argmax(-1)
''',
        'main.py': '''\
from models import Net
logits, pred = Net()(torch.randn(4, 3))
a = pred.numpy()
b = logits.numpy()
''',
    }),
    ('TNS1', 'dataclass config holds model', {
        'cfg.py': '''\
from dataclasses import dataclass
@dataclass
class Setup:
    model: nn.Module
''',
        'main.py': '''\
from cfg import Setup
s = Setup(nn.Linear(3, 2))
arr = s.model(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', "property of other module's plain class returns its model", {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    @property
    def head(self):
        return self.model
''',
        'main.py': '''\
from trainer import Trainer
t = Trainer(nn.Linear(3, 2))
arr = t.head(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', "method only called under no_grad from other file", {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
    def predict_np(self, x):
        return self(x).numpy()
''',
        'main.py': '''\
from models import Net
with torch.no_grad():
    Net().predict_np(torch.randn(4, 3))
''',
    }),
    ('TNS1', "method called under no_grad in one file and with grad in another", {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
    def predict_np(self, x):
        return self(x).numpy()
''',
        'evaluate.py': '''\
from models import Net
def evaluate(x):
    with torch.no_grad():
        return Net().predict_np(x)
''',
        'main.py': '''\
from models import Net
import evaluate
evaluate.evaluate(torch.randn(4, 3))
Net().predict_np(torch.randn(4, 3))
''',
    }),
    ('TNS1', "method called in a function only called under no_grad from another file", {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
    def predict_np(self, x):
        return self(x).numpy()
''',
        'main.py': '''\
from models import Net
def report(net):
    return net.predict_np(torch.randn(4, 3))
with torch.no_grad():
    report(Net())
''',
    }),
    ('TNS1', "model frozen in place after the trainer was built, method", {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
''',
        'main.py': '''\
from trainer import Trainer
m = nn.Linear(3, 2)
t = Trainer(m)
m.requires_grad_(False)
arr = t.evaluate(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', "model frozen in place after the trainer was built, attribute", {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
''',
        'main.py': '''\
from trainer import Trainer
m = nn.Linear(3, 2)
t = Trainer(m)
for p in m.parameters():
    p.requires_grad = False
arr = t.model(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', "model thawed in place after the trainer was built", {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
''',
        'main.py': '''\
from trainer import Trainer
m = nn.Linear(3, 2).requires_grad_(False)
t = Trainer(m)
m.requires_grad_(True)
arr = t.evaluate(torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'wrapper module class in another file, backbone frozen before', {
        'models.py': '''\
class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
    def forward(self, x):
        return self.inner(x)
''',
        'main.py': '''\
from models import Wrap
m = nn.Linear(2, 2)
m.requires_grad_(False)
w = Wrap(m)
print(w(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS1', 'wrapper module class in another file, backbone frozen after', {
        'models.py': '''\
class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
    def forward(self, x):
        return self.inner(x)
''',
        'main.py': '''\
from models import Wrap
m = nn.Linear(2, 2)
w = Wrap(m)
m.requires_grad_(False)
print(w(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS1', 'wrapper with own head in another file, backbone frozen', {
        'models.py': '''\
class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.head = nn.Linear(2, 2)
    def forward(self, x):
        return self.head(self.inner(x))
''',
        'main.py': '''\
from models import Wrap
m = nn.Linear(2, 2)
m.requires_grad_(False)
w = Wrap(m)
print(w(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS1', 'trainer in another file, predict via method of module wrapper', {
        'models.py': '''\
class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
    def forward(self, x):
        return self.inner(x)
    def predict(self, x):
        return self(x)
''',
        'main.py': '''\
from models import Wrap
m = nn.Linear(2, 2)
w = Wrap(m)
m.requires_grad_(False)
print(w.predict(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS1', 'wrapper not frozen raises', {
        'models.py': '''\
class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
    def forward(self, x):
        return self.inner(x)
''',
        'main.py': '''\
from models import Wrap
m = nn.Linear(2, 2)
w = Wrap(m)
print(w(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS1', 'factory in another file, other model frozen', {
        'models.py': '''\
def make():
    return nn.Linear(2, 2)
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
''',
        'main.py': '''\
from models import make, Trainer
a = make()
b = make()
t = Trainer(a)
b.requires_grad_(False)
print(t.evaluate(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS1', 'factory in another file, other frozen before, attribute', {
        'models.py': '''\
def make():
    return nn.Linear(2, 2)
class Trainer:
    def __init__(self, model):
        self.model = model
''',
        'main.py': '''\
from models import make, Trainer
a = make()
b = make()
b.requires_grad_(False)
t = Trainer(a)
print(t.model(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS1', 'wrapper in another file, frozen in function after', {
        'models.py': '''\
class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
    def forward(self, x):
        return self.inner(x)
''',
        'main.py': '''\
from models import Wrap
def main():
    m = nn.Linear(2, 2)
    w = Wrap(m)
    for p in m.parameters():
        p.requires_grad = False
    return w(torch.ones(1, 2)).numpy()
print(main())
''',
    }),
    ('TNS1', 'trainer in another file, model moved, frozen later', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model, device):
        self.model = model.to(device)
    def evaluate(self, x):
        return self.model(x)
''',
        'main.py': '''\
from trainer import Trainer
m = nn.Linear(2, 2)
t = Trainer(m, "cpu")
m.eval().requires_grad_(False)
print(t.evaluate(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS4', 'ema helper in another file, called under no_grad', {
        'ema.py': '''\
def update_ema(ema, model, decay=0.99):
    for pe, p in zip(ema.parameters(), model.parameters()):
        pe.mul_(decay).add_(p.detach(), alpha=1 - decay)
''',
        'main.py': '''\
import copy
from ema import update_ema
model = nn.Linear(2, 2)
ema = copy.deepcopy(model)
with torch.no_grad():
    update_ema(ema, model)
''',
    }),
    ('TNS4', 'ema helper in another file, ema not frozen raises', {
        'ema.py': '''\
import copy
def update_ema(ema, model, decay=0.99):
    for pe, p in zip(ema.parameters(), model.parameters()):
        pe.mul_(decay).add_(p.detach(), alpha=1 - decay)
''',
        'main.py': '''\
import copy
from ema import update_ema
model = nn.Linear(2, 2)
ema = copy.deepcopy(model)
update_ema(ema, model)
''',
    }),
    ('TNS4', 'ema helper in same-dir module, under no_grad decorator', {
        'ema.py': '''\
import copy
@torch.no_grad()
def update_ema(ema, model, decay=0.99):
    for pe, p in zip(ema.parameters(), model.parameters()):
        pe.mul_(decay).add_(p, alpha=1 - decay)
''',
        'main.py': '''\
import copy
from ema import update_ema
model = nn.Linear(2, 2)
ema = copy.deepcopy(model)
update_ema(ema, model)
''',
    }),
    ('TNS4', 'ema class in another file, frozen in ctor', {
        'ema.py': '''\
import copy
class EMA:
    def __init__(self, model, decay=0.99):
        self.ema = copy.deepcopy(model)
        self.ema.requires_grad_(False)
        self.decay = decay
    def update(self, model):
        for pe, p in zip(self.ema.parameters(), model.parameters()):
            pe.mul_(self.decay).add_(p.detach(), alpha=1 - self.decay)
''',
        'main.py': '''\
from ema import EMA
model = nn.Linear(2, 2)
e = EMA(model)
e.update(model)
''',
    }),
    ('TNS1', 'teacher built frozen by factory in other module', {
        'models.py': '''\
def build_teacher():
    t = nn.Linear(2, 2)
    for p in t.parameters():
        p.requires_grad = False
    return t.eval()
''',
        'main.py': '''\
from models import build_teacher
teacher = build_teacher()
print(teacher(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS1', 'student built live by factory in other module raises', {
        'models.py': '''\
def build(frozen=False):
    t = nn.Linear(2, 2)
    if frozen:
        t.requires_grad_(False)
    return t
''',
        'main.py': '''\
from models import build
student = build()
print(student(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS1', 'factory frozen flag true', {
        'models.py': '''\
def build(frozen=False):
    t = nn.Linear(2, 2)
    if frozen:
        t.requires_grad_(False)
    return t
''',
        'main.py': '''\
from models import build
teacher = build(frozen=True)
print(teacher(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS1', 'to_numpy helper detaches in utils', {
        'utils.py': '''\
def to_numpy(t):
    return t.detach().cpu().numpy()
''',
        'main.py': '''\
from utils import to_numpy
m = nn.Linear(2, 2)
print(to_numpy(m(torch.ones(1, 2))))
''',
    }),
    ('TNS1', 'evaluate method under no_grad in trainer module', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    @torch.no_grad()
    def evaluate(self, x):
        self.model.eval()
        return self.model(x).numpy()
''',
        'main.py': '''\
from trainer import Trainer
t = Trainer(nn.Linear(2, 2))
print(t.evaluate(torch.ones(1, 2)))
''',
    }),
    ('TNS1', 'package re-export of frozen model factory', {
        'pkg/__init__.py': '''\
from .models import make_frozen
''',
        'pkg/models.py': '''\
import torch
import torch.nn as nn
def make_frozen():
    m = nn.Linear(2, 2)
    m.requires_grad_(False)
    return m
''',
        'main.py': '''\
from pkg import make_frozen
m = make_frozen()
print(m(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS1', 'callback gets outputs detached in trainer', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model, callbacks):
        self.model = model
        self.callbacks = callbacks
    def step(self, x):
        out = self.model(x)
        for cb in self.callbacks:
            cb(out.detach())
        return out
''',
        'main.py': '''\
from trainer import Trainer
def log_cb(o):
    print(o.numpy())
t = Trainer(nn.Linear(2, 2), [log_cb])
t.step(torch.ones(1, 2))
''',
    }),
    ('TNS1', 'subclass in main of base model in other file, frozen in base ctor', {
        'base.py': '''\
class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.requires_grad_(False)
    def forward(self, x):
        return self.fc(x)
''',
        'main.py': '''\
from base import Base
class Sub(Base):
    pass
print(Sub()(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS1', 'trainer in other file, two models from one local factory, other frozen', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
    def evaluate(self, x):
        return self.model(x)
''',
        'main.py': '''\
from trainer import Trainer
def make():
    return nn.Linear(2, 2)
a = make()
b = make()
t = Trainer(a)
b.requires_grad_(False)
print(t.evaluate(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS1', 'freeze helper in other file, then the teacher output', {
        'utils.py': '''\
def freeze(model):
    for p in model.parameters():
        p.requires_grad = False
    return model
''',
        'main.py': '''\
from utils import freeze
teacher = nn.Linear(2, 2)
freeze(teacher)
print(teacher(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS1', 'set_requires_grad helper in other file, list of discriminators', {
        'utils.py': '''\
def set_requires_grad(nets, requires_grad=False):
    if not isinstance(nets, list):
        nets = [nets]
    for net in nets:
        if net is not None:
            for param in net.parameters():
                param.requires_grad = requires_grad
''',
        'main.py': '''\
from utils import set_requires_grad
D_A, D_B = nn.Linear(2, 1), nn.Linear(2, 1)
set_requires_grad([D_A, D_B], False)
print(D_A(torch.ones(1, 2)).numpy(), D_B(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS1', 'set_requires_grad helper in other file, frozen then thawed', {
        'utils.py': '''\
def set_requires_grad(nets, requires_grad=False):
    if not isinstance(nets, list):
        nets = [nets]
    for net in nets:
        for param in net.parameters():
            param.requires_grad = requires_grad
''',
        'main.py': '''\
import utils
D = nn.Linear(2, 1)
utils.set_requires_grad(D)
utils.set_requires_grad(D, True)
print(D(torch.ones(1, 2)).numpy())
''',
    }),
    ('TNS4', 'ema helper in other file, frozen ema at module level', {
        'utils.py': '''\
def update_ema(ema, model, decay=0.99):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)
''',
        'main.py': '''\
import copy
from utils import update_ema

model = nn.Linear(2, 2)
ema = copy.deepcopy(model)
ema.requires_grad_(False)
for _ in range(2):
    update_ema(ema, model)
''',
    }),
    ('TNS4', 'ema helper in other file, live ema', {
        'utils.py': '''\
def update_ema(ema, model, decay=0.99):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)
''',
        'main.py': '''\
import copy
from utils import update_ema

model = nn.Linear(2, 2)
ema = copy.deepcopy(model)
update_ema(ema, model)
''',
    }),
    ('TNS4', 'ema helper in other file, frozen ema in a function', {
        'utils.py': '''\
def update_ema(ema, model, decay=0.99):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)
''',
        'main.py': '''\
import copy
from utils import update_ema


def main():
    model = nn.Linear(2, 2)
    ema = copy.deepcopy(model)
    for p in ema.parameters():
        p.requires_grad_(False)
    for _ in range(2):
        update_ema(ema, model, decay=0.9)


main()
''',
    }),
    ('TNS4', 'ema helper in other file, frozen in one caller, live in another', {
        'utils.py': '''\
def update_ema(ema, model, decay=0.99):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)
''',
        'other.py': '''\
import copy
from utils import update_ema


def go():
    m = nn.Linear(2, 2)
    update_ema(copy.deepcopy(m), m)
''',
        'main.py': '''\
import copy
from utils import update_ema
from other import go

model = nn.Linear(2, 2)
ema = copy.deepcopy(model)
ema.requires_grad_(False)
update_ema(ema, model)
go()
''',
    }),
    ('TNS4', 'ema helper in other file, caller passes its parameters', {
        'utils.py': '''\
def update_ema(ema, model, decay=0.99):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)
''',
        'main.py': '''\
import copy
from utils import update_ema


def step(ema, model):
    update_ema(ema, model)


m = nn.Linear(2, 2)
step(copy.deepcopy(m), m)
''',
    }),
    ('TNS4', 'ema helper in other file, called through its module', {
        'utils.py': '''\
def update_ema(ema, model, decay=0.99):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)
''',
        'main.py': '''\
import copy
import utils

model = nn.Linear(2, 2)
ema = copy.deepcopy(model).requires_grad_(False)
utils.update_ema(ema, model)
''',
    }),
    ('TNS4', 'ema helper in a package, relative import under another name', {
        'pkg/__init__.py': '''\
''',
        'pkg/utils.py': '''\
def update_ema(ema, model, decay=0.99):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)
''',
        'pkg/train.py': '''\
import copy
from .utils import update_ema as ema_step


def run():
    model = nn.Linear(2, 2)
    ema = copy.deepcopy(model)
    ema.requires_grad_(False)
    ema_step(ema, model)
''',
        'main.py': '''\
from pkg.train import run
run()
''',
    }),
    ('TNS4', 'ema helper in other file, also kept in a list', {
        'utils.py': '''\
def update_ema(ema, model, decay=0.99):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)
''',
        'main.py': '''\
import copy
from utils import update_ema

model = nn.Linear(2, 2)
ema = copy.deepcopy(model)
ema.requires_grad_(False)
update_ema(ema, model)
hooks = [update_ema]
hooks[0](copy.deepcopy(model), model)
''',
    }),
    ('TNS4', 'ema helper in other file, frozen ema of a trainer class', {
        'utils.py': '''\
def update_ema(ema, model, decay=0.99):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)
''',
        'main.py': '''\
import copy
from utils import update_ema


class Trainer:
    def __init__(self, model):
        self.model = model
        self.ema = copy.deepcopy(model).requires_grad_(False)

    def step(self):
        update_ema(self.ema, self.model)


Trainer(nn.Linear(2, 2)).step()
''',
    }),
    ('TNS4', 'ema helper in other file, frozen ema under a main guard', {
        'utils.py': '''\
def update_ema(ema, model, decay=0.99):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)
''',
        'main.py': '''\
import copy
from utils import update_ema

if __name__ == "__main__":
    model = nn.Linear(2, 2)
    ema = copy.deepcopy(model)
    ema.requires_grad_(False)
    update_ema(ema, model)
''',
    }),
    ('TNS4', 'ema helper in other file, star args', {
        'utils.py': '''\
def update_ema(ema, model, decay=0.99):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)
''',
        'main.py': '''\
import copy
from utils import update_ema

model = nn.Linear(2, 2)
ema = copy.deepcopy(model)
args = (ema, model)
update_ema(*args)
''',
    }),
    ('TNS4', 'ema helper in other file, two calls, a keyword argument', {
        'utils.py': '''\
def update_ema(ema, model, decay=0.99):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)
''',
        'main.py': '''\
import copy
from utils import update_ema

model = nn.Linear(2, 2)
ema = copy.deepcopy(model).requires_grad_(False)
update_ema(ema, model, 0.5)
update_ema(ema, model=model)
''',
    }),
    ('TNS1', 'static method of a class in other file, called on the class', {
        'utils.py': '''\
class Util:
    @staticmethod
    def run(m, x):
        return m(x)
''',
        'main.py': '''\
from utils import Util
arr = Util.run(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'static method of a class in other file, called on an instance', {
        'utils.py': '''\
class Util:
    @staticmethod
    def run(m, x):
        return m(x)
''',
        'main.py': '''\
from utils import Util
u = Util()
arr = u.run(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'static method of a class in other file detaches', {
        'utils.py': '''\
class Util:
    @staticmethod
    def run(m, x):
        return m(x).detach()
''',
        'main.py': '''\
from utils import Util
u = Util()
arr = Util.run(nn.Linear(3, 2), torch.randn(4, 3)).numpy() + u.run(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS1', 'class method of a class in other file applies its argument', {
        'utils.py': '''\
class Util:
    def __init__(self, scale):
        self.scale = scale
    @classmethod
    def run(cls, m, x):
        return m(x)
''',
        'main.py': '''\
from utils import Util
u = Util(2.0)
arr = u.run(nn.Linear(3, 2), torch.randn(4, 3)).numpy()
''',
    }),
    ('TNS4', 'hand-written optimizer in other file, step without no_grad', {
        'opt.py': '''\
class MySGD:
    def __init__(self, params, lr):
        self.params = list(params)
        self.lr = lr
    def step(self):
        for p in self.params:
            p -= self.lr * p.grad
''',
        'main.py': '''\
from opt import MySGD
net = nn.Linear(3, 2)
o = MySGD(net.parameters(), 0.1)
net(torch.randn(4, 3)).sum().backward()
o.step()
''',
    }),
    ('TNS4', 'hand-written optimizer in other file, step under no_grad', {
        'opt.py': '''\
class MySGD:
    def __init__(self, params, lr):
        self.params = list(params)
        self.lr = lr
    @torch.no_grad()
    def step(self):
        for p in self.params:
            p -= self.lr * p.grad
''',
        'main.py': '''\
from opt import MySGD
net = nn.Linear(3, 2)
o = MySGD(net.parameters(), 0.1)
net(torch.randn(4, 3)).sum().backward()
o.step()
''',
    }),
    ('TNS4', 'hand-written optimizer in other file, frozen model', {
        'opt.py': '''\
class MySGD:
    def __init__(self, params):
        self.params = list(params)
    def step(self):
        for p in self.params:
            p.mul_(0.5)
''',
        'main.py': '''\
from opt import MySGD
net = nn.Linear(3, 2).requires_grad_(False)
MySGD(net.parameters()).step()
''',
    }),
    ('TNS1', 'numpy helper called by a helper of another file', {
        'a.py': '''\
def to_np(t):
    return t.cpu().numpy()
''',
        'b.py': '''\
from a import to_np
def run(model, x):
    return to_np(model(x))
''',
        'main.py': '''\
from b import run
arr = run(nn.Linear(3, 2), torch.randn(4, 3))
''',
    }),
    ('TNS1', 'numpy helper called by a helper of another file through its module', {
        'a.py': '''\
def to_np(t):
    return t.numpy()
''',
        'b.py': '''\
import a
def run(model, x):
    return a.to_np(model(x))
''',
        'main.py': '''\
import b
arr = b.run(nn.Linear(3, 2), torch.randn(4, 3))
''',
    }),
    ('TNS1', 'numpy helper that detaches, called by a helper of another file', {
        'a.py': '''\
def to_np(t):
    return t.detach().cpu().numpy()
''',
        'b.py': '''\
from a import to_np
def run(model, x):
    return to_np(model(x))
''',
        'main.py': '''\
from b import run
arr = run(nn.Linear(3, 2), torch.randn(4, 3))
''',
    }),
    ('TNS1', 'numpy helper called under no_grad by a helper of another file', {
        'a.py': '''\
def to_np(t):
    return t.cpu().numpy()
''',
        'b.py': '''\
from a import to_np
def run(model, x):
    with torch.no_grad():
        return to_np(model(x))
''',
        'main.py': '''\
from b import run
arr = run(nn.Linear(3, 2), torch.randn(4, 3))
''',
    }),
    ('TNS1', 'numpy helper called by a helper of another file, the call under no_grad', {
        'a.py': '''\
def to_np(t):
    return t.cpu().numpy()
''',
        'b.py': '''\
from a import to_np
def run(model, x):
    return to_np(model(x))
''',
        'main.py': '''\
from b import run
with torch.no_grad():
    arr = run(nn.Linear(3, 2), torch.randn(4, 3))
''',
    }),
    ('TNS4', 'sgd helper called by a train helper of another file', {
        'optim_utils.py': '''\
def sgd_step(params, lr):
    for p in params:
        p.sub_(lr * p.grad)
''',
        'engine.py': '''\
from optim_utils import sgd_step
def train_step(model, x):
    model(x).sum().backward()
    sgd_step(model.parameters(), 0.1)
''',
        'main.py': '''\
from engine import train_step
train_step(nn.Linear(3, 2), torch.randn(4, 3))
''',
    }),
    ('TNS4', 'sgd helper called by an update helper of another file, parameters passed on', {
        'optim_utils.py': '''\
def sgd_step(params, lr):
    for p in params:
        p.sub_(lr * p.grad)
''',
        'engine.py': '''\
from optim_utils import sgd_step
def update(params):
    sgd_step(params, 0.1)
''',
        'main.py': '''\
from engine import update
net = nn.Linear(3, 2)
net(torch.randn(4, 3)).sum().backward()
update(net.parameters())
''',
    }),
    ('TNS1', 'numpy helper re-exported by its package', {
        'pkg/__init__.py': 'from .utils import to_np\n',
        'pkg/utils.py': '''\
def to_np(t):
    return t.numpy()
''',
        'main.py': '''\
from pkg import to_np
arr = to_np(nn.Linear(3, 2)(torch.randn(4, 3)))
''',
    }),
    ('TNS1', 'numpy helper that detaches, re-exported by its package', {
        'pkg/__init__.py': 'from .utils import to_np\n',
        'pkg/utils.py': '''\
def to_np(t):
    return t.detach().numpy()
''',
        'main.py': '''\
from pkg import to_np
arr = to_np(nn.Linear(3, 2)(torch.randn(4, 3)))
''',
    }),
    ('TNS1', 'relay re-exported by its package', {
        'pkg/__init__.py': 'from .evaluate import run\n',
        'pkg/convert.py': '''\
def to_np(t):
    return t.numpy()
''',
        'pkg/evaluate.py': '''\
from .convert import to_np
def run(model, x):
    return to_np(model(x))
''',
        'main.py': '''\
from pkg import run
arr = run(nn.Linear(3, 2), torch.randn(4, 3))
''',
    }),
    ('TNS4', 'static init method of a class in other file', {
        'models.py': '''\
class Init:
    @staticmethod
    def zero(m):
        m.weight.zero_()
''',
        'main.py': '''\
from models import Init
Init.zero(nn.Linear(3, 2))
''',
    }),
    ('TNS4', 'static init method of a class in other file, under no_grad', {
        'models.py': '''\
class Init:
    @staticmethod
    @torch.no_grad()
    def zero(m):
        m.weight.zero_()
''',
        'main.py': '''\
from models import Init
Init.zero(nn.Linear(3, 2))
''',
    }),
    ('TNS1', 'static numpy helper of a class in other file', {
        'utils.py': '''\
class Conv:
    @staticmethod
    def to_np(t):
        return t.numpy()
''',
        'main.py': '''\
from utils import Conv
arr = Conv.to_np(nn.Linear(3, 2)(torch.randn(4, 3)))
''',
    }),
    # PyTorch-GAN's replay buffer, in its own module: what push_and_pop returns carries no graph
    # of the fakes it is given (their `.data`, copies it kept); the discriminator step leaves the
    # generator's gradients alone (the program asserts it).
    ('TNS3', 'replay buffer of another module returns what it keeps of the data', {
        'buffers.py': '''\
import random
class ReplayBuffer:
    def __init__(self, max_size=50):
        self.max_size = max_size
        self.data = []
    def push_and_pop(self, data):
        to_return = []
        for element in data.data:
            element = torch.unsqueeze(element, 0)
            if len(self.data) < self.max_size:
                self.data.append(element)
                to_return.append(element)
            else:
                if random.uniform(0, 1) > 0.5:
                    i = random.randint(0, self.max_size - 1)
                    to_return.append(self.data[i].clone())
                    self.data[i] = element
                else:
                    to_return.append(element)
        return torch.cat(to_return)
''',
        'main.py': '''\
from buffers import ReplayBuffer
netG, netD = nn.Linear(4, 4), nn.Linear(4, 1)
optimizer_G = torch.optim.Adam(netG.parameters(), lr=1e-3)
optimizer_D = torch.optim.Adam(netD.parameters(), lr=1e-3)
buf = ReplayBuffer(max_size=2)
for it in range(4):
    fake_B = netG(torch.randn(4, 4))
    loss_D = netD(buf.push_and_pop(fake_B)).pow(2).mean()
    optimizer_D.zero_grad()
    loss_D.backward()
    assert all(p.grad is None or not p.grad.any() for p in netG.parameters())
    optimizer_D.step()
    loss_G = (netD(fake_B) - 1).pow(2).mean()
    optimizer_G.zero_grad()
    loss_G.backward()
    optimizer_G.step()
    optimizer_G.zero_grad(set_to_none=True)
''',
    }),
    # CycleGAN's image pool, in its own module: `query` gives back what it is given as it came
    # only when the pool is off (`pool_size == 0`), else tensors without a graph; which path a
    # call takes is the pool's state, which the analysis does not follow: reported only with
    # --strict.  With a pool of 50 the discriminator step leaves the generator alone.
    ('TNS3', 'image pool of another module that passes the fakes on only when it is off', {
        'utils.py': '''\
import random
class ImagePool:
    def __init__(self, pool_size):
        self.pool_size = pool_size
        self.images = []
    def query(self, images):
        if self.pool_size == 0:
            return images
        return_images = []
        for image in images:
            image = torch.unsqueeze(image.data, 0)
            if len(self.images) < self.pool_size:
                self.images.append(image)
                return_images.append(image)
            elif random.uniform(0, 1) > 0.5:
                idx = random.randint(0, self.pool_size - 1)
                tmp = self.images[idx].clone()
                self.images[idx] = image
                return_images.append(tmp)
            else:
                return_images.append(image)
        return torch.cat(return_images, 0)
''',
        'main.py': '''\
from utils import ImagePool
netG_A, netD_A = nn.Linear(4, 3), nn.Linear(3, 1)
optimizer_G = torch.optim.Adam(netG_A.parameters())
optimizer_D = torch.optim.Adam(netD_A.parameters())
fake_pool = ImagePool(50)
for i in range(2):
    real = torch.randn(8, 3)
    fake_B = netG_A(torch.randn(8, 4))
    optimizer_G.zero_grad()
    loss_G = netD_A(fake_B).pow(2).mean()
    loss_G.backward()
    optimizer_G.step()
    optimizer_D.zero_grad()
    fake_B = fake_pool.query(fake_B)
    loss_D = 0.5 * (netD_A(real).pow(2).mean() + (netD_A(fake_B) - 1).pow(2).mean())
    netG_A.zero_grad()
    loss_D.backward()
    assert all(p.grad is None or not p.grad.any() for p in netG_A.parameters())
    optimizer_D.step()
''',
    }),
    # A generator function's body runs where the generator is iterated: made under no_grad and
    # bound to a name, it may be iterated with grad on (the other module's call is no no-grad call).
    ('TNS1', 'generator of another module made under no_grad and iterated with grad on', {
        'utils.py': '''\
model = nn.Linear(4, 2)
def iter_preds(xs):
    for x in xs:
        yield model(x).numpy()
''',
        'main.py': '''\
from utils import iter_preds
with torch.no_grad():
    gen = iter_preds([torch.randn(2, 4)])
for p in gen:
    pass
''',
    }),
    ('TNS1', 'generator of another module made and consumed under no_grad', {
        'utils.py': '''\
model = nn.Linear(4, 2)
def iter_preds(xs):
    for x in xs:
        yield model(x).numpy()
''',
        'main.py': '''\
from utils import iter_preds
with torch.no_grad():
    preds = list(iter_preds([torch.randn(2, 4)]))
''',
    }),
]
_RUNNING_TRAINER = '''\
class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
        self.running_loss = 0.0
    def reset(self):
        self.running_loss = 0.0
    def train_step(self, x):
        self.opt.zero_grad()
        loss = self.model(x).pow(2).mean()
        loss.backward()
        self.opt.step()
        self.running_loss += loss'''

MARKED = [
    # An EWC anchor of another module that keeps `.data` views of the model's parameters: the
    # penalty it computes after the optimizer's steps reads the moved weights.
    ('TNS5', 'EWC anchor of another module keeps .data views of the parameters it is handed', {
        'ewc.py': '''\
class EWC:
    def __init__(self, model):
        self.params = {n: p.data for n, p in model.named_parameters() if p.requires_grad}
    def penalty(self, model):
        return sum(((p - self.params[n]) ** 2).sum() for n, p in model.named_parameters())
class SafeEWC:
    def __init__(self, model):
        self.params = {n: p.data.clone() for n, p in model.named_parameters()}
    def penalty(self, model):
        return sum(((p - self.params[n]) ** 2).sum() for n, p in model.named_parameters())
''',
        'main.py': '''\
from ewc import EWC, SafeEWC
model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
ewc = EWC(model)  # expect
safe = SafeEWC(model)
for _ in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean() + ewc.penalty(model) + safe.penalty(model)
    opt.zero_grad()
    loss.backward()
    opt.step()
'''}),
    # A helper of another module sets `requires_grad` to the flag it is passed: a call that passes
    # False freezes (its snapshot is kept), one that passes True does not.
    ('TNS5', 'helper of another module sets requires_grad to the flag a call passes', {
        'trainable.py': PLAIN + '''\
def set_trainable(m, flag):
    for p in m.parameters():
        p.requires_grad = flag
''',
        'main.py': '''\
from trainable import set_trainable
frozen = nn.Linear(4, 4)
tuned = nn.Linear(4, 4)
head = nn.Linear(4, 2)
set_trainable(frozen, False)
set_trainable(tuned, flag=True)
init_frozen = frozen.state_dict()
init_tuned = tuned.state_dict()  # expect
opt = torch.optim.SGD([*frozen.parameters(), *tuned.parameters(), *head.parameters()], lr=0.1)
for _ in range(3):
    opt.zero_grad()
    head(tuned(frozen(torch.randn(8, 4)))).pow(2).mean().backward()
    opt.step()
print(init_frozen["weight"].sum(), init_tuned["weight"].sum())
'''}),
    # A method of another module's class keeps what a call passes (`self.last = v`,
    # `self.vals.append(v)`), another converts it: torch raises in that other method, which the
    # file calls on the same instance; reported at the argument that hands the tensor over.
    ('TNS1', 'logger of another module keeps what a method call passes, another of its methods converts it', {
        'logkeep.py': '''\
class Logger:
    def __init__(self):
        self.last = None
    def log(self, v):
        self.last = v
    def dump(self):
        return self.last.numpy()  # may
''',
        'main.py': '''\
from logkeep import Logger
net = nn.Linear(2, 1)
logger = Logger()
for _ in range(2):
    loss = net(torch.ones(1, 2)).sum()
    loss.backward()
    logger.log(loss)  # expect
print(logger.dump())
'''}),
    ('TNS1', 'meter of another module appends what a method call passes, another gives the list to np.mean', {
        'meterkeep.py': '''\
class Meter:
    def __init__(self):
        self.vals = []
    def update(self, v):
        self.vals.append(v)
    def avg(self):
        return np.mean(self.vals)
''',
        'main.py': '''\
from meterkeep import Meter
def main():
    net = nn.Linear(2, 1)
    meter = Meter()
    for _ in range(2):
        loss = net(torch.ones(1, 2)).sum()
        meter.update(loss)  # expect
    print(meter.avg())
main()
'''}),
    ('TNS1', 'trainer of the file holds a logger of another module that keeps a loss, another method dumps it', {
        'logkeep.py': '''\
class Logger:
    def __init__(self):
        self.last = None
    def log(self, v):
        self.last = v
    def dump(self):
        return self.last.numpy()  # may
''',
        'main.py': '''\
from logkeep import Logger
class Trainer:
    def __init__(self):
        self.net = nn.Linear(2, 1)
        self.logger = Logger()
    def step(self):
        loss = self.net(torch.ones(1, 2)).sum()
        self.logger.log(loss)  # expect
    def report(self):
        return self.logger.dump()
t = Trainer()
t.step()
print(t.report())
'''}),
    # A discriminator loss of another module that detaches the fakes under a flag it defaults to
    # True: the calls that leave the flag or pass True keep the generator out.
    # A relativistic GAN's epoch takes its modules and optimizers as parameters (the only D call is
    # in the loss helper of another module): the generator step fails ("backward through the
    # graph a second time"); its twin detaches at the call.
    ('TNS3', 'relativistic loss helpers of another module in an epoch handed its modules and optimizers', {
        'losses.py': """\
import torch.nn.functional as F
def relativistic_d_loss(D, real, fake):
    d_real, d_fake = D(real), D(fake)
    return F.binary_cross_entropy_with_logits(d_real - d_fake.mean(), torch.ones_like(d_real))
def relativistic_g_loss(D, real, fake):
    d_real, d_fake = D(real), D(fake)
    return F.binary_cross_entropy_with_logits(d_fake - d_real.mean(), torch.ones_like(d_fake))
""",
        'train.py': """\
from losses import relativistic_d_loss, relativistic_g_loss
def train_epoch(G, D, optimizer_G, optimizer_D, loader):
    for real in loader:
        fake = G(torch.randn(real.size(0), 4))
        optimizer_D.zero_grad()
        loss_D = relativistic_d_loss(D, real, fake)  # expect
        loss_D.backward()
        optimizer_D.step()
        optimizer_G.zero_grad()
        relativistic_g_loss(D, real, fake).backward()
        optimizer_G.step()
def train_epoch_detached(G, D, optimizer_G, optimizer_D, loader):
    for real in loader:
        fake = G(torch.randn(real.size(0), 4))
        optimizer_D.zero_grad()
        loss_D = relativistic_d_loss(D, real, fake.detach())
        loss_D.backward()
        optimizer_D.step()
        optimizer_G.zero_grad()
        relativistic_g_loss(D, real, fake).backward()
        optimizer_G.step()
""",
        'main.py': """\
from train import train_epoch_detached
G, D = nn.Linear(4, 3), nn.Linear(3, 1)
opt_G, opt_D = torch.optim.Adam(G.parameters()), torch.optim.Adam(D.parameters())
train_epoch_detached(G, D, opt_G, opt_D, [torch.randn(8, 3)])
"""}),
    # A tensor of a config module handed to another module's function and class that
    # copy-construct what they are given (UserWarning at each call); a list handed to them is not.
    ('TNS2', 'copy construction of a tensor in a function and a constructor of another module', {
        'config.py': """\
IMAGENET_MEAN = torch.tensor([0.485, 0.456, 0.406])
IMAGENET_LIST = [0.229, 0.224, 0.225]
""",
        'transforms.py': """\
class Normalize:
    def __init__(self, mean):
        self.mean = torch.tensor(mean).view(-1, 1, 1)
    def __call__(self, x):
        return x - self.mean
def as_tensor(v):
    return torch.tensor(v, dtype=torch.float32)
def duck(v):
    if hasattr(v, "detach"):
        return v.detach().clone()
    return torch.tensor(v)
def exact(v):
    if type(v) is not torch.Tensor:
        v = torch.tensor(v)
    return v
def tried(v):
    try:
        return v.detach().clone()
    except AttributeError:
        return torch.tensor(v)
class Wrapped:
    def __new__(cls, v):
        return v.detach().clone()
    def __init__(self, v):
        self.v = torch.tensor(v)
""",
        'main.py': """\
from config import IMAGENET_MEAN, IMAGENET_LIST
from transforms import Normalize, as_tensor, duck, exact, tried, Wrapped
norm = Normalize(IMAGENET_MEAN)  # expect
mean = as_tensor(IMAGENET_MEAN)  # expect
ok = Normalize(IMAGENET_LIST)
ok2 = as_tensor(IMAGENET_LIST)
print(norm(torch.zeros(3, 2, 2)).shape, mean, ok.mean.shape, ok2)
print(duck(IMAGENET_MEAN), exact(IMAGENET_MEAN), tried(IMAGENET_MEAN), Wrapped(IMAGENET_MEAN))
""",
        'through_module.py': """\
import transforms as T
from config import IMAGENET_MEAN, IMAGENET_LIST
norm = T.Normalize(IMAGENET_MEAN)  # expect
mean = T.as_tensor(IMAGENET_MEAN)  # expect
ok = T.as_tensor(IMAGENET_LIST)
"""}),
    # The same through a package that re-exports them (`from .transforms import Normalize` in
    # its `__init__.py`), imported by name and whole, its module imported as a name of the
    # package (`from aug import transforms`), and a subclass that inherits the constructor (not
    # one that defines its own).
    ('TNS2', 'copy construction of a tensor in a function and a constructor a package re-exports', {
        'config.py': """\
IMAGENET_MEAN = torch.tensor([0.485, 0.456, 0.406])
IMAGENET_LIST = [0.229, 0.224, 0.225]
""",
        'aug/__init__.py': """\
from .transforms import Normalize, as_tensor, ImageNetNormalize, Centered
""",
        'aug/transforms.py': """\
class Normalize:
    def __init__(self, mean):
        self.mean = torch.tensor(mean).view(-1, 1, 1)
class ImageNetNormalize(Normalize):
    def __call__(self, x):
        return x - self.mean
class Centered(Normalize):
    def __init__(self, mean):
        self.mean = mean
def as_tensor(v):
    return torch.tensor(v, dtype=torch.float32)
""",
        'main.py': """\
import aug
from aug import Normalize, as_tensor, ImageNetNormalize, Centered
from config import IMAGENET_MEAN, IMAGENET_LIST
norm = Normalize(IMAGENET_MEAN)  # expect
mean = as_tensor(IMAGENET_MEAN)  # expect
whole = aug.Normalize(IMAGENET_MEAN)  # expect
inherited = ImageNetNormalize(IMAGENET_MEAN)  # expect
ok = Normalize(IMAGENET_LIST)
ok2 = aug.as_tensor(IMAGENET_LIST)
ok3 = Centered(IMAGENET_MEAN)
print(norm.mean.shape, mean, whole.mean.shape, inherited.mean.shape, ok.mean.shape, ok2, ok3.mean)
""",
        'by_module.py': """\
from aug import transforms
from config import IMAGENET_MEAN
mean = transforms.as_tensor(IMAGENET_MEAN)  # expect
"""}),
    ('TNS3', 'discriminator loss of another module that detaches under a flag it defaults to True', {
        'gan_losses.py': '''\
def d_loss(netD, real, fake, detach_fake=True):
    if detach_fake:
        fake = fake.detach()
    return netD(real).pow(2).mean() + netD(fake).pow(2).mean()
def d_value(netD, real, fake, weight=1.0, detach=True):
    pred_fake = netD(fake.detach() if detach else fake)
    return weight * (netD(real).pow(2).mean() + pred_fake.pow(2).mean())
''',
        'main.py': '''\
from gan_losses import d_loss, d_value
netG, netD = nn.Linear(4, 4), nn.Linear(4, 1)
optD = torch.optim.Adam(netD.parameters())
optG = torch.optim.Adam(netG.parameters())
def g_step(fake):
    optG.zero_grad()
    (-netD(fake).mean()).backward()
    optG.step()
def step(kind):
    fake = netG(torch.randn(8, 4))
    real = torch.randn(8, 4)
    optD.zero_grad()
    if kind == 0:
        loss = d_loss(netD, real, fake)
    elif kind == 1:
        loss = d_loss(netD, real, fake, detach_fake=True)
    elif kind == 2:
        loss = d_loss(netD, real, fake, False)  # expect
    elif kind == 3:
        loss = d_value(netD, real, fake, 0.5)
    else:
        loss = d_value(netD, real, fake, detach=False)  # expect
    loss.backward()
    optD.step()
    g_step(fake)
''',
    }),
    # The same flags on a static method, an inherited method, and a function that hands its flag
    # on to another helper of its module.
    ('TNS3', 'discriminator loss methods and a relaying helper of another module, flags defaulting to True', {
        'gan_losses.py': '''\
def prep(x, detach=True):
    return x.detach() if detach else x
def relay(netD, real, fake, detach=True):
    return netD(real).pow(2).mean() + netD(prep(fake, detach)).pow(2).mean()
class Losses:
    @staticmethod
    def d_loss(netD, real, fake, detach=True):
        if detach:
            fake = fake.detach()
        return netD(real).pow(2).mean() + netD(fake).pow(2).mean()
class Base:
    def d_loss(self, netD, real, fake, detach=True):
        pred = netD(fake.detach() if detach else fake)
        return netD(real).pow(2).mean() + pred.pow(2).mean()
class Crit(Base):
    pass
''',
        'main.py': '''\
from gan_losses import Crit, Losses, relay
netG, netD = nn.Linear(4, 4), nn.Linear(4, 1)
optD = torch.optim.Adam(netD.parameters())
optG = torch.optim.Adam(netG.parameters())
lossfn = Crit()
def g_step(fake):
    optG.zero_grad()
    (-netD(fake).mean()).backward()
    optG.step()
def step(kind):
    fake = netG(torch.randn(8, 4))
    real = torch.randn(8, 4)
    optD.zero_grad()
    if kind == 0:
        loss = Losses.d_loss(netD, real, fake)
    elif kind == 1:
        loss = Losses.d_loss(netD, real, fake, detach=False)  # expect
    elif kind == 2:
        loss = lossfn.d_loss(netD, real, fake)
    elif kind == 3:
        loss = lossfn.d_loss(netD, real, fake, False)  # expect
    elif kind == 4:
        loss = relay(netD, real, fake)
    else:
        loss = relay(netD, real, fake, detach=False)  # expect
    loss.backward()
    optD.step()
    g_step(fake)
''',
    }),
    ('TNS3', 'loss object of another module: methods its class inherits from a base of a third module', {
        'gan_base.py': '''\
class BaseGANLoss:
    def __init__(self):
        self.bce = nn.BCEWithLogitsLoss()
    def d_loss(self, netD, real, fake):
        loss = self.bce(netD(real), torch.ones(8, 1)) + self.bce(netD(fake), torch.zeros(8, 1))
        loss.backward()
        return loss
    def d_value(self, netD, real, fake):
        return self.bce(netD(real), torch.ones(8, 1)) + self.bce(netD(fake), torch.zeros(8, 1))
''',
        'gan_losses.py': '''\
from gan_base import BaseGANLoss
class MyLoss(BaseGANLoss):
    def g_loss(self, netD, fake):
        return self.bce(netD(fake), torch.ones(8, 1))
class Middle(MyLoss):
    pass
''',
        'main.py': '''\
netG, netD = nn.Linear(4, 4), nn.Linear(4, 1)
optD = torch.optim.Adam(netD.parameters())
optG = torch.optim.Adam(netG.parameters())
bce = nn.BCEWithLogitsLoss()
def g_step(fake):
    optG.zero_grad()
    bce(netD(fake), torch.ones(8, 1)).backward()
    optG.step()
from gan_losses import MyLoss, Middle
from gan_base import BaseGANLoss
class LocalLoss(BaseGANLoss):
    pass
def bad_step():
    crit = MyLoss()
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    crit.d_loss(netD, torch.randn(8, 4), fake)  # expect
    optD.step()
    g_step(fake)
def good_step():
    crit = MyLoss()
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    crit.d_loss(netD, torch.randn(8, 4), fake.detach())
    optD.step()
    g_step(fake)
def bad_value():
    crit = Middle()
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    loss_d = crit.d_value(netD, torch.randn(8, 4), fake)  # expect
    loss_d.backward()
    optD.step()
    g_step(fake)
def good_value():
    crit = Middle()
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    loss_d = crit.d_value(netD, torch.randn(8, 4), fake.detach())
    loss_d.backward()
    optD.step()
    g_step(fake)
def bad_local():
    crit = LocalLoss()
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    crit.d_loss(netD, torch.randn(8, 4), fake)  # expect
    optD.step()
    g_step(fake)
def good_local():
    crit = LocalLoss()
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    crit.d_loss(netD, torch.randn(8, 4), fake.detach())
    optD.step()
    g_step(fake)
''',
    }),
    ('TNS3', 'loss object of another module: its __call__, one that detaches', {
        'gan_losses.py': '''\
class DLoss:
    def __init__(self):
        self.bce = nn.BCEWithLogitsLoss()
    def __call__(self, netD, real, fake):
        loss = self.bce(netD(real), torch.ones(8, 1)) + self.bce(netD(fake), torch.zeros(8, 1))
        loss.backward()
        return loss
class HingeValue:
    def __call__(self, netD, real, fake):
        bce = nn.BCEWithLogitsLoss()
        return bce(netD(real), torch.ones(8, 1)) + bce(netD(fake), torch.zeros(8, 1))
class Detaching:
    def __call__(self, netD, real, fake):
        bce = nn.BCEWithLogitsLoss()
        loss = bce(netD(real), torch.ones(8, 1)) + bce(netD(fake.detach()), torch.zeros(8, 1))
        loss.backward()
        return loss
''',
        'main.py': '''\
netG, netD = nn.Linear(4, 4), nn.Linear(4, 1)
optD = torch.optim.Adam(netD.parameters())
optG = torch.optim.Adam(netG.parameters())
bce = nn.BCEWithLogitsLoss()
def g_step(fake):
    optG.zero_grad()
    bce(netD(fake), torch.ones(8, 1)).backward()
    optG.step()
from gan_losses import DLoss, HingeValue, Detaching
def bad_step():
    crit = DLoss()
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    crit(netD, torch.randn(8, 4), fake)  # expect
    optD.step()
    g_step(fake)
def good_step():
    crit = DLoss()
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    crit(netD, torch.randn(8, 4), fake.detach())
    optD.step()
    g_step(fake)
def bad_value():
    crit = HingeValue()
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    loss_d = crit(netD, torch.randn(8, 4), fake)  # expect
    loss_d.backward()
    optD.step()
    g_step(fake)
def good_value():
    crit = HingeValue()
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    loss_d = crit(netD, torch.randn(8, 4), fake.detach())
    loss_d.backward()
    optD.step()
    g_step(fake)
def good_detaching():
    crit = Detaching()
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    crit(netD, torch.randn(8, 4), fake)
    optD.step()
    g_step(fake)
''',
    }),
    ('TNS3', 'loss class of another module: static and class methods, a gradient penalty, a generator loss', {
        'gan_losses.py': '''\
class Losses:
    @staticmethod
    def d_step(netD, real, fake):
        bce = nn.BCEWithLogitsLoss()
        loss = bce(netD(real), torch.ones(8, 1)) + bce(netD(fake), torch.zeros(8, 1))
        loss.backward()
    @staticmethod
    def d_value(netD, real, fake):
        bce = nn.BCEWithLogitsLoss()
        return bce(netD(real), torch.ones(8, 1)) + bce(netD(fake), torch.zeros(8, 1))
    @classmethod
    def d_cls(cls, netD, real, fake):
        bce = nn.BCEWithLogitsLoss()
        return bce(netD(real), torch.ones(8, 1)) + bce(netD(fake), torch.zeros(8, 1))
    @staticmethod
    def gradient_penalty(netD, real, fake):
        alpha = torch.rand(8, 1)
        interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        grad = torch.autograd.grad(netD(interp).sum(), interp, create_graph=True)[0]
        return ((grad.norm(2, dim=1) - 1) ** 2).mean()
    @staticmethod
    def g_value(netD, fake):
        return nn.functional.binary_cross_entropy_with_logits(netD(fake), torch.ones(8, 1))
''',
        'main.py': '''\
netG, netD = nn.Linear(4, 4), nn.Linear(4, 1)
optD = torch.optim.Adam(netD.parameters())
optG = torch.optim.Adam(netG.parameters())
bce = nn.BCEWithLogitsLoss()
def g_step(fake):
    optG.zero_grad()
    bce(netD(fake), torch.ones(8, 1)).backward()
    optG.step()
from gan_losses import Losses
def bad_class():
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    Losses.d_step(netD, torch.randn(8, 4), fake)  # expect
    optD.step()
    g_step(fake)
def good_class():
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    Losses.d_step(netD, torch.randn(8, 4), fake.detach())
    optD.step()
    g_step(fake)
def bad_instance():
    losses = Losses()
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    loss_d = losses.d_value(netD, torch.randn(8, 4), fake)  # expect
    loss_d.backward()
    optD.step()
    g_step(fake)
def good_instance():
    losses = Losses()
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    loss_d = losses.d_value(netD, torch.randn(8, 4), fake.detach())
    loss_d.backward()
    optD.step()
    g_step(fake)
def bad_classmethod():
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    loss_d = Losses.d_cls(netD, torch.randn(8, 4), fake)  # expect
    loss_d.backward()
    optD.step()
    g_step(fake)
def good_penalty():
    fake = netG(torch.randn(8, 4))
    real = torch.randn(8, 4)
    optD.zero_grad()
    gp = Losses.gradient_penalty(netD, real, fake.detach())
    loss_d = netD(fake.detach()).mean() - netD(real).mean() + 10 * gp
    loss_d.backward()
    optD.step()
    g_step(fake)
def good_generator_loss():
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    loss_d = Losses.d_value(netD, torch.randn(8, 4), fake.detach())
    loss_d.backward()
    optD.step()
    optG.zero_grad()
    loss_g = Losses.g_value(netD, fake)
    loss_g.backward()
    optG.step()
''',
    }),
    ('TNS3', 'helpers of another module given a tuple whose real part alone reaches D', {
        'gan_losses.py': '''\
def d_loss(netD, batch):
    x, y = batch
    bce = nn.BCEWithLogitsLoss()
    return bce(netD(x), torch.ones(8, 1))
def d_step(netD, optD, batch):
    real = batch[0]
    bce = nn.BCEWithLogitsLoss()
    optD.zero_grad()
    bce(netD(real), torch.ones(8, 1)).backward()
    optD.step()
''',
        'main.py': '''\
netG, netD = nn.Linear(4, 4), nn.Linear(4, 1)
optD = torch.optim.Adam(netD.parameters())
optG = torch.optim.Adam(netG.parameters())
bce = nn.BCEWithLogitsLoss()
def g_step(fake):
    optG.zero_grad()
    bce(netD(fake), torch.ones(8, 1)).backward()
    optG.step()
from gan_losses import d_loss, d_step
def with_loss():
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    loss_d = d_loss(netD, (torch.randn(8, 4), fake))
    loss_d.backward()
    optD.step()
    g_step(fake)
def with_step():
    fake = netG(torch.randn(8, 4))
    d_step(netD, optD, [torch.randn(8, 4), fake])
    g_step(fake)
with_loss()
with_step()
''',
    }),
    ('TNS3', 'loss object of another module: its discriminator loss and step methods', {
        'losses.py': '''\
class GANLoss:
    def __init__(self):
        self.bce = nn.BCEWithLogitsLoss()
    def d_loss(self, netD, real, fake):
        return self.bce(netD(real), torch.ones(8, 1)) + self.bce(netD(fake), torch.zeros(8, 1))
    def g_loss(self, netD, fake):
        return self.bce(netD(fake), torch.ones(8, 1))
    def d_step(self, netD, optD, real, fake):
        loss = self.d_loss(netD, real, fake)
        optD.zero_grad()
        loss.backward()
        optD.step()
''',
        'main.py': '''\
from losses import GANLoss
class Trainer:
    def __init__(self):
        self.netG, self.netD = nn.Linear(4, 4), nn.Linear(4, 1)
        self.optD = torch.optim.Adam(self.netD.parameters())
        self.optG = torch.optim.Adam(self.netG.parameters())
        self.crit = GANLoss()
    def g_step(self, fake):
        loss_g = self.crit.g_loss(self.netD, fake)
        self.optG.zero_grad()
        loss_g.backward()
        self.optG.step()
    def train(self):
        fake = self.netG(torch.randn(8, 4))
        loss_d = self.crit.d_loss(self.netD, torch.randn(8, 4), fake)  # expect
        self.optD.zero_grad()
        loss_d.backward()
        self.optD.step()
        self.g_step(fake)
    def train_detached(self):
        fake = self.netG(torch.randn(8, 4))
        loss_d = self.crit.d_loss(self.netD, torch.randn(8, 4), fake.detach())
        self.optD.zero_grad()
        loss_d.backward()
        self.optD.step()
        self.g_step(fake)
    def train_steps(self):
        crit = GANLoss()
        fake = self.netG(torch.randn(8, 4))
        crit.d_step(self.netD, self.optD, torch.randn(8, 4), fake)  # expect
        self.g_step(fake)
    def train_steps_detached(self):
        crit = GANLoss()
        fake = self.netG(torch.randn(8, 4))
        crit.d_step(self.netD, self.optD, torch.randn(8, 4), fake.detach())
        self.g_step(fake)
''',
    }),
    ('TNS3', 'freeze helper inherited from a base class of another module, its default flag', {
        'base_model.py': '''\
class BaseModel:
    def set_requires_grad(self, nets, requires_grad=False):
        if not isinstance(nets, list):
            nets = [nets]
        for net in nets:
            for p in net.parameters():
                p.requires_grad = requires_grad
''',
        'model.py': '''\
from base_model import BaseModel
class GanModel(BaseModel):
    def __init__(self):
        self.netG = nn.Linear(2, 3)
        self.netD = nn.Linear(3, 1)
        self.optD = torch.optim.SGD(self.netD.parameters(), lr=0.1)
    def d_step(self, z):
        self.set_requires_grad(self.netG)
        loss = self.netD(self.netG(z)).mean()
        self.optD.zero_grad()
        loss.backward()
        self.optD.step()
    def d_step_thawed(self, z):
        self.set_requires_grad(self.netG, True)
        loss = self.netD(self.netG(z)).mean()  # expect
        self.optD.zero_grad()
        loss.backward()
        self.optD.step()
''',
        'main.py': '''\
from model import GanModel
GanModel().d_step(torch.randn(4, 2))
''',
    }),
    # The same without the `.data`: the buffer hands the fakes on, and the discriminator's backward
    # reaches the generator (the program's assertion fails).
    # A helper of another module whose body returns nothing, decorated by a wrapper that returns
    # the argument: the fake goes on to the discriminator.
    ('TNS3', 'decorated helper of another module hands the fakes on', {
        'utils.py': '''\
def keep_input(fn):
    def wrapper(x):
        fn(x)
        return x
    return wrapper
@keep_input
def log_stats(x):
    print(float(x.mean()))
''',
        'main.py': '''\
from utils import log_stats
netG, netD = nn.Linear(4, 4), nn.Linear(4, 1)
optimizer_D = torch.optim.Adam(netD.parameters(), lr=1e-3)
fake_B = netG(torch.randn(4, 4))
loss_D = netD(log_stats(fake_B)).pow(2).mean()  # expect
optimizer_D.zero_grad()
loss_D.backward()
''',
    }),
    ('TNS3', 'replay buffer of another module returns the fakes it is given', {
        'buffers.py': '''\
class ReplayBuffer:
    def __init__(self):
        self.data = []
    def push_and_pop(self, data):
        self.data.append(data)
        return data
''',
        'main.py': '''\
from buffers import ReplayBuffer
netG, netD = nn.Linear(4, 4), nn.Linear(4, 1)
optimizer_D = torch.optim.Adam(netD.parameters(), lr=1e-3)
buf = ReplayBuffer()
fake_B = netG(torch.randn(4, 4))
loss_D = netD(buf.push_and_pop(fake_B)).pow(2).mean()  # expect
optimizer_D.zero_grad()
loss_D.backward()
assert all(p.grad is None for p in netG.parameters())
''',
    }),
    ('TNS5', 'snapshot and view helpers of a module of a package imported from the package', {
        'pkg/__init__.py': '''\
''',
        'pkg/utils.py': '''\
def snapshot(m):
    return m.state_dict()
def to_np(t):
    return t.detach().numpy()
''',
        'main.py': '''\
from pkg import utils
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best = utils.snapshot(model)  # expect
w = utils.to_np(model.weight)  # expect
model(torch.randn(4, 3)).sum().backward()
opt.step()
model.load_state_dict(best)
print(w)
'''}),
    # An epoch of another module that steps only the optimizer it is handed: a snapshot of a
    # part the optimizer does not hold, or of a frozen part, is left as it was; one of the part
    # it holds changes (the program asserts each).
    ('TNS5', 'epoch of another module handed an optimizer of the head, or of what requires grad', {
        'engine.py': '''\
def train_one_epoch(model, loader, optimizer):
    model.train()
    for x in loader:
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()
''',
        'main.py': '''\
import engine
from engine import train_one_epoch
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 2)
    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))
loader = [torch.randn(8, 4) for _ in range(2)]
model = Net()
fc1_state = model.fc1.state_dict()
fc1_w = model.fc1.weight.detach()
fc2_state = model.fc2.state_dict()  # expect
ref1, ref2 = fc1_w.clone(), fc2_state["weight"].clone()
opt = torch.optim.SGD(model.fc2.parameters(), lr=0.5)
train_one_epoch(model, loader, opt)
assert torch.equal(fc1_state["weight"], ref1) and torch.equal(fc1_w, ref1)
assert not torch.equal(fc2_state["weight"], ref2)
other = Net()
other.fc1.requires_grad_(False)
frozen_state = other.fc1.state_dict()
ref3 = frozen_state["weight"].clone()
opt2 = torch.optim.SGD([p for p in other.parameters() if p.requires_grad], lr=0.5)
engine.train_one_epoch(other, loader, opt2)
assert torch.equal(frozen_state["weight"], ref3)
print(fc1_state, fc1_w, fc2_state, frozen_state)
'''}),
    # An evaluation of another module returns its total with every batch's graph, kept in a
    # dict of lists of the script's that is only displayed (the graphs stay alive with it).
    ('TNS5', 'total of another module kept in a history dict that is only displayed', {
        'evaluate.py': '''\
def evaluate(model, loader):
    model.eval()
    total = 0.0
    for x in loader:
        total += model(x).pow(2).mean()  # expect
    return total / len(loader)
''',
        'main.py': '''\
from evaluate import evaluate
model = nn.Linear(4, 1)
log = {"val_loss": []}
best = float("inf")
for epoch in range(2):
    val = evaluate(model, [torch.randn(3, 4)])
    log["val_loss"].append(val)
    if val < best:
        best = val
print("best", float(best), log)
'''}),
    # SWA's evaluation with averaged weights, by a helper of a torch-free module that loads them
    # into the model: the state dict taken to restore the weights after is the model's own
    # tensors, overwritten by the load (the restore loads them onto themselves).
    ('TNS5', 'weights swapped in by a helper of another module that loads a state dict', {
        'swa_utils.py': '''\
# (imports nothing)
def evaluate_with_weights(model, state, eval_fn):
    model.load_state_dict(state)
    return eval_fn(model)
def restore(model, state):
    model.load_state_dict(state)
''',
        'main.py': '''\
import swa_utils
from swa_utils import evaluate_with_weights, restore
model = nn.Linear(3, 1)
avg_state = {k: v * 0.5 for k, v in model.state_dict().items()}
orig_state = model.state_dict()  # expect
w0 = model.weight.detach().clone()
score = evaluate_with_weights(model, avg_state, lambda m: m(torch.ones(1, 3)).item())
model.load_state_dict(orig_state)
assert not torch.equal(model.weight, w0)
kept = model.state_dict()
restore(model, kept)
swa_utils.restore(model, kept)
print(kept)
'''}),
    # A meter of another module fed the loss itself: each epoch's average, kept in a history
    # and plotted, holds every batch's graph (plotting it raises: TNS106's finding is the
    # conversion, TNS503's the meter).
    ('TNS5', 'meter of another module fed the loss, its averages kept in a history that is plotted', {
        'meters.py': '''\
# (imports nothing)
class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0
    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
    @property
    def avg(self):
        return self.sum / self.count
''',
        'main.py': '''\
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from meters import AverageMeter
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
train_losses = []
for epoch in range(2):
    meter = AverageMeter()
    for _ in range(3):
        x = torch.randn(8, 4)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        meter.update(loss, x.size(0))  # expect
    train_losses.append(meter.avg)
fig, ax = plt.subplots()
ax.plot([float(v) for v in train_losses])
plt.close(fig)
'''}),
    ('TNS5', 'helper of another module returns some entries of a state dict', {
        'utils.py': '''\
# (imports nothing)
def backbone_state(model):
    return {k: v for k, v in model.state_dict().items() if not k.startswith("2.")}
''',
        'main.py': '''\
from utils import backbone_state
model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
init = backbone_state(model)  # expect
ref = {k: v.clone() for k, v in init.items()}
opt = torch.optim.SGD(model.parameters(), lr=0.5)
model(torch.randn(8, 4)).sum().backward()
opt.step()
assert not torch.equal(ref["0.weight"], init["0.weight"])
model.load_state_dict(init, strict=False)
'''}),
    ('TNS5', 'meter of the file inherits update from a base of another module', {
        'base.py': '''\
class BaseMeter:
    def update(self, val):
        self.total += val
''',
        'main.py': '''\
from base import BaseMeter
class LossMeter(BaseMeter):
    def __init__(self):
        self.total = 0
model = nn.Linear(3, 1)
meter = LossMeter()
for i in range(3):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    meter.update(loss)  # expect
print(float(meter.total))
'''}),
    ('TNS501', 'early stopper of another module called on the model', {
        'utils.py': '''\
class EarlyStopping:
    def __init__(self):
        self.best_state = None
    def __call__(self, val_loss, model):
        self.best_state = model.state_dict()
''',
        'main.py': '''\
from utils import EarlyStopping
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
stopper = EarlyStopping()
stopper(0.0, model)  # expect
model(torch.randn(4, 3)).sum().backward()
opt.step()
model.load_state_dict(stopper.best_state)
'''}),
    ('TNS402', 'output of a model of another module whose forward ends in a Tanh attribute', {
        'models.py': '''\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.act = nn.Tanh()
    def forward(self, x):
        return self.act(self.fc(x))
''',
        'main.py': '''\
from models import Net
net = Net()
out = net(torch.randn(4, 3))
out.detach().zero_()  # expect
out.sum().backward()
'''}),
    ('TNS5', 'meter subclass inherits update from a base in its module', {
        'meters.py': '''\
class Meter:
    def __init__(self):
        self.sum = 0
    def update(self, val):
        self.sum += val
class LossMeter(Meter):
    pass
''',
        'main.py': '''\
from meters import LossMeter
model = nn.Linear(3, 1)
meter = LossMeter()
for _ in range(3):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    loss.backward()
    meter.update(loss)  # expect
print(float(meter.sum))
'''}),
    ('TNS5', 'trainer of the file inherits a stepping method from another module', {
        'base.py': '''\
class BaseTrainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
    def fit(self, x):
        self.opt.zero_grad()
        self.model(x).sum().backward()
        self.opt.step()
''',
        'main.py': '''\
from base import BaseTrainer
class Trainer(BaseTrainer):
    pass
model = nn.Linear(3, 1)
trainer = Trainer(model)
initial = model.state_dict()  # expect
w0 = model.weight.detach()  # expect
trainer.fit(torch.randn(4, 3))
model.load_state_dict(initial)
print(w0)
'''}),
    ('TNS5', 'meter class re-exported by a package', {
        'metrics/__init__.py': '''\
from .meter import AverageMeter
''',
        'metrics/meter.py': '''\
class AverageMeter:
    def __init__(self):
        self.total = 0
    def update(self, value):
        self.total += value
''',
        'main.py': '''\
from metrics import AverageMeter
model = nn.Linear(3, 1)
meter = AverageMeter()
for _ in range(3):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    loss.backward()
    meter.update(loss)  # expect
print(float(meter.total))
'''}),
    ('TNS5', 'snapshot helper and train function re-exported by a package', {
        'training/__init__.py': '''\
from .ckpt import snapshot
from .loop import fit_epoch
''',
        'training/ckpt.py': '''\
def snapshot(model):
    return model.state_dict()
''',
        'training/loop.py': '''\
def fit_epoch(model, opt, x):
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
''',
        'main.py': '''\
from training import fit_epoch, snapshot
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
init_state = snapshot(model)  # expect
w = model.weight.detach()  # expect
fit_epoch(model, opt, torch.randn(4, 3))
model.load_state_dict(init_state)
print(w)
'''}),
    ('TNS3', 'discriminator step on what a helper of another module detaches', {
        'tensor_utils.py': '''\
def as_const(t):
    return t.detach()
''',
        'main.py': '''\
from tensor_utils import as_const
netG, netD = nn.Linear(2, 3), nn.Linear(3, 1)
optD = torch.optim.SGD(netD.parameters(), lr=0.1)
fake = netG(torch.randn(4, 2))
optD.zero_grad()
netD(as_const(fake)).mean().backward()
optD.step()
'''}),
    ('TNS5', 'meter of another module converts a tensor it is given with item', {
        'utils.py': '''\
class AverageMeter:
    def __init__(self):
        self.sum = 0.0
    def update(self, val):
        if torch.is_tensor(val):
            val = val.item()
        self.sum += val
''',
        'main.py': '''\
from utils import AverageMeter
model = nn.Linear(3, 1)
meter = AverageMeter()
for _ in range(3):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    loss.backward()
    meter.update(loss)
print(meter.sum)
'''}),
    # A trainer's running loss, kept by `train_step` with each step's graph, whose loop is another
    # module's; not where that loop resets it (`t.reset()`), nor for an instance made in each
    # iteration.
    # A package imported whole (`import vislib`): a function its `__init__.py` re-exports
    # (`vislib.to_numpy`) and one of a module it binds (`vislib.convert.to_numpy`), each handed a
    # feature map that requires grad; not one handed its detached copy.
    ('TNS1', 'converter reached through a package imported whole', {
        'vislib/__init__.py': '''\
from . import convert
from .convert import to_numpy
''',
        'vislib/convert.py': '''\
def to_numpy(t):
    return t.cpu().numpy()  # may
''',
        'main.py': '''\
import vislib
conv = nn.Conv2d(1, 4, 3, padding=1)
fmap = conv(torch.rand(1, 1, 12, 12))[0, 0]
ok = vislib.to_numpy(fmap.detach())
ok2 = vislib.convert.to_numpy(fmap.detach())
try:
    a = vislib.to_numpy(fmap)  # expect
finally:
    b = vislib.convert.to_numpy(fmap)  # expect
''',
    }),
    # A class of another module whose `__new__` returns another object: its `__init__`, which
    # converts, does not run (strict mode: what it converts is of unknown origin there).
    ('TNS1', 'constructor of another module that never runs behind a __new__', {
        'data.py': '''\
class FeatureSet:
    def __init__(self, feats):
        self.feats = feats.numpy()  # may
class Cached:
    def __new__(cls, feats):
        return {"feats": feats}
    def __init__(self, feats):
        self.feats = feats.numpy()  # may
''',
        'main.py': '''\
from data import FeatureSet, Cached
model = nn.Linear(4, 3)
print(len(Cached(model(torch.randn(8, 4)))))
ds = FeatureSet(model(torch.randn(8, 4)))  # expect
''',
    }),
    ('TNS5', 'running loss of a trainer whose loop is in another module', {
        'trainer.py': _RUNNING_TRAINER + '  # expect\n',
        'main.py': '''\
from trainer import Trainer
def main():
    t = Trainer(nn.Linear(3, 1))
    for x in [torch.randn(4, 3)] * 3:
        t.train_step(x)
    print(t.opt)
main()
''',
    }),
    # An evaluation step that adds each loss and back-propagates none, whose loop is another
    # module's: what it adds requires grad only as the instance's model does (frozen there).
    ('TNS5', 'running loss of an evaluation step whose loop is in another module, of a frozen model', {
        'trainer.py': '''\
class Evaluator:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
        self.running_loss = 0.0
    def eval_step(self, x):
        loss = self.model(x).pow(2).mean()
        self.running_loss += loss
''',
        'main.py': '''\
from trainer import Evaluator
def main():
    model = nn.Linear(3, 1)
    model.requires_grad_(False)
    t = Evaluator(model)
    for x in [torch.randn(4, 3)] * 3:
        t.eval_step(x)
main()
''',
    }),
    ('TNS5', 'running loss of a trainer whose loop in another module resets it', {
        'trainer.py': _RUNNING_TRAINER + '\n',
        'main.py': '''\
from trainer import Trainer
def main():
    t = Trainer(nn.Linear(3, 1))
    for x in [torch.randn(4, 3)] * 3:
        t.reset()
        t.train_step(x)
    for x in [torch.randn(4, 3)] * 3:
        Trainer(nn.Linear(3, 1)).train_step(x)
main()
''',
    }),
    ('TNS5', 'best state dict kept in trainer of other module', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model, opt):
        self.model, self.opt = model, opt
    def train_step(self, x):
        self.opt.zero_grad()
        self.model(x).sum().backward()
        self.opt.step()
''',
        'main.py': '''\
from trainer import Trainer
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
t = Trainer(model, opt)
best = model.state_dict()  # expect
for _ in range(2):
    t.train_step(torch.randn(4, 3))
model.load_state_dict(best)
''',
    }),
    ('TNS5', 'best state dict deep-copied, trainer of other module', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model, opt):
        self.model, self.opt = model, opt
    def train_step(self, x):
        self.opt.zero_grad()
        self.model(x).sum().backward()
        self.opt.step()
''',
        'main.py': '''\
import copy
from trainer import Trainer
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
t = Trainer(model, opt)
best = copy.deepcopy(model.state_dict())
for _ in range(2):
    t.train_step(torch.randn(4, 3))
model.load_state_dict(best)
''',
    }),
    ('TNS5', 'train function of other module steps', {
        'engine.py': '''\
def train_one_epoch(model, opt, x):
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
''',
        'main.py': '''\
from engine import train_one_epoch
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best = model.state_dict()  # expect
for _ in range(2):
    train_one_epoch(model, opt, torch.randn(4, 3))
model.load_state_dict(best)
''',
    }),
    ('TNS5', 'loss total from other module loss', {
        'losses.py': '''\
def compute_loss(model, x):
    return model(x).pow(2).mean()
''',
        'main.py': '''\
from losses import compute_loss
model = nn.Linear(3, 2)
total = 0
for _ in range(3):
    loss = compute_loss(model, torch.randn(4, 3))
    loss.backward()
    total += loss  # expect
print(total)
''',
    }),
    ('TNS5', 'loss total item from other module loss', {
        'losses.py': '''\
def compute_loss(model, x):
    return model(x).pow(2).mean()
''',
        'main.py': '''\
from losses import compute_loss
model = nn.Linear(3, 2)
total = 0
for _ in range(3):
    loss = compute_loss(model, torch.randn(4, 3))
    loss.backward()
    total += loss.item()
print(total)
''',
    }),
    ('TNS5', 'meter class in other module', {
        'meters.py': '''\
class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.n = 0
    def update(self, v, n=1):
        self.sum += v * n
        self.n += n
''',
        'main.py': '''\
from meters import AverageMeter
model = nn.Linear(3, 2)
m = AverageMeter()
for _ in range(3):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    loss.backward()
    m.update(loss)  # expect
print(m.sum)
''',
    }),
    ('TNS5', 'star imported train function', {
        'engine.py': '''\
def train_one_epoch(model, opt, x):
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
''',
        'main.py': '''\
from engine import *
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best = model.state_dict()  # expect
for _ in range(2):
    train_one_epoch(model, opt, torch.randn(4, 3))
model.load_state_dict(best)
''',
    }),
    ('TNS3', 'GAN models in other file, loop without detach', {
        'models.py': '''\
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 3)
    def forward(self, z):
        return self.fc(z)
class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)
    def forward(self, x):
        return torch.sigmoid(self.fc(x))
''',
        'main.py': '''\
from models import Generator, Discriminator
G, D = Generator(), Discriminator()
optG = torch.optim.SGD(G.parameters(), lr=0.1)
optD = torch.optim.SGD(D.parameters(), lr=0.1)
bce = nn.BCELoss()
z = torch.randn(4, 2)
fake = G(z)
optD.zero_grad()
d_loss = bce(D(fake), torch.zeros(4, 1))  # expect
d_loss.backward()
optD.step()
optG.zero_grad()
g_loss = bce(D(fake), torch.ones(4, 1))
g_loss.backward()
optG.step()
''',
    }),
    ('TNS3', 'GAN models in other file, loop with detach', {
        'models.py': '''\
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 3)
    def forward(self, z):
        return self.fc(z)
class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)
    def forward(self, x):
        return torch.sigmoid(self.fc(x))
''',
        'main.py': '''\
from models import Generator, Discriminator
G, D = Generator(), Discriminator()
optG = torch.optim.SGD(G.parameters(), lr=0.1)
optD = torch.optim.SGD(D.parameters(), lr=0.1)
bce = nn.BCELoss()
z = torch.randn(4, 2)
fake = G(z)
optD.zero_grad()
d_loss = bce(D(fake.detach()), torch.zeros(4, 1))
d_loss.backward()
optD.step()
optG.zero_grad()
g_loss = bce(D(fake), torch.ones(4, 1))
g_loss.backward()
optG.step()
''',
    }),
    ('TNS3', 'GAN discriminator step helper in other file', {
        'steps.py': '''\
def d_step(netD, optD, real, fake, bce):
    optD.zero_grad()
    loss = bce(netD(real), torch.ones(4, 1)) + bce(netD(fake), torch.zeros(4, 1))
    loss.backward()
    optD.step()
''',
        'main.py': '''\
from steps import d_step
netG, netD = nn.Linear(2, 3), nn.Sequential(nn.Linear(3, 1), nn.Sigmoid())
optD = torch.optim.SGD(netD.parameters(), lr=0.1)
fake = netG(torch.randn(4, 2))
d_step(netD, optD, torch.randn(4, 3), fake, nn.BCELoss())  # expect
''',
    }),
    ('TNS402', 'helper in other file writes through a detach it makes', {
        'ops.py': '''\
def clamp_(t):
    t.detach().clamp_(min=0)
''',
        'main.py': '''\
from ops import clamp_
w = torch.randn(3, requires_grad=True)
y = w.sigmoid()
clamp_(y)  # expect
y.sum().backward()
''',
    }),
    ('TNS402', 'helper in other file writes through a detach it makes, after backward', {
        'ops.py': '''\
def clamp_(t):
    t.detach().clamp_(min=0)
''',
        'main.py': '''\
from ops import clamp_
w = torch.randn(3, requires_grad=True)
y = w.sigmoid()
y.sum().backward()
clamp_(y)
''',
    }),
    ('TNS403', 'helper in other file writes through .data', {
        'ops.py': '''\
def clip_(t):
    """Clip in place."""
    t.data.clamp_(max=0.5)
''',
        'main.py': '''\
from ops import clip_
w = torch.randn(3, requires_grad=True)
y = w.sigmoid()
clip_(y)  # expect
y.sum().backward()
''',
    }),
    ('TNS502', 'weight view kept across a trainer of another module', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
    def fit(self, x):
        self.opt.zero_grad()
        self.model(x).sum().backward()
        self.opt.step()
''',
        'main.py': '''\
from trainer import Trainer
model = nn.Linear(3, 2)
t = Trainer(model)
w0 = model.weight.detach()  # expect
t.fit(torch.randn(4, 3))
print((model.weight - w0).abs().sum())
''',
    }),
    ('TNS502', 'weight copy kept across a trainer of another module', {
        'trainer.py': '''\
class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
    def fit(self, x):
        self.opt.zero_grad()
        self.model(x).sum().backward()
        self.opt.step()
''',
        'main.py': '''\
from trainer import Trainer
model = nn.Linear(3, 2)
t = Trainer(model)
w0 = model.weight.detach().clone()
t.fit(torch.randn(4, 3))
print((model.weight - w0).abs().sum())
''',
    }),
    ('TNS502', 'weight view kept across a train function of another module', {
        'engine.py': '''\
def train_one_epoch(model, opt, x):
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
''',
        'main.py': '''\
from engine import train_one_epoch
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
w0 = model.weight.detach().numpy()  # expect
train_one_epoch(model, opt, torch.randn(4, 3))
print(w0)
''',
    }),
    ('TNS5', 'meter of another module inherits update from a base of a third module', {
        'base_meters.py': '''\
class AverageMeter:
    def __init__(self):
        self.sum = 0
    def update(self, val, n=1):
        self.sum += val * n
class AccumulatingMeter:
    def __init__(self):
        self.sum = 0
    def update(self, val):
        self.sum += val
    def backward(self):
        self.sum.backward()
''',
        'meters.py': '''\
from base_meters import AccumulatingMeter, AverageMeter
class LossMeter(AverageMeter):
    pass
class GradMeter(AccumulatingMeter):
    pass
''',
        'main.py': '''\
from meters import GradMeter, LossMeter
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
meter, values, accum = LossMeter(), LossMeter(), GradMeter()
for _ in range(3):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    meter.update(loss)  # expect
    values.update(loss.item())
    accum.update(model(torch.randn(4, 3)).pow(2).mean())
accum.backward()
print(float(meter.sum), values.sum)
''',
    }),
    ('TNS5', 'trainer of another module inherits a stepping method from a base of a third module', {
        'base_trainer.py': '''\
class BaseTrainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
    def fit(self, x):
        self.opt.zero_grad()
        self.model(x).sum().backward()
        self.opt.step()
''',
        'trainers.py': '''\
from base_trainer import BaseTrainer
class Trainer(BaseTrainer):
    def describe(self):
        return "trainer"
''',
        'main.py': '''\
import copy
from trainers import Trainer
model = nn.Linear(3, 1)
trainer = Trainer(model)
best = model.state_dict()  # expect
w0 = model.weight.detach()  # expect
kept = copy.deepcopy(model.state_dict())
w1 = model.weight.detach().clone()
trainer.fit(torch.randn(4, 3))
late = model.state_dict()
print(late["weight"], w0, w1)
model.load_state_dict(best)
model.load_state_dict(kept)
''',
    }),
    ('TNS501', 'early stopper of another module restores the state dict it keeps in its own method', {
        'stopping.py': '''\
# (imports nothing)
import copy
class EarlyStopper:
    def __init__(self):
        self.best, self.best_state = float("inf"), None
    def step(self, val_loss, model):
        if val_loss < self.best:
            self.best = val_loss
            self.best_state = model.state_dict()
        return False
    def restore(self, model):
        if self.best_state is not None:
            model.load_state_dict(self.best_state)
class CopyingStopper:
    def __init__(self):
        self.best_state = None
    def step(self, val_loss, model):
        self.best_state = copy.deepcopy(model.state_dict())
    def restore(self, model):
        model.load_state_dict(self.best_state)
''',
        'main.py': '''\
from stopping import CopyingStopper, EarlyStopper
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
stopper, copying, late = EarlyStopper(), CopyingStopper(), EarlyStopper()
for val_loss in (2.0, 1.0, 3.0):
    opt.zero_grad()
    model(torch.randn(4, 3)).sum().backward()
    opt.step()
    if stopper.step(val_loss, model):  # expect
        break
    copying.step(val_loss, model)
late.step(0.0, model)
stopper.restore(model)
copying.restore(model)
late.restore(model)
''',
    }),
]

# Programs that run clean but that --strict reports as "may": the output of a frozen model (a
# layer may have been thawed since), a method's result whose device depends on where the
# instance is, a public function's parameter (another module may pass anything), a base's
# method that calls `self(x)` on a subclass whose `forward` is not what the base's module saw, a
# method that every call of the project makes with grad off (a caller outside it may not).
STRICT_MAY = {"validation outputs kept by a method another module calls only under no_grad", "generator of another module made and consumed under no_grad", "decorator of another module sets eval mode, then runs the function under no_grad", "init helper of another module applied by a no_grad method", "decorator of another module runs the function under no_grad", "frozen model built in other file", "module-level model in other file frozen via loop",
              "class with no_grad predict method in other file", "trainer in other file, model replaced by a frozen one",
              "helper only called under no_grad from other file", "helper param tensor detached by caller in other file",
              "base predict in other file, subclass forward argmax", "method only called under no_grad from other file",
              "method called in a function only called under no_grad from another file",
              "model frozen in place after the trainer was built, method",
              "model frozen in place after the trainer was built, attribute",
              "wrapper module class in another file, backbone frozen before",
              "wrapper module class in another file, backbone frozen after",
              "trainer in another file, predict via method of module wrapper",
              "wrapper in another file, frozen in function after",
              "trainer in another file, model moved, frozen later",
              "ema helper in another file, called under no_grad",
              "teacher built frozen by factory in other module", "factory frozen flag true",
              "evaluate method under no_grad in trainer module", "package re-export of frozen model factory",
              "callback gets outputs detached in trainer",
              "subclass in main of base model in other file, frozen in base ctor",
              # (a helper whose callers all pass a frozen module: a caller outside the project may not)
              "ema helper in other file, frozen ema at module level", "ema helper in other file, frozen ema in a function",
              "ema helper in other file, called through its module",
              "ema helper in a package, relative import under another name",
              "ema helper in other file, frozen ema of a trainer class",
              "ema helper in other file, frozen ema under a main guard",
              "ema helper in other file, two calls, a keyword argument",
              "freeze helper in other file, then the teacher output",
              "set_requires_grad helper in other file, list of discriminators",
              # (a helper's parameter, which strict mode takes for unknown in its own file)
              "numpy helper called under no_grad by a helper of another file",
              "numpy helper called by a helper of another file, the call under no_grad",
              "numpy helper that detaches, re-exported by its package",
              "converter of another module that detaches a tensor and asarrays anything else",
              "constructors of another module that freeze what they are handed or themselves",
              # (a method's parameter, of unknown device to it: .numpy() after .detach())
              "logger of another module that detaches what a method call passes",
              "constructor of another module freezes what it is handed behind its flag",
              "keepers of another module whose attribute another method resets, or the file sets",
              "keepers of another module whose converting method runs with grad off",
              "EMA of another module keeps a deep copy of a frozen model",
              "constructors of another module that freeze what they are handed by keyword or in a chain",
              "constructor calls the freezing method it inherits from a base of another module",
              # (a method's attribute, of unknown origin to it: `self.last.numpy()`)
              "logger of another module keeps what method calls pass: detached, no_grad, never dumped",
              # (a callee that gives back an argument or a tensor without its graph, by its state)
              "image pool of another module that passes the fakes on only when it is off",
              # (a model's output may be a NumPy array, a tuple, or a tensor: strict's may)
              "module of another module whose forward returns a NumPy array, reduced by NumPy"}


def _build(root, files: dict) -> None:
    with open(os.path.join(root, "pyproject.toml"), "w") as f:
        f.write("[project]\nname = 'demo'\n")
    for name, body in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(body if name.endswith("__init__.py") or body.startswith(PLAIN) else HEAD + body)


def _run(root) -> set:
    """The (file, line) frames in the project of what `main.py` raised; empty where it ran clean."""
    import torch

    before = set(sys.modules)
    sys.path.insert(0, str(root))
    try:
        # (A program that switches grad off, `torch.set_grad_enabled(False)`, switches it off for
        # the process: the next program starts as a fresh one would.)
        with warnings.catch_warnings(), torch.enable_grad():
            warnings.simplefilter("ignore")
            runpy.run_path(os.path.join(root, "main.py"), run_name="__main__")
    except Exception as e:  # noqa: BLE001 - the program's own failure is the verdict
        frames = traceback.extract_tb(e.__traceback__)
        return {(os.path.relpath(f.filename, root), f.lineno) for f in frames if f.filename.startswith(str(root))}
    finally:
        sys.path.remove(str(root))
        for name in set(sys.modules) - before:  # (the next program has modules of the same names)
            # (Only the program's own: torch imports some of its modules on first use, the
            # optimizers' on the first optimizer made, and a later program needs them whole.)
            module = sys.modules[name]
            places = [getattr(module, "__file__", None) or "", *(getattr(module, "__path__", None) or ())]
            if any(str(p).startswith(str(root)) for p in places):
                del sys.modules[name]
    return set()


def _reported(root, files: dict, prefix: str, strict: bool) -> set:
    options = Options(strict=strict)
    project = Project(str(root), options)
    rules = select_rules([prefix])
    found = set()
    for name in files:
        path = os.path.join(root, name)
        with open(path) as f:
            text = f.read()
        project.begin()
        found |= {(name, v.line) for v in lint_text(text, rules, options, project=project, path=path).violations}
    return found


@pytest.mark.parametrize("rule,title,files", PROGRAMS, ids=[p[1] for p in PROGRAMS])
def test_project_programs_are_reported_where_torch_fails(tmp_path, rule, title, files):
    pytest.importorskip("torch")
    root = tmp_path / "prj"
    root.mkdir()
    _build(root, files)
    frames = _run(root)
    default, strict = _reported(root, files, rule, False), _reported(root, files, rule, True)
    if not frames:
        assert default == set(), "runs clean"
        assert (strict != set()) == (title in STRICT_MAY), strict
    else:
        assert default and default <= frames, (default, frames)
        assert strict <= frames, (strict, frames)


@pytest.mark.parametrize("rule,title,files", MARKED, ids=[p[1] for p in MARKED])
def test_project_programs_are_reported_where_marked(tmp_path, rule, title, files):
    """Snapshots, totals and GAN steps over files (TNS3, TNS5), whose hazard is no exception at
    the line, and tensors a method of another module's class keeps, which torch refuses to
    convert in another of its methods (TNS1: the program raises, and the call that hands the
    tensor over is no frame of it): reported exactly at the lines marked `# expect`, by default
    and in strict mode, and in strict mode also at those marked `# may`."""
    root = tmp_path / "prj"
    root.mkdir()
    _build(root, files)
    marked, may = set(), set()
    for name in files:
        with open(os.path.join(root, name)) as f:
            for i, line in enumerate(f, 1):
                if "# expect" in line:
                    marked.add((name, i))
                elif "# may" in line:
                    may.add((name, i))
    if rule.startswith("TNS1"):
        pytest.importorskip("torch")
        assert _run(root), "raises on torch"
    assert _reported(root, files, rule, False) == marked
    assert _reported(root, files, rule, True) == marked | may
