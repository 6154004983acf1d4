"""An `Answer` to what a client receives: the BODY + STATUS text grammar within a token budget and
the structured result (the tools' output schema), the pinned context and instructions, the
outline resource."""
