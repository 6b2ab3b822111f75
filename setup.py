"""The compiled search kernels (memory/_rank.c, memory/_hits.c); the rest is in pyproject.toml.

`optional=True`: without a C compiler the install still succeeds; memory.ram_ranking then
ranks with numpy and memory.hits builds hits in Python (the same results, slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "societas.memory._rank",
            sources=["memory/_rank.c"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
        Extension(
            "societas.memory._hits",
            sources=["memory/_hits.c"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
    ]
)
