from enum import StrEnum


class ModifiedChunkType(StrEnum):
    MODIFIED = "modified"

    def __str__(self) -> str:
        return str(self.value)
