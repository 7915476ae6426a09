"""The MCP endpoint: the main model's tools at /mcp in the Falcon app (with the [mcp] extra; else /mcp says so)."""
