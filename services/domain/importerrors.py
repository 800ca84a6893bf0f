"""The importer's exceptions: input it cannot take, named in one line. Part of the shared
tree (services/common/errors.py): they travel as InvalidArgument."""

from hemra.services.common import errors


class ImportProblem(errors.InvalidArgument):
    """The folder is not a result set we can import as it is (the message names the file)."""
