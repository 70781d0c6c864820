"""Subscriptions (issue 36): a queue's messages read again by position, over one copy."""
