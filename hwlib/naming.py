"""One name per quantity in code and one symbol per quantity in the book.

``SYMBOLS`` is the list CONTRIBUTING.md prints (a test checks that the two agree) and the
glossary appendix renders (``hw.symbol_table()``). Each row: the quantity, its name in hwlib's
code (argument, field or function), its symbol in the book's prose (LaTeX), and its unit.
"""

from __future__ import annotations

SYMBOLS: tuple[tuple[str, str, str, str], ...] = (
    ("FLOPs of a kernel or step", "flops", r"F", "FLOP"),
    ("bytes moved to or from HBM", "n_bytes, hbm_bytes", r"Q", "B"),
    ("arithmetic intensity", "intensity", r"I = F/Q", "FLOP/B"),
    ("dense peak compute of a chip", "chip.peak(dtype)", r"\pi", "FLOP/s"),
    ("HBM bandwidth of a chip", "chip.hbm_bytes_per_s", r"\beta", "B/s"),
    ("ridge point (time balance)", "ridge_point(chip)", r"I^* = \pi/\beta", "FLOP/B"),
    ("energy balance", "machine_balance(chip).energy", r"I^*_E = e_{\mathrm{HBM}}/e_{\mathrm{FLOP}}", "FLOP/B"),
    ("HBM capacity per chip (what a program sees)", "chip.capacity_bytes", r"M", "B"),
    ("usable fraction of HBM", "usable_fraction", r"u", "1"),
    ("parameter count", "n_params", r"P", "parameters"),
    ("training-state bytes per parameter", "recipe.bytes_per_param", r"b_{\mathrm{state}}", "B/parameter"),
    ("bytes per element of a dtype", "dtype_bytes(dtype), bytes_per_element", r"b_e", "B"),
    ("hidden size", "d (argument), d_model (ModelShape)", r"d", "1"),
    ("layers", "n_layers", r"L", "1"),
    ("attention (query) heads", "n_heads", r"n_h", "1"),
    ("key-value heads", "n_kv_heads", r"n_{kv}", "1"),
    ("head size", "head_dim", r"d_h", "1"),
    ("vocabulary size", "vocab", r"V", "tokens"),
    ("sequence (context) length", "seq_len", r"s", "tokens"),
    ("tokens per optimizer step per chip", "step.tokens_per_step", r"T_{\mathrm{step}}", "tokens"),
    ("micro-batch (sequences)", "batch", r"b", "sequences"),
    ("tokens per weight visit", "T", r"T", "tokens"),
    ("tensor-parallel degree", "tensor_parallel", r"n_{tp}", "1"),
    ("number of chips", "n_chips", r"N", "1"),
    ("chips per node (scale-up domain)", "node_size", r"G", "1"),
    ("time", "*_time_s, time_s", r"t", "s"),
    ("energy per FLOP, all-in", "chip.flop_energy_j", r"e_{\mathrm{FLOP}}", "J/FLOP"),
    ("energy per HBM byte, all-in", "chip.hbm_energy_j_per_byte", r"e_{\mathrm{HBM}}", "J/B"),
    ("static power", "chip.static_power_w", r"p_{\mathrm{static}}", "W"),
    ("thermal design power", "chip.tdp_w", r"p_{\mathrm{TDP}}", "W"),
    ("weight-side HBM bytes per parameter per visit", "b_w", r"b_w", "B/parameter"),
    ("activation HBM bytes per token per unit d", "a", r"a", "B/token"),
    ("optimizer HBM bytes per parameter per step", "b_opt", r"b_{\mathrm{opt}}", "B/parameter"),
    ("all-reduce bytes per parameter per step", "b_ar", r"b_{\mathrm{ar}}", "B/parameter"),
    ("weight-side HBM bytes of a layer step", "step.weight_hbm_bytes", r"Q_W", "B"),
    ("activation HBM bytes of a layer step", "step.activation_hbm_bytes", r"Q_A", "B"),
    ("on-chip elements a GEMM blocks into", "blocking_elements(chip)", r"Z", "elements"),
    ("fewest tokens per visit that reach the ridge point", "t_min", r"T_{\min}", "tokens"),
    ("smallest hidden size for which any T does", "d_min", r"d_{\min}", "1"),
    ("fabric bandwidth per chip per direction", "fabric.bytes_per_s", r"\beta_{\mathrm{node}}, \beta_{\mathrm{net}}", "B/s"),
    ("global batch", "batch_tokens", r"B", "tokens"),
    ("critical batch", "critical_batch_tokens", r"B_{\mathrm{crit}}", "tokens"),
    ("time-optimal global batch", "optimal_batch_tokens", r"B_{\mathrm{opt}}", "tokens"),
    ("fixed per-step cost in token-equivalents", "fixed_cost_tokens", r"T_{\mathrm{fixed}}", "tokens/chip"),
    ("optimizer steps and tokens to a target loss", "steps, tokens", r"S, E", "steps, tokens"),
    ("loss", "loss_nats", r"\mathcal{L}", "nats"),
)
"""(quantity, name in code, symbol in the book, unit) for every quantity the book names."""
