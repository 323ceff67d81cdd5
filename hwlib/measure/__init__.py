"""Measuring this machine: device information, timed kernels and XLA's own counts (needs JAX).

Explained in the chapter "Your own roofline".
"""
