"""Plan generation (seed 003): from an instruction and documents to a checked Plan.

* ``models``      the types the parts share (options, candidates, templates, results)
"""
