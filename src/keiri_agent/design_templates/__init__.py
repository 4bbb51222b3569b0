"""Bundled design templates (seed 003 §4): ``<category>/<id>.yaml``, read by
``keiri_agent.plans.design.templates.TemplateLibrary``."""
