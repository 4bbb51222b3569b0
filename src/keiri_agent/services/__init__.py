"""The service layer: what every surface (CLI, Streamlit pages, the coming HTTP API) shares.

A command or a page parses what the user gave, calls a service, and shows what it
returns; the services hold the logic a second surface would otherwise copy. One
concept per module:

- ``jsonforms``: the JSON form of every result (Plan runs, reports, analysis turns,
  HelpDesk answers) and the one convention for bytes in JSON;
- ``exports``: results written as files (report + figures as a folder or a ZIP,
  a Plan's binary outputs into a folder);
- ``plan_inputs``: what a user hands a Plan: the plan by path or id, typed ``vars``
  from text, answers files, where a 再実行 starts;
- ``user_files``: files a user names: decoded text, spec files, output folders;
- ``knowledge``: indexing a HelpDesk knowledge base from paths and uploaded bytes;
- ``jobs``: a long task in a worker thread whose ``Event``s a consumer follows.

Services raise ``KeiriAgentError`` subclasses with a Japanese message and hint; they
never print and never import ``cli`` or ``ui``.
"""
