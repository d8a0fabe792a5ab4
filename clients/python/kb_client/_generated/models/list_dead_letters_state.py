from enum import StrEnum


class ListDeadLettersState(StrEnum):
    ALL = "all"
    PENDING = "pending"
    REPLAYED = "replayed"

    def __str__(self) -> str:
        return str(self.value)
