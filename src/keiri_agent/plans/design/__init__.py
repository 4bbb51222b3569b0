"""Plan generation (seed 003): from an instruction and documents to a checked Plan.

* ``models``      the types the parts share (options, candidates, templates, results)
* ``documents``   reference documents: extraction within a shared budget, prompt digest
* ``retrieval``   Top-K block candidates: BM25, embeddings (cached), hybrid; caps, pins
"""
