"""Blocks as contracts: spec files, discovery, versions, port schemas, lazy loading."""

from keiri_agent.plans.catalog.catalog import BlockCatalog, BlockSpec, CatalogError, schema_problems
from keiri_agent.plans.catalog.spec_file import SpecFile, spec_file_schema

__all__ = [
    "BlockCatalog",
    "BlockSpec",
    "CatalogError",
    "SpecFile",
    "schema_problems",
    "spec_file_schema",
]
