from enum import StrEnum


class DeadLetterReplayRequestStage(StrEnum):
    CHUNK = "chunk"
    EMBED = "embed"
    INDEX = "index"
    PARSE = "parse"

    def __str__(self) -> str:
        return str(self.value)
