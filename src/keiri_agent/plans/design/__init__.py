"""Plan generation (seed 003): from an instruction and documents to a checked Plan.

* ``generator``   ``generate_plan``: the one entry point (compose, offline, LLM, fallback)
* ``models``      the types the parts share (options, candidates, templates, results)
* ``documents``   reference documents: extraction within a shared budget, prompt digest
* ``retrieval``   Top-K block candidates: BM25, embeddings (cached), hybrid; caps, pins
* ``templates``   ``TemplateLibrary`` (bundled + designs/templates/), ``validate_template``
* ``compose``     ``compose_templates``: templates joined by their import/export contracts
* ``procedure``   the requirement model of an instruction; ``procedure_rules`` reads it
                  offline, ``procedure_plan`` builds it, ``coverage`` checks a Plan by it
* ``design_model`` the shapes the model answers in, built per call, and ``to_plan_dict``
* ``prompts``     the generator's prompts (system, skeleton, wiring, repair)
* ``repair``      self-repair material: per-node diff, errors per node, spec excerpts
* ``llm_designer`` ``LLMDesigner``: two stages, check, self-repair
* ``requirements`` ``build_requirements``: what a generated Plan still needs from a person
* ``design_chat`` ``DesignChat``: asks the requirements over several turns, applies answers
* ``fallback``    the safe fallback Plan (KEIRI_AGENT_LLM_FALLBACK)
* ``metrics``     one JSONL record per generation under logs/, and its summary
"""
