"""Serving a model: one inference step (``step``: prefill or decode on one chip or a group of chips) and the
plans built on it (``plan``: the fewest chips at latency targets, latency-throughput curves, measured runs
beside their bounds). Chapter :ref:`ch-serving`."""
