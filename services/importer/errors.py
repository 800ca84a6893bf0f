"""The importer's exceptions: input it cannot take, named in one line."""


class ImportProblem(Exception):
    """The folder is not a result set we can import as it is (the message names the file)."""
