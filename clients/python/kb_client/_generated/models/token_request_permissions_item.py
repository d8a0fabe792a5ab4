from enum import StrEnum


class TokenRequestPermissionsItem(StrEnum):
    READ = "read"
    SEARCH = "search"

    def __str__(self) -> str:
        return str(self.value)
