"""The importer service: Harbor job directories and SWE-bench runs into the store (not yet implemented)."""
