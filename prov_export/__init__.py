"""PROV-O export of gaf records through rdflib, and PROV-N, PROV-JSON and PROV-XML read from the same triples."""

from gaf.errors import ExportError
from prov_export.export import (
    CANONICAL_HASH,
    FORMATS,
    Bundles,
    Exported,
    bundles,
    canonical_hash,
    check_format,
    dataset,
    export,
    graph,
    lineage,
    serialise,
    stream_all,
    subject_lineage,
)
from prov_export.mapping import DEFAULT_BASE, GAF, PROV, Mapper

__all__ = [
    "CANONICAL_HASH",
    "DEFAULT_BASE",
    "FORMATS",
    "GAF",
    "PROV",
    "Bundles",
    "ExportError",
    "Exported",
    "bundles",
    "Mapper",
    "canonical_hash",
    "check_format",
    "dataset",
    "export",
    "graph",
    "lineage",
    "serialise",
    "stream_all",
    "subject_lineage",
]
