"""SQS actions: one ACTIONS table per module, merged by the route."""
