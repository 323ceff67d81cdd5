"""Training a model: the training state under ZeRO sharding (``zero``), a step on a mesh of parallel axes
(``mesh``) and the plans built on it (``plan``), the source documents' data-parallel regimes (``regimes``) and
the batch-size squeeze (``squeeze``). Chapters "HBM budgets for training", "A 7B model, regime by regime",
"The batch-size squeeze" and "Sharding a training step"."""
