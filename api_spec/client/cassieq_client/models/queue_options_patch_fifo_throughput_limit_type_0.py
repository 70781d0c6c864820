from enum import StrEnum

class QueueOptionsPatchFifoThroughputLimitType0(StrEnum):
    PERMESSAGEGROUPID = "perMessageGroupId"
    PERQUEUE = "perQueue"

    def __str__(self) -> str:
        return str(self.value)
