"""flake8-tensorcopy: find and fix PyTorch tensor-copy and autograd mistakes."""

__version__ = "0.1.0"
