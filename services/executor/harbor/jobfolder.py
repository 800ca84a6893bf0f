"""Harbor's job folder as Harbor writes it: which trials have finished, read whole.

Harbor writes a trial's result.json when the trial ends, with a plain write (not atomic), so
a read can catch it half written: such a trial is read again on the next poll. Nothing here
is trusted beyond what the importer checks (services/domain/harbor.py).
"""

from dataclasses import dataclass, field
from pathlib import Path

from hemra.services.domain import harbor as harbor_import
from hemra.services.domain.imported import ImportedTrial
from hemra.services.domain.importerrors import ImportProblem
from hemra.services.domain.tree import Entry, read_tree


@dataclass
class FinishedTrial:
    folder: str
    trial: ImportedTrial
    entries: list[Entry]


@dataclass
class Follower:
    """Follows one job folder: `poll()` returns the trials finished since the last call."""

    root: Path
    seen: set[str] = field(default_factory=set)
    #: Trial folders whose result.json could not be read yet (torn), and how often.
    torn: dict[str, int] = field(default_factory=dict)

    def poll(self) -> list[FinishedTrial]:
        if not self.root.is_dir():
            return []
        found = []
        for folder in sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.is_symlink()):
            if folder in self.seen or not (self.root / folder / "result.json").is_file():
                continue
            try:
                entries = read_tree(self.root / folder, lambda batch: None)
                trial = harbor_import.read_trial(self.root, folder, entries)
            except (ImportProblem, OSError, ValueError):
                self.torn[folder] = self.torn.get(folder, 0) + 1  # half written: read again next time
                continue
            self.seen.add(folder)
            self.torn.pop(folder, None)
            found.append(FinishedTrial(folder, trial, entries))
        return found
