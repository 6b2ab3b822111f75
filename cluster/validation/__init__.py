"""Validation suites: societas runs measured against published results of other simulators."""

from __future__ import annotations

from societas.cluster.validation.inputs import ValidationInputError
from societas.cluster.validation.runner import SUITES, validate

__all__ = ["SUITES", "ValidationInputError", "validate"]
