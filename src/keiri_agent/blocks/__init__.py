"""Plan blocks: the base classes (``base``) and the built-in blocks.

Each built-in block has a YAML contract under ``keiri_agent/block_specs/``.
"""
