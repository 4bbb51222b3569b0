"""Plan generation (seed 003): from an instruction and documents to a checked Plan.

* ``models``      the types the parts share (options, candidates, templates, results)
* ``design_model`` the shapes the model answers in, built per call, and ``to_plan_dict``
* ``prompts``     the generator's prompts (system, skeleton, wiring, repair)
* ``repair``      self-repair material: per-node diff, errors per node, spec excerpts
* ``llm_designer`` ``LLMDesigner``: two stages, check, self-repair
"""
