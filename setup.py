"""The compiled memory kernels (memory/_rank.c, _hits.c, _postings.c, _columns.c, _rows.c,
_vectors.c); the rest is in pyproject.toml.

`optional=True`: without a C compiler the install still succeeds; memory.ram_ranking then
ranks with numpy, memory.hits builds hits, memory.sparse_index and the hot tier's columns
append in Python, BM25's answers become vectors in Python (the same results, slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            f"societas.memory.{name}",
            sources=[f"memory/{name}.c"],
            depends=["memory/_arrays.h"],  # typed-array appends and numbers (all but _rank, _hits)
            extra_compile_args=["-O2", "-ffp-contract=off"],  # no fused a*b+c: numpy's bits
            optional=True,
        )
        for name in ("_rank", "_hits", "_postings", "_columns", "_rows", "_vectors")
    ]
)
