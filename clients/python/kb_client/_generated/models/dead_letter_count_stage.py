from enum import StrEnum


class DeadLetterCountStage(StrEnum):
    CHUNK = "chunk"
    EMBED = "embed"
    INDEX = "index"
    PARSE = "parse"

    def __str__(self) -> str:
        return str(self.value)
