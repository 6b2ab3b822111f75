"""Package discovery for the four source folders that install as one `societas` namespace.

`societas/` is the package root (the public API); cluster/, agents/ and memory/ install as
societas.cluster, societas.agents and societas.memory. Every folder under them is a package
(data folders too, so they ship without a warning): a new subpackage needs no list kept in
step. The compiled
memory kernels are optional: without a C compiler numpy and Python do their work.
"""

from setuptools import Extension, find_namespace_packages, setup

ROOTS = {
    "societas": "societas",
    "societas.cluster": "cluster",
    "societas.agents": "agents",
    "societas.memory": "memory",
}


def _packages() -> list[str]:
    """Every package under the four roots, dotted."""
    found = list(ROOTS)
    for dotted, folder in ROOTS.items():
        found += [
            f"{dotted}.{name}"
            for name in find_namespace_packages(folder, exclude=["*__pycache__*"])
        ]
    return found


setup(
    package_dir=ROOTS,
    packages=_packages(),
    ext_modules=[
        Extension(
            f"societas.memory.{name}",
            sources=[f"memory/{name}.c"],
            depends=["memory/_arrays.h"],
            extra_compile_args=["-O2", "-ffp-contract=off"],
            optional=True,
        )
        for name in ("_rank", "_hits", "_postings", "_columns", "_rows", "_vectors")
    ],
)
