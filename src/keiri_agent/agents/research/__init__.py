"""The deep-research agent (seed 004): plan → search → summarise → notes → cited report.

* ``models``      the types its parts share (snippets, notes, the search and note protocols)
* ``notes``       ``SqlNoteStore``: the notes in ``research_notes`` of the application database
"""
