from enum import StrEnum


class AddedChunkType(StrEnum):
    ADDED = "added"

    def __str__(self) -> str:
        return str(self.value)
