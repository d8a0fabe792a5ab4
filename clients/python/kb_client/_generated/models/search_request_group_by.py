from enum import StrEnum


class SearchRequestGroupBy(StrEnum):
    DOCUMENT = "document"
    NONE = "none"
    PASSAGE = "passage"

    def __str__(self) -> str:
        return str(self.value)
