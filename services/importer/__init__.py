"""The importer service: Harbor job directories, SWE-bench runs and HEMRA exports into the store, byte for byte."""
