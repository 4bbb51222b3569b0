"""The ``keiri-agent`` command line (Typer + Rich)."""

from __future__ import annotations

import os
import sys

from keiri_agent.cli.collector import collect_less_often, spare_the_teardown


def main() -> None:
    """Entry point: cap BLAS threads before numpy loads, collect garbage less often while
    the command starts and runs, run the Typer app, and spare the interpreter's teardown
    the collections over what the command leaves behind (``collector.py``)."""
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    collect_less_often()
    _refuse_undecodable_arguments()
    from keiri_agent.cli.app import app

    try:
        app()
    finally:
        spare_the_teardown()


def _refuse_undecodable_arguments() -> None:
    """Exit 2 with a Japanese line when an argument is not UTF-8 text (Python keeps such
    bytes as lone surrogates, which fail later wherever the text is written)."""
    for position, argument in enumerate(sys.argv[1:], start=1):
        try:
            argument.encode("utf-8")
        except UnicodeEncodeError:
            sys.stderr.write(
                f"エラー [ARGUMENT_ENCODING] {position} 番目の引数を UTF-8 の文字として"
                "読めません。\nヒント: 端末（またはスクリプト）の文字コードを UTF-8 にしてから、"
                "もう一度入力してください\n"
            )
            raise SystemExit(2) from None
