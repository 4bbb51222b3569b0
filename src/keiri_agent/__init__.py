"""keiri-agent: LLM agents for Japanese back-office and accounting teams.

Importing the package defers the ``__init__`` of dependencies that load far more than
LangGraph uses (see ``deferred_packages``), for every surface: CLI, app, API and tests.
"""

from keiri_agent import deferred_packages

deferred_packages.install()
