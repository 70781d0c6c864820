""" Contains all the data models used in inputs/outputs """

from .account_body import AccountBody
from .account_body_keys import AccountBodyKeys
from .ack_latency_body import AckLatencyBody
from .ack_request import AckRequest
from .ack_response import AckResponse
from .auth_error_body import AuthErrorBody
from .commit_request import CommitRequest
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
from .peek_body import PeekBody
from .peeked_message_body import PeekedMessageBody
from .peeked_message_body_attributes import PeekedMessageBodyAttributes
from .permission_body import PermissionBody
from .permission_request import PermissionRequest
from .pointers_body import PointersBody
from .pointers_body_stragglers import PointersBodyStragglers
from .purged_body import PurgedBody
from .queue_body import QueueBody
from .queue_body_deduplication_scope import QueueBodyDeduplicationScope
from .queue_body_fifo_throughput_limit import QueueBodyFifoThroughputLimit
from .queue_create_options import QueueCreateOptions
from .queue_definition_body import QueueDefinitionBody
from .queue_options_body import QueueOptionsBody
from .queue_options_body_deduplication_scope import QueueOptionsBodyDeduplicationScope
from .queue_options_body_fifo_throughput_limit import QueueOptionsBodyFifoThroughputLimit
from .queue_options_patch import QueueOptionsPatch
from .queue_options_patch_deduplication_scope_type_0 import QueueOptionsPatchDeduplicationScopeType0
from .queue_options_patch_fifo_throughput_limit_type_0 import QueueOptionsPatchFifoThroughputLimitType0
from .read_body import ReadBody
from .read_message_body import ReadMessageBody
from .read_message_body_attributes import ReadMessageBodyAttributes
from .receive_request import ReceiveRequest
from .receive_response import ReceiveResponse
from .received_message import ReceivedMessage
from .received_message_attributes import ReceivedMessageAttributes
from .redrive_request import RedriveRequest
from .redrive_started import RedriveStarted
from .redrive_status import RedriveStatus
from .resource_error_body import ResourceErrorBody
from .seek_point import SeekPoint
from .seek_request import SeekRequest
from .seek_request_to_type_0 import SeekRequestToType0
from .send_request import SendRequest
from .send_response import SendResponse
from .sent_entry import SentEntry
from .statistics_detail_body import StatisticsDetailBody
from .statistics_detail_body_delivery_count_histogram import StatisticsDetailBodyDeliveryCountHistogram
from .statistics_size_body import StatisticsSizeBody
from .statistics_v2_body import StatisticsV2Body
from .subscription_body import SubscriptionBody
from .subscription_body_mode import SubscriptionBodyMode
from .subscription_detail_body import SubscriptionDetailBody
from .subscription_detail_body_mode import SubscriptionDetailBodyMode
from .subscription_list_body import SubscriptionListBody
from .subscription_options_body import SubscriptionOptionsBody
from .subscription_options_body_mode import SubscriptionOptionsBodyMode
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
    "CommitRequest",
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
    "PeekBody",
    "PeekedMessageBody",
    "PeekedMessageBodyAttributes",
    "PermissionBody",
    "PermissionRequest",
    "PointersBody",
    "PointersBodyStragglers",
    "PurgedBody",
    "QueueBody",
    "QueueBodyDeduplicationScope",
    "QueueBodyFifoThroughputLimit",
    "QueueCreateOptions",
    "QueueDefinitionBody",
    "QueueOptionsBody",
    "QueueOptionsBodyDeduplicationScope",
    "QueueOptionsBodyFifoThroughputLimit",
    "QueueOptionsPatch",
    "QueueOptionsPatchDeduplicationScopeType0",
    "QueueOptionsPatchFifoThroughputLimitType0",
    "ReadBody",
    "ReadMessageBody",
    "ReadMessageBodyAttributes",
    "ReceivedMessage",
    "ReceivedMessageAttributes",
    "ReceiveRequest",
    "ReceiveResponse",
    "RedriveRequest",
    "RedriveStarted",
    "RedriveStatus",
    "ResourceErrorBody",
    "SeekPoint",
    "SeekRequest",
    "SeekRequestToType0",
    "SendRequest",
    "SendResponse",
    "SentEntry",
    "StatisticsDetailBody",
    "StatisticsDetailBodyDeliveryCountHistogram",
    "StatisticsSizeBody",
    "StatisticsV2Body",
    "SubscriptionBody",
    "SubscriptionBodyMode",
    "SubscriptionDetailBody",
    "SubscriptionDetailBodyMode",
    "SubscriptionListBody",
    "SubscriptionOptionsBody",
    "SubscriptionOptionsBodyMode",
    "TombstoneBody",
    "UpdatedEntry",
    "UpdateMessageBody",
    "UpdateMessageRequest",
    "V2ErrorBody",
    "VisibilityEntry",
    "VisibilityRequest",
    "VisibilityResponse",
)
