from enum import StrEnum

class QueueOptionsPatchDeduplicationScopeType0(StrEnum):
    MESSAGEGROUP = "messageGroup"
    QUEUE = "queue"

    def __str__(self) -> str:
        return str(self.value)
