"""Alias of `societas.cluster.ray.runtime`, kept for one release."""

from societas.cluster.ray.runtime import *  # noqa: F403
