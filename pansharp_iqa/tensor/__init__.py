"""Indexes computed on a tensor's device (PyTorch, CPU or CUDA), equal to the NumPy core.

Optional: nothing in the core imports this subpackage or PyTorch. :mod:`.torch_ops` holds the
float64 ports of the core's image operators on batches (N, C, H, W).
"""
