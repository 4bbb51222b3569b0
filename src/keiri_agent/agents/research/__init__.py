"""The deep-research agent (seed 004): plan → search → summarise → notes → cited report.

* ``models``      the types its parts share (snippets, notes, the search and note protocols)
* ``agent``       ``DeepResearchAgent``: events / run / research over a search and a note store
* ``graph``       the LangGraph graph: plan → rounds (search, summarise, note) → gaps → report
* ``reasoner``    the ``ResearchReasoner`` protocol; ``llm_reasoner`` and ``offline_reasoner``
* ``citations``   numbered sources, citation checks, the sources and limitations sections
* ``prompts``     the prompts of the LLM reasoner
* ``notes``       ``SqlNoteStore``: ``research_notes`` in the application database
* ``sources/``    search sources: internal knowledge bases, Azure AI Search, a web plug-in
"""
