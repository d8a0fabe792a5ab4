from enum import StrEnum


class DeadLetterStage(StrEnum):
    CHUNK = "chunk"
    EMBED = "embed"
    INDEX = "index"
    PARSE = "parse"

    def __str__(self) -> str:
        return str(self.value)
