from enum import StrEnum

class SeekRequestToType0(StrEnum):
    EARLIEST = "earliest"
    LATEST = "latest"

    def __str__(self) -> str:
        return str(self.value)
