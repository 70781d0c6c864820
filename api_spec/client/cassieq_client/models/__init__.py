""" Contains all the data models used in inputs/outputs """

from .account_body import AccountBody
from .account_body_keys import AccountBodyKeys
from .ack_latency_body import AckLatencyBody
from .ack_request import AckRequest
from .ack_response import AckResponse
from .auth_error_body import AuthErrorBody
from .create_account_body_type_1 import CreateAccountBodyType1
from .errors_body import ErrorsBody
from .failed_entry import FailedEntry
from .get_message_body import GetMessageBody
from .health import Health
from .key_create_request import KeyCreateRequest
from .level_body import LevelBody
from .message_debug_body import MessageDebugBody
from .monoton_body import MonotonBody
from .outgoing_entry import OutgoingEntry
from .outgoing_entry_attributes import OutgoingEntryAttributes
from .permission_body import PermissionBody
from .permission_request import PermissionRequest
from .pointers_body import PointersBody
from .pointers_body_stragglers import PointersBodyStragglers
from .queue_create_options import QueueCreateOptions
from .queue_definition_body import QueueDefinitionBody
from .receive_request import ReceiveRequest
from .receive_response import ReceiveResponse
from .received_message import ReceivedMessage
from .received_message_attributes import ReceivedMessageAttributes
from .resource_error_body import ResourceErrorBody
from .send_request import SendRequest
from .send_response import SendResponse
from .sent_entry import SentEntry
from .statistics_body import StatisticsBody
from .statistics_detail_body import StatisticsDetailBody
from .statistics_detail_body_delivery_count_histogram import StatisticsDetailBodyDeliveryCountHistogram
from .statistics_size_body import StatisticsSizeBody
from .tombstone_body import TombstoneBody
from .update_message_body import UpdateMessageBody
from .update_message_request import UpdateMessageRequest
from .updated_entry import UpdatedEntry
from .v2_error_body import V2ErrorBody
from .visibility_entry import VisibilityEntry
from .visibility_request import VisibilityRequest
from .visibility_response import VisibilityResponse

__all__ = (
    "AccountBody",
    "AccountBodyKeys",
    "AckLatencyBody",
    "AckRequest",
    "AckResponse",
    "AuthErrorBody",
    "CreateAccountBodyType1",
    "ErrorsBody",
    "FailedEntry",
    "GetMessageBody",
    "Health",
    "KeyCreateRequest",
    "LevelBody",
    "MessageDebugBody",
    "MonotonBody",
    "OutgoingEntry",
    "OutgoingEntryAttributes",
    "PermissionBody",
    "PermissionRequest",
    "PointersBody",
    "PointersBodyStragglers",
    "QueueCreateOptions",
    "QueueDefinitionBody",
    "ReceivedMessage",
    "ReceivedMessageAttributes",
    "ReceiveRequest",
    "ReceiveResponse",
    "ResourceErrorBody",
    "SendRequest",
    "SendResponse",
    "SentEntry",
    "StatisticsBody",
    "StatisticsDetailBody",
    "StatisticsDetailBodyDeliveryCountHistogram",
    "StatisticsSizeBody",
    "TombstoneBody",
    "UpdatedEntry",
    "UpdateMessageBody",
    "UpdateMessageRequest",
    "V2ErrorBody",
    "VisibilityEntry",
    "VisibilityRequest",
    "VisibilityResponse",
)
