from enum import StrEnum

class SubscriptionOptionsBodyMode(StrEnum):
    ORDERED = "ordered"
    SHARED = "shared"

    def __str__(self) -> str:
        return str(self.value)
