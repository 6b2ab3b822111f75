"""The `societas` command line: one typer app, one sub-command per operation."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="societas",
    help="Run LLM-driven agent societies: memory, cognition and social life at scale.",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
def demo(
    agents: int = typer.Option(3, min=1, max=1000, help="How many agents remember things."),
    backend: str = typer.Option("edge", help="Vector backend: edge (embedded) or qdrant."),
) -> None:
    """Show agents remembering, searching and the retrieval scores (embedded defaults)."""
    from societas.cluster.demo import run_demo

    run_demo(agents=agents, backend=backend)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
