"""The engine's tar archives, read as a stream."""

import io
import tarfile


def plain_archive(chunks, out) -> bool:
    """Copy a tar stream (the engine's archive of a folder) into `out`, keeping folders, regular
    files and links only: a device node, FIFO or socket the agent made never reaches the verifier.
    False, with nothing copied, when the archived path is not a folder: the agent replaced its
    workspace with a link or a file, and the verifier gets an empty one instead."""
    reader = ChunkReader(chunks)
    with tarfile.open(fileobj=reader, mode="r|") as source:
        top = source.next()
        if top is None or not top.isdir():
            for _ in source:  # read to its end: the engine's stream is not left half read
                pass
            return False
        with tarfile.open(fileobj=out, mode="w|") as target:
            target.addfile(top)
            for member in source:
                if member.isreg():
                    target.addfile(member, source.extractfile(member))
                elif member.isdir() or member.issym() or member.islnk():
                    target.addfile(member)
    return True


class ChunkReader(io.RawIOBase):
    """A readable file over an iterator of byte chunks (streamed, never joined whole)."""

    def __init__(self, chunks):
        self.chunks = iter(chunks)
        self.pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self.pending:
            self.pending = next(self.chunks, b"")
            if not self.pending:
                return 0
        size = min(len(buffer), len(self.pending))
        buffer[:size], self.pending = self.pending[:size], self.pending[size:]
        return size
