"""The deep-research agent (seed 004): plan → search → summarise → notes → cited report.

* ``models``      the types its parts share (snippets, notes, the search and note protocols)
* ``sources``     the search sources: internal knowledge bases, Azure AI Search, the web
"""
