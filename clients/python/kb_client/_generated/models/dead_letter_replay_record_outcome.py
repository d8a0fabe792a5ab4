from enum import StrEnum


class DeadLetterReplayRecordOutcome(StrEnum):
    REPLAYED = "replayed"
    SKIPPED = "skipped"

    def __str__(self) -> str:
        return str(self.value)
