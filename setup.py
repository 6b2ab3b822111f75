"""The compiled ranking kernel (memory/_rank.c); everything else is in pyproject.toml.

`optional=True`: without a C compiler the install still succeeds and memory.ram_ranking
ranks with numpy instead (the same results, slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "societas.memory._rank",
            sources=["memory/_rank.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
