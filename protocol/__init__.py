"""The MCP edge beyond the SDK's public API: the tools' descriptions and parameter types,
argument names as models send them, results and errors as MCP results, handshake-era clients
(subscriptions, the listChanged advert), an answer to every JSON-RPC frame the SDK's reader would
drop, and index updates as resource notifications."""
