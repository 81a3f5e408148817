"""PROV-O export of gaf records through rdflib, and PROV-N, PROV-JSON and PROV-XML read from the same triples."""

from gaf.errors import ExportError
from prov_export.export import (
    CANONICAL_HASH,
    FORMATS,
    Exported,
    canonical_hash,
    check_format,
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
    "ExportError",
    "Exported",
    "Mapper",
    "canonical_hash",
    "check_format",
    "export",
    "graph",
    "lineage",
    "serialise",
    "stream_all",
    "subject_lineage",
]
