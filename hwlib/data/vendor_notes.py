"""The notes vendor chip records share: how a page printed a number (sparse, bidirectional, third party)."""

from __future__ import annotations

SPARSE = "Printed with sparsity (the asterisk); stored dense, i.e. half the printed figure."
BIDIRECTIONAL = "Bidirectional: both directions summed; one direction gets half."
THIRD_PARTY_REPORT = "A user's device report in a public issue thread (third party), not a vendor page."


def third_party(where: str) -> str:
    """Note for a value whose vendor page was not among the stored copies searched."""
    return f"NVIDIA's or AMD's own page was not among the stored copies; the value is confirmed by {where}."
