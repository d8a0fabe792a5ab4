from enum import StrEnum


class RemovedChunkType(StrEnum):
    REMOVED = "removed"

    def __str__(self) -> str:
        return str(self.value)
