from enum import StrEnum


class ScopedTokenPermissionsItem(StrEnum):
    READ = "read"
    SEARCH = "search"

    def __str__(self) -> str:
        return str(self.value)
