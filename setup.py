"""Package discovery for the four source folders that install as one `societas` namespace.

`societas/` is the package root (the public API); cluster/, agents/ and memory/ install as
societas.cluster, societas.agents and societas.memory. Every folder under them is a package
(data folders too, so they ship without a warning): a new subpackage needs no list kept in
step.
"""

from setuptools import find_namespace_packages, setup

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
)
