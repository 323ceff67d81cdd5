"""Training a model: the training state under ZeRO sharding (``zero``), a step on a mesh of parallel axes
(``mesh``) and the plans built on it (``plan``), the source documents' data-parallel regimes (``regimes``) and
the batch-size squeeze (``squeeze``). Chapters :ref:`ch-hbm-budgets`, :ref:`ch-seven-b-regimes`,
:ref:`ch-batch-squeeze` and :ref:`ch-sharding`."""
